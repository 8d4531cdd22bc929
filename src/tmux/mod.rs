//! The IO shell around tmux: which server, and one control connection per session.

pub mod attach;
pub mod connection;
pub mod sessions;
pub mod watch;

/// The tmux versions panectl knows (kept under `tmux::versions` for the binary).
pub use crate::tmux_version as versions;

pub use crate::address::{AddressError, ServerAddress};
pub use connection::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionHandle, EndReason, PaneSummary,
    RunError, ScreenDump,
};
pub use sessions::{Connections, ServerStatus};
