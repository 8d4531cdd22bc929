//! What every route reads: the state the router is built with.

use std::time::Instant;

use tokio::sync::watch;

use crate::orchestration::Context;

/// What the handlers share: the workflows' [`Context`] and what only the API reports.
#[derive(Clone)]
pub struct ApiState {
    /// The daemon's live parts, as the workflows see them.
    pub ctx: Context,
    /// When the daemon started.
    pub started: Instant,
    /// Errors of the last attempt to read the user's provider rules (empty when it worked).
    pub rules_errors: watch::Receiver<Vec<String>>,
    /// The daemon's log file, if it logs to one.
    pub log_file: Option<String>,
    /// The daemon's command line.
    pub command_line: Vec<String>,
}
