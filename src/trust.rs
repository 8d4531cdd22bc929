//! What panectl trusts on the file system: its own directories, files and sockets, and nothing
//! another local user could have planted or can change. Every place that creates or opens a
//! runtime directory, a state file, a token, a FIFO directory or an API socket checks it here,
//! with the same rules as tmux for its socket directory: `lstat` (a symlink is refused, never
//! followed), owned by this user, and closed to others.
//!
//! This module depends on nothing else of the crate.

use std::fs;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a path is not trusted.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Looking at it (or creating it) failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// It is a symbolic link: whoever made it chooses where it points.
    #[error("{what} {path} is a symbolic link; panectl does not follow it. Remove it: rm {path}")]
    Symlink {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// It is not the kind of file expected (a directory, a regular file, a socket).
    #[error("{what} {path} is not a {expected}; remove it or choose another path")]
    WrongKind {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The kind expected.
        expected: &'static str,
    },
    /// Another user owns it.
    #[error(
        "{what} {path} belongs to uid {owner}, not to you (uid {uid}); panectl refuses it. \
         Remove it (as its owner or root) or choose another path"
    )]
    NotOwned {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This user.
        uid: u32,
    },
    /// Others may read or change it.
    #[error("{what} {path} has mode {mode:o}, open to other users; run: chmod {wanted:o} {path}")]
    OpenToOthers {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
        /// The mode it should have.
        wanted: u32,
    },
    /// The process at the other end of a socket runs as another user.
    #[error(
        "the process listening on {path} runs as uid {peer}, not as you (uid {uid}); \
         nothing was sent to it"
    )]
    Peer {
        /// The socket.
        path: PathBuf,
        /// The peer's uid.
        peer: u32,
        /// This user.
        uid: u32,
    },
}

/// How closed to others a path must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Nothing for group and others (0700 for a directory, 0600 for a file): runtime
    /// directories, tokens.
    Private,
    /// Group and others may read but not write (a state directory the user chose, such as
    /// one in a 0755 home).
    NotWritable,
}

impl Access {
    fn forbidden(self) -> u32 {
        match self {
            Access::Private => 0o077,
            Access::NotWritable => 0o022,
        }
    }
}

/// The user files must belong to: the effective uid (the owner of whatever this process
/// creates).
pub fn uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> TrustError {
    let path = path.to_path_buf();
    move |source| TrustError::Io { what, path, source }
}

/// Checks what `lstat` says of `path`: not a symlink, of the kind `is_kind` accepts, owned by
/// this user, no `access`-forbidden mode bits.
fn check_metadata(
    what: &'static str,
    path: &Path,
    metadata: &fs::Metadata,
    expected: &'static str,
    is_kind: impl Fn(&fs::FileType) -> bool,
    access: Access,
) -> Result<(), TrustError> {
    let kind = metadata.file_type();
    if kind.is_symlink() {
        return Err(TrustError::Symlink {
            what,
            path: path.to_path_buf(),
        });
    }
    if !is_kind(&kind) {
        return Err(TrustError::WrongKind {
            what,
            path: path.to_path_buf(),
            expected,
        });
    }
    if metadata.uid() != uid() {
        return Err(TrustError::NotOwned {
            what,
            path: path.to_path_buf(),
            owner: metadata.uid(),
            uid: uid(),
        });
    }
    let mode = metadata.mode() & 0o7777;
    if mode & access.forbidden() != 0 {
        return Err(TrustError::OpenToOthers {
            what,
            path: path.to_path_buf(),
            mode,
            wanted: if kind.is_dir() { 0o700 } else { 0o600 },
        });
    }
    Ok(())
}

/// Checks an existing directory: not a symlink, ours, closed to others as `access` says.
pub fn check_dir(what: &'static str, path: &Path, access: Access) -> Result<(), TrustError> {
    let metadata = fs::symlink_metadata(path).map_err(io(what, path))?;
    check_metadata(what, path, &metadata, "directory", |k| k.is_dir(), access)
}

