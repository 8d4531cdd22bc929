//! Notifications: when an agent starts waiting for the user or finishes a turn, a message on
//! every attached tmux client, a desktop notification ([`desktop`]), a JSON `POST` to a webhook
//! ([`webhook`]) and, if the user set one, a command of theirs, with what happened (and, for a
//! dialog, its question and options) in its environment.
//!
//! They are switched by tmux options, so the plugin's settings (and a reload of tmux.conf) take
//! effect without restarting the daemon: `@panectl-notify` (`on` to show messages; a daemon
//! started by hand shows none unless it is set), `@panectl-notify-command` (run with `sh -c`),
//! `@panectl-notify-desktop` (`off` turns the desktop notification off) and
//! `@panectl-notify-webhook` (a URL). They are read when a notification is due, not polled.
//! The daemon's own flags (`--notify-command`, `--notify-webhook`, `--notify-desktop`, or the
//! `[notify]` table of config.toml) hold when the server sets nothing.
//!
//! `@panectl-notify-bell on` rings the bell the tmux way: a BEL is written to the agent pane's
//! terminal, as if the agent had rung it, so tmux handles it like any bell of a pane (its
//! `monitor-bell`, `bell-action` and `visual-bell` options, the window's bell flag).
//!
//! A waiting agent's dialog is read as a decision (`status::decision`) when the notification
//! is due; the command gets it as data in its environment (`PANECTL_QUESTION`,
//! `PANECTL_OPTIONS` as JSON, `PANECTL_DECISION`), never in its command line.
//!
//! What a server on another host says is data, never a command or a local path
//! (docs/remote.md, "What is trusted"): its `@panectl-notify-command` is ignored (anything
//! able to set an option there, its agents included, would otherwise run code here), the
//! daemon's own `--notify-command` runs instead, with the remote values in its environment;
//! its `@panectl-notify-webhook` is ignored the same way (it would make this machine post
//! anywhere), only `--notify-webhook` is used; and its bell rings through that server's tmux
//! (`run-shell` there) rather than by opening the terminal path it names on this machine.

pub mod desktop;
pub mod webhook;

use std::collections::BTreeMap;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

use serde::Serialize;

use crate::control::command::{Command, Format, Line, SafeValue, Target};
use crate::events::{EventBus, EventKind};
use crate::ids::PaneId;
use crate::status::decision::Decision;
use crate::status::{Phase, Status};
use crate::tmux::ConnectionHandle;
use crate::tmux::Connections;

/// The option that turns client messages on.
pub const NOTIFY_OPTION: &str = "@panectl-notify";
/// The option holding the user's notification command.
pub const NOTIFY_COMMAND_OPTION: &str = "@panectl-notify-command";
/// The option that rings the bell in the agent's pane.
pub const NOTIFY_BELL_OPTION: &str = "@panectl-notify-bell";
/// The option holding a webhook URL (trusted from a server on this machine only).
pub const NOTIFY_WEBHOOK_OPTION: &str = "@panectl-notify-webhook";

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

/// One notification: what happened, to which pane, and the dialog if the agent waits on one.
/// The webhook posts it as JSON; the command gets it in its environment.
#[derive(Debug, Clone, Serialize)]
pub struct Notice {
    /// `waiting` (the agent waits for the user), `completed` (it finished a turn) or
    /// `changed` (another notable status).
    pub event: &'static str,
    /// The server's label.
    pub server: String,
    /// The pane (`%N`).
    pub pane: String,
    /// The agent's provider.
    pub provider: String,
    /// The new status.
    pub status: Status,
    /// The status before.
    pub previous: Status,
    /// The dialog on the screen, for `waiting` (`null` when none could be read).
    pub decision: Option<Decision>,
    /// When the status changed (RFC 3339, UTC).
    pub time: String,
}

impl Notice {
    /// The notice of a status change at `time_ms` (Unix milliseconds).
    pub fn new(
        server: &str,
        pane: PaneId,
        provider: &str,
        (status, previous): (Status, Status),
        decision: Option<Decision>,
        time_ms: u64,
    ) -> Notice {
        let event = match status.phase() {
            Phase::Blocked => "waiting",
            Phase::Ready | Phase::Ended => "completed",
            Phase::Busy | Phase::Unknown => "changed",
        };
        Notice {
            event,
            server: server.to_string(),
            pane: pane.to_string(),
            provider: provider.to_string(),
            status,
            previous,
            decision,
            time: rfc3339(time_ms),
        }
    }
}

/// Unix milliseconds as an RFC 3339 UTC time with milliseconds.
fn rfc3339(ms: u64) -> String {
    let seconds = ms / 1000;
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
}

