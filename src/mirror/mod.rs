//! The mirrored state of panes, without IO: screens, recent output and sync state.

pub mod asked;
pub mod journal;
pub mod pane;
pub mod ring;

pub use journal::{DivergenceRecord, Journal};
pub use pane::{PaneCounters, PaneMirror, SyncState};
pub use ring::{Gap, GapReason, OutputRing, RingRead};
