//! panectl: a tmux control-mode client that mirrors every pane of a tmux server.
//!
//! The crate is split into a sans-IO core ([`control`] for the protocol, [`screen`] for pane
//! screens) and the programs built on it ([`replay`]). See README.md for the tour.

pub mod control;
pub mod ids;
pub mod raw;
pub mod replay;
pub mod screen;
