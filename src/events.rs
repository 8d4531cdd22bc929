//! The daemon's event stream: what changed, in order, for `/v1/events` and `panectl events`.
//!
//! Events are numbered and time-stamped when published. Subscribers that fall behind are told
//! how many events they missed (never left to guess); output events only carry sequence
//! numbers, and the bytes themselves stay in each pane's ring where a consumer can fetch them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::ids::{PaneId, SessionId, WindowId};
use crate::mirror::GapReason;
use crate::raw::RawBytes;
use crate::status::Status;

/// Events kept for subscribers that are momentarily slow.
const CAPACITY: usize = 16 * 1024;

/// Recent events kept for clients that come back (`Last-Event-ID`): about a minute of a busy
/// daemon's status and message events, less when output ticks flood in.
pub const HISTORY: usize = 4096;

/// One published event: its number and time, and what happened (`type` and the fields of
/// that type).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DaemonEvent {
    /// Position in the daemon's event stream, from 1.
    #[schema(minimum = 1)]
    pub id: u64,
    /// When it was published (ms since the Unix epoch).
    pub time_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened: one object per `type`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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
    /// A pane printed bytes `seq .. seq + len` of its stream (fetch them with
    /// `GET /v1/panes/{pane}/output?from=SEQ`).
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
        /// The rule that decided it (null for unknown and exited); for a signal, what it was
        /// (`hook Stop`, `osc 7501 state=done`, `title "..."`).
        #[schema(required = true)]
        rule: Option<String>,
        /// The provider whose rules decided it.
        #[schema(required = true)]
        provider: Option<String>,
        /// Where the status came from: the screen, or the agent's own signal.
        source: crate::status::signal::StatusSource,
        /// What the screen's rule read about the new status (a retry's attempt), if anything.
        #[serde(default)]
        #[schema(required = true)]
        detail: Option<String>,
    },
    /// An inbox message was queued or changed state.
    Message {
        /// The message (`GET /v1/messages/{id}`; `id` is the event's).
        message_id: i64,
        /// The receiving pane (`%N`).
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
        /// Why, in words (`asked for`, `the pipe failed: ...`).
        reason: String,
    },
    /// Cross-check mode found the pane's two transports different.
    CrossCheck {
        /// The pane.
        pane: PaneId,
        /// `mismatch`: a byte differs; `unaligned`: the pipe delivered bytes the control
        /// stream does not have; `pipe_behind`: the pipe fell more than 1 MiB behind.
        #[schema(schema_with = crate::pipe::cross_check::finding_schema)]
        finding: String,
        /// For a mismatch, the sequence number of the first differing byte.
        #[schema(required = true)]
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
    /// A pane shows a dialog that waits for an answer: a new one, or another in the place of
    /// the last (answer it with `POST /v1/panes/{pane}/decision` and its fingerprint).
    Decision {
        /// The pane.
        pane: PaneId,
        /// The provider whose dialog it is.
        #[schema(required = true)]
        provider: Option<String>,
        /// The dialog: its question, its options and the keys that pick each.
        decision: crate::status::decision::Decision,
    },
    /// A dialog left the screen: answered through panectl (`answered`, with the option and
    /// who answered), by a key pressed in the pane (`answered_elsewhere`), or its pane closed
    /// (`gone`).
    DecisionClosed {
        /// The pane.
        pane: PaneId,
        /// The dialog's fingerprint (as in its `decision` event).
        fingerprint: String,
        /// How it ended.
        how: DecisionEnd,
        /// The option picked, when panectl answered.
        #[schema(required = true)]
        option: Option<usize>,
        /// Its label.
        #[schema(required = true)]
        label: Option<String>,
        /// Who answered through panectl: `request` (the API, the CLI, MCP, the board) or
        /// `auto_answer RULE` (an `[[auto_answer]]` rule, named).
        #[schema(required = true)]
        by: Option<String>,
    },
    /// A pane was closed on request (`panectl close`, `POST /v1/panes/{pane}/close`): its
    /// agent was asked to exit and either did (`exited`) or was killed with its pane after
    /// the timeout (`killed`).
    Closed {
        /// The pane.
        pane: PaneId,
        /// How it ended.
        how: CloseHow,
        /// The messages still pending for it, cancelled ("agent closed").
        cancelled: Vec<i64>,
    },
}

