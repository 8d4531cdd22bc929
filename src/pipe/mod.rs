//! The secondary transport: a pane's output copied by `pipe-pane -O` into a FIFO of panectl's
//! own, read without blocking ([`fifo`]), and a liveness watchdog that notices a pipe that
//! stopped delivering and says when to re-arm it ([`watchdog`]).
//!
//! This is the field's FIFO design with its lessons applied: a kept-open write end (no EOF
//! churn when tmux's writer goes away, no blocking open), "has delivered" recorded where bytes
//! reach the consumer, a sticky baseline compared against the screen the delivered bytes built,
//! re-arming as stop-then-start, bounded attempts.

pub mod fifo;
pub mod watchdog;

pub use fifo::{Fifo, PipeError};
pub use watchdog::{PipeLiveness, Probe, Verdict, WatchdogConfig};
