//! What the supervisor publishes of the sessions it follows: the live connections and what it
//! knows of the server. The API, the workflows and the inbox's delivery read these; they are
//! defined here, below all of them, so that none reaches up into the daemon for them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::ConnectionHandle;
use crate::ids::SessionId;

/// The live connections, by session: what the supervisor publishes and the API and the inbox's
/// delivery read to reach a pane.
pub type Connections = Arc<BTreeMap<SessionId, ConnectionHandle>>;

/// The supervisor's view of the server, published for `panectl health`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerStatus {
    /// Whether the tmux server answers.
    pub server_alive: bool,
    /// Sessions with a live control connection.
    pub sessions: usize,
    /// Connections restarted after they ended unexpectedly.
    pub reconnects: u64,
    /// Leftover control clients of a previous daemon ended at start.
    pub leftover_clients_ended: usize,
    /// The daemon is starting: the sessions it found at start have not all had their first
    /// sync yet (their panes are not all known). Health says `starting` meanwhile.
    pub starting: bool,
}
