//! Where a daemon keeps its files: the API socket, the single-instance lock, the log and the
//! list of its tmux clients. One set per tmux server, derived from the server's socket path, in
//! a private directory (mode 0700, owned by the user) so no other user can reach the API.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::tmux::ServerAddress;

/// Why the runtime directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Creating or inspecting it failed.
    #[error("runtime directory {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// It exists but belongs to someone else or is open to others.
    #[error(
        "runtime directory {path} is not private (owner {owner}, mode {mode:o}); remove it or fix its permissions"
    )]
    NotPrivate {
        /// The directory.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// Its mode bits.
        mode: u32,
    },
}

/// The files of the daemon for one tmux server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimePaths {
    dir: PathBuf,
    stem: String,
}

/// FNV-1a: a stable, dependency-free hash to tell socket paths apart in file names.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

impl RuntimePaths {
    /// The paths for a tmux server: `$XDG_RUNTIME_DIR/panectl/` or, without it,
    /// `${TMUX_TMPDIR:-/tmp}/panectl-UID/`, then `<socket name>-<hash of its path>.*`.
    pub fn for_server(address: &ServerAddress) -> RuntimePaths {
        let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
            Some(runtime) => PathBuf::from(runtime).join("panectl"),
            None => {
                let base = std::env::var_os("TMUX_TMPDIR")
                    .filter(|v| !v.is_empty())
                    .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
                base.join(format!("panectl-{}", nix::unistd::getuid()))
            }
        };
        Self::in_dir(dir, address.socket())
    }

    /// The paths for a tmux socket inside a given directory.
    pub fn in_dir(dir: PathBuf, socket: &Path) -> RuntimePaths {
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
        RuntimePaths {
            dir,
            stem: format!("{name}-{hash:08x}"),
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
        self.dir
            .join(format!("{:08x}.attach", fnv1a(self.stem.as_bytes())))
    }

    /// The pids of the daemon's tmux control clients, for cleanup after a crash.
    pub fn clients(&self) -> PathBuf {
        self.dir.join(format!("{}.clients", self.stem))
    }

    /// Creates the directory (0700) or checks that an existing one is private.
    pub fn ensure_dir(&self) -> Result<(), PathError> {
        let io_error = |source| PathError::Io {
            path: self.dir.clone(),
            source,
        };
        match fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
        {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(io_error(error)),
        }
        let metadata = fs::metadata(&self.dir).map_err(io_error)?;
        let uid = nix::unistd::getuid().as_raw();
        let mode = metadata.permissions().mode() & 0o777;
        if metadata.uid() != uid {
            return Err(PathError::NotPrivate {
                path: self.dir.clone(),
                owner: metadata.uid(),
                mode,
            });
        }
        if mode & 0o077 != 0 {
            fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700)).map_err(io_error)?;
        }
        Ok(())
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
    fn the_directory_is_made_private() {
        let base = tempfile::tempdir().unwrap();
        let paths = RuntimePaths::in_dir(base.path().join("panectl"), Path::new("/tmp/s"));
        paths.ensure_dir().unwrap();
        let mode = fs::metadata(paths.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(paths.dir(), fs::Permissions::from_mode(0o755)).unwrap();
        paths.ensure_dir().unwrap();
        assert_eq!(
            fs::metadata(paths.dir()).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
}
