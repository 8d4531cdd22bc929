//! Notifications: when an agent starts waiting for the user or finishes a turn, a message on
//! every attached tmux client and, if the user set one, a command of theirs (notify-send, a
//! sound, a webhook) with the pane, provider and status in its environment.
//!
//! Both are switched by tmux options, so the plugin's settings (and a reload of tmux.conf) take
//! effect without restarting the daemon: `@panectl-notify` (`on` to show messages; a daemon
//! started by hand shows none unless it is set) and `@panectl-notify-command` (run with `sh -c`).
//! They are read when a notification is due, not polled.
//!
//! `@panectl-notify-bell on` rings the bell the tmux way: a BEL is written to the agent pane's
//! terminal, as if the agent had rung it, so tmux handles it like any bell of a pane (its
//! `monitor-bell`, `bell-action` and `visual-bell` options, the window's bell flag).
//!
//! What a server on another host says is data, never a command or a local path
//! (docs/remote.md, "What is trusted"): its `@panectl-notify-command` is ignored (anything
//! able to set an option there, its agents included, would otherwise run code here), the
//! daemon's own `--notify-command` runs instead, with the remote values in its environment,
//! and its bell rings through that server's tmux (`run-shell` there) rather than by opening
//! the terminal path it names on this machine.

use std::collections::BTreeMap;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

use crate::control::command::{Command, Format, Line, SafeValue, Target};
use crate::events::{EventBus, EventKind};
use crate::ids::PaneId;
use crate::status::{Phase, Status};
use crate::tmux::ConnectionHandle;
use crate::tmux::Connections;

/// The option that turns client messages on.
pub const NOTIFY_OPTION: &str = "@panectl-notify";
/// The option holding the user's notification command.
pub const NOTIFY_COMMAND_OPTION: &str = "@panectl-notify-command";
/// The option that rings the bell in the agent's pane.
pub const NOTIFY_BELL_OPTION: &str = "@panectl-notify-bell";

const WAITING_MESSAGE: Format = Format::new(
    "panectl: #{?#{@panectl_name},#{@panectl_name},#{@panectl_provider}} in #{session_name}:#{window_name} (#{pane_id}) is waiting for you",
);
const COMPLETED_MESSAGE: Format = Format::new(
    "panectl: #{?#{@panectl_name},#{@panectl_name},#{@panectl_provider}} in #{session_name}:#{window_name} (#{pane_id}) has finished",
);
const CHANGED_MESSAGE: Format = Format::new(
    "panectl: #{?#{@panectl_name},#{@panectl_name},#{@panectl_provider}} in #{session_name}:#{window_name} (#{pane_id}) is #{@panectl_status}",
);
const CLIENTS: Format = Format::new("#{client_name}\t#{client_control_mode}");

/// Whether a change deserves a notification: an agent (not the plain shell) reached a
/// [notable](Status::notable) status.
pub fn notable(status: Status, previous: Status, provider: Option<&str>) -> bool {
    let agent = provider.is_some_and(|p| p != crate::status::providers::SHELL);
    agent && status != previous && status.notable()
}

/// The environment of the user's notification command.
pub fn command_env(
    server: &str,
    pane: PaneId,
    provider: &str,
    status: Status,
    previous: Status,
) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        ("PANECTL_SERVER", server.to_string()),
        ("PANECTL_PANE", pane.to_string()),
        ("PANECTL_PROVIDER", provider.to_string()),
        ("PANECTL_STATUS", status.to_string()),
        ("PANECTL_PREVIOUS", previous.to_string()),
    ])
}

/// What the daemon's own configuration says about notifications: it holds for any server,
/// unlike the server's options, which are trusted only from a server on this machine.
#[derive(Debug, Clone, Default)]
pub struct NotifyOptions {
    /// `--notify-command`: the local user's command, run with `sh -c` on this machine.
    pub command: Option<String>,
    /// The server runs on another host: its options are data.
    pub remote: bool,
    /// The server's label, given to the command as `PANECTL_SERVER`.
    pub server: String,
}

/// The notification options read from the tmux server.
struct Settings {
    messages: bool,
    command: String,
    bell: bool,
}

/// The command to run for a notification: on a local server the server's option, else the
/// daemon's own; on a remote server only the daemon's own (`ignored` says that the server's
/// option was set and not used).
fn chosen_command<'a>(options: &'a NotifyOptions, from_server: &'a str) -> (Option<&'a str>, bool) {
    let own = options.command.as_deref().filter(|c| !c.trim().is_empty());
    if options.remote {
        (own, !from_server.trim().is_empty())
    } else if from_server.trim().is_empty() {
        (own, false)
    } else {
        (Some(from_server), false)
    }
}

