//! The secondary transport: a pane's output copied by `pipe-pane -O` into a FIFO of panectl's
//! own, read without blocking ([`fifo`]), and a liveness watchdog that notices a pipe that
//! stopped delivering and says when to re-arm it ([`watchdog`]).
//!
//! This is the field's FIFO design with its lessons applied: a kept-open write end (no EOF
//! churn when tmux's writer goes away, no blocking open), "has delivered" recorded where bytes
//! reach the consumer, a sticky baseline compared against the screen the delivered bytes built,
//! re-arming as stop-then-start, bounded attempts.

pub mod cross_check;
pub mod fifo;
pub mod watchdog;

pub use fifo::{Fifo, PipeError};
pub use watchdog::{PipeLiveness, Probe, Verdict, WatchdogConfig};

use serde::{Deserialize, Serialize};

/// Where a pane's output comes from: `control` (`%output` of the session's control client),
/// `pipe` (`pipe-pane -O` into a FIFO) or `cross_check` (both: `%output` feeds the mirror, the
/// pipe's bytes are compared with it and every difference is a `cross_check` event).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// `%output` notifications of the session's control client (the default).
    #[default]
    Control,
    /// `pipe-pane -O` into a FIFO; the control client stops sending the pane's output.
    Pipe,
    /// Both: `%output` feeds the mirror and the pipe's bytes are compared with it byte by byte,
    /// every difference reported (see [`cross_check`]).
    #[value(name = "cross-check", alias = "cross_check")]
    CrossCheck,
}

impl Transport {
    /// The name used on the command line and in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Control => "control",
            Transport::Pipe => "pipe",
            Transport::CrossCheck => "cross_check",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