/// The environment of the user's notification command: the pane, provider and statuses, and
/// the dialog (empty question, `[]` options and no fingerprint when there is none). Values
/// only: nothing of them is written into the command.
pub fn command_env(notice: &Notice) -> BTreeMap<&'static str, String> {
    let (question, options, fingerprint) = match &notice.decision {
        Some(decision) => (
            decision.question.clone(),
            serde_json::to_string(&decision.options).unwrap_or_else(|_| "[]".into()),
            decision.fingerprint.clone(),
        ),
        None => (String::new(), "[]".to_string(), String::new()),
    };
    BTreeMap::from([
        ("PANECTL_SERVER", notice.server.clone()),
        ("PANECTL_PANE", notice.pane.clone()),
        ("PANECTL_PROVIDER", notice.provider.clone()),
        ("PANECTL_STATUS", notice.status.to_string()),
        ("PANECTL_PREVIOUS", notice.previous.to_string()),
        ("PANECTL_EVENT", notice.event.to_string()),
        ("PANECTL_QUESTION", question),
        ("PANECTL_OPTIONS", options),
        ("PANECTL_DECISION", fingerprint),
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
    /// `--notify-webhook`: the local user's webhook, the only one used for a server on another
    /// host.
    pub webhook: Option<webhook::WebhookUrl>,
    /// How the webhook posts.
    pub webhook_timing: webhook::Timing,
    /// `--notify-desktop`: whether desktop notifications may be shown (a server's
    /// `@panectl-notify-desktop off` turns them off too).
    pub desktop: bool,
}

/// The notification options read from the tmux server.
#[derive(Debug, Default)]
struct Settings {
    messages: bool,
    command: String,
    bell: bool,
    desktop: bool,
    webhook: String,
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

/// The webhook to post to: like [`chosen_command`], a local server's option over the daemon's
/// own, a remote server's never (`ignored` says it was set and not used). A URL that is not
/// plain `http://` is `Err`.
fn chosen_webhook(
    options: &NotifyOptions,
    from_server: &str,
) -> (Result<Option<webhook::WebhookUrl>, webhook::UrlError>, bool) {
    let own = Ok(options.webhook.clone());
    if options.remote {
        (own, !from_server.trim().is_empty())
    } else if from_server.trim().is_empty() {
        (own, false)
    } else {
        (webhook::WebhookUrl::parse(from_server).map(Some), false)
    }
}

/// Reads the options; `None` when tmux cannot be asked.
async fn settings(handle: &ConnectionHandle) -> Option<Settings> {
    const VERSION: Format = Format::new("#{version}");
    let line = Line::new(crate::query::show_global_option(NOTIFY_OPTION))
        .then(crate::query::show_global_option(NOTIFY_COMMAND_OPTION))
        .then(crate::query::show_global_option(NOTIFY_BELL_OPTION))
        .then(crate::query::show_global_option(desktop::DESKTOP_OPTION))
        .then(crate::query::show_global_option(NOTIFY_WEBHOOK_OPTION))
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
        command: user_command(&text(1), &text(5)),
        bell: text(2) == "on",
        desktop: text(3) != "off",
        webhook: text(4),
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

/// The dialog on `pane`'s screen, asked of the connection that holds the pane.
async fn decision(connections: &Connections, pane: PaneId) -> Option<Decision> {
    for handle in connections.values() {
        match handle.explain(pane).await {
            Ok(Some(explained)) => return explained.decision,
            Ok(None) => {}
            Err(error) => debug!(%pane, %error, "cannot read the dialog for the notification"),
        }
    }
    None
}

/// What was said once already about options ignored or refused.
#[derive(Default)]
struct Said {
    command_ignored: bool,
    webhook_ignored: bool,
    webhook_refused: Option<String>,
}

/// Sends notifications until `cancel` fires.
pub async fn run(
    options: NotifyOptions,
    bus: EventBus,
    connections: watch::Receiver<Connections>,
    tracker: TaskTracker,
    cancel: CancellationToken,
) {
    let mut said = Said::default();
    let hook = webhook::Webhook::start(options.webhook_timing, &tracker, cancel.clone());
    let mut events = bus.subscribe();
    loop {
        let event = tokio::select! {
            () = cancel.cancelled() => break,
            event = events.recv() => event,
        };
        let event = match event {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                warn!(
                    missed,
                    "notifications fell behind the events: some may be missed"
                );
                continue;
            }
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
        let all = connections.borrow().clone();
        let Some(handle) = all.values().next().cloned() else {
            debug!(%pane, "no connection to the server: no notification");
            continue;
        };
        let settings = match settings(&handle).await {
            Some(settings) => settings,
            None => {
                debug!(%pane, "cannot read the notification options; the daemon's own hold");
                Settings {
                    desktop: true,
                    ..Settings::default()
                }
            }
        };
        if settings.messages {
            show(&handle, *pane, *status).await;
        }
        if settings.bell && options.remote {
            ring_remote(&handle, *pane).await;
        } else if settings.bell {
            ring(&handle, *pane).await;
        }
        let dialog = if *status == Status::WaitingUserAnswer {
            decision(&all, *pane).await
        } else {
            None
        };
        let notice = Notice::new(
            &options.server,
            *pane,
            provider.as_deref().unwrap_or_default(),
            (*status, *previous),
            dialog,
            event.time_ms,
        );
        notify_off_tmux(&options, &settings, &notice, &hook, &mut said);
        if options.desktop
            && settings.desktop
            && let Some(found) = desktop::find(|name| std::env::var_os(name))
        {
            desktop::send(&found, &notice, &tracker, &cancel);
        }
        let (command, ignored) = chosen_command(&options, &settings.command);
        if ignored && !std::mem::replace(&mut said.command_ignored, true) {
            warn!(
                "{NOTIFY_COMMAND_OPTION} of a server on another host is not run here (its \
                 options are data); set --notify-command (notify_command in config.toml) for \
                 a command of your own"
            );
        }
        if let Some(command) = command {
            run_command(command, command_env(&notice), &tracker, &cancel);
        }
    }
}

/// Queues the notice for the webhook chosen, if any.
fn notify_off_tmux(
    options: &NotifyOptions,
    settings: &Settings,
    notice: &Notice,
    hook: &webhook::Webhook,
    said: &mut Said,
) {
    let (url, ignored) = chosen_webhook(options, &settings.webhook);
    if ignored && !std::mem::replace(&mut said.webhook_ignored, true) {
        warn!(
            "{NOTIFY_WEBHOOK_OPTION} of a server on another host is not used here (its options \
             are data); set --notify-webhook ([notify] webhook in config.toml) for a webhook of \
             your own"
        );
    }
    match url {
        Ok(Some(url)) => match serde_json::to_vec(notice) {
            Ok(body) => hook.post(url, body.into()),
            Err(error) => {
                crate::events::count_notification_dropped();
                warn!(%error, "cannot write the notification as JSON: dropped");
            }
        },
        Ok(None) => {}
        Err(error) => {
            crate::events::count_notification_dropped();
            let text = error.to_string();
            if said.webhook_refused.as_ref() != Some(&text) {
                warn!("{NOTIFY_WEBHOOK_OPTION}: {text}");
                said.webhook_refused = Some(text);
            }
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
            ..NotifyOptions::default()
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
        let notice = Notice::new(
            "devbox:work",
            "%7".parse().unwrap(),
            "codex",
            (Status::Completed, Status::Processing),
            None,
            0,
        );
        let env = command_env(&notice);
        assert_eq!(env["PANECTL_SERVER"], "devbox:work");
        assert_eq!(env["PANECTL_PANE"], "%7");
        assert_eq!(env["PANECTL_PROVIDER"], "codex");
        assert_eq!(env["PANECTL_STATUS"], "completed");
        assert_eq!(env["PANECTL_PREVIOUS"], "processing");
        assert_eq!(env["PANECTL_EVENT"], "completed");
        assert_eq!(env["PANECTL_OPTIONS"], "[]");
        assert_eq!(env["PANECTL_QUESTION"], "");
    }

    #[test]
    fn a_dialog_reaches_the_command_and_the_webhook_as_data() {
        use crate::status::decision::Choice;
        let choice = |number: usize, label: &str, pointed: bool| Choice {
            number,
            label: label.into(),
            detail: String::new(),
            pointed,
            keys: vec!["Enter".into()],
        };
        let decision = Decision {
            question: "Run `rm -rf build`? $(touch x)".into(),
            options: vec![choice(1, "Yes", true), choice(2, "No", false)],
            fingerprint: "0123456789abcdef".into(),
        };
        let notice = Notice::new(
            "default",
            "%1".parse().unwrap(),
            "claude_code",
            (Status::WaitingUserAnswer, Status::Processing),
            Some(decision),
            1_764_892_800_123,
        );
        let env = command_env(&notice);
        assert_eq!(env["PANECTL_QUESTION"], "Run `rm -rf build`? $(touch x)");
        assert_eq!(env["PANECTL_DECISION"], "0123456789abcdef");
        let options: serde_json::Value = serde_json::from_str(&env["PANECTL_OPTIONS"]).unwrap();
        assert_eq!(options[1]["label"], "No");
        assert_eq!(options[0]["pointed"], true);
        assert_eq!(options[0]["keys"][0], "Enter");
        let json = serde_json::to_value(&notice).unwrap();
        assert_eq!(json["event"], "waiting");
        assert_eq!(json["status"], "waiting_user_answer");
        assert_eq!(json["decision"]["options"][0]["number"], 1);
        assert_eq!(json["time"], "2025-12-05T00:00:00.123Z");
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }

    #[test]
    fn a_remote_servers_webhook_is_never_chosen() {
        let own = webhook::WebhookUrl::parse("http://127.0.0.1:9/mine").unwrap();
        let remote = NotifyOptions {
            remote: true,
            webhook: Some(own.clone()),
            ..NotifyOptions::default()
        };
        assert_eq!(
            chosen_webhook(&remote, "http://evil.example/"),
            (Ok(Some(own.clone())), true)
        );
        let local = NotifyOptions {
            remote: false,
            ..remote
        };
        let theirs = webhook::WebhookUrl::parse("http://127.0.0.1:9/theirs").unwrap();
        assert_eq!(
            chosen_webhook(&local, "http://127.0.0.1:9/theirs"),
            (Ok(Some(theirs)), false)
        );
        assert_eq!(chosen_webhook(&local, ""), (Ok(Some(own)), false));
        assert!(chosen_webhook(&local, "https://ntfy.sh/x").0.is_err());
    }
}
