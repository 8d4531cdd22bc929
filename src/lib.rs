//! panectl: a tmux control-mode client that mirrors every pane of a tmux server.
//!
//! The crate is a sans-IO core ([`control`] for the protocol, [`screen`] and [`mirror`] for pane
//! state, [`query`] for the queries, [`session`] for everything a connection decides)
//! inside an IO shell ([`tmux`] connections, the
//! [`daemon`] that supervises them, the [`api`]). See README.md for the tour.

pub mod address;
pub mod agent_hooks;
pub mod api;
pub mod clients;
pub mod control;
pub mod daemon;
pub mod events;
pub mod host;
pub mod ids;
pub mod inbox;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod message;
pub mod mirror;
pub mod orchestration;
pub mod os;
pub mod paths;
pub mod pipe;
pub mod query;
pub mod raw;
pub mod replay;
pub mod runtime_dir;
pub mod screen;
pub mod session;
pub mod status;
pub mod tmux;
pub mod tmux_version;
pub mod trust;
