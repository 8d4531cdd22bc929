//! The machine a tmux server runs on, as one capability: the seam a server reached another way
//! (over ssh, issue 17) plugs into as a new [`Host`], instead of edits wherever the local
//! machine is assumed.
//!
//! A [`Host`] is chosen once, with the server address ([`crate::address::ServerAddress`]
//! carries it: [`LocalHost`], or [`ssh::SshHost`] for a server reached over ssh), and travels with the address wherever the daemon goes:
//! the supervisor and its connections, the orchestration `Context`, the CLI. Everything that
//! asks about the server's machine asks it:
//!
//! - whether the server is alive ([`Host::server_alive`]);
//! - a `tmux` client process aimed at the server ([`Host::tmux_command`]: one-shot commands,
//!   control clients, the flow-control guard);
//! - the process tree of a pane's pid ([`Host::process_tree`]: provider detection);
//! - whether a directory exists ([`Host::is_dir`]: `launch --cwd`);
//! - the pipe transport's FIFOs ([`Host::make_fifo`], or [`HostError::NoPipes`]: the pipe
//!   transport is refused where tmux cannot write into a FIFO this process reads);
//! - the stem the daemon's runtime files are named after ([`Host::runtime_stem`]).
//!
//! What stays on this machine whatever the host (a remote implementation leaves these alone):
//! the daemon's own pid, command line and lock (`cli::daemon`: finding and restarting a running
//! daemon, `daemon::discovery`: `/proc/PID/stat`, `/proc/locks`), our own control clients
//! (`clients`: `/proc/PID/cmdline` of the clients this daemon started, which run here), the
//! runtime directory and its trust checks (`paths`, `trust`), the relay sockets control clients
//! attach through (`tmux::attach`), and the inbox database. A pane's pid for agent identity is
//! asked of tmux (`inbox::delivery`), not of the host.

use std::fmt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ids::PaneId;
use crate::pipe::{Fifo, PipeError};
use crate::status::process::ProcessEntry;

/// Processes this program has started (`tmux` clients and commands, ssh, a user's notification
/// command): the figure behind the claim that the daemon starts none while panes are idle
/// (`panectl health`).
static PROCESSES_STARTED: AtomicU64 = AtomicU64::new(0);

/// How many processes this program has started so far.
pub fn processes_started() -> u64 {
    PROCESSES_STARTED.load(Ordering::Relaxed)
}

/// Counts a process this program started.
pub fn count_process_started() {
    PROCESSES_STARTED.fetch_add(1, Ordering::Relaxed);
}

/// Why the host could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The host has no FIFOs this process can read (a remote server): the pipe transport is
    /// off there.
    #[error("the pipe transport is not available on host {host}")]
    NoPipes {
        /// The host's name.
        host: String,
    },
    /// Making the FIFO failed.
    #[error(transparent)]
    Pipe(#[from] PipeError),
    /// A control client cannot be attached on the host (not connected, or not safely).
    #[error("cannot attach a control client on {host}: {why}")]
    CannotAttach {
        /// The host's name.
        host: String,
        /// Why.
        why: String,
    },
}

