//! The daemon's local API ([`server`]), the client the CLI uses ([`client`]), and pane names.

pub(crate) mod body;
pub mod client;
pub(crate) mod error;
pub mod handoff;
pub mod launch;
pub mod listen;
pub mod names;
pub mod orchestrate;
pub mod server;
pub mod shell_guard;
pub mod tcp;
pub mod turn;
