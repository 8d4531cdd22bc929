//! `panectl hook`: an agent CLI's hook command. It reads the hook's JSON on stdin (Claude Code,
//! Gemini CLI), or as its last argument (Codex's `notify`), and tells the daemon of the tmux
//! server the agent runs in (`$TMUX`, pane `$TMUX_PANE`).
//!
//! It must never hang or break the agent: the whole exchange has a short deadline, nothing is
//! printed on stdout (Claude Code reads a hook's stdout as instructions), the exit code is
//! always 0, and a daemon that cannot be reached costs one line on stderr.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::daemon::discovery;
use panectl::status::signal::HookReport;
use serde_json::Value;

use super::ServerArgs;

/// How long a hook may take, from start to the daemon's answer.
const DEADLINE: Duration = Duration::from_millis(1500);

/// The most of stdin read.
const MAX_INPUT: u64 = 1 << 20;

/// Arguments of `panectl hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The pane the agent runs in (default `$TMUX_PANE`).
    #[arg(long)]
    pane: Option<String>,
    /// The daemon's API socket (default: `$PANECTL_SOCKET`, else the daemon of the tmux
    /// server in `$TMUX`, or of `-L`/`-S`).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The event, when the hook's JSON does not name it (`hook_event_name`).
    #[arg(long)]
    event: Option<String>,
    /// The notification JSON Codex's `notify` program gets as its last argument
    /// (`{"type": "agent-turn-complete", "thread-id": ...}`); stdin is not read then.
    #[arg(value_name = "JSON")]
    notification: Option<String>,
}

impl super::Run for HookArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        Ok(hook(server, self))
    }
}

/// Runs the hook; always exit code 0.
fn hook(server: &ServerArgs, args: &HookArgs) -> ExitCode {
    let time_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    if let Err(error) = send(server, args, time_ms) {
        eprintln!("panectl hook: {error:#}");
    }
    ExitCode::SUCCESS
}

/// Reads the hook's JSON from stdin into a report.
pub fn report(input: &[u8], event: Option<&str>, time_ms: u64) -> Option<HookReport> {
    let json: Value = serde_json::from_slice(input).unwrap_or(Value::Null);
    let field = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_string);
    let event = field("hook_event_name").or_else(|| event.map(str::to_string))?;
    let pid = std::env::var("CLAUDE_PID")
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .unwrap_or_else(std::os::unix::process::parent_id);
    Some(HookReport {
        event,
        notification_type: field("notification_type"),
        source: field("source"),
        pid: Some(pid),
        session_id: field("session_id"),
        cwd: field("cwd"),
        time_ms: Some(time_ms),
    })
}

/// Reads Codex's `notify` JSON (its last argument) into a report: the event is its `type`
/// (`agent-turn-complete`), the conversation its `thread-id` (what `codex resume` takes).
pub fn codex_report(notification: &str, time_ms: u64) -> Option<HookReport> {
    let json: Value = serde_json::from_str(notification).ok()?;
    let field = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_string);
    Some(HookReport {
        event: field("type")?,
        notification_type: None,
        source: None,
        pid: Some(std::os::unix::process::parent_id()),
        session_id: field("thread-id"),
        cwd: field("cwd"),
        time_ms: Some(time_ms),
    })
}

fn send(server: &ServerArgs, args: &HookArgs, time_ms: u64) -> anyhow::Result<()> {
    let report = match &args.notification {
        Some(notification) => codex_report(notification, time_ms)
            .ok_or_else(|| anyhow::anyhow!("the notification is not JSON with a type"))?,
        None => {
            let mut input = Vec::new();
            std::io::stdin().take(MAX_INPUT).read_to_end(&mut input)?;
            report(&input, args.event.as_deref(), time_ms).ok_or_else(|| {
                anyhow::anyhow!("the hook's input names no event (hook_event_name)")
            })?
        }
    };
    let pane = args
        .pane
        .clone()
        .or_else(|| std::env::var("TMUX_PANE").ok())
        .filter(|p| !p.is_empty())
        .ok_or_else(|| anyhow::anyhow!("not in a tmux pane ($TMUX_PANE is not set)"))?;
    let socket = match args
        .socket
        .clone()
        .or_else(|| std::env::var_os("PANECTL_SOCKET").map(PathBuf::from))
    {
        Some(socket) => socket,
        None => discovery::find_api(&server.address()?).socket,
    };
    let client = ApiClient::new(
        socket.clone(),
        socket.display().to_string(),
        server.start_command(),
    );
    let path = Route::PaneHook { pane: &pane }.path();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            // The answer (a `HookAnswer`) is not looked at: any JSON will do.
            let sent = client.post_json::<serde::de::IgnoredAny>(&path, &report);
            match tokio::time::timeout(DEADLINE, sent).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(error)) => Err(anyhow::Error::from(error)),
                Err(_) => Err(anyhow::anyhow!(
                    "the daemon did not answer within {DEADLINE:?}"
                )),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_notification_becomes_a_report() {
        let input = br#"{"session_id":"eb5a","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}"#;
        let report = report(input, None, 7).unwrap();
        assert_eq!(report.event, "Notification");
        assert_eq!(
            report.notification_type.as_deref(),
            Some("permission_prompt")
        );
        assert_eq!(report.session_id.as_deref(), Some("eb5a"));
        assert_eq!(report.time_ms, Some(7));
        assert!(report.pid.is_some());
        // Not JSON: only an event given on the command line names it.
        assert!(super::report(b"garbage", None, 7).is_none());
        assert_eq!(super::report(b"", Some("Stop"), 7).unwrap().event, "Stop");
    }

    #[test]
    fn a_codex_notification_becomes_a_report_with_its_thread() {
        let notification = r#"{"type":"agent-turn-complete","thread-id":"019a-77","turn-id":"3","cwd":"/w","input-messages":["hi"],"last-assistant-message":"hello"}"#;
        let report = codex_report(notification, 9).unwrap();
        assert_eq!(report.event, "agent-turn-complete");
        assert_eq!(report.session_id.as_deref(), Some("019a-77"));
        assert_eq!(report.cwd.as_deref(), Some("/w"));
        assert!(codex_report("not json", 9).is_none());
        assert!(codex_report(r#"{"thread-id":"x"}"#, 9).is_none());
    }
}
