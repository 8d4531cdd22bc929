//! Where a provider's CLI keeps its hook configuration, for `panectl hook install` (its
//! `[hook_config]` table). Which events to hook is the provider's `[signals.hooks]` table:
//! every event named there.
//!
//! ```toml
//! [hook_config]
//! format = "settings_json"          # settings_json: hooks.EVENT = [{matcher, hooks: [...]}]
//!                                   # (Claude Code, Gemini CLI); codex_notify: notify = [...]
//! user = "~/.claude/settings.json"  # --user (the default); ~ is $HOME
//! project = ".claude/settings.local.json"   # --project, under the project's directory
//! timeout = 5                       # settings_json: each hook's timeout, in the CLI's unit
//! ```

use serde::Deserialize;
use toml::Spanned;

/// The `[hook_config]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HookConfigSpec {
    format: Spanned<String>,
    user: Spanned<String>,
    project: Option<Spanned<String>>,
    timeout: Option<u64>,
}

/// How a CLI's configuration names the programs it runs on its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookFormat {
    /// A JSON settings file whose `hooks` object maps each event to a list of
    /// `{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}` groups.
    SettingsJson,
    /// Codex's `config.toml`: one `notify = [PROGRAM, ARGS...]` run after each turn.
    CodexNotify,
}

/// Where and how `panectl hook install` writes a CLI's hook configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookConfig {
    /// The file's format.
    pub format: HookFormat,
    /// The user's file (`~` for `$HOME`).
    pub user: String,
    /// The project's file, relative to the project's directory (`None`: the CLI has none).
    pub project: Option<String>,
    /// Each hook's timeout in the CLI's own unit (`settings_json` only).
    pub timeout: Option<u64>,
}

impl HookConfig {
    /// Checks a `[hook_config]` table; an error is the byte offset it is about and what is
    /// wrong.
    pub(super) fn from_spec(spec: HookConfigSpec) -> Result<HookConfig, (usize, String)> {
        let format = match spec.format.get_ref().as_str() {
            "settings_json" => HookFormat::SettingsJson,
            "codex_notify" => HookFormat::CodexNotify,
            other => {
                return Err((
                    spec.format.span().start,
                    format!(
                        "hook_config.format must be \"settings_json\" or \"codex_notify\", not {other:?}"
                    ),
                ));
            }
        };
        let path = |field: &str, value: &Spanned<String>| {
            let text = value.get_ref();
            if text.is_empty() || text.ends_with('/') || text.contains('\0') {
                return Err((
                    value.span().start,
                    format!("hook_config.{field} must name a file"),
                ));
            }
            Ok(text.clone())
        };
        let user = path("user", &spec.user)?;
        if !user.starts_with('/') && !user.starts_with("~/") {
            return Err((
                spec.user.span().start,
                "hook_config.user must start with ~/ or /".into(),
            ));
        }
        let project = match &spec.project {
            Some(project) if project.get_ref().starts_with('/') => {
                return Err((
                    project.span().start,
                    "hook_config.project is relative to the project's directory".into(),
                ));
            }
            Some(project) => Some(path("project", project)?),
            None => None,
        };
        Ok(HookConfig {
            format,
            user,
            project,
            timeout: spec.timeout,
        })
    }
}