/// The machine a tmux server runs on. See the module documentation.
pub trait Host: Send + Sync + fmt::Debug {
    /// A name that tells hosts apart (`local`; a remote host's destination): part of the
    /// server's identity.
    fn name(&self) -> &str;
    /// Whether a tmux server is listening on `socket`.
    fn server_alive(&self, socket: &Path) -> bool;
    /// A `tmux ARGS` process aimed at `socket` (UTF-8 forced, `TMUX` removed, stdin null); the
    /// caller adds the pipes (and, for tokio, kill on drop: [`ServerAddress::command`]). The
    /// arguments are given here, not added after, because a remote host quotes them for its
    /// shell.
    ///
    /// [`ServerAddress::command`]: crate::address::ServerAddress::command
    fn tmux_command(&self, socket: &Path, args: &[&str]) -> std::process::Command;
    /// A control client `tmux ARGS` that attaches safely by itself (on a host whose clients
    /// cannot go through this process's relay, `tmux::attach`): `None` to use the relay, an
    /// error when it cannot be attached safely now. Its stdin is piped; the caller sets the
    /// rest.
    fn attach_command(
        &self,
        _socket: &Path,
        _args: &[&str],
    ) -> Option<Result<std::process::Command, HostError>> {
        None
    }
    /// The long-lived process that carries the daemon's connection to the host (an ssh
    /// master), which the daemon keeps running (`daemon::link`); `None` on this machine.
    /// Asking for it also tells the host that the daemon keeps one.
    fn link_command(&self) -> Option<std::process::Command> {
        None
    }
    /// The socket the link process listens on once it is up.
    fn link_socket(&self) -> Option<&Path> {
        None
    }
    /// A process that asks a link left by an earlier daemon (killed, its master still
    /// running) to end, so that this daemon's own can take its socket.
    fn link_exit_command(&self) -> Option<std::process::Command> {
        None
    }
    /// What the daemon saw of its link: up or down, and why it is down.
    fn set_link(&self, _up: bool, _problem: Option<String>) {}
    /// Whether the daemon's first attempt at its link has come to an end (up, or failed with
    /// a reason): until then the server is neither known to run nor known not to.
    fn link_settled(&self) -> bool {
        true
    }
    /// Whether the host can be asked anything now: false while the daemon's link to it is
    /// down, when a server that does not answer may well be running (so its sessions are not
    /// gone, and a daemon that exits with its server stays).
    fn reachable(&self) -> bool {
        true
    }
    /// Why the host cannot be used now, as last seen (for `health` and `doctor`).
    fn problem(&self) -> Option<String> {
        None
    }
    /// For `doctor`: what the host has, asked now (over ssh: whether it answers, its tmux and
    /// python3); `None` for this machine, which `doctor` checks itself.
    fn check(&self) -> Option<Result<info::RemoteInfo, info::RemoteError>> {
        None
    }
    /// Whether tmux on the host can write into FIFOs this process reads (the pipe
    /// transport).
    fn has_pipes(&self) -> bool {
        true
    }
    /// `pid` and its descendants (breadth first, at most `limit`); empty if unknown.
    fn process_tree(&self, pid: u32, limit: usize) -> Vec<ProcessEntry>;
    /// Whether `path` is a directory on the host.
    fn is_dir(&self, path: &Path) -> bool;
    /// Makes the pane's FIFO in `dir`, or says the host has none.
    fn make_fifo(&self, dir: &Path, pane: PaneId) -> Result<Fifo, HostError>;
    /// The stem of the daemon's runtime files for the server on `socket` (unique per host and
    /// socket, safe in a file name).
    fn runtime_stem(&self, socket: &Path) -> String;
}

/// A shared [`Host`]: cheap to clone, carried with the server address.
pub type SharedHost = Arc<dyn Host>;

/// This machine: the socket is connected to, `/proc` is read, FIFOs are made here.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalHost;

impl LocalHost {
    /// The local host, shared.
    pub fn shared() -> SharedHost {
        Arc::new(LocalHost)
    }
}

impl Host for LocalHost {
    fn name(&self) -> &str {
        "local"
    }

    fn server_alive(&self, socket: &Path) -> bool {
        std::os::unix::net::UnixStream::connect(socket).is_ok()
    }

    fn tmux_command(&self, socket: &Path, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new("tmux");
        command
            .arg("-u")
            .arg("-S")
            .arg(socket)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null());
        command
    }

    fn process_tree(&self, pid: u32, limit: usize) -> Vec<ProcessEntry> {
        crate::os::process::tree(pid, limit)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn make_fifo(&self, dir: &Path, pane: PaneId) -> Result<Fifo, HostError> {
        Ok(Fifo::create(dir, pane)?)
    }

    fn runtime_stem(&self, socket: &Path) -> String {
        socket_stem(socket)
    }
}

/// FNV-1a: a stable, dependency-free hash to tell socket paths apart in file names.
pub(crate) fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// `<socket name>-<hash of its path>`: the socket's file name with anything but letters,
/// digits, `-` and `_` replaced (at most 32 characters), then the FNV-1a hash of the path.
pub fn socket_stem(socket: &Path) -> String {
    let name: String = socket
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    let hash = fnv1a(socket.as_os_str().as_encoded_bytes());
    format!("{name}-{hash:08x}")
}

pub mod info;
pub mod ssh;

#[cfg(test)]
pub(crate) mod fake;
#[cfg(test)]
mod tests;
