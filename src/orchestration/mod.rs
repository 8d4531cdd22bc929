//! The workflows orchestrators call, without HTTP: starting agents ([`launch`]), typing into
//! and waiting on panes ([`input`]), following a worker's turn ([`turn`]) and handing work to
//! it ([`handoff`]), and closing it ([`close`]). The API's routes and the MCP tools are thin layers over these; every
//! function takes the daemon's [`Context`] and answers with a typed [`Error`], which the HTTP
//! layer turns into a status code.

pub mod agent_records;
pub mod answer;
pub mod close;
pub mod conversations;
pub mod dialogs;
pub mod follow;
pub mod handoff;
pub mod input;
pub mod launch;
pub mod launch_hooks;
pub mod launch_plan;
pub mod launch_setup;
pub mod limits;
pub mod names;
pub mod profile;
pub mod profile_import;
pub mod restore;
pub mod shell_guard;
pub mod turn;
pub mod worktree;
pub mod worktrees;

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::control::command::Line;
use crate::events::EventBus;
use crate::ids::PaneId;
use crate::status::providers::ProviderSet;
use crate::tmux::{
    ConnectionHandle, Connections, PaneSummary, RunError, ServerAddress, ServerStatus,
};

/// How long a request naming a pane the daemon does not know waits for the sessions' first
/// sync (at start, or while a session attaches) before it is answered with "not found".
pub const SYNC_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What the workflows read and act on: the daemon's live parts, cheap to clone.
#[derive(Clone)]
pub struct Context {
    /// The inbox.
    pub inbox: crate::inbox::InboxHandle,
    /// The live connections.
    pub connections: watch::Receiver<Connections>,
    /// The supervisor's status (whether the daemon is still starting).
    pub status: watch::Receiver<ServerStatus>,
    /// The event bus.
    pub bus: EventBus,
    /// The tmux server.
    pub address: ServerAddress,
    /// The API's Unix socket (agents' hooks report to it).
    pub api_socket: String,
    /// The provider rules in force.
    pub providers: watch::Receiver<Arc<ProviderSet>>,
    /// Fires at shutdown: waits end with [`Error::Unavailable`].
    pub shutdown: CancellationToken,
    /// Whether MCP clients may send text to panes without a recognised agent.
    pub mcp_allow_shell: bool,
    /// Whether MCP clients may launch agents with arguments and environment of their own.
    pub mcp_allow_args: bool,
    /// The completed agents an attached client has seen.
    pub seen: watch::Receiver<std::collections::BTreeSet<PaneId>>,
    /// Held while a dialog is answered: answers are taken one at a time, so two racing for
    /// one dialog cannot both press keys into it. It keeps what was answered, so that a dialog
    /// that leaves is told answered through panectl from answered in the pane.
    pub answering: Arc<answer::Answering>,
    /// Where launches make worktrees and how their branches are named.
    pub worktrees: worktree::WorktreeSettings,
    /// The daemon's task tracker: work that outlives a request (following an assignment) runs
    /// on it, so that shutdown waits for it.
    pub tasks: TaskTracker,
}

/// Why a workflow did not do what it was asked; each kind is one HTTP status in the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request is wrong (400).
    #[error("{0}")]
    BadRequest(String),
    /// What it names does not exist (404).
    #[error("{0}")]
    NotFound(String),
    /// It cannot be done in the current state (409): an ambiguous name, a shell pane, a
    /// message no longer pending.
    #[error("{0}")]
    Conflict(String),
    /// The caller may not ask for it (403): an MCP client asking to launch with arguments or
    /// environment the daemon does not let MCP clients choose.
    #[error("{0}")]
    Forbidden(String),
    /// The pane closed while it was waited on (410).
    #[error("{0}")]
    Gone(String),
    /// The daemon cannot do it now (503): a session reconnecting, the daemon stopping.
    #[error("{0}")]
    Unavailable(String),
    /// tmux or the agent did not do what was asked (502).
    #[error("{0}")]
    Failed(String),
    /// The command asked for could not run: it is not installed, or it exited at once (422).
    /// The request's own fault, not the daemon's or tmux's.
    #[error("{0}")]
    CommandFailed(String),
    /// The agent did not finish in time (504).
    #[error("{0}")]
    TimedOut(String),
    /// The inbox database failed (500).
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// A [`Error::BadRequest`] from a message: what every workflow says of a request it refuses.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Error::BadRequest(message.into())
    }
}

