//! The durable inbox: messages queued for agents, delivered exactly once, in order, when each
//! receiver is ready ([`delivery`]), kept in SQLite ([`store`]) so that neither a crash nor a
//! restart loses or repeats one.

pub mod agents;
pub mod assignments;
pub mod delivery;
pub mod held;
pub mod store;
pub mod worktrees;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{Notify, mpsc, oneshot};

use crate::events::{EventBus, EventKind};

pub use agents::AgentRecord;
pub use assignments::{Assignment, AssignmentState, NewAssignment};
pub use store::{InboxError, Message, NewMessage, State, Store};
pub use worktrees::WorktreeRecord;

/// Whether a base directory of the default inbox path is the user's own: missing (it will be
/// made 0700), or the user's and not writable by others. `HOME=/tmp` is not: a shared
/// directory where another user could have made `.local/state` first.
fn own_or_missing(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(dir) {
        Ok(metadata) => metadata.uid() == crate::trust::uid() && metadata.mode() & 0o022 == 0,
        Err(error) => error.kind() == std::io::ErrorKind::NotFound,
    }
}

/// `$XDG_STATE_HOME/panectl/<server>/inbox.sqlite`, else `$HOME/.local/state/...`, else the
/// same under the home directory the user database gives for this uid; `server` is the daemon's
/// per-server file stem, so each tmux server has its own inbox. Never a shared directory such
/// as `/tmp`: a base that is not the user's own (or is writable by others) is passed over, and
/// with none left this is an error that says what to set. Relative values are ignored, as the
/// XDG specification says.
pub fn default_path(server: &str) -> Result<PathBuf, InboxError> {
    let variable = |name: &str| std::env::var_os(name).map(PathBuf::from);
    let user_home = || {
        nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|user| user.dir)
    };
    state_dir(variable("XDG_STATE_HOME"), variable("HOME"), user_home)
        .map(|base| base.join("panectl").join(server).join("inbox.sqlite"))
        .ok_or(InboxError::NoStateDir {
            uid: crate::trust::uid(),
        })
}

/// The first of the state directories that is absolute and the user's own.
fn state_dir(
    xdg_state_home: Option<PathBuf>,
    home: Option<PathBuf>,
    user_home: impl FnOnce() -> Option<PathBuf>,
) -> Option<PathBuf> {
    let usable = |dir: &PathBuf| dir.is_absolute() && dir != Path::new("/") && own_or_missing(dir);
    xdg_state_home
        .filter(usable)
        .or_else(|| home.filter(usable).map(|home| home.join(".local/state")))
        .or_else(|| {
            user_home()
                .filter(usable)
                .map(|home| home.join(".local/state"))
        })
}

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// Talks to the thread that owns the inbox database. Cheap to clone.
#[derive(Clone)]
pub struct InboxHandle {
    jobs: mpsc::Sender<Job>,
    queued: Arc<Notify>,
    /// What SQLite said when it first found the database damaged (it stays damaged).
    damage: Arc<std::sync::OnceLock<String>>,
}

impl std::fmt::Debug for InboxHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InboxHandle")
    }
}

impl InboxHandle {
    /// Opens the database at `path` (creating its directory, 0700; see [`Store::open`] for what
    /// is refused) and starts the thread that
    /// owns it; the thread ends when the last handle is dropped. Every message queued or moved
    /// to another state is published on `events` (when given) as an [`EventKind::Message`].
    pub fn open(
        path: &Path,
        events: Option<EventBus>,
    ) -> Result<(InboxHandle, std::thread::JoinHandle<()>), InboxError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::trust::ensure_dir("inbox directory", dir, crate::trust::Access::NotWritable)?;
        }
        let mut store = Store::open(path)?;
        let (jobs, mut receiver) = mpsc::channel::<Job>(256);
        let thread = std::thread::Builder::new()
            .name("panectl-inbox".into())
            .spawn(move || {
                while let Some(job) = receiver.blocking_recv() {
                    job(&mut store);
                    let changes = store.take_changes();
                    if let Some(bus) = &events {
                        for message in changes {
                            bus.publish(EventKind::Message {
                                message_id: message.id,
                                pane: message.pane,
                                state: message.state,
                                sender: message.sender,
                            });
                        }
                    }
                }
            })
            .map_err(|e| InboxError::Database {
                path: path.display().to_string(),
                source: rusqlite::Error::InvalidPath(PathBuf::from(e.to_string())),
            })?;
        Ok((
            InboxHandle {
                jobs,
                queued: Arc::new(Notify::new()),
                damage: Arc::new(std::sync::OnceLock::new()),
            },
            thread,
        ))
    }

    /// Runs `job` on the database thread and returns its result.
    pub async fn call<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Store) -> Result<T, InboxError> + Send + 'static,
    ) -> Result<T, InboxError> {
        let (sender, receiver) = oneshot::channel();
        self.jobs
            .send(Box::new(move |store: &mut Store| {
                let _ = sender.send(job(store));
            }))
            .await
            .map_err(|_| InboxError::Closed)?;
        let result = receiver.await.map_err(|_| InboxError::Closed)?;
        if let Err(InboxError::Database { path, source }) = &result
            && store::is_damage(source)
            && self.damage.set(source.to_string()).is_ok()
        {
            tracing::error!(
                path,
                %source,
                "the inbox database is damaged; deliveries stop. Stop the daemon, move the file \
                 aside (or restore a backup) and start it again"
            );
        }
        result
    }

    /// What SQLite said when it found the database damaged, if it has (reported by health;
    /// deliveries stop).
    pub fn damage(&self) -> Option<&str> {
        self.damage.get().map(String::as_str)
    }

    /// Queues a message and wakes the delivery task.
    pub async fn enqueue(&self, message: NewMessage) -> Result<Message, InboxError> {
        let stored = self.call(move |store| store.enqueue(message)).await?;
        self.queued.notify_one();
        Ok(stored)
    }

    /// Wakes the delivery task (a message was queued by a [`InboxHandle::call`]).
    pub fn wake(&self) {
        self.queued.notify_one();
    }

    /// Resolves when a message was queued since the last call.
    pub async fn queued(&self) {
        self.queued.notified().await;
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_home_is_passed_over_for_the_inbox() {
        let mine = tempfile::tempdir().unwrap();
        let home = mine.path().to_path_buf();
        // `HOME=/tmp`: sticky and writable by everyone.
        let tmp = PathBuf::from("/tmp");
        assert_eq!(
            state_dir(None, Some(tmp.clone()), || Some(home.clone())),
            Some(home.join(".local/state"))
        );
        assert_eq!(
            state_dir(Some(tmp.clone()), Some(tmp.clone()), || None),
            None
        );
        // A home of one's own, and one that does not exist yet, are taken.
        assert_eq!(
            state_dir(None, Some(home.clone()), || None),
            Some(home.join(".local/state"))
        );
        let later = home.join("not-yet");
        assert_eq!(
            state_dir(Some(later.clone()), None, || None),
            Some(later.clone())
        );
        // Relative values are ignored.
        assert_eq!(
            state_dir(Some("rel".into()), Some(home.clone()), || None),
            Some(home.join(".local/state"))
        );
    }
}
