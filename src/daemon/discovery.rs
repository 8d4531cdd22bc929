//! Finding the one daemon of a tmux server from any environment.
//!
//! A daemon's API socket lives in the runtime directory of the environment it was started from
//! (`$XDG_RUNTIME_DIR`), which a shell, a cron job or a systemd unit may not share. So the
//! daemon also publishes where it is in the tmux server itself, as server options
//! ([`API_OPTION`], [`PID_OPTION`], [`VERSION_OPTION`]), and keeps a lock next to the tmux
//! socket ([`server_lock_path`]) whose place depends on the server alone. A client that finds
//! no daemon at its own path asks tmux (`show-options -s`), and uses the socket named there if
//! it is a socket owned by the same user.

use std::fs;
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::control::command::SafeValue;
use crate::paths::RuntimePaths;
use crate::tmux::ServerAddress;

/// The server option naming the daemon's API socket.
pub const API_OPTION: &str = "@panectl_api";
/// The server option holding the daemon's pid.
pub const PID_OPTION: &str = "@panectl_pid";
/// The server option holding the daemon's version.
pub const VERSION_OPTION: &str = "@panectl_version";

/// How long a one-shot `tmux` command of a client may take.
const TMUX_TIMEOUT: Duration = Duration::from_secs(5);

/// What a daemon published about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Published {
    /// Its pid.
    pub pid: Option<u32>,
    /// Its API socket.
    pub api: Option<PathBuf>,
    /// Its version.
    pub version: Option<String>,
}

/// Runs `tmux -S SOCKET ARGS` (on the server's host) without a shell and returns its stdout if it succeeded within
/// a few seconds. Arguments are passed as they are: none is a format.
pub fn tmux_output(address: &ServerAddress, args: &[&str]) -> Option<String> {
    let mut child = address
        .blocking_command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + TMUX_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                child.stdout.take()?.read_to_string(&mut out).ok()?;
                return status.success().then_some(out);
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// A server option's value (`show-options -sqv NAME`), `None` when unset or unreadable.
pub fn server_option(address: &ServerAddress, name: &str) -> Option<String> {
    let value = tmux_output(address, &["show-options", "-sqv", name])?;
    let value = value.trim_end_matches('\n');
    (!value.is_empty()).then(|| value.to_string())
}

/// What the daemon of the server published in its options (nothing if no server answers).
pub fn published(address: &ServerAddress) -> Published {
    if !address.is_alive() {
        return Published::default();
    }
    Published {
        pid: server_option(address, PID_OPTION).and_then(|v| v.trim().parse().ok()),
        api: server_option(address, API_OPTION).map(PathBuf::from),
        version: server_option(address, VERSION_OPTION),
    }
}

/// Whether `path` is a Unix socket owned by this user (not a symlink) in a private directory
/// of this user.
pub fn is_own_socket(path: &Path) -> bool {
    crate::trust::check_socket(path).is_ok()
}

/// Whether something accepts connections on the socket.
pub fn answers(path: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(path).is_ok()
}

/// Whether a process with this pid exists (and is not a zombie waiting to be reaped).
pub fn process_alive(pid: u32) -> bool {
    crate::os::process::alive(pid)
}

/// Where a client finds the daemon, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The API socket to use.
    pub socket: PathBuf,
    /// Whether it came from the server's `@panectl_api` rather than the caller's own
    /// runtime directory.
    pub published: bool,
}

/// The API socket of the server's daemon: the caller's own path if a daemon answers there,
/// else the socket the server's `@panectl_api` names if it is a socket of this user that
/// answers, else the caller's own path (where a daemon it starts would listen).
pub fn find_api(address: &ServerAddress) -> Found {
    let own = RuntimePaths::for_server(address).socket();
    if answers(&own) {
        return Found {
            socket: own,
            published: false,
        };
    }
    if address.is_alive()
        && let Some(api) = server_option(address, API_OPTION).map(PathBuf::from)
        && is_own_socket(&api)
        && answers(&api)
    {
        return Found {
            socket: api,
            published: true,
        };
    }
    Found {
        socket: own,
        published: false,
    }
}

/// The lock file of a tmux server whose place does not depend on the environment:
/// `.panectl-NAME.lock` next to the server's socket, when that directory belongs to this user
/// and is private (as tmux's own `tmux-UID` directory is). `None` otherwise: the runtime
/// directory's lock and the published options then keep a second daemon away.
pub fn server_lock_path(address: &ServerAddress) -> Option<PathBuf> {
    let socket = address.socket();
    let dir = socket.parent().filter(|d| !d.as_os_str().is_empty())?;
    let name = socket.file_name()?.to_string_lossy().into_owned();
    let metadata = fs::metadata(dir).ok()?;
    let private = metadata.is_dir()
        && metadata.uid() == nix::unistd::getuid().as_raw()
        && metadata.permissions().mode() & 0o077 == 0;
    private.then(|| dir.join(format!(".panectl-{name}.lock")))
}

/// Writes `pid` and `api` into a lock file the daemon holds, so that a refusal can say which
/// daemon holds it.
pub fn write_lock_owner(file: &mut fs::File, pid: u32, api: &Path) -> io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{pid}\n{}", api.display())?;
    file.flush()
}

/// The pid and API socket written into a lock file, if it holds them.
pub fn read_lock_owner(path: &Path) -> Option<(u32, PathBuf)> {
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let pid = lines.next()?.trim().parse().ok()?;
    let api = PathBuf::from(lines.next()?);
    Some((pid, api))
}

/// Whether the process `pid` holds a `flock` on the file at `path` (see
/// [`crate::os::locks::holds_lock`]): a pid written in a lock file is only trusted while its
/// process still holds the lock.
pub fn holds_lock(pid: u32, path: &Path) -> bool {
    crate::os::locks::holds_lock(pid, path)
}

/// A value for a server option, if it holds only characters no tmux version expands.
pub fn option_value(value: &str) -> Option<SafeValue> {
    SafeValue::new(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_lock_sits_next_to_a_private_socket_directory_only() {
        let base = tempfile::tempdir().unwrap();
        let private = base.path().join("tmux-1");
        fs::create_dir(&private).unwrap();
        fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).unwrap();
        let address = ServerAddress::from_socket(private.join("work"));
        assert_eq!(
            server_lock_path(&address),
            Some(private.join(".panectl-work.lock"))
        );
        fs::set_permissions(&private, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(server_lock_path(&address), None);
        let missing = ServerAddress::from_socket(base.path().join("none/work"));
        assert_eq!(server_lock_path(&missing), None);
    }

    #[test]
    fn lock_owners_round_trip() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("x.lock");
        let mut file = fs::File::create(&path).unwrap();
        write_lock_owner(&mut file, 42, Path::new("/run/a.sock")).unwrap();
        write_lock_owner(&mut file, 7, Path::new("/run/b.sock")).unwrap();
        assert_eq!(
            read_lock_owner(&path),
            Some((7, PathBuf::from("/run/b.sock")))
        );
        fs::write(&path, "").unwrap();
        assert_eq!(read_lock_owner(&path), None);
    }

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(u32::MAX));
    }

    #[test]
    fn only_own_sockets_are_trusted() {
        let base = tempfile::tempdir().unwrap();
        fs::set_permissions(base.path(), fs::Permissions::from_mode(0o700)).unwrap();
        let file = base.path().join("plain");
        fs::write(&file, "").unwrap();
        assert!(!is_own_socket(&file));
        let socket = base.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert!(is_own_socket(&socket));
        assert!(answers(&socket));
        assert!(!is_own_socket(&base.path().join("missing")));
    }
}
