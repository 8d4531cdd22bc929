//! The durable inbox: messages queued for agents, delivered exactly once, in order, when each
//! receiver is ready ([`delivery`]), kept in SQLite ([`store`]) so that neither a crash nor a
//! restart loses or repeats one.

pub mod assignments;
pub mod delivery;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{Notify, mpsc, oneshot};

use crate::daemon::events::{EventBus, EventKind};

pub use assignments::{Assignment, AssignmentState, NewAssignment};
pub use store::{InboxError, Message, NewMessage, State, Store};

/// `$XDG_STATE_HOME/panectl/<server>/inbox.sqlite`, else under `~/.local/state`; `server` is the
/// daemon's per-server file stem, so each tmux server has its own inbox.
pub fn default_path(server: &str) -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
                .join(".local/state")
        });
    base.join("panectl").join(server).join("inbox.sqlite")
}

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// Talks to the thread that owns the inbox database. Cheap to clone.
#[derive(Clone)]
pub struct InboxHandle {
    jobs: mpsc::Sender<Job>,
    queued: Arc<Notify>,
}

impl std::fmt::Debug for InboxHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InboxHandle")
    }
}

impl InboxHandle {
    /// Opens the database at `path` (creating its directory, 0700) and starts the thread that
    /// owns it; the thread ends when the last handle is dropped. Every message queued or moved
    /// to another state is published on `events` (when given) as an [`EventKind::Message`].
    pub fn open(
        path: &Path,
        events: Option<EventBus>,
    ) -> Result<(InboxHandle, std::thread::JoinHandle<()>), InboxError> {
        if let Some(dir) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| InboxError::Database {
                    path: dir.display().to_string(),
                    source: rusqlite::Error::InvalidPath(PathBuf::from(e.to_string())),
                })?;
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
        receiver.await.map_err(|_| InboxError::Closed)?
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
