//! Following one turn of a worker agent: its task message is delivered, it works, and it is
//! ready again. `handoff` waits for this in the request; `assign` in a task that outlives it.
//!
//! The turn is followed on the event stream (no polling): message events say when the task was
//! delivered (or failed), status events when the worker was busy and when it is ready again.
//! Only what happens after the delivery began counts, so a worker that was busy with something
//! else when the task was queued is not taken to have answered it.
//!
//! A task sent to a named agent follows the agent (see [`crate::inbox::held`]): when the
//! worker's pane goes before the task was delivered, the task is held, and the follower waits
//! for the agent to be restored or launched again under its name, then follows the new pane.

use std::time::Duration;

use tokio::sync::broadcast;

use super::{Context, Error};
use crate::events::{DaemonEvent, EventKind};
use crate::ids::PaneId;
use crate::inbox::State;
use crate::status::{Phase, Status};
use crate::tmux::watch::{PaneWatch, Seen};

/// How long a delivered task may show no busy status before a ready worker is taken to have
/// finished (a turn too short to see, or one that ended while the daemon was down).
const UNSEEN_TURN_GRACE: Duration = Duration::from_secs(3);

/// How long the worker's pane may be missing from the mirror before it is taken to be gone
/// (right after a daemon start, panes appear as sessions are attached).
const MISSING_PANE_GRACE: Duration = Duration::from_secs(10);

/// How a followed turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The worker is ready again (or stopped on an error, or exited): the status it ended in.
    Finished(Status),
    /// The deadline passed; the message's state and the worker's status then.
    TimedOut(State, Option<Status>),
    /// The task message will never be delivered (failed, expired, cancelled), or whether it
    /// was cannot be told (uncertain).
    NotDelivered(State, Option<String>),
    /// The worker's pane closed.
    PaneGone,
}

/// What is known of the turn so far.
#[derive(Debug)]
struct Turn {
    message: State,
    reason: Option<String>,
    delivered_at: Option<tokio::time::Instant>,
    status: Option<Status>,
    busy_seen: bool,
    missing_since: Option<tokio::time::Instant>,
    /// The task's pane, as the inbox has it now: another than the one followed when the task
    /// followed its agent to a new pane.
    message_pane: Option<PaneId>,
    /// Whether the task is for a named agent (it waits for the agent when its pane goes).
    by_name: bool,
}

impl Turn {
    fn end(&self, now: tokio::time::Instant) -> Option<TurnEnd> {
        match self.message {
            State::Failed | State::Uncertain | State::Expired | State::Cancelled => {
                return Some(TurnEnd::NotDelivered(self.message, self.reason.clone()));
            }
            State::Pending | State::Held | State::Delivering => return None,
            State::Delivered => {}
        }
        if self
            .missing_since
            .is_some_and(|since| now.duration_since(since) >= MISSING_PANE_GRACE)
        {
            return Some(TurnEnd::PaneGone);
        }
        let status = self.status?;
        match status.phase() {
            // Stopped on an error, or gone: the turn is over whatever was seen.
            Phase::Ended => Some(TurnEnd::Finished(status)),
            // Ready again: the end of this turn once it was seen under way (a ready screen
            // right after the delivery may still be the one before it).
            Phase::Ready => {
                let unseen_long_enough = self
                    .delivered_at
                    .is_some_and(|at| now.duration_since(at) >= UNSEEN_TURN_GRACE);
                (self.busy_seen || unseen_long_enough).then_some(TurnEnd::Finished(status))
            }
            Phase::Busy | Phase::Blocked | Phase::Unknown => None,
        }
    }

    /// When the state should be looked at again without an event.
    fn next_check(&self) -> Option<tokio::time::Instant> {
        let mut next = None::<tokio::time::Instant>;
        if let Some(at) = self.delivered_at
            && !self.busy_seen
        {
            next = Some(at + UNSEEN_TURN_GRACE);
        }
        if let Some(since) = self.missing_since {
            let at = since + MISSING_PANE_GRACE;
            next = Some(next.map_or(at, |n| n.min(at)));
        }
        next
    }
}

