//! The IO shell around tmux: which server, and one control connection per session.

pub mod attach;
pub mod connection;
pub mod sessions;
pub mod versions;
pub mod watch;

pub use crate::address::{AddressError, ServerAddress};
pub use connection::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionHandle, EndReason, PaneSummary,
    RunError, ScreenDump,
};
pub use sessions::{Connections, ServerStatus};