/// Reads the options; `None` when tmux cannot be asked.
async fn settings(handle: &ConnectionHandle) -> Option<Settings> {
    const VERSION: Format = Format::new("#{version}");
    let line = Line::new(crate::query::show_global_option(NOTIFY_OPTION))
        .then(crate::query::show_global_option(NOTIFY_COMMAND_OPTION))
        .then(crate::query::show_global_option(NOTIFY_BELL_OPTION))
        .then(crate::control::command::commands::display_print(
            VERSION, None,
        ));
    let replies = handle.run(line).await.ok()?;
    let text = |i: usize| {
        replies
            .get(i)
            .map(|r| String::from_utf8_lossy(&r.joined_body()).trim().to_string())
            .unwrap_or_default()
    };
    Some(Settings {
        messages: text(0) == "on",
        command: user_command(&text(1), &text(3)),
        bell: text(2) == "on",
    })
}

/// The user's command as they wrote it: tmux 3.4 stores every `$` of an option value set with
/// `set-option` as `\$` (3.3 and 3.5 do not), which would keep the shell from expanding
/// `$PANECTL_PANE`; on 3.4 that escape is undone.
fn user_command(stored: &str, version: &str) -> String {
    if version == "3.4" {
        stored.replace("\\$", "$")
    } else {
        stored.to_string()
    }
}

/// Rings the bell in a pane of a server on another host: tmux there writes the BEL to the
/// pane's terminal (nothing here opens a path that server named).
async fn ring_remote(handle: &ConnectionHandle, pane: PaneId) {
    let line = Line::new(crate::control::command::commands::ring_bell(pane));
    match handle.run(line).await {
        Ok(_) => info!(%pane, "rang the bell (through the remote tmux)"),
        Err(error) => debug!(%pane, %error, "cannot ring the bell"),
    }
}

/// Rings the bell in `pane` of a server on this machine: a BEL written to its terminal, which
/// tmux takes as the pane's own.
async fn ring(handle: &ConnectionHandle, pane: PaneId) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    const TTY: Format = Format::new("#{pane_tty}");
    let line = Line::new(crate::control::command::commands::display_print(
        TTY,
        Some(Target::Pane(pane)),
    ));
    let Ok(replies) = handle.run(line).await else {
        return;
    };
    let tty = replies
        .first()
        .map(|r| String::from_utf8_lossy(&r.joined_body()).trim().to_string())
        .unwrap_or_default();
    if !tty.starts_with("/dev/") {
        return;
    }
    let flags = nix::fcntl::OFlag::O_NOCTTY | nix::fcntl::OFlag::O_NONBLOCK;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(flags.bits())
        .open(&tty)
        .and_then(|mut file| file.write_all(b"\x07"));
    match written {
        Ok(()) => info!(%pane, "rang the bell"),
        Err(error) => debug!(%pane, %error, "cannot ring the bell"),
    }
}

/// Shows the message on every attached client that is not a control client.
async fn show(handle: &ConnectionHandle, pane: PaneId, status: Status) {
    let list = Line::new(Command::new("list-clients").format_option("-F", CLIENTS));
    let Ok(replies) = handle.run(list).await else {
        return;
    };
    let body = replies
        .first()
        .map(|r| String::from_utf8_lossy(&r.joined_body()).into_owned())
        .unwrap_or_default();
    let message = match status.phase() {
        Phase::Blocked => WAITING_MESSAGE,
        Phase::Ready | Phase::Ended => COMPLETED_MESSAGE,
        Phase::Busy | Phase::Unknown => CHANGED_MESSAGE,
    };
    let mut shown = Vec::new();
    for row in body.lines() {
        let Some((name, control)) = row.split_once('\t') else {
            continue;
        };
        let Ok(name) = SafeValue::new(name) else {
            debug!(
                client = name,
                "a client name panectl does not quote; no message"
            );
            continue;
        };
        if control == "1" {
            continue;
        }
        let display = Command::new("display-message")
            .flag("-c")
            .safe(&name)
            .target("-t", Target::Pane(pane))
            .format(message);
        match handle.run(Line::new(display)).await {
            Ok(_) => shown.push(name.as_str().to_string()),
            Err(error) if error.to_string().contains("usage: display-message") => {
                // tmux 3.2 parses display-message's -c as a flag without a value (fixed in
                // 3.3): no message can be aimed at one client there.
                static SAID: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    warn!(
                        "this tmux cannot show a message on a chosen client (display-message -c \
                         needs tmux 3.3): no client messages; the bell and \
                         @panectl-notify-command still work"
                    );
                }
                break;
            }
            Err(error) => debug!(%error, "display-message failed"),
        }
    }
    if !shown.is_empty() {
        info!(%pane, %status, clients = ?shown, "told the attached clients");
    }
}

