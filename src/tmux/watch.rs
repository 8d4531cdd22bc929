//! Watching one pane's status on the event bus: the one primitive behind `wait`, launch
//! readiness, turn following and the delivery's wait for a receiver's turn.
//!
//! A watch is subscribed before its owner reads the pane, so no change falls between the read
//! and the first event. It sorts the bus into what matters for its pane: a new status, the
//! pane gone, a reason to read the pane afresh (it was just listed, or events were missed),
//! the daemon stopping, and every other event for owners that follow more than the status
//! (a turn follower reads its message's events too).

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::events::{DaemonEvent, EventBus, EventKind};
use crate::ids::PaneId;
use crate::status::Status;

/// What a [`PaneWatch`] saw next.
#[derive(Debug, Clone)]
pub enum Seen {
    /// The pane's new status, and the provider it was read for.
    Status {
        /// The status.
        status: Status,
        /// The provider, if one is recognised.
        provider: Option<String>,
    },
    /// The pane closed.
    Gone,
    /// What the watch knows may be behind: the pane was just listed (its status may be known
    /// already) or events were missed. The owner reads the pane again.
    Stale,
    /// Another event (of another pane, or not a pane's).
    Other(Arc<DaemonEvent>),
    /// The bus closed: the daemon is stopping.
    Closed,
}

/// One pane's status changes, from the event bus.
#[derive(Debug)]
pub struct PaneWatch {
    pane: PaneId,
    events: broadcast::Receiver<Arc<DaemonEvent>>,
}

impl PaneWatch {
    /// Starts watching `pane`; read the pane after this, not before.
    pub fn new(bus: &EventBus, pane: PaneId) -> PaneWatch {
        PaneWatch::on(bus.subscribe(), pane)
    }

    /// Watches `pane` on a subscription made earlier (before a message was queued, say, so
    /// that nothing since is missed).
    pub fn on(events: broadcast::Receiver<Arc<DaemonEvent>>, pane: PaneId) -> PaneWatch {
        PaneWatch { pane, events }
    }

    /// The pane watched.
    pub fn pane(&self) -> PaneId {
        self.pane
    }

    /// Watches another pane on the same subscription (a turn whose task followed its agent to
    /// a new pane); read that pane after this, not before.
    pub fn retarget(&mut self, pane: PaneId) {
        self.pane = pane;
    }

    /// Waits for the next event and says what it means for the pane.
    pub async fn next(&mut self) -> Seen {
        match self.events.recv().await {
            Ok(event) => self.sort(event),
            Err(broadcast::error::RecvError::Lagged(_)) => Seen::Stale,
            Err(broadcast::error::RecvError::Closed) => Seen::Closed,
        }
    }

    /// [`PaneWatch::next`], or `None` once `deadline` (if any) has passed.
    pub async fn next_until(&mut self, deadline: Option<tokio::time::Instant>) -> Option<Seen> {
        match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, self.next()).await.ok(),
            None => Some(self.next().await),
        }
    }

    fn sort(&self, event: Arc<DaemonEvent>) -> Seen {
        match &event.kind {
            EventKind::Status {
                pane,
                status,
                provider,
                ..
            } if *pane == self.pane => Seen::Status {
                status: *status,
                provider: provider.clone(),
            },
            EventKind::PaneAdded { pane, .. } if *pane == self.pane => Seen::Stale,
            EventKind::PaneRemoved { pane } if *pane == self.pane => Seen::Gone,
            _ => Seen::Other(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{SessionId, WindowId};
    use crate::status::signal::StatusSource;

    fn status(pane: u32, status: Status) -> EventKind {
        EventKind::Status {
            pane: PaneId(pane),
            status,
            previous: Status::Unknown,
            rule: None,
            provider: Some("codex".into()),
            source: StatusSource::Screen,
            detail: None,
        }
    }

    #[tokio::test]
    async fn a_watch_sorts_the_bus_for_its_pane() {
        let bus = EventBus::default();
        let mut watch = PaneWatch::new(&bus, PaneId(3));
        bus.publish(status(4, Status::Processing));
        bus.publish(status(3, Status::Completed));
        bus.publish(EventKind::PaneAdded {
            pane: PaneId(3),
            session: SessionId(1),
            window: WindowId(1),
            width: 80,
            height: 24,
        });
        bus.publish(EventKind::PaneRemoved { pane: PaneId(3) });
        assert!(
            matches!(watch.next().await, Seen::Other(e) if matches!(e.kind, EventKind::Status { pane: PaneId(4), .. }))
        );
        match watch.next().await {
            Seen::Status { status, provider } => {
                assert_eq!(status, Status::Completed);
                assert_eq!(provider.as_deref(), Some("codex"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(watch.next().await, Seen::Stale));
        assert!(matches!(watch.next().await, Seen::Gone));
        let soon = tokio::time::Instant::now() + std::time::Duration::from_millis(20);
        assert!(watch.next_until(Some(soon)).await.is_none());
        drop(bus);
        assert!(matches!(watch.next().await, Seen::Closed));
    }

    #[tokio::test]
    async fn missed_events_ask_for_a_fresh_read() {
        let bus = EventBus::default();
        let mut watch = PaneWatch::new(&bus, PaneId(3));
        for _ in 0..100_000 {
            bus.publish(status(4, Status::Processing));
        }
        assert!(matches!(watch.next().await, Seen::Stale));
    }
}
