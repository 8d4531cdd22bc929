//! The IO shell around tmux: which server, and one control connection per session.

pub mod attach;
pub mod connection;
pub mod versions;

pub use crate::address::{AddressError, ServerAddress};
pub use connection::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionHandle, EndReason, PaneSummary,
    RunError, ScreenDump,
};

/// The live connections, by session: what the supervisor publishes and the API and the inbox's
/// delivery read to reach a pane.
pub type Connections =
    std::sync::Arc<std::collections::BTreeMap<crate::ids::SessionId, ConnectionHandle>>;