/// Creates `path` (mode 0700, its missing parents too) or finds it, then checks it as
/// [`check_dir`] does with [`Access::Private`]: tmux's rules for its socket directory. A
/// directory that exists with a wider mode is refused, not changed: its contents may already
/// have been touched by others.
pub fn ensure_private_dir(what: &'static str, path: &Path) -> Result<(), TrustError> {
    ensure_dir(what, path, Access::Private)
}

/// [`ensure_private_dir`] with the given [`Access`] for an existing directory.
pub fn ensure_dir(what: &'static str, path: &Path, access: Access) -> Result<(), TrustError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && fs::symlink_metadata(parent).is_err()
    {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io(what, parent))?;
    }
    // Not recursive: an existing symlink makes this fail with EEXIST, and lstat below sees it.
    match fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io(what, path)(error)),
    }
    check_dir(what, path, access)
}

/// Writes `bytes` to `path` as a file only its owner can read (0600), whatever the umask: made
/// so, and an older file of wider mode narrowed before it is written. What the daemon keeps
/// beside its socket (client pids, status counts, divergence records holding screen contents)
/// is nobody else's business, even in a private directory.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

/// Checks a file that may exist: `Ok(None)` when it does not; its metadata when it is a
/// regular file of this user, closed to others as `access` says.
pub fn check_file(
    what: &'static str,
    path: &Path,
    access: Access,
) -> Result<Option<fs::Metadata>, TrustError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => {
            check_regular_file(what, path, &metadata, access)?;
            Ok(Some(metadata))
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io(what, path)(error)),
    }
}

/// Checks an opened file (after `open` with `O_NOFOLLOW`): a regular file of this user, closed
/// to others as `access` says. Checking the open file, not the path, leaves no window for a
/// swap between the check and the use.
pub fn check_open_file(
    what: &'static str,
    path: &Path,
    file: &fs::File,
    access: Access,
) -> Result<fs::Metadata, TrustError> {
    let metadata = file.metadata().map_err(io(what, path))?;
    check_regular_file(what, path, &metadata, access)?;
    Ok(metadata)
}

/// [`check_metadata`] for a regular file.
fn check_regular_file(
    what: &'static str,
    path: &Path,
    metadata: &fs::Metadata,
    access: Access,
) -> Result<(), TrustError> {
    check_metadata(
        what,
        path,
        metadata,
        "regular file",
        |k| k.is_file(),
        access,
    )
}

/// Checks an API socket before connecting: its directory is private and ours, and the socket
/// itself is a socket of ours (not a symlink). A missing socket is an
/// [`io::ErrorKind::NotFound`] [`TrustError::Io`] (no daemon runs).
pub fn check_socket(path: &Path) -> Result<(), TrustError> {
    const WHAT: &str = "API socket";
    let metadata = fs::symlink_metadata(path).map_err(io(WHAT, path))?;
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        check_dir("the directory of the API socket", dir, Access::Private)?;
    }
    check_metadata(
        WHAT,
        path,
        &metadata,
        "socket",
        FileTypeExt::is_socket,
        Access::NotWritable,
    )
}

/// The uid of the process at the other end of a connected Unix socket.
pub fn peer_uid(socket: &impl AsFd) -> io::Result<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let credentials =
            nix::sys::socket::getsockopt(socket, nix::sys::socket::sockopt::PeerCredentials)?;
        Ok(credentials.uid())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let (uid, _gid) = nix::unistd::getpeereid(socket)?;
        Ok(uid.as_raw())
    }
}

/// Checks, before anything is written to it, that a connected socket's peer runs as this user
/// (`SO_PEERCRED`).
pub fn check_peer(path: &Path, socket: &impl AsFd) -> Result<(), TrustError> {
    let peer = peer_uid(socket).map_err(io("cannot check the peer of", path))?;
    if peer != uid() {
        return Err(TrustError::Peer {
            path: path.to_path_buf(),
            peer,
            uid: uid(),
        });
    }
    Ok(())
}

