//! Keeps the API's Unix socket reachable for as long as the daemon runs.
//!
//! A socket file deleted (a cleaner of `/tmp` or of the runtime directory, a user's `rm`) or
//! replaced leaves a daemon that serves on a listener nobody can reach: clients say "no daemon"
//! and a new daemon finds the lock held. So the path is checked every [`CHECK_INTERVAL`], and at
//! once on SIGHUP: when it is no longer the socket the daemon bound (compared by device and
//! inode), the runtime directory, the lock and the socket are made again and served. Requests
//! on connections already open go on on the old listener until they end.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use super::InstanceLock;
use crate::api::listen::Limits;
use crate::api::server::PeerCheckedListener;
use crate::api::state::ApiState;
use crate::paths::RuntimePaths;

/// How often the socket's path is checked.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(2);

/// Device and inode of a file, which tell one socket file from another made at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
}

impl FileIdentity {
    /// The identity of what is at `path` now (not following a symbolic link); `None` if
    /// nothing is.
    pub fn of_path(path: &Path) -> Option<FileIdentity> {
        std::fs::symlink_metadata(path).ok().map(|m| FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    /// The identity of an open file.
    pub fn of_file(file: &std::fs::File) -> Option<FileIdentity> {
        file.metadata().ok().map(|m| FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
}

/// Serves the API on `listener` (bound at `paths.socket()`) until `cancel` fires, and makes
/// the socket again whenever its file goes away or is replaced. `lock` is re-taken first when
/// its file went too (a daemon started meanwhile that took a new lock keeps the path).
/// Returns the identity of the socket file last bound, for the clean-up at shutdown.
pub async fn serve(
    paths: RuntimePaths,
    listener: PeerCheckedListener,
    state: ApiState,
    limits: Limits,
    lock: &mut InstanceLock,
    tracker: TaskTracker,
    cancel: CancellationToken,
) -> Option<FileIdentity> {
    let socket = paths.socket();
    let mut bound = FileIdentity::of_path(&socket);
    spawn_server(listener, &state, limits, &tracker, &cancel);
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(hangup) => Some(hangup),
        Err(error) => {
            warn!(%error, "cannot handle SIGHUP; the API socket is still checked every 2 s");
            None
        }
    };
    // SIGUSR1 is tmux's "make your socket again": the same here (its default would end the
    // daemon and leave its files).
    let mut user1 =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()) {
            Ok(user1) => Some(user1),
            Err(error) => {
                warn!(%error, "cannot handle SIGUSR1");
                None
            }
        };
    // Whether the last attempt to make the socket again failed (logged once, not every 2 s).
    let mut failing = false;
    let mut interval = tokio::time::interval(CHECK_INTERVAL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let hung_up = async {
            let signalled = match hangup.as_mut() {
                Some(hangup) => hangup.recv().await.is_some(),
                None => false,
            };
            if !signalled {
                std::future::pending::<()>().await;
            }
        };
        let user1_received = async {
            let signalled = match user1.as_mut() {
                Some(user1) => user1.recv().await.is_some(),
                None => false,
            };
            if !signalled {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            _ = interval.tick() => {}
            () = hung_up => info!("SIGHUP: checking the API socket"),
            () = user1_received => info!("SIGUSR1: checking the API socket"),
        }
        if bound.is_some() && FileIdentity::of_path(&socket) == bound {
            continue;
        }
        match recreate(&paths, &socket, lock) {
            Ok(listener) => {
                bound = FileIdentity::of_path(&socket);
                // The old listener's socket has no name any more, so nobody new reaches it;
                // it keeps serving the connections it has (an `events` stream) until they end.
                spawn_server(listener, &state, limits, &tracker, &cancel);
                failing = false;
                warn!(api = %socket.display(), "the API socket was deleted or replaced; made it again");
            }
            Err(error) if !failing => {
                failing = true;
                warn!(api = %socket.display(), %error, "the API socket is gone and cannot be made again (tried again every 2 s)");
            }
            Err(error) => {
                tracing::debug!(api = %socket.display(), %error, "the API socket still cannot be made again");
            }
        }
    }
    bound
}

/// Serves the API on one listener until `cancel` fires.
fn spawn_server(
    listener: PeerCheckedListener,
    state: &ApiState,
    limits: Limits,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) {
    tracker.spawn(crate::api::server::serve(
        listener,
        state.clone(),
        limits,
        cancel.clone(),
    ));
}

/// Why the socket could not be made again.
#[derive(Debug, thiserror::Error)]
pub enum RecreateError {
    /// The runtime directory cannot be made.
    #[error(transparent)]
    Paths(#[from] crate::paths::PathError),
    /// The lock file went too, and another process holds the new one.
    #[error("the lock {0} is held by another daemon now")]
    LockTaken(PathBuf),
    /// Another daemon answers at the path.
    #[error("another daemon answers on it now")]
    Answered,
    /// Binding failed.
    #[error("binding it: {0}")]
    Bind(std::io::Error),
}

fn recreate(
    paths: &RuntimePaths,
    socket: &Path,
    lock: &mut InstanceLock,
) -> Result<PeerCheckedListener, RecreateError> {
    paths.ensure_dir()?;
    if let Some(taken) = lock.retake(socket) {
        return Err(RecreateError::LockTaken(taken));
    }
    // Whatever is there now and answers is not ours to replace (the lock says no other daemon
    // of this server runs, but a socket is cheap to check).
    if super::discovery::answers(socket) {
        return Err(RecreateError::Answered);
    }
    PeerCheckedListener::bind(socket).map_err(RecreateError::Bind)
}
