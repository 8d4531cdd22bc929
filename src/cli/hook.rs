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
#[command(args_conflicts_with_subcommands = true)]
pub struct HookArgs {
    /// `install` or `uninstall` panectl's hook in a CLI's configuration (without one, this is
    /// the hook itself).
    #[command(subcommand)]
    action: Option<super::hook_install::HookAction>,
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
        match &self.action {
            Some(action) => super::hook_install::run(action),
            None => Ok(hook(server, self)),
        }
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
/// (`agent-turn-complete`), the conversation its `thread-id` (what `codex resume` takes) when
/// `resumable` says Codex keeps that thread. Codex also notifies for threads of its own (0.171
/// names each task in a thread that is never saved): their ids are not the conversation.
pub fn codex_report(
    notification: &str,
    time_ms: u64,
    resumable: impl Fn(&str) -> bool,
) -> Option<HookReport> {
    let json: Value = serde_json::from_str(notification).ok()?;
    let field = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_string);
    Some(HookReport {
        event: field("type")?,
        notification_type: None,
        source: None,
        pid: Some(std::os::unix::process::parent_id()),
        session_id: field("thread-id").filter(|thread| resumable(thread)),
        cwd: field("cwd"),
        time_ms: Some(time_ms),
    })
}

/// Whether Codex saved the thread `thread` (`$CODEX_HOME`, else `~/.codex`:
/// `sessions/YYYY/MM/DD/rollout-...-THREAD.jsonl`), so that `codex resume` can take it up.
fn codex_saved(thread: &str) -> bool {
    let home = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")));
    home.is_some_and(|h| saved_in(&h.join("sessions"), thread))
}

/// Whether `sessions` (Codex's) holds the rollout file of `thread`.
fn saved_in(sessions: &std::path::Path, thread: &str) -> bool {
    let suffix = format!("-{thread}.jsonl");
    let children = |dir: &std::path::Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    // Newest days first: a thread that just notified was saved lately.
    let mut days: Vec<PathBuf> = children(sessions)
        .iter()
        .flat_map(|year| children(year))
        .flat_map(|month| children(&month))
        .collect();
    days.sort_unstable_by(|a, b| b.cmp(a));
    let thread_file = |file: &PathBuf| {
        file.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
    };
    days.iter().any(|day| children(day).iter().any(thread_file))
}

fn send(server: &ServerArgs, args: &HookArgs, time_ms: u64) -> anyhow::Result<()> {
    let report = match &args.notification {
        Some(notification) => codex_report(notification, time_ms, codex_saved)
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
        format!("start one with: {}", server.start_command()),
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
        let report = codex_report(notification, 9, |t| t == "019a-77").unwrap();
        assert_eq!(report.event, "agent-turn-complete");
        assert_eq!(report.session_id.as_deref(), Some("019a-77"));
        assert_eq!(report.cwd.as_deref(), Some("/w"));
        // A thread Codex did not save (its task-title thread) is no conversation.
        let unsaved = codex_report(notification, 9, |_| false).unwrap();
        assert_eq!(unsaved.session_id, None);
        assert!(codex_report("not json", 9, |_| true).is_none());
        assert!(codex_report(r#"{"thread-id":"x"}"#, 9, |_| true).is_none());
    }

    #[test]
    fn a_codex_thread_is_saved_when_its_rollout_file_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let day = dir.path().join("2026/12/06");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-12-06T03-39-08-01a2-1dfa.jsonl"), "").unwrap();
        assert!(saved_in(dir.path(), "01a2-1dfa"));
        assert!(!saved_in(dir.path(), "01a2-3054"));
        assert!(!saved_in(&dir.path().join("missing"), "01a2-1dfa"));
    }
}