/// Whether the error says the path does not exist.
pub fn is_missing(error: &TrustError) -> bool {
    matches!(error, TrustError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_are_made_and_narrowed_to_their_owner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counts");
        write_private(&path, b"one").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        chmod(&path, 0o644);
        write_private(&path, b"two").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"two");
    }

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Whether the tests run as root, and can give files to another user.
    fn root() -> bool {
        uid() == 0
    }

    #[test]
    fn private_directories_are_made_0700_and_wider_ones_refused_not_changed() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/b/run");
        ensure_private_dir("runtime directory", &dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        ensure_private_dir("runtime directory", &dir).unwrap();
        chmod(&dir, 0o755);
        let error = ensure_private_dir("runtime directory", &dir).unwrap_err();
        assert!(matches!(
            error,
            TrustError::OpenToOthers { mode: 0o755, .. }
        ));
        assert!(error.to_string().contains("chmod 700"), "{error}");
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o755);
        // Read access for others is fine for a state directory, write access is not.
        ensure_dir("state directory", &dir, Access::NotWritable).unwrap();
        chmod(&dir, 0o775);
        assert!(ensure_dir("state directory", &dir, Access::NotWritable).is_err());
    }

    #[test]
    fn a_symlink_is_refused_and_its_target_left_alone() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        fs::create_dir(&target).unwrap();
        chmod(&target, 0o1777);
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = ensure_private_dir("runtime directory", &link).unwrap_err();
        assert!(matches!(error, TrustError::Symlink { .. }), "{error}");
        assert_eq!(fs::metadata(&target).unwrap().mode() & 0o7777, 0o1777);
        let file_link = base.path().join("file-link");
        std::os::unix::fs::symlink(base.path().join("nowhere"), &file_link).unwrap();
        assert!(matches!(
            check_file("token file", &file_link, Access::Private),
            Err(TrustError::Symlink { .. })
        ));
    }

    #[test]
    fn files_of_others_or_open_to_others_are_refused() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("inbox.sqlite");
        assert!(
            check_file("database", &path, Access::Private)
                .unwrap()
                .is_none()
        );
        fs::write(&path, b"x").unwrap();
        chmod(&path, 0o600);
        assert!(
            check_file("database", &path, Access::Private)
                .unwrap()
                .is_some()
        );
        chmod(&path, 0o644);
        assert!(check_file("database", &path, Access::NotWritable).is_ok());
        assert!(check_file("token", &path, Access::Private).is_err());
        chmod(&path, 0o666);
        assert!(matches!(
            check_file("database", &path, Access::NotWritable),
            Err(TrustError::OpenToOthers { .. })
        ));
        chmod(&path, 0o600);
        if root() {
            nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let error = check_file("database", &path, Access::NotWritable).unwrap_err();
            assert!(
                matches!(error, TrustError::NotOwned { owner: 65534, .. }),
                "{error}"
            );
            let file = fs::File::open(&path).unwrap();
            assert!(check_open_file("database", &path, &file, Access::Private).is_err());
        }
        assert!(matches!(
            check_file("database", base.path(), Access::Private),
            Err(TrustError::WrongKind { .. })
        ));
    }

    #[test]
    fn sockets_must_be_ours_in_a_private_directory_and_peers_run_as_us() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("run");
        ensure_private_dir("runtime directory", &dir).unwrap();
        let path = dir.join("api.sock");
        assert!(is_missing(&check_socket(&path).unwrap_err()));
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        check_socket(&path).unwrap();
        let stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert_eq!(peer_uid(&stream).unwrap(), uid());
        check_peer(&path, &stream).unwrap();
        check_peer(&path, &accepted).unwrap();
        chmod(&dir, 0o755);
        assert!(check_socket(&path).is_err());
        chmod(&dir, 0o700);
        if root() {
            nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            assert!(matches!(
                check_socket(&path),
                Err(TrustError::NotOwned { owner: 65534, .. })
            ));
        }
        let plain = dir.join("plain");
        fs::write(&plain, b"").unwrap();
        assert!(matches!(
            check_socket(&plain),
            Err(TrustError::WrongKind { .. })
        ));
    }
}