/// Follows the turn that message `message_id` starts in `pane` until it ends or `deadline`
/// passes; how it ended, and the pane it ended in (another than `pane` when the task followed
/// its agent to a new pane). `events` must have been subscribed before the message was queued
/// (or, for a turn followed again after a restart, before this call). `busy_seen` carries what
/// an earlier follower saw; `on_busy` is called once when the worker is first seen busy, and
/// `on_moved` each time the task moves to another pane.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn follow(
    state: &Context,
    events: broadcast::Receiver<std::sync::Arc<DaemonEvent>>,
    message_id: i64,
    pane: PaneId,
    busy_seen: bool,
    deadline: Option<tokio::time::Instant>,
    mut on_busy: impl FnMut(),
    mut on_moved: impl FnMut(PaneId),
) -> Result<(TurnEnd, PaneId), Error> {
    let mut turn = Turn {
        message: State::Pending,
        reason: None,
        delivered_at: None,
        status: None,
        busy_seen,
        missing_since: None,
        message_pane: None,
        by_name: false,
    };
    let mut watch = PaneWatch::on(events, pane);
    refresh(state, message_id, watch.pane(), &mut turn).await?;
    loop {
        // The task followed its agent to a new pane (restored, or launched again): follow that.
        if let Some(moved) = turn.message_pane.filter(|p| *p != watch.pane()) {
            tracing::info!(message = message_id, from = %watch.pane(), to = %moved, "the task followed its agent to a new pane");
            watch.retarget(moved);
            on_moved(moved);
            turn.status = None;
            turn.missing_since = None;
            refresh(state, message_id, moved, &mut turn).await?;
            continue;
        }
        let now = tokio::time::Instant::now();
        if let Some(end) = turn.end(now) {
            return Ok((end, watch.pane()));
        }
        let wake = match (turn.next_check(), deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = state.shutdown.cancelled() => {
                return Err(Error::Unavailable("the daemon is stopping".into()));
            }
            () = sleep => {
                if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    if let Some(end) = turn.end(tokio::time::Instant::now()) {
                        return Ok((end, watch.pane()));
                    }
                    return Ok((TurnEnd::TimedOut(turn.message, turn.status), watch.pane()));
                }
                if turn.missing_since.is_some() {
                    refresh(state, message_id, watch.pane(), &mut turn).await?;
                }
            }
            seen = watch.next() => match seen {
                Seen::Other(event) => {
                    if let EventKind::Message { message_id: id, state: new, .. } = &event.kind
                        && *id == message_id
                    {
                        if *new == State::Delivering && turn.message != State::Delivering {
                            // A new attempt: only what happens from here on counts.
                            turn.busy_seen = false;
                        }
                        if *new == State::Delivered {
                            turn.delivered_at = Some(tokio::time::Instant::now());
                        }
                        if matches!(new, State::Failed | State::Uncertain | State::Expired | State::Cancelled) {
                            refresh(state, message_id, watch.pane(), &mut turn).await?;
                        }
                        turn.message = *new;
                        // Held for its agent, or given to the agent's new pane: read where.
                        if matches!(new, State::Held | State::Pending) && turn.by_name {
                            refresh(state, message_id, watch.pane(), &mut turn).await?;
                        }
                    }
                }
                Seen::Status { status, .. } => {
                    turn.status = Some(status);
                    note_busy(&mut turn, &mut on_busy);
                }
                // Listed now, or events were missed: read both afresh.
                Seen::Stale => refresh(state, message_id, watch.pane(), &mut turn).await?,
                // A task not yet delivered to a named agent waits for the agent to come back.
                Seen::Gone if turn.by_name && matches!(turn.message, State::Pending | State::Held) => {
                    turn.status = None;
                    refresh(state, message_id, watch.pane(), &mut turn).await?;
                }
                Seen::Gone => return Ok((TurnEnd::PaneGone, watch.pane())),
                Seen::Closed => return Err(Error::Unavailable("the daemon is stopping".into())),
            }
        }
    }
}

