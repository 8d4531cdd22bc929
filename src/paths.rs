//! Where a daemon keeps its files: the API socket, the single-instance lock, the log and the
//! list of its tmux clients. One set per tmux server, derived from the server's socket path, in
//! a private directory (mode 0700, owned by the user) so no other user can reach the API.

use std::path::{Path, PathBuf};

use crate::address::ServerAddress;

/// Why the runtime directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// It is missing and cannot be made, or it is not private to this user (a symlink,
    /// another user's, open to others).
    #[error(transparent)]
    Untrusted(#[from] crate::trust::TrustError),
}

/// The files of the daemon for one tmux server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimePaths {
    dir: PathBuf,
    stem: String,
}

impl RuntimePaths {
    /// The paths for a tmux server: `$XDG_RUNTIME_DIR/panectl/` or, without it,
    /// `${TMUX_TMPDIR:-/tmp}/panectl-UID/`, then the stem the server's host gives (on this
    /// machine `<socket name>-<hash of its path>`, [`crate::host::socket_stem`]).
    pub fn for_server(address: &ServerAddress) -> RuntimePaths {
        let stem = address.host().runtime_stem(address.socket());
        RuntimePaths {
            dir: crate::runtime_dir::path(),
            stem,
        }
    }

    /// The paths for a tmux socket inside a given directory.
    pub fn in_dir(dir: PathBuf, socket: &Path) -> RuntimePaths {
        RuntimePaths {
            dir,
            stem: crate::host::socket_stem(socket),
        }
    }

    /// The name that tells this server's files apart: the socket name and a hash of its path.
    pub fn stem(&self) -> &str {
        &self.stem
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The API socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join(format!("{}.sock", self.stem))
    }

    /// The lock that keeps a second daemon for the same server from starting.
    pub fn lock(&self) -> PathBuf {
        self.dir.join(format!("{}.lock", self.stem))
    }

    /// The bearer token of the TCP listener.
    pub fn token(&self) -> PathBuf {
        self.dir.join(format!("{}.token", self.stem))
    }

    /// The statuses of this daemon's agents, for the summaries of other daemons that count
    /// every server (`@panectl-summary-all`).
    pub fn counts(&self) -> PathBuf {
        self.dir.join(format!("{}.counts", self.stem))
    }

    /// The log of a detached daemon.
    pub fn log(&self) -> PathBuf {
        self.dir.join(format!("{}.log", self.stem))
    }

    /// The directory of the pipe transport's FIFOs (made 0700 when the first is needed).
    pub fn pipes(&self) -> PathBuf {
        self.dir.join(format!("{}.pipes", self.stem))
    }

    /// The directory of the sockets the daemon's control clients attach through (made 0700
    /// when the first is needed). Named by the hash alone: a socket path must stay under 108
    /// bytes.
    pub fn attach(&self) -> PathBuf {
        self.dir.join(format!(
            "{:08x}.attach",
            crate::host::fnv1a(self.stem.as_bytes())
        ))
    }

    /// The directory of the records of divergences the watchdog found (made 0700 when the
    /// first is saved; `panectl replay --divergence` replays one).
    pub fn divergences(&self) -> PathBuf {
        self.dir.join(format!("{}.divergences", self.stem))
    }

    /// The pids of the daemon's tmux control clients, for cleanup after a crash.
    pub fn clients(&self) -> PathBuf {
        self.dir.join(format!("{}.clients", self.stem))
    }

    /// Creates the directory (0700) or checks that an existing one is private: tmux's rules
    /// for its socket directory (`lstat`, no symlink, owned by this user, mode 0700). A
    /// directory that fails is refused and left as it is. Called again before each use.
    pub fn ensure_dir(&self) -> Result<(), PathError> {
        Ok(crate::trust::ensure_private_dir(
            "runtime directory",
            &self.dir,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_short_and_distinct() {
        let dir = PathBuf::from("/run/user/1/panectl");
        let a = RuntimePaths::in_dir(dir.clone(), Path::new("/tmp/tmux-1/default"));
        let b = RuntimePaths::in_dir(dir.clone(), Path::new("/other/tmux-1/default"));
        assert_eq!(
            a,
            RuntimePaths::in_dir(dir, Path::new("/tmp/tmux-1/default"))
        );
        assert_ne!(a.socket(), b.socket());
        assert!(
            a.socket()
                .to_string_lossy()
                .starts_with("/run/user/1/panectl/default-")
        );
        let odd = RuntimePaths::in_dir(PathBuf::from("/d"), Path::new("/x/we ird;name"));
        assert!(
            odd.socket()
                .to_string_lossy()
                .starts_with("/d/we_ird_name-")
        );
    }

    #[test]
    fn the_directory_is_made_private_and_a_wider_one_refused() {
        use std::fs;
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let paths = RuntimePaths::in_dir(base.path().join("panectl"), Path::new("/tmp/s"));
        paths.ensure_dir().unwrap();
        let mode = fs::metadata(paths.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(paths.dir(), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(paths.ensure_dir().is_err());
        assert_eq!(
            fs::metadata(paths.dir()).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
