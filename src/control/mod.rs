//! The tmux control-mode protocol, without any IO.
//!
//! [`Decoder`] turns the byte stream of a `tmux -C` client into [`Event`]s; [`command`] renders
//! commands to send back. Everything here is pure: bytes in, values out, so it can be unit
//! tested, property tested and fuzzed without a tmux server.

pub mod command;
pub mod decoder;
pub mod escape;
pub mod layout;
pub mod notification;

pub use decoder::{
    BodyKind, Decoder, Event, Expected, Guard, Output, ParseError, ParseErrorKind, Reply, Sink,
};
pub use layout::{Layout, LayoutCell, PaneGeometry};
pub use notification::{LineError, Notification, parse_notification};
