//! The hooks `panectl launch` gives an agent it starts, so that the agent reports to this
//! daemon (its status, and the conversation id `panectl restore` resumes) without the user
//! installing anything: per launch, never in the user's own configuration files. How is the
//! provider's data, its `[launch] hook_args`:
//!
//! - Claude Code: `--settings {hook_settings}`, settings added to the user's (hooks of both run)
//!   whose hooks run `panectl hook --socket S` on every event of its `[signals.hooks]`.
//! - Codex: `-c notify={hook_program}`, its `notify` program, run after each turn with the
//!   notification JSON as its last argument, which carries the thread id `codex resume` takes.
//! - Gemini CLI: none. It reads settings only from the user's and the project's files and
//!   from system files that root owns (0.61 skips a system file, or one under a directory,
//!   that another user owns or others can write), so no per-launch file can carry them;
//!   `panectl hook install gemini_cli` puts them in the user's settings instead. Its session id
//!   is chosen at launch (`session_args`), which is what restore needs.
//!
//! Hooks name this binary and the daemon's API socket, which exist on this machine only: an
//! agent launched on a remote server gets none.

use super::Context;
use crate::agent_hooks::{hook_events, settings_with_hooks, shell_quote};
use crate::status::rules::Provider;
use crate::status::rules::hook_config::HookFormat;

/// The arguments that give an agent of `provider` panectl's hooks (its `[launch] hook_args`,
/// see the module documentation); none for a provider without them, for a remote server, or
/// when the path of this program is unknown (the agent starts without them, and its screen
/// still says its status).
pub fn for_launch(state: &Context, provider: &Provider) -> Vec<String> {
    let hook_args = provider
        .launch
        .as_ref()
        .map(|launch| launch.hook_args.as_slice())
        .unwrap_or_default();
    if hook_args.is_empty() || !state.address.is_local() {
        return Vec::new();
    }
    let Ok(exe) = std::env::current_exe() else {
        tracing::warn!("the path of this program is unknown: the agent gets no hooks");
        return Vec::new();
    };
    hook_arguments(provider, &exe.to_string_lossy(), &state.api_socket)
}

/// `hook_args` with their placeholders filled for this program `exe` and the daemon's socket.
fn hook_arguments(provider: &Provider, exe: &str, api_socket: &str) -> Vec<String> {
    let hook_args = provider
        .launch
        .as_ref()
        .map(|launch| launch.hook_args.as_slice())
        .unwrap_or_default();
    let command = format!(
        "{} hook --socket {}",
        shell_quote(exe),
        shell_quote(api_socket)
    );
    let settings = || match &provider.hook_config {
        Some(config) if config.format == HookFormat::SettingsJson => Some(
            settings_with_hooks(config, &hook_events(provider), &command)
                .trim_end()
                .to_string(),
        ),
        _ => None,
    };
    let mut args = Vec::with_capacity(hook_args.len());
    for arg in hook_args {
        let mut arg = arg.clone();
        if arg.contains("{hook_settings}") {
            let Some(settings) = settings() else {
                tracing::warn!(provider = %provider.id, "{{hook_settings}} needs a settings_json [hook_config]: the agent gets no hooks");
                return Vec::new();
            };
            arg = arg.replace("{hook_settings}", &settings);
        }
        if arg.contains("{hook_program}") {
            // A JSON array of strings is a TOML array of basic strings too.
            let program = serde_json::json!([exe, "hook", "--socket", api_socket]).to_string();
            arg = arg.replace("{hook_program}", &program);
        }
        args.push(arg);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::providers::ProviderSet;

    fn provider(id: &str) -> std::sync::Arc<Provider> {
        ProviderSet::builtin()
            .expect("built-in rules")
            .get(id)
            .unwrap_or_else(|| panic!("no {id}"))
            .clone()
    }

    #[test]
    fn claude_code_gets_settings_whose_hooks_cover_every_event_it_maps() {
        let claude = provider("claude_code");
        let args = hook_arguments(&claude, "/opt/it's/panectl", "/run/p/d.sock");
        assert_eq!(args.len(), 2, "{args:?}");
        assert_eq!(args[0], "--settings");
        let settings: serde_json::Value = serde_json::from_str(&args[1]).expect("JSON");
        let events = hook_events(&claude);
        assert!(events.len() >= 9, "{events:?}");
        for event in &events {
            let command = settings["hooks"][event][0]["hooks"][0]["command"]
                .as_str()
                .unwrap_or_else(|| panic!("no hook for {event}: {settings:#}"));
            assert_eq!(
                command,
                r#"'/opt/it'\''s/panectl' hook --socket '/run/p/d.sock'"#
            );
        }
    }

    #[test]
    fn codex_gets_its_notify_program_as_a_toml_array() {
        let args = hook_arguments(&provider("codex"), "/bin/panectl", "/run/p/d.sock");
        assert_eq!(
            args,
            vec![
                "-c".to_string(),
                r#"notify=["/bin/panectl","hook","--socket","/run/p/d.sock"]"#.to_string()
            ]
        );
        let value: toml::Value = toml::from_str(&args[1]).expect("TOML");
        assert_eq!(value["notify"][1].as_str(), Some("hook"));
    }

    #[test]
    fn a_provider_without_hook_args_gets_none() {
        assert!(hook_arguments(&provider("gemini_cli"), "/bin/panectl", "/s").is_empty());
        assert!(hook_arguments(&provider("shell"), "/bin/panectl", "/s").is_empty());
    }
}
