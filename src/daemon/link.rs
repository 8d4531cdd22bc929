//! The daemon's connection to a server's host, where it has one (an ssh master for a server
//! reached over ssh: [`crate::host::ssh`]): started before anything else talks to the host,
//! kept running, restarted with a backoff when it ends (a dropped or hung connection ends it:
//! its keepalives go unanswered). Every control client and one-shot command is multiplexed
//! over it; while it is down the host says the server is not running, the connections end,
//! and the supervisor attaches and reseeds every session once it is back.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::host::SharedHost;

/// The first wait before the link is made again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A link that lasted this long resets the backoff.
const STABLE: Duration = Duration::from_secs(30);

/// How long the link may take to come up (ssh's own `ConnectTimeout` is 10 s).
const UP_TIMEOUT: Duration = Duration::from_secs(30);

/// Keeps the host's link running until `cancel`. Returns at once for a host without one.
pub async fn keep(host: SharedHost, cancel: CancellationToken) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let Some(command) = host.link_command() else {
            return;
        };
        end_leftover(&host).await;
        let started = tokio::time::Instant::now();
        let outcome = tokio::select! {
            () = cancel.cancelled() => return,
            outcome = run_once(&host, command, &cancel) => outcome,
        };
        host.set_link(false, Some(outcome.clone()));
        if cancel.is_cancelled() {
            return;
        }
        if started.elapsed() >= STABLE {
            backoff = FIRST_BACKOFF;
        }
        warn!(host = host.name(), why = %outcome, retry_in = ?backoff, "the connection to the host ended");
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Asks a link an earlier daemon left running to end, and removes its socket.
async fn end_leftover(host: &SharedHost) {
    let Some(socket) = host.link_socket().map(std::path::Path::to_path_buf) else {
        return;
    };
    if !socket.exists() {
        return;
    }
    if let Some(command) = host.link_exit_command() {
        crate::host::count_process_started();
        let mut command = tokio::process::Command::from(command);
        command.kill_on_drop(true);
        if let Ok(Ok(status)) =
            tokio::time::timeout(Duration::from_secs(10), command.status()).await
            && status.success()
        {
            info!(
                host = host.name(),
                "ended the connection a previous daemon left"
            );
        }
    }
    let _ = std::fs::remove_file(&socket);
}

/// Runs the link once: until it ends or `cancel`. Returns why it ended.
async fn run_once(
    host: &SharedHost,
    command: std::process::Command,
    cancel: &CancellationToken,
) -> String {
    crate::host::count_process_started();
    let mut command = tokio::process::Command::from(command);
    // Its own process group: the ssh command may be wrapped (`sh -c`), and stopping it must
    // reach ssh itself.
    command
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return format!("cannot start ssh: {error}"),
    };
    // Held until the link ends: the master's session ends when it closes (see
    // `Host::link_command`).
    let _stdin = child.stdin.take();
    // ssh's last words say why it ended: read as they come (a full pipe would stall it).
    let said = tokio::spawn(last_words(child.stderr.take()));
    let socket = host.link_socket().map(std::path::Path::to_path_buf);
    // Up once its socket is there.
    let deadline = tokio::time::Instant::now() + UP_TIMEOUT;
    loop {
        if socket.as_ref().is_none_or(|s| s.exists()) {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            return ended(status.to_string(), said).await;
        }
        if tokio::time::Instant::now() > deadline {
            let _ = child.kill().await;
            return ended(format!("not connected within {UP_TIMEOUT:?}"), said).await;
        }
        tokio::select! {
            () = cancel.cancelled() => {
                stop(&mut child).await;
                return "stopped".into();
            }
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    info!(host = host.name(), "connected");
    host.set_link(true, None);
    let status = tokio::select! {
        () = cancel.cancelled() => {
            stop(&mut child).await;
            if let Some(socket) = &socket {
                let _ = std::fs::remove_file(socket);
            }
            return "stopped".into();
        }
        status = child.wait() => status,
    };
    let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
    ended(status, said).await
}

/// Ends the link: SIGTERM to its process group (ssh removes its socket and closes its
/// sessions), then SIGKILL.
async fn stop(child: &mut tokio::process::Child) {
    let Some(group) = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw)
    else {
        return;
    };
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
    if tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .is_err()
    {
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait().await;
    }
}

/// The last line ssh wrote on stderr, read to its end.
async fn last_words(stderr: Option<tokio::process::ChildStderr>) -> Option<String> {
    let mut pipe = stderr?;
    let mut last = None;
    let mut buffer = vec![0u8; 4096];
    let mut line = Vec::new();
    while let Ok(read) = pipe.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        for &byte in &buffer[..read] {
            if byte == b'\n' {
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if !text.is_empty() {
                    last = Some(text);
                }
                line.clear();
            } else if line.len() < 1024 {
                line.push(byte);
            }
        }
    }
    let text = String::from_utf8_lossy(&line).trim().to_string();
    if text.is_empty() { last } else { Some(text) }
}

/// Why the link ended: ssh's last words, else its exit status.
async fn ended(status: String, said: tokio::task::JoinHandle<Option<String>>) -> String {
    let words = tokio::time::timeout(Duration::from_secs(1), said)
        .await
        .ok()
        .and_then(Result::ok)
        .flatten();
    match words {
        Some(line) => format!("ssh: {line}"),
        None => format!("ssh ended ({status})"),
    }
}
