//! The daemon's event stream: what changed, in order, for `/v1/events` and `panectl events`.
//!
//! Events are numbered and time-stamped when published. Subscribers that fall behind are told
//! how many events they missed (never left to guess); output events only carry sequence
//! numbers, and the bytes themselves stay in each pane's ring where a consumer can fetch them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::ids::{PaneId, SessionId, WindowId};
use crate::mirror::GapReason;
use crate::raw::RawBytes;
use crate::status::Status;

/// Events kept for subscribers that are momentarily slow.
const CAPACITY: usize = 16 * 1024;

/// One published event.
#[derive(Debug, Clone, Serialize)]
pub struct DaemonEvent {
    /// Position in the daemon's event stream, from 1.
    pub id: u64,
    /// Milliseconds since the Unix epoch when it was published.
    pub time_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A session is now mirrored.
    SessionAdded {
        /// The session.
        session: SessionId,
        /// Its name.
        name: RawBytes,
    },
    /// A session went away (or its control client could not be kept).
    SessionRemoved {
        /// The session.
        session: SessionId,
    },
    /// A session's control client ended; panectl reconnects.
    ConnectionLost {
        /// The session.
        session: SessionId,
        /// Why it ended.
        reason: String,
    },
    /// A pane appeared (or was found at attach).
    PaneAdded {
        /// The pane.
        pane: PaneId,
        /// Its session.
        session: SessionId,
        /// Its window.
        window: WindowId,
        /// Width in cells.
        width: u16,
        /// Height in cells.
        height: u16,
    },
    /// A pane closed.
    PaneRemoved {
        /// The pane.
        pane: PaneId,
    },
    /// A pane changed size.
    PaneResized {
        /// The pane.
        pane: PaneId,
        /// New width.
        width: u16,
        /// New height.
        height: u16,
    },
    /// A pane's title changed.
    PaneRenamed {
        /// The pane.
        pane: PaneId,
        /// The new title.
        title: RawBytes,
    },
    /// A pane's foreground command changed (or it died).
    PaneCommand {
        /// The pane.
        pane: PaneId,
        /// The command name.
        command: RawBytes,
        /// Whether the pane's process has exited.
        dead: bool,
    },
    /// A window was renamed.
    WindowRenamed {
        /// The window.
        window: WindowId,
        /// Its new name.
        name: RawBytes,
    },
    /// A pane printed: bytes `seq .. seq + len` of its stream.
    Output {
        /// The pane.
        pane: PaneId,
        /// Sequence number of the first byte.
        seq: u64,
        /// Number of bytes.
        len: u64,
    },
    /// A pane's agent changed status.
    Status {
        /// The pane.
        pane: PaneId,
        /// The new status.
        status: Status,
        /// The status before.
        previous: Status,
        /// The rule that decided it (none for unknown and exited); for a signal, what it was
        /// (`hook Stop`, `osc 7501 state=done`, `title "..."`).
        rule: Option<String>,
        /// The provider whose rules decided it.
        provider: Option<String>,
        /// Where the status came from: the screen, or the agent's own signal.
        source: crate::status::signal::StatusSource,
    },
    /// An inbox message was queued or changed state.
    Message {
        /// The message id (`id` is the event's).
        message_id: i64,
        /// The receiving pane.
        pane: String,
        /// Its new state.
        state: crate::message::State,
        /// Its sender.
        sender: String,
    },
    /// A pane's output moved to another transport (asked for, or a fallback after a failure).
    Transport {
        /// The pane.
        pane: PaneId,
        /// Where its output comes from now.
        transport: crate::pipe::Transport,
        /// Why.
        reason: String,
    },
    /// Cross-check mode found the pane's two transports different.
    CrossCheck {
        /// The pane.
        pane: PaneId,
        /// `mismatch`, `unaligned` or `pipe_behind`.
        finding: String,
        /// For a mismatch, the sequence number of the first differing byte.
        seq: Option<u64>,
        /// What differs, in words, with both sides' bytes.
        detail: String,
    },
    /// A pane's screen was rebuilt from tmux.
    Resync {
        /// The pane.
        pane: PaneId,
        /// Why.
        reason: ResyncReason,
    },
    /// A tmux client attached, detached or switched session, window or pane: what the
    /// attached clients have in view may have changed.
    ViewChanged {},
    /// A completed agent was seen: an attached client had its pane in view. Its status stays
    /// `completed`; the pane's `seen` says so until the status changes.
    Seen {
        /// The pane.
        pane: PaneId,
    },
}

/// Why a pane's screen was rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResyncReason {
    /// First sight of the pane (attach, new pane, daemon start).
    Attach,
    /// The control client was re-established.
    Reconnect,
    /// tmux paused the pane.
    Pause,
    /// The pane changed size (tmux reflows, the model cannot).
    Resize,
    /// The watchdog found the screen different from tmux's.
    Divergence,
    /// An earlier resync failed or timed out and is tried again.
    Retry,
    /// The pane's process was replaced (`respawn-pane`), which resets its screen.
    Respawn,
    /// The pane's process exited and tmux drew its `remain-on-exit` message into the pane.
    Died,
    /// The pane's output moved to another transport.
    Transport,
    /// The pane's pipe stopped delivering and was re-armed.
    PipeStall,
}

impl ResyncReason {
    /// How the resync shows in the pane's output stream.
    pub fn gap(self) -> GapReason {
        match self {
            ResyncReason::Pause => GapReason::Paused,
            ResyncReason::Reconnect => GapReason::Reconnected,
            ResyncReason::PipeStall => GapReason::PipeStalled,
            _ => GapReason::Seeded,
        }
    }
}

/// Publishes events to every subscriber. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Arc<DaemonEvent>>,
    next_id: Arc<AtomicU64>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A bus with no subscribers.
    pub fn new() -> EventBus {
        let (sender, _) = broadcast::channel(CAPACITY);
        EventBus {
            sender,
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Publishes an event (dropped silently when nobody listens: nothing is owed to nobody).
    pub fn publish(&self, kind: EventKind) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let _ = self
            .sender
            .send(Arc::new(DaemonEvent { id, time_ms, kind }));
    }

    /// A new subscription, starting with the next event.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<DaemonEvent>> {
        self.sender.subscribe()
    }

    /// Id of the last event published (0 if none).
    pub fn last_id(&self) -> u64 {
        self.next_id.load(Ordering::Relaxed) - 1
    }
}
