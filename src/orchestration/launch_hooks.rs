//! The hooks `panectl launch` gives an agent it starts, so that the agent reports to this
//! daemon (its status, and the conversation id `panectl restore` resumes) without the user
//! installing anything: per launch, never in the user's own configuration files.
//!
//! - Claude Code: `--settings JSON` (added to the user's settings; hooks of both run).
//! - Codex: its `notify` program (`-c notify=[...]`, a TOML array), run after each turn with the
//!   notification JSON as its last argument, which carries the thread id `codex resume` takes.
//! - Gemini CLI: none. It reads settings only from the user's and the project's files and
//!   from system files that root owns (0.61 skips a system file, or one under a directory,
//!   that another user owns or others can write), so no per-launch file can carry them;
//!   `panectl hook install gemini_cli` puts them in the user's settings instead.
//!
//! Hooks name this binary and the daemon's API socket, which exist on this machine only: an
//! agent launched on a remote server gets none.

use super::Context;
use super::launch::shell_quote;

/// The hook events panectl installs for a Claude Code it launches.
pub const CLAUDE_HOOK_EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Notification",
    "Stop",
    "StopFailure",
    "SessionEnd",
];

/// Claude Code settings (for `--settings`, which adds to the user's settings; hooks of both
/// run) whose hooks run `command` on every event of [`CLAUDE_HOOK_EVENTS`].
pub fn claude_hook_settings(command: &str) -> String {
    let entry = serde_json::json!([{
        "matcher": "",
        "hooks": [{"type": "command", "command": command, "timeout": 5}],
    }]);
    let hooks: serde_json::Map<String, serde_json::Value> = CLAUDE_HOOK_EVENTS
        .iter()
        .map(|event| (event.to_string(), entry.clone()))
        .collect();
    serde_json::json!({ "hooks": hooks }).to_string()
}

/// The arguments that give an agent of `provider` panectl's hooks, if panectl knows how to
/// give that CLI hooks at launch (see the module documentation); none for a remote server, or
/// when the path of this program is unknown (the agent starts without them, and its screen
/// still says its status).
pub fn for_launch(state: &Context, provider: &str) -> Vec<String> {
    if !state.address.is_local() {
        return Vec::new();
    }
    let Ok(exe) = std::env::current_exe() else {
        tracing::warn!("the path of this program is unknown: the agent gets no hooks");
        return Vec::new();
    };
    let exe = exe.to_string_lossy();
    let api_socket = state.api_socket.as_str();
    match provider {
        "claude_code" => {
            let command = format!(
                "{} hook --socket {}",
                shell_quote(&exe),
                shell_quote(api_socket)
            );
            vec!["--settings".into(), claude_hook_settings(&command)]
        }
        // A JSON array of strings is a TOML array of basic strings.
        "codex" => serde_json::to_string(&[&*exe, "hook", "--socket", api_socket])
            .map(|program| vec!["-c".into(), format!("notify={program}")])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}