/// Runs the user's command, detached; it is reaped when it ends.
fn run_command(
    command: &str,
    env: BTreeMap<&'static str, String>,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) {
    let mut child = tokio::process::Command::new("sh");
    child
        .arg("-c")
        .arg(command)
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(false);
    crate::host::count_process_started();
    match child.spawn() {
        Ok(mut child) => {
            // Reaped on the tracker; at shutdown the command is left running (init reaps it).
            let cancel = cancel.clone();
            tracker.spawn(async move {
                tokio::select! {
                    () = cancel.cancelled() => {}
                    _ = child.wait() => {}
                }
            });
        }
        Err(error) => warn!(%error, "cannot run @panectl-notify-command"),
    }
}

/// Sends notifications until `cancel` fires.
pub async fn run(
    options: NotifyOptions,
    bus: EventBus,
    connections: watch::Receiver<Connections>,
    tracker: TaskTracker,
    cancel: CancellationToken,
) {
    let mut said_ignored = false;
    let mut events = bus.subscribe();
    loop {
        let event = tokio::select! {
            () = cancel.cancelled() => break,
            event = events.recv() => event,
        };
        let event = match event {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let EventKind::Status {
            pane,
            status,
            previous,
            provider,
            ..
        } = &event.kind
        else {
            continue;
        };
        if !notable(*status, *previous, provider.as_deref()) {
            continue;
        }
        let Some(handle) = connections.borrow().values().next().cloned() else {
            continue;
        };
        let Some(settings) = settings(&handle).await else {
            continue;
        };
        if settings.messages {
            show(&handle, *pane, *status).await;
        }
        if settings.bell && options.remote {
            ring_remote(&handle, *pane).await;
        } else if settings.bell {
            ring(&handle, *pane).await;
        }
        let (command, ignored) = chosen_command(&options, &settings.command);
        if ignored && !std::mem::replace(&mut said_ignored, true) {
            warn!(
                "{NOTIFY_COMMAND_OPTION} of a server on another host is not run here (its \
                 options are data); set --notify-command (notify_command in config.toml) for \
                 a command of your own"
            );
        }
        if let Some(command) = command {
            let provider = provider.clone().unwrap_or_default();
            run_command(
                command,
                command_env(&options.server, *pane, &provider, *status, *previous),
                &tracker,
                &cancel,
            );
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_tmux_3_4_escapes_dollars_in_option_values() {
        let stored = r#"echo "\$PANECTL_PANE" >> log"#;
        assert_eq!(
            user_command(stored, "3.4"),
            r#"echo "$PANECTL_PANE" >> log"#
        );
        assert_eq!(user_command(stored, "3.3a"), stored);
        assert_eq!(user_command("echo $X", "3.5a"), "echo $X");
    }

    use super::*;

    #[test]
    fn only_agents_arriving_at_waiting_or_completed_notify() {
        let claude = Some("claude_code");
        assert!(notable(
            Status::WaitingUserAnswer,
            Status::Processing,
            claude
        ));
        assert!(notable(Status::Completed, Status::Processing, claude));
        assert!(!notable(Status::Processing, Status::Idle, claude));
        assert!(!notable(Status::Idle, Status::Unknown, claude));
        assert!(!notable(Status::Completed, Status::Completed, claude));
        assert!(!notable(
            Status::Completed,
            Status::Processing,
            Some("shell")
        ));
        assert!(!notable(Status::Completed, Status::Processing, None));
    }

    #[test]
    fn a_remote_servers_command_is_never_chosen() {
        let own = NotifyOptions {
            command: Some("mine".into()),
            remote: true,
            server: "devbox".into(),
        };
        assert_eq!(chosen_command(&own, "touch /pwned"), (Some("mine"), true));
        assert_eq!(chosen_command(&own, ""), (Some("mine"), false));
        let none = NotifyOptions {
            command: None,
            ..own.clone()
        };
        assert_eq!(chosen_command(&none, "touch /pwned"), (None, true));
        // A local server's option is the user's own, and wins over the flag.
        let local = NotifyOptions {
            remote: false,
            ..own
        };
        assert_eq!(chosen_command(&local, "theirs"), (Some("theirs"), false));
        assert_eq!(chosen_command(&local, " "), (Some("mine"), false));
    }

    #[test]
    fn the_command_learns_what_happened_from_its_environment() {
        let env = command_env(
            "devbox:work",
            "%7".parse().unwrap(),
            "codex",
            Status::WaitingUserAnswer,
            Status::Processing,
        );
        assert_eq!(env["PANECTL_SERVER"], "devbox:work");
        assert_eq!(env["PANECTL_PANE"], "%7");
        assert_eq!(env["PANECTL_PROVIDER"], "codex");
        assert_eq!(env["PANECTL_STATUS"], "waiting_user_answer");
        assert_eq!(env["PANECTL_PREVIOUS"], "processing");
    }
}