/// Runs a line of commands; the first command's reply, trimmed, or the error of the first that
/// failed.
pub async fn first_reply_line(handle: &ConnectionHandle, line: Line) -> Result<String, Error> {
    match handle.run(line).await {
        Ok(replies) => Ok(replies
            .first()
            .map(|r| String::from_utf8_lossy(&r.joined_body()).trim().to_string())
            .unwrap_or_default()),
        Err(error @ RunError::Connection(_)) => Err(Error::Unavailable(error.to_string())),
        Err(error) => Err(Error::Failed(error.to_string())),
    }
}

impl From<names::NameError> for Error {
    fn from(error: names::NameError) -> Self {
        match error {
            names::NameError::NotFound(_) => Error::NotFound(error.to_string()),
            names::NameError::Ambiguous { .. } => Error::Conflict(error.to_string()),
        }
    }
}

impl From<shell_guard::ShellRefused> for Error {
    fn from(refused: shell_guard::ShellRefused) -> Self {
        Error::Conflict(refused.0)
    }
}

impl From<crate::inbox::InboxError> for Error {
    fn from(error: crate::inbox::InboxError) -> Self {
        use crate::inbox::InboxError;
        let text = error.to_string();
        match error {
            InboxError::Refused(_) => Error::BadRequest(text),
            InboxError::NoSuchMessage(_) | InboxError::NoSuchAssignment(_) => Error::NotFound(text),
            InboxError::NotPending { .. } | InboxError::AssignmentEnded { .. } => {
                Error::Conflict(text)
            }
            _ => Error::Internal(text),
        }
    }
}

impl Context {
    pub fn handles(&self) -> Connections {
        self.connections.borrow().clone()
    }

    /// Every pane of every session; a pane in windows linked to several sessions once.
    pub async fn all_panes(&self) -> Vec<PaneSummary> {
        let handles = self.handles();
        let replies =
            futures::future::join_all(handles.values().map(ConnectionHandle::panes)).await;
        let mut panes: BTreeMap<PaneId, PaneSummary> = BTreeMap::new();
        let seen = self.seen.borrow().clone();
        for mut pane in replies.into_iter().flatten().flatten() {
            pane.seen =
                pane.status == crate::status::Status::Completed && seen.contains(&pane.pane);
            panes.entry(pane.pane).or_insert(pane);
        }
        panes.into_values().collect()
    }

    /// Whether every session's panes are known: the daemon has finished starting and every
    /// connection has had its first sync. Until then a pane that exists may be missing.
    pub fn synced(&self) -> bool {
        !self.status.borrow().starting && self.handles().values().all(ConnectionHandle::is_synced)
    }

    /// Waits until [`Context::synced`], for `bound` at most; returns whether it is.
    pub async fn wait_synced(&self, bound: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        let mut status = self.status.clone();
        let mut connections = self.connections.clone();
        loop {
            status.borrow_and_update();
            connections.borrow_and_update();
            if self.synced() {
                return true;
            }
            let pending = self.handles().values().find(|h| !h.is_synced()).cloned();
            let first_sync = async {
                match pending {
                    Some(handle) => handle.first_sync().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return self.synced(),
                changed = status.changed() => if changed.is_err() { return self.synced() },
                changed = connections.changed() => if changed.is_err() { return self.synced() },
                () = first_sync => {}
            }
        }
    }

    /// The pane a name means and its connection. A name no pane has while sessions are still
    /// having their first sync (the daemon starting, a session attaching) waits for that, up
    /// to [`SYNC_WAIT`], before it is answered with 404.
    pub async fn find(&self, name: &str) -> Result<(PaneSummary, ConnectionHandle), Error> {
        match self.find_now(name).await {
            Err(Error::NotFound(_)) if !self.synced() => {
                self.wait_synced(SYNC_WAIT).await;
                self.find_now(name).await
            }
            found => found,
        }
    }

    async fn find_now(&self, name: &str) -> Result<(PaneSummary, ConnectionHandle), Error> {
        let panes = self.all_panes().await;
        let id = names::resolve(name, &panes)?;
        let pane = panes
            .into_iter()
            .find(|p| p.pane == id)
            .ok_or_else(|| Error::NotFound(format!("no pane named {name:?}")))?;
        let handle = self
            .handles()
            .get(&pane.session_id)
            .cloned()
            .ok_or_else(|| Error::Unavailable("the pane's session is reconnecting".into()))?;
        Ok((pane, handle))
    }
}