/// How a pane closed on request ended (a `closed` event, the close's answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseHow {
    /// Its program exited by itself after the close text and keys (or had exited already); a
    /// pane left behind (a shell, a dead pane) was then closed.
    Exited,
    /// Its program was still running when the timeout passed: the pane was killed.
    Killed,
}

/// How a dialog ended (a `decision_closed` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionEnd {
    /// panectl pressed the keys of an option and the dialog left.
    Answered,
    /// The dialog left without panectl: a person (or another program) answered in the pane.
    AnsweredElsewhere,
    /// The pane closed with the dialog on it.
    Gone,
}

/// Why a pane's screen was rebuilt: `attach` (first sight of the pane), `reconnect`, `pause`
/// (tmux paused it), `resize`, `divergence` (the watchdog found it different from tmux's),
/// `retry`, `respawn`, `died` (its process exited), `transport` (its output moved),
/// `pipe_stall` (its pipe was re-armed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResyncReason {
    /// First sight of the pane (attach, new pane, daemon start).
    Attach,
    /// The control client was re-established.
    Reconnect,
    /// tmux paused the pane.
    Pause,
    /// The pane changed size and the mirror's reflow did not give tmux's screen (output tmux
    /// parsed at the new size came before the layout change, or lines came back from history
    /// the mirror never saw).
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

impl EventKind {
    /// The event's `type`, as it is serialized (filters compare it without serializing).
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::SessionAdded { .. } => "session_added",
            EventKind::SessionRemoved { .. } => "session_removed",
            EventKind::ConnectionLost { .. } => "connection_lost",
            EventKind::PaneAdded { .. } => "pane_added",
            EventKind::PaneRemoved { .. } => "pane_removed",
            EventKind::PaneResized { .. } => "pane_resized",
            EventKind::PaneRenamed { .. } => "pane_renamed",
            EventKind::PaneCommand { .. } => "pane_command",
            EventKind::WindowRenamed { .. } => "window_renamed",
            EventKind::Output { .. } => "output",
            EventKind::Status { .. } => "status",
            EventKind::Message { .. } => "message",
            EventKind::Transport { .. } => "transport",
            EventKind::CrossCheck { .. } => "cross_check",
            EventKind::Resync { .. } => "resync",
            EventKind::ViewChanged {} => "view_changed",
            EventKind::Seen { .. } => "seen",
            EventKind::Decision { .. } => "decision",
            EventKind::DecisionClosed { .. } => "decision_closed",
            EventKind::Closed { .. } => "closed",
        }
    }

    /// Every `type` an event can have.
    pub const TYPES: [&'static str; 20] = [
        "session_added",
        "session_removed",
        "connection_lost",
        "pane_added",
        "pane_removed",
        "pane_resized",
        "pane_renamed",
        "pane_command",
        "window_renamed",
        "output",
        "status",
        "message",
        "transport",
        "cross_check",
        "resync",
        "view_changed",
        "seen",
        "decision",
        "decision_closed",
        "closed",
    ];

    /// The pane the event is about, if one (`%N`; a message's receiving pane as queued).
    pub fn pane(&self) -> Option<String> {
        match self {
            EventKind::PaneAdded { pane, .. }
            | EventKind::PaneRemoved { pane }
            | EventKind::PaneResized { pane, .. }
            | EventKind::PaneRenamed { pane, .. }
            | EventKind::PaneCommand { pane, .. }
            | EventKind::Output { pane, .. }
            | EventKind::Status { pane, .. }
            | EventKind::Transport { pane, .. }
            | EventKind::CrossCheck { pane, .. }
            | EventKind::Resync { pane, .. }
            | EventKind::Seen { pane }
            | EventKind::Decision { pane, .. }
            | EventKind::DecisionClosed { pane, .. }
            | EventKind::Closed { pane, .. } => Some(pane.to_string()),
            EventKind::Message { pane, .. } => Some(pane.clone()),
            EventKind::SessionAdded { .. }
            | EventKind::SessionRemoved { .. }
            | EventKind::ConnectionLost { .. }
            | EventKind::WindowRenamed { .. }
            | EventKind::ViewChanged {} => None,
        }
    }
}

