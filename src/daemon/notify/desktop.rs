//! The desktop notification: `notify-send` (libnotify), run as a program with its words as
//! arguments (no shell), when this machine has a desktop session to show it in.
//!
//! How the desktop is found, each time a notification is due (so a session bus that comes
//! later counts): a session bus is `DBUS_SESSION_BUS_ADDRESS` in the daemon's environment, else
//! the socket `$XDG_RUNTIME_DIR/bus` (systemd's user bus, handed to `notify-send` as
//! `DBUS_SESSION_BUS_ADDRESS=unix:path=...`); and `notify-send` is a file found on `PATH`.
//! Without either, nothing is tried. `@panectl-notify-desktop off` or `[notify] desktop =
//! false` turns it off.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};

use super::Notice;

/// The option that turns desktop notifications off (`off`).
pub const DESKTOP_OPTION: &str = "@panectl-notify-desktop";

/// How long the desktop may take to take a notification before `notify-send` is ended.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a desktop notification can go: the session bus to give `notify-send`, and the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desktop {
    /// `DBUS_SESSION_BUS_ADDRESS` for the program (`None`: it has it from the environment).
    pub bus: Option<OsString>,
    /// `notify-send`.
    pub program: PathBuf,
}

/// The desktop as the environment `env` (a lookup of variables) says, and `PATH`.
pub fn find(env: impl Fn(&str) -> Option<OsString>) -> Option<Desktop> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    let bus = if set("DBUS_SESSION_BUS_ADDRESS").is_some() {
        None
    } else {
        let socket = PathBuf::from(set("XDG_RUNTIME_DIR")?).join("bus");
        if !is_socket(&socket) {
            return None;
        }
        let mut address = OsString::from("unix:path=");
        address.push(socket.as_os_str());
        Some(address)
    };
    let program = std::env::split_paths(&set("PATH")?)
        .map(|dir| dir.join("notify-send"))
        .find(|path| is_executable(path))?;
    Some(Desktop { bus, program })
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Body text for a notification server that reads markup: `&`, `<` and `>` as entities, so
/// that an agent's text shows as written and never becomes a link or an image.
fn plain(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The title and body of a notice.
pub fn text(notice: &Notice) -> (String, String) {
    let who = if notice.provider.is_empty() {
        "an agent".to_string()
    } else {
        notice.provider.clone()
    };
    let title = match notice.event {
        "waiting" => format!("panectl: {who} in {} waits for you", notice.pane),
        "completed" => format!("panectl: {who} in {} has finished", notice.pane),
        _ => format!("panectl: {who} in {} is {}", notice.pane, notice.status),
    };
    let body = match &notice.decision {
        Some(decision) => {
            let mut body = decision.question.clone();
            for choice in &decision.options {
                body.push_str(&format!("\n{}. {}", choice.number, choice.label));
            }
            body
        }
        None if notice.event == "waiting" => "An answer is needed.".to_string(),
        None => format!("{} on {}", notice.status, notice.server),
    };
    (title, plain(&body))
}

/// Runs `notify-send` for `notice`, detached; it is ended if the desktop does not take the
/// notification within ten seconds, and reaped.
pub fn send(desktop: &Desktop, notice: &Notice, tracker: &TaskTracker, cancel: &CancellationToken) {
    let (title, body) = text(notice);
    let urgency = if notice.event == "waiting" {
        "critical"
    } else {
        "normal"
    };
    let mut child = tokio::process::Command::new(&desktop.program);
    child
        .args(["--app-name=panectl", "--urgency", urgency, "--"])
        .arg(title)
        .arg(body)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(bus) = &desktop.bus {
        child.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    crate::host::count_process_started();
    let mut child = match child.spawn() {
        Ok(child) => child,
        Err(error) => {
            crate::events::count_notification_dropped();
            warn!(%error, program = %desktop.program.display(), "cannot run notify-send: a desktop notification is dropped");
            return;
        }
    };
    let cancel = cancel.clone();
    tracker.spawn(async move {
        let stderr = child.stderr.take();
        let waited = tokio::select! {
            () = cancel.cancelled() => return,
            waited = tokio::time::timeout(SEND_TIMEOUT, child.wait()) => waited,
        };
        match waited {
            Ok(Ok(status)) if status.success() => debug!("sent the desktop notification"),
            Ok(Ok(status)) => {
                let mut said = String::new();
                if let Some(mut stderr) = stderr {
                    use tokio::io::AsyncReadExt;
                    let mut bytes = Vec::new();
                    let _ = (&mut stderr).take(4096).read_to_end(&mut bytes).await;
                    said = String::from_utf8_lossy(&bytes).trim().to_string();
                }
                crate::events::count_notification_dropped();
                warn!(%status, said, "notify-send failed: a desktop notification is dropped");
            }
            Ok(Err(error)) => debug!(%error, "cannot wait for notify-send"),
            Err(_) => {
                crate::events::count_notification_dropped();
                warn!("notify-send did not end within 10 s (the desktop does not answer): ended");
                let _ = child.kill().await;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn a_session_bus_and_notify_send_on_path_make_a_desktop() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let program = bin.join("notify-send");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let runtime = dir.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        let path = format!("/nonexistent:{}", bin.display());
        let with = |pairs: &[(&str, &str)]| {
            let map: HashMap<String, OsString> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), OsString::from(v)))
                .collect();
            find(move |name| map.get(name).cloned())
        };
        // No bus: no desktop.
        assert_eq!(with(&[("PATH", &path)]), None);
        assert_eq!(
            with(&[
                ("PATH", &path),
                ("XDG_RUNTIME_DIR", runtime.to_str().unwrap())
            ]),
            None
        );
        // A bus address in the environment.
        assert_eq!(
            with(&[
                ("PATH", &path),
                ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/x")
            ]),
            Some(Desktop {
                bus: None,
                program: program.clone()
            })
        );
        // The user bus socket.
        let socket = runtime.join("bus");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let found = with(&[
            ("PATH", &path),
            ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ]);
        let mut address = OsString::from("unix:path=");
        address.push(&socket);
        assert_eq!(
            found,
            Some(Desktop {
                bus: Some(address),
                program
            })
        );
        // No notify-send: nothing.
        assert_eq!(
            with(&[("PATH", "/nonexistent"), ("DBUS_SESSION_BUS_ADDRESS", "x")]),
            None
        );
    }

    #[test]
    fn the_body_says_the_question_and_options_as_plain_text() {
        let notice = Notice {
            event: "waiting",
            server: "default".into(),
            pane: "%3".into(),
            provider: "codex".into(),
            status: crate::status::Status::WaitingUserAnswer,
            previous: crate::status::Status::Processing,
            decision: Some(crate::status::decision::Decision {
                question: "Run <b>rm</b> & co?".into(),
                options: vec![crate::status::decision::Choice {
                    number: 1,
                    label: "Yes".into(),
                    detail: String::new(),
                    pointed: true,
                    keys: vec!["Enter".into()],
                }],
                fingerprint: "00".into(),
            }),
            time: String::new(),
        };
        let (title, body) = text(&notice);
        assert_eq!(title, "panectl: codex in %3 waits for you");
        assert_eq!(body, "Run &lt;b&gt;rm&lt;/b&gt; &amp; co?\n1. Yes");
    }
}