/// Notes the worker seen busy: in a turn ([`Phase::is_in_turn`]: working, or blocked on the
/// user). Unlike delivery's confirmation (which takes any non-ready status of a live agent,
/// an error included, as "took the input"), an error does not count here: it ends the turn
/// at once (see `Turn::end`), and `busy_seen` is what the assignment records.
fn note_busy(turn: &mut Turn, on_busy: &mut impl FnMut()) {
    let busy = turn.status.is_some_and(|s| s.phase().is_in_turn());
    if busy && matches!(turn.message, State::Delivering | State::Delivered) && !turn.busy_seen {
        turn.busy_seen = true;
        on_busy();
    }
}

/// Reads the message's state and the pane's status afresh.
async fn refresh(
    state: &Context,
    message_id: i64,
    pane: PaneId,
    turn: &mut Turn,
) -> Result<(), Error> {
    let message = state
        .inbox
        .call(move |store| store.get(message_id))
        .await
        .map_err(|e| Error::Internal(e.to_string()))?;
    if message.state == State::Delivered && turn.delivered_at.is_none() {
        // Delivered before this follower started: count the grace from its delivery time.
        let ago = (crate::inbox::now_ms() - message.delivered_at.unwrap_or(0)).max(0) as u64;
        turn.delivered_at = Some(
            tokio::time::Instant::now()
                .checked_sub(Duration::from_millis(ago))
                .unwrap_or_else(tokio::time::Instant::now),
        );
    }
    turn.message = message.state;
    turn.reason = message.reason;
    turn.by_name = message.to_agent.is_some();
    turn.message_pane = message.pane.parse().ok();
    if turn.by_name && message.state == State::Held {
        // Waiting for its agent: the pane it left may be gone, and that is no end.
        turn.missing_since = None;
        return Ok(());
    }
    match state.find(&pane.to_string()).await {
        Ok((summary, _)) => {
            turn.missing_since = None;
            if summary.status_settled || turn.status.is_none() {
                turn.status = Some(summary.status);
            }
        }
        Err(_) => {
            turn.missing_since
                .get_or_insert_with(tokio::time::Instant::now);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(message: State, status: Status, busy_seen: bool, now: tokio::time::Instant) -> Turn {
        Turn {
            message,
            reason: None,
            delivered_at: Some(now),
            status: Some(status),
            busy_seen,
            missing_since: None,
            message_pane: None,
            by_name: false,
        }
    }

    #[test]
    fn a_turn_ends_only_when_ready_after_its_delivery_and_work() {
        let now = tokio::time::Instant::now();
        // Still queued: a ready worker has not answered it.
        assert_eq!(
            turn(State::Pending, Status::Completed, true, now).end(now),
            None
        );
        // Delivered but not yet seen working: not yet (unless it stays ready for a while).
        assert_eq!(
            turn(State::Delivered, Status::Completed, false, now).end(now),
            None
        );
        assert_eq!(
            turn(State::Delivered, Status::Completed, false, now).end(now + UNSEEN_TURN_GRACE),
            Some(TurnEnd::Finished(Status::Completed))
        );
        assert_eq!(
            turn(State::Delivered, Status::Completed, true, now).end(now),
            Some(TurnEnd::Finished(Status::Completed))
        );
        // Working or asking the user: not over.
        assert_eq!(
            turn(State::Delivered, Status::Processing, true, now).end(now),
            None
        );
        assert_eq!(
            turn(State::Delivered, Status::WaitingUserAnswer, true, now)
                .end(now + UNSEEN_TURN_GRACE),
            None
        );
        assert_eq!(
            turn(State::Delivered, Status::Error, true, now).end(now),
            Some(TurnEnd::Finished(Status::Error))
        );
        assert_eq!(
            turn(State::Expired, Status::Idle, false, now).end(now),
            Some(TurnEnd::NotDelivered(State::Expired, None))
        );
    }

    #[test]
    fn busy_counts_only_once_the_delivery_began() {
        let mut calls = 0;
        let now = tokio::time::Instant::now();
        let mut t = turn(State::Pending, Status::Processing, false, now);
        note_busy(&mut t, &mut || calls += 1);
        assert!(!t.busy_seen);
        t.message = State::Delivering;
        note_busy(&mut t, &mut || calls += 1);
        note_busy(&mut t, &mut || calls += 1);
        assert!(t.busy_seen);
        assert_eq!(calls, 1);
    }
}
