//! Starting a `tmux -C attach-session` client in a way that cannot crash the tmux server.
//!
//! tmux 3.2 to 3.6a crash when a notification for every control client (a new session, a
//! changed active pane, ...) comes while a control client is half introduced (see
//! [`identify`] and docs/tmux-crashes.md). panectl attaches one client per session, so
//! orchestrators that create sessions all day hit it. The client is therefore not pointed at
//! the server: it connects to a socket of panectl's in a private directory, and a relay task
//! passes its messages on to the server through the [`identify::IdentifyGate`], which makes
//! the client a control client in the same read as tmux sets up its control state. After that
//! the relay only copies: the client's stdin and stdout (passed to the server as descriptors
//! while it introduces itself) carry the control protocol directly between panectl and the
//! server, as before.

pub mod identify;
mod relay;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::UnixListener;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;
use tracing::warn;

use crate::address::ServerAddress;
use crate::ids::SessionId;

/// Why a control client could not be started.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// The private directory of the relay sockets is not usable.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The directory is not private to this user (a symlink, another user's, open to
    /// others).
    #[error(transparent)]
    Untrusted(#[from] crate::trust::TrustError),
    /// `tmux` could not be started.
    #[error("cannot start tmux: {0}")]
    Spawn(#[source] std::io::Error),
    /// The client ended before it connected.
    #[error("tmux exited before it connected ({0})")]
    Exited(String),
    /// The client did not connect in time.
    #[error("tmux did not connect within {0:?}")]
    Timeout(Duration),
    /// The host refuses to attach a client now (over ssh: not connected, or no safe way).
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    /// Something other than the client connected.
    #[error("a process other than the tmux client (pid {0:?}) connected to the relay socket")]
    Stranger(Option<i32>),
}

/// A control client attached through the relay.
#[derive(Debug)]
pub struct ControlClient {
    /// The `tmux -C` process.
    pub child: Child,
    /// Its stdin: control commands, one per line.
    pub stdin: ChildStdin,
    /// Its stdout: the control protocol.
    pub stdout: ChildStdout,
    /// The relay between the client and the server; it ends when either side closes.
    pub relay: JoinHandle<()>,
}

/// How long the client may take to connect to the relay.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Relay sockets of this process are numbered.
static NEXT_SOCKET: AtomicU64 = AtomicU64::new(0);

/// Starts `tmux -C attach-session -E -t SESSION` through a relay whose socket is made in `dir`
/// (a private directory, created 0700 when missing). `-E` keeps tmux from copying panectl's
/// environment into the session (`update-environment`): an observer changes nothing.
pub async fn control_client(
    address: &ServerAddress,
    session: SessionId,
    dir: &Path,
) -> Result<ControlClient, AttachError> {
    let target = session.to_string();
    let started = start_through_relay(
        address,
        dir,
        &["-C", "attach-session", "-E", "-t", &target],
        Stdio::piped(),
    )
    .await?;
    let Started {
        mut child,
        stdin,
        stdout,
        relay,
    } = started;
    let Some(stdout) = stdout else {
        let _ = child.kill().await;
        relay.abort();
        return Err(AttachError::Exited("started without pipes".into()));
    };
    Ok(ControlClient {
        child,
        stdin,
        stdout,
        relay,
    })
}

/// A control client that takes no pane output (`-f no-output`), attached to whichever session
/// tmux picks: see [`OutputFreeClient`].
pub async fn output_free_client(
    address: &ServerAddress,
    dir: &Path,
) -> Result<OutputFreeClient, AttachError> {
    let Started {
        child,
        stdin,
        relay,
        ..
    } = start_through_relay(
        address,
        dir,
        &[
            "-C",
            "attach-session",
            "-E",
            "-f",
            "no-output,ignore-size,read-only",
        ],
        Stdio::null(),
    )
    .await?;
    Ok(OutputFreeClient {
        child,
        stdin,
        relay,
    })
}

/// A control client with the `no-output` flag, whose one effect is on tmux's flow control.
///
/// tmux stops reading a pane's terminal when every attached client is a control client whose
/// output is backed up, and it checks `pause-after` only when it queues or writes output: so a
/// daemon that is stopped or hung (its control clients' pipes full) would block the programs
/// in its panes for as long as it stays so, `pause-after` never firing. A client with
/// `no-output` never counts as backed up, so tmux keeps reading every pane, the daemon's own
/// clients fall behind, and tmux pauses their panes after `pause-after` seconds (which the
/// daemon resyncs when it runs again). Its stdout is `/dev/null`: only notifications go there.
#[derive(Debug)]
pub struct OutputFreeClient {
    /// The `tmux -C` process.
    pub child: Child,
    /// Its stdin, held open: tmux detaches the client when it closes.
    pub stdin: ChildStdin,
    /// The relay between the client and the server; it ends when either side closes.
    pub relay: JoinHandle<()>,
}

/// A `tmux` client connected to the server through the relay.
struct Started {
    child: Child,
    stdin: ChildStdin,
    stdout: Option<ChildStdout>,
    relay: JoinHandle<()>,
}

/// Starts `tmux ARGS` pointed at a relay socket in `dir`, checks that the process that
/// connects is that client, and relays it to the server through the identify gate.
async fn start_through_relay(
    address: &ServerAddress,
    dir: &Path,
    args: &[&str],
    stdout: Stdio,
) -> Result<Started, AttachError> {
    if let Some(command) = address.host().attach_command(address.socket(), args) {
        return start_on_host(command?, args, stdout);
    }
    private_dir(dir)?;
    let path = dir.join(format!(
        "{}-{}.s",
        std::process::id(),
        NEXT_SOCKET.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|source| AttachError::Io {
        what: "cannot listen on",
        path: path.clone(),
        source,
    })?;
    let _remove = RemoveOnDrop(&path);
    let mut child = address
        .command_through(&path, args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .map_err(AttachError::Spawn)?;
    // Taken first: `Child::wait` closes the stdin it still holds.
    let stdout = child.stdout.take();
    let Some(stdin) = child.stdin.take() else {
        let _ = child.kill().await;
        return Err(AttachError::Exited("started without pipes".into()));
    };
    let accepted = tokio::select! {
        accepted = listener.accept() => accepted.map_err(|source| AttachError::Io {
            what: "cannot accept on",
            path: path.clone(),
            source,
        }),
        status = child.wait() => Err(AttachError::Exited(match status {
            Ok(status) => status.to_string(),
            Err(error) => error.to_string(),
        })),
        () = tokio::time::sleep(CONNECT_TIMEOUT) => Err(AttachError::Timeout(CONNECT_TIMEOUT)),
    };
    let client = match accepted {
        Ok((client, _)) => client,
        Err(error) => {
            let _ = child.kill().await;
            return Err(error);
        }
    };
    drop(listener);
    let peer = client.peer_cred().ok().and_then(|cred| cred.pid());
    if peer.is_none() || peer.map(|pid| pid as u32) != child.id() {
        let _ = child.kill().await;
        return Err(AttachError::Stranger(peer));
    }
    let server = address.socket().to_path_buf();
    let what = args.join(" ");
    let relay = tokio::spawn(async move {
        if let Err(error) = relay::run(client, &server).await {
            warn!(client = %what, %error, "the relay between a tmux control client and the server failed");
        }
    });
    Ok(Started {
        child,
        stdin,
        stdout,
        relay,
    })
}

/// Starts a client that attaches safely by itself on its host ([`crate::host::Host::attach_command`]:
/// over ssh, behind the remote gate). There is no relay here: the "relay" handle is the task
/// that logs what the client says on stderr, which ends when the client does.
fn start_on_host(
    command: std::process::Command,
    args: &[&str],
    stdout: Stdio,
) -> Result<Started, AttachError> {
    crate::host::count_process_started();
    let mut command = tokio::process::Command::from(command);
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(AttachError::Spawn)?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let Some(stdin) = child.stdin.take() else {
        return Err(AttachError::Exited("started without pipes".into()));
    };
    let what = args.join(" ");
    let relay = tokio::spawn(async move {
        let Some(stderr) = stderr else { return };
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
        while let Ok(Some(line)) = lines.next_line().await {
            warn!(client = %what, line, "the remote control client says");
        }
    });
    Ok(Started {
        child,
        stdin,
        stdout,
        relay,
    })
}

/// Removes the relay sockets left in `dir` by a daemon that died while a client was
/// attaching (their names are removed as soon as the client is in). Only for the daemon that
/// holds the server's lock: every socket there is then stale.
pub fn remove_stale_sockets(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_socket = entry
            .file_type()
            .is_ok_and(|kind| std::os::unix::fs::FileTypeExt::is_socket(&kind));
        if is_socket && path.extension().is_some_and(|e| e == "s") {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Creates `dir` 0700 if missing; refuses a symlink, or a directory of another user or open
/// to others (tmux's rules for its own socket directory).
fn private_dir(dir: &Path) -> Result<(), AttachError> {
    Ok(crate::trust::ensure_private_dir(
        "the directory of the attach sockets",
        dir,
    )?)
}

/// Removes the relay socket's name once the client is in (or the attempt failed).
struct RemoveOnDrop<'a>(&'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}