/// What [`EventBus::resume`] found.
#[derive(Debug)]
pub struct Resumed {
    /// Kept events after the client's last one, in order.
    pub kept: Vec<Arc<DaemonEvent>>,
    /// Events after the client's last one that it can no longer have; `None` when unknown.
    pub missed: Option<u64>,
    /// The id of the last event published before the subscription: later ones come from it.
    pub last_sent: u64,
    /// Everything published from now on.
    pub receiver: broadcast::Receiver<Arc<DaemonEvent>>,
}

/// Publishes events to every subscriber. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Arc<DaemonEvent>>,
    next_id: Arc<AtomicU64>,
    /// The last [`HISTORY`] events, in id order. Numbering, keeping and sending happen under
    /// its lock, so that ids, the history and every subscription agree on one order.
    history: Arc<Mutex<VecDeque<Arc<DaemonEvent>>>>,
    /// When this bus began (ms since the epoch): tells this daemon's event ids from those of
    /// an earlier one, which start from 1 again.
    epoch: u64,
}

/// Notifications (webhook posts, desktop notices) given up on: their endpoint failed every
/// try, hung, or their queue was full. Each is also logged; `panectl health` shows the count.
static NOTIFICATIONS_DROPPED: AtomicU64 = AtomicU64::new(0);

/// How many notifications the daemon has given up on so far.
pub fn notifications_dropped() -> u64 {
    NOTIFICATIONS_DROPPED.load(Ordering::Relaxed)
}

