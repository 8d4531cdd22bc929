//! The integration tests: one binary, with a shared harness that starts real tmux servers on
//! private sockets.

mod cli_replay;
mod command_roundtrip;
mod connection;
mod daemon;
mod decoder_properties;
mod support;
mod transcripts;
