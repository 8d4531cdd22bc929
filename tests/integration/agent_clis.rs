//! Real agent CLIs for tests: where they are installed (a cache shared by every run on the
//! machine, filled by `scripts/install-agent-clis.sh`) and how to start them offline against
//! the fake model server.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The cache the CLIs are installed in: `$PANECTL_AGENT_CACHE`, else
/// `~/.cache/panectl/agents`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("PANECTL_AGENT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home =
                std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            home.join(".cache/panectl/agents")
        })
}

/// Installs (once per machine) and returns the path of an agent CLI (`claude`, `codex`,
/// `gemini`, ..., `aider`). Panics with the installer's output if it cannot be installed: these tests need
/// the real program, they do not skip.
pub fn binary(name: &str) -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let path = match name {
        // A Python program, in a virtual environment of its own.
        "aider" => cache_dir().join("aider/venv/bin/aider"),
        _ => cache_dir().join(name).join("node_modules/.bin").join(name),
    };
    if !path.exists() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-agent-clis.sh");
        let output = Command::new("bash")
            .arg(&script)
            .arg(name)
            .env("PANECTL_AGENT_CACHE", cache_dir())
            .output()
            .expect("run scripts/install-agent-clis.sh");
        assert!(
            output.status.success() && path.exists(),
            "cannot install {name}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    path
}

/// A home and a work directory set up so Claude Code starts straight at its prompt, offline,
/// asking permission for tool calls.
pub struct ClaudeHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

/// The API key the fake model server is given (anything works; Claude Code remembers its last
/// 20 characters as approved).
const KEY: &str = "sk-ant-panectl-test-0123456789";

impl ClaudeHome {
    /// Creates the directories and Claude Code's settings.
    pub fn new() -> ClaudeHome {
        let home = tempfile::Builder::new()
            .prefix("panectl-claude-home-")
            .tempdir()
            .expect("home");
        let work = tempfile::Builder::new()
            .prefix("panectl-claude-work-")
            .tempdir()
            .expect("work");
        let work_path = work.path().to_string_lossy().into_owned();
        let config = serde_json::json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "hasSeenAutoDefaultNudge": true,
            "hasResetAutoModeOptInForDefaultOffer": true,
            "customApiKeyResponses": {"approved": [KEY, &KEY[KEY.len() - 20..]], "rejected": []},
            "projects": {work_path: {"hasTrustDialogAccepted": true, "allowedTools": []}},
        });
        std::fs::write(home.path().join(".claude.json"), config.to_string())
            .expect("write .claude.json");
        std::fs::create_dir_all(home.path().join(".claude")).expect("mkdir .claude");
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"permissions":{"defaultMode":"default"}}"#,
        )
        .expect("write settings.json");
        ClaudeHome { home, work }
    }

    /// The work directory (where the CLI runs).
    pub fn work(&self) -> &Path {
        self.work.path()
    }

    /// The home directory (its `.claude/settings.json` is the user's settings).
    #[allow(dead_code)] // for the signal tests
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A shell command that runs Claude Code against `model_url`.
    pub fn command(&self, model_url: &str) -> String {
        format!(
            "env HOME='{}' ANTHROPIC_API_KEY='{KEY}' ANTHROPIC_BASE_URL='{model_url}' \
             CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 '{}'",
            self.home.path().display(),
            binary("claude").display()
        )
    }
}

impl ClaudeHome {
    /// `KEY=VALUE` settings that make `panectl launch claude_code` start this Claude Code
    /// against `model_url` (its program found through `PATH`).
    pub fn launch_env(&self, model_url: &str) -> Vec<String> {
        let bin = binary("claude");
        let dir = bin.parent().expect("bin dir").display().to_string();
        let path = std::env::var("PATH").unwrap_or_default();
        vec![
            format!("HOME={}", self.home.path().display()),
            format!("ANTHROPIC_API_KEY={KEY}"),
            format!("ANTHROPIC_BASE_URL={model_url}"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1".into(),
            "DISABLE_AUTOUPDATER=1".into(),
            format!("PATH={dir}:{path}"),
        ]
    }

    /// Replaces the program of `pane` with Claude Code, started in this work directory and
    /// talking to the fake model server at `url`.
    pub fn respawn_in(&self, server: &crate::support::TmuxServer, pane: &str, url: &str) {
        let work = self.work().to_string_lossy().into_owned();
        server.tmux(&[
            "respawn-pane",
            "-k",
            "-t",
            pane,
            "-c",
            &work,
            &self.command(url),
        ]);
    }
}