/// Counts a notification given up on (its reason is logged by the caller).
pub fn count_notification_dropped() {
    NOTIFICATIONS_DROPPED.fetch_add(1, Ordering::Relaxed);
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
            history: Arc::new(Mutex::new(VecDeque::with_capacity(HISTORY))),
            epoch: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }

    /// Publishes an event (dropped silently when nobody listens: nothing is owed to nobody).
    pub fn publish(&self, kind: EventKind) {
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // A poisoned lock only means another publisher panicked; the history is still whole.
        let mut history = self.history.lock().unwrap_or_else(|p| p.into_inner());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let event = Arc::new(DaemonEvent { id, time_ms, kind });
        if history.len() == HISTORY {
            history.pop_front();
        }
        history.push_back(event.clone());
        let _ = self.sender.send(event);
    }

    /// When this bus began: the first part of a resumable event id ([`EventBus::stream_id`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The id a stream gives an event, which a client hands back to resume
    /// (`Last-Event-ID`): `EPOCH-ID`, so that an id of an earlier daemon is never taken for
    /// one of this one.
    pub fn stream_id(&self, event: &DaemonEvent) -> String {
        format!("{}-{}", self.epoch, event.id)
    }

    /// A subscription that starts after the event a client saw last (`last`, as
    /// [`EventBus::stream_id`] gave it): the kept events since then, how many after it are
    /// lost to the client (kept no longer, or `None`: the id is not this daemon's, so how many
    /// is unknown), and the subscription for what follows. The subscription may repeat kept
    /// events: skip ids up to the last one sent.
    pub fn resume(&self, last: &str) -> Resumed {
        let history = self.history.lock().unwrap_or_else(|p| p.into_inner());
        let receiver = self.sender.subscribe();
        let next = self.next_id.load(Ordering::Relaxed);
        let after = match last.split_once('-') {
            Some((epoch, id)) if epoch.parse() == Ok(self.epoch) => id.parse::<u64>().ok(),
            Some(_) => None,
            None => last.parse::<u64>().ok(),
        }
        .filter(|after| *after < next);
        let Some(after) = after else {
            return Resumed {
                kept: Vec::new(),
                missed: None,
                last_sent: next - 1,
                receiver,
            };
        };
        let kept: Vec<Arc<DaemonEvent>> = history
            .iter()
            .filter(|event| event.id > after)
            .cloned()
            .collect();
        let first_kept = kept.first().map_or(next, |event| event.id);
        Resumed {
            kept,
            missed: Some(first_kept - after - 1),
            last_sent: next - 1,
            receiver,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(pane: u32) -> EventKind {
        EventKind::Seen { pane: PaneId(pane) }
    }

    #[test]
    fn a_client_resumes_after_the_last_event_it_saw() {
        let bus = EventBus::new();
        for pane in 0..5 {
            bus.publish(seen(pane));
        }
        let last = format!("{}-2", bus.epoch());
        let resumed = bus.resume(&last);
        assert_eq!(
            resumed.kept.iter().map(|e| e.id).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert_eq!(resumed.missed, Some(0));
        assert_eq!(resumed.last_sent, 5);
        let mut receiver = resumed.receiver;
        bus.publish(seen(9));
        assert_eq!(receiver.try_recv().map(|e| e.id).ok(), Some(6));
    }

    #[test]
    fn events_no_longer_kept_are_counted_and_foreign_ids_are_unknown() {
        let bus = EventBus::new();
        for pane in 0..(HISTORY as u32 + 10) {
            bus.publish(seen(pane));
        }
        let resumed = bus.resume(&format!("{}-3", bus.epoch()));
        // Ids 4 to 10 were dropped from the history; 11 is the oldest kept.
        assert_eq!(resumed.missed, Some(7));
        assert_eq!(resumed.kept.first().map(|e| e.id), Some(11));
        assert_eq!(resumed.kept.len(), HISTORY);
        // An id of another daemon, or from the future, or not an id: how many is unknown.
        for last in [
            format!("{}-3", bus.epoch() + 1),
            format!("{}-99999999", bus.epoch()),
            "x".to_string(),
        ] {
            let resumed = bus.resume(&last);
            assert_eq!(resumed.missed, None, "{last}");
            assert!(resumed.kept.is_empty(), "{last}");
        }
    }

    #[test]
    fn type_names_are_the_serialized_types() {
        let kinds = [
            seen(1),
            EventKind::ViewChanged {},
            EventKind::Output {
                pane: PaneId(1),
                seq: 0,
                len: 1,
            },
            EventKind::Message {
                message_id: 1,
                pane: "%1".into(),
                state: crate::message::State::Pending,
                sender: "cli".into(),
            },
            EventKind::PaneRemoved { pane: PaneId(2) },
            EventKind::Closed {
                pane: PaneId(3),
                how: CloseHow::Killed,
                cancelled: vec![7],
            },
        ];
        for kind in kinds {
            let value = serde_json::to_value(&kind).expect("serializes");
            assert_eq!(value["type"], kind.type_name());
            assert!(EventKind::TYPES.contains(&kind.type_name()));
        }
        assert_eq!(seen(4).pane().as_deref(), Some("%4"));
        assert_eq!(EventKind::ViewChanged {}.pane(), None);
        let closed = EventKind::Closed {
            pane: PaneId(3),
            how: CloseHow::Exited,
            cancelled: vec![],
        };
        assert_eq!(
            serde_json::to_value(&closed).expect("serializes"),
            serde_json::json!({"type": "closed", "pane": "%3", "how": "exited", "cancelled": []})
        );
        assert_eq!(closed.pane().as_deref(), Some("%3"));
    }
}
