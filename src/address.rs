//! Which tmux server to talk to, and how to start `tmux` processes aimed at it.
//!
//! panectl picks the server as tmux itself does: `-S path`, else `-L name` under
//! `$TMUX_TMPDIR/tmux-UID/`, else the socket of the server it runs inside (`$TMUX`), else the
//! default socket. The choice is resolved once to a socket path, and every `tmux` process is
//! started with `-S` that path, so they can never disagree.
//!
//! The address also carries the [`Host`] the server runs on (chosen with it: this machine's
//! [`LocalHost`] today); liveness and the `tmux` processes go through it (see [`crate::host`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::host::ssh::{SshError, SshHost, SshOptions};
use crate::host::{Host, LocalHost, SharedHost};
use crate::raw::RawBytes;

/// Why a tmux server address could not be worked out or used.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    /// Both `-L` and `-S` were given.
    #[error("give either -L NAME or -S PATH, not both")]
    Conflict,
    /// A label with a slash would leave tmux's socket directory.
    #[error("invalid tmux socket name {0:?}: it may not contain '/'")]
    BadLabel(String),
    /// A relative `-S` path means nothing on another host.
    #[error("-S {0:?} with --ssh: give the socket's absolute path on the remote host")]
    RelativeRemotePath(PathBuf),
    /// The ssh destination cannot be used.
    #[error(transparent)]
    Ssh(#[from] SshError),
    /// Running `tmux` failed.
    #[error("cannot run tmux: {0}")]
    Spawn(#[source] std::io::Error),
    /// `tmux` ran and failed.
    #[error("tmux {command} failed: {stderr}")]
    Failed {
        /// The command.
        command: String,
        /// What tmux printed on stderr.
        stderr: String,
    },
    /// `tmux` did not answer in time.
    #[error("tmux {0} did not finish within 10 seconds")]
    Timeout(String),
}

/// A tmux server, by socket path, on its host.
#[derive(Debug, Clone)]
pub struct ServerAddress {
    socket: PathBuf,
    host: SharedHost,
}

/// Two addresses are the same server when the socket and the host's name agree.
impl PartialEq for ServerAddress {
    fn eq(&self, other: &ServerAddress) -> bool {
        self.socket == other.socket && self.host.name() == other.host.name()
    }
}

impl Eq for ServerAddress {}

/// The directory tmux keeps its sockets in: `$TMUX_TMPDIR/tmux-UID` (default `/tmp`).
fn socket_dir() -> PathBuf {
    let base = std::env::var_os("TMUX_TMPDIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    base.join(format!("tmux-{}", nix::unistd::getuid()))
}

impl ServerAddress {
    /// Resolves the server from `-L`/`-S` and the environment, as tmux does.
    pub fn resolve(
        label: Option<&str>,
        path: Option<&Path>,
    ) -> Result<ServerAddress, AddressError> {
        let socket = match (label, path) {
            (Some(_), Some(_)) => return Err(AddressError::Conflict),
            (None, Some(path)) => path.to_path_buf(),
            (Some(label), None) => {
                if label.contains('/') || label.is_empty() {
                    return Err(AddressError::BadLabel(label.to_string()));
                }
                socket_dir().join(label)
            }
            (None, None) => match std::env::var("TMUX") {
                // $TMUX is "socket,pid,session".
                Ok(value) if !value.is_empty() => {
                    PathBuf::from(value.split(',').next().unwrap_or_default())
                }
                _ => socket_dir().join("default"),
            },
        };
        Ok(ServerAddress {
            socket,
            host: LocalHost::shared(),
        })
    }

    /// A server on another host reached over ssh: `-S PATH` (absolute, on that host), `-L
    /// NAME`, or the remote `default` socket; `$TMUX` is not consulted (it names a server of
    /// this machine).
    pub fn remote(
        label: Option<&str>,
        path: Option<&Path>,
        options: SshOptions,
    ) -> Result<ServerAddress, AddressError> {
        let socket = match (label, path) {
            (Some(_), Some(_)) => return Err(AddressError::Conflict),
            (None, Some(path)) if path.is_absolute() => path.to_path_buf(),
            (None, Some(path)) => return Err(AddressError::RelativeRemotePath(path.into())),
            (Some(label), None) => {
                if label.contains('/') || label.is_empty() {
                    return Err(AddressError::BadLabel(label.to_string()));
                }
                PathBuf::from(label)
            }
            (None, None) => PathBuf::from("default"),
        };
        let host = SshHost::new(options, &crate::runtime_dir::path(), &socket)?;
        Ok(ServerAddress {
            socket,
            host: std::sync::Arc::new(host),
        })
    }

    /// The names (`-L NAME`) of this user's tmux servers that answer in tmux's socket
    /// directory, sorted: what a mistyped `-L` is told to choose from.
    pub fn local_servers() -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(socket_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                entry.file_type().is_ok_and(|t| {
                    use std::os::unix::fs::FileTypeExt;
                    t.is_socket()
                })
            })
            .filter(|entry| LocalHost::shared().server_alive(&entry.path()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A server at an explicit socket path.
    pub fn from_socket(socket: impl Into<PathBuf>) -> ServerAddress {
        ServerAddress {
            socket: socket.into(),
            host: LocalHost::shared(),
        }
    }

    /// The same server reached through another host: how a server on another machine (and a
    /// test's stand-in host) gets its capability.
    #[must_use]
    pub fn with_host(self, host: SharedHost) -> ServerAddress {
        ServerAddress { host, ..self }
    }

    /// The host the server runs on: everything about its machine is asked of it.
    pub fn host(&self) -> &dyn Host {
        self.host.as_ref()
    }

    /// The host, shared (for a task that outlives the address it was given).
    pub fn shared_host(&self) -> SharedHost {
        SharedHost::clone(&self.host)
    }

    /// A short name for the server in views over many servers (`ls --all`) and in pane
    /// names (`SERVER/PANE`): `local` for this machine's default server, the socket's name for
    /// another local one (`work`), the ssh destination for a remote default server
    /// (`devbox`), and `DEST:NAME` for another remote one.
    pub fn label(&self) -> String {
        let name = self
            .socket
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.ssh_destination() {
            None if name == "default" => "local".to_string(),
            None => name,
            Some(destination) if name == "default" => destination.to_string(),
            Some(destination) => format!("{destination}:{name}"),
        }
    }

    /// The ssh destination of a server on another host.
    pub fn ssh_destination(&self) -> Option<&str> {
        self.host.name().strip_prefix("ssh:")
    }

    /// Whether the server runs on this machine.
    pub fn is_local(&self) -> bool {
        self.host.name() == "local"
    }

    /// The socket path (on a remote host: the absolute path given with `-S`, or the `-L`
    /// name as a relative path).
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// A `tmux` command aimed at this server: UTF-8 forced (`-u`, else tmux replaces non-ASCII
    /// in replies with `_`) and `TMUX` removed so it never talks to another server.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.command_at(&self.socket, args)
    }

    /// A `tmux` command like [`ServerAddress::command`] that connects to `socket` instead of
    /// the server's: the relay a control client attaches through (`tmux::attach`).
    pub fn command_through(&self, socket: &Path, args: &[&str]) -> tokio::process::Command {
        self.command_at(socket, args)
    }

    /// A `tmux` command like [`ServerAddress::command`] for code that waits without tokio
    /// (not killed on drop: the caller reaps it).
    pub fn blocking_command(&self, args: &[&str]) -> std::process::Command {
        crate::host::count_process_started();
        self.host.tmux_command(&self.socket, args)
    }

    /// The host's `tmux ARGS` for `socket`, counted, killed on drop.
    fn command_at(&self, socket: &Path, args: &[&str]) -> tokio::process::Command {
        crate::host::count_process_started();
        let mut command = tokio::process::Command::from(self.host.tmux_command(socket, args));
        command.kill_on_drop(true);
        command
    }

    /// Whether a server is listening on the socket, as its host says (on this machine: a
    /// connect, without starting a process).
    pub fn is_alive(&self) -> bool {
        self.host.server_alive(&self.socket)
    }

    /// Runs a one-shot tmux command and returns its stdout lines. Used only where no control
    /// connection exists yet (at start, and when a server comes back).
    pub async fn run(&self, args: &[&str]) -> Result<Vec<RawBytes>, AddressError> {
        let described = args.join(" ");
        let output = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output();
        let output = tokio::time::timeout(Duration::from_secs(10), output)
            .await
            .map_err(|_| AddressError::Timeout(described.clone()))?
            .map_err(AddressError::Spawn)?;
        if !output.status.success() {
            return Err(AddressError::Failed {
                command: described,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(RawBytes::from)
            .collect())
    }
}

impl std::fmt::Display for ServerAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_local() {
            write!(f, "{}", self.socket.display())
        } else {
            write!(f, "{}:{}", self.host.name(), self.socket.display())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_short_and_say_the_host() {
        let local = |path: &str| ServerAddress::from_socket(path).label();
        assert_eq!(local("/tmp/tmux-1/default"), "local");
        assert_eq!(local("/tmp/tmux-1/work"), "work");
        let remote = |label: Option<&str>, path: Option<&str>| {
            ServerAddress::remote(
                label,
                path.map(Path::new),
                SshOptions::new("me@devbox", None),
            )
            .unwrap()
            .label()
        };
        assert_eq!(remote(None, None), "me@devbox");
        assert_eq!(remote(Some("work"), None), "me@devbox:work");
        assert_eq!(remote(None, Some("/tmp/x/agents")), "me@devbox:agents");
    }

    #[test]
    fn explicit_choices_win() {
        let path = ServerAddress::resolve(None, Some(Path::new("/x/sock"))).unwrap();
        assert_eq!(path.socket(), Path::new("/x/sock"));
        let label = ServerAddress::resolve(Some("work"), None).unwrap();
        assert!(
            label
                .socket()
                .ends_with(format!("tmux-{}/work", nix::unistd::getuid()))
        );
        assert!(matches!(
            ServerAddress::resolve(Some("a"), Some(Path::new("/b"))),
            Err(AddressError::Conflict)
        ));
        assert!(matches!(
            ServerAddress::resolve(Some("../x"), None),
            Err(AddressError::BadLabel(_))
        ));
    }
}
