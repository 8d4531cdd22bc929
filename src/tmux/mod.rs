//! The IO shell around tmux: which server, and one control connection per session.

pub mod address;
pub mod attach;
pub mod connection;
pub mod query;
pub mod versions;

pub use address::{AddressError, ServerAddress};
pub use connection::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionHandle, EndReason, PaneSummary,
    RunError, ScreenDump,
};
