//! The integration tests: one binary, with a shared harness that starts real tmux servers on
//! private sockets.

mod agent_clis;
mod agent_status;
mod api;
mod api_limits;
mod board;
mod cli_docs;
mod cli_replay;
mod command_roundtrip;
mod connection;
mod daemon;
mod decoder_properties;
mod delivery_faults;
mod doctor;
mod event_resume;
mod exit_codes;
mod fake_model;
mod fidelity;
mod handoff;
mod handoff_claude;
mod hostile_paths;
mod inbox;
mod inbox_claude;
mod lifecycle;
#[cfg(feature = "mcp")]
mod mcp;
mod openapi_check;
mod orchestrate;
mod pipe;
mod pipe_transport;
mod plugin;
mod plugin_keys;
mod remote;
mod resize_reflow;
mod screen_fixtures;
mod screen_watch;
mod seen;
mod signals;
mod signals_claude;
mod sshd;
mod stalled_daemon;
mod startup_races;
mod status;
mod support;
mod tmux_crashes;
mod transcripts;
