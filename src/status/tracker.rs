//! Turning single evaluations into a pane's status.
//!
//! * **Turn tracking.** A `ready` verdict means `completed` if the agent worked (or asked a
//!   question) since it was last idle, `idle` otherwise. Rules can also say `idle` (a welcome or
//!   cleared screen) or `completed` (an answer on screen) outright.
//! * **Latch.** Once ready, a `processing` verdict from a weak rule does not count until input
//!   was sent or a strong (real working) marker shows: TUIs redraw, and half-drawn frames must
//!   not make a finished agent look busy again.
//! * **Grace.** A screen no rule understands becomes `unknown` only if it stays so for a while,
//!   so a redraw caught in the middle does not flap the status.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::engine::Detection;
use super::rules::Verdict;
use super::signal::StatusSource;
use super::{Phase, Status};

/// How long a screen may stay unreadable before the status becomes `unknown`.
pub const DEFAULT_UNKNOWN_GRACE: Duration = Duration::from_millis(1500);

/// A status change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The new status.
    pub status: Status,
    /// The status before.
    pub previous: Status,
    /// The rule that decided it (`None` for unknown or exited); for a signal, what it was.
    pub rule: Option<Arc<str>>,
    /// Which channel decided it.
    pub source: StatusSource,
}

/// The status of one pane over time. See the module documentation.
#[derive(Debug, Clone)]
pub struct StatusTracker {
    status: Status,
    rule: Option<Arc<str>>,
    /// What the deciding rule read about the status (see [`Detection::detail`]).
    detail: Option<Arc<str>>,
    /// The agent worked or asked since it was last idle.
    worked: bool,
    /// The agent has been ready or working since it started: dialogs before that (folder
    /// trust, say) are its start-up, not a turn, and leave it `idle`.
    began: bool,
    /// Input was sent since the agent was last ready: the latch is open.
    input_pending: bool,
    /// Since when no rule matches.
    unmatched_since: Option<Instant>,
    grace: Duration,
}

impl Default for StatusTracker {
    fn default() -> Self {
        Self::new(DEFAULT_UNKNOWN_GRACE)
    }
}

impl StatusTracker {
    /// A tracker that has seen nothing yet (`unknown`).
    pub fn new(grace: Duration) -> StatusTracker {
        StatusTracker {
            status: Status::Unknown,
            rule: None,
            detail: None,
            worked: false,
            began: false,
            input_pending: false,
            unmatched_since: None,
            grace,
        }
    }

    /// The current status.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The rule behind the current status.
    pub fn rule(&self) -> Option<&Arc<str>> {
        self.rule.as_ref()
    }

    /// What the rule behind the current status read on the screen (a retry's attempt), if
    /// it reads anything. It may change while the status stays.
    pub fn detail(&self) -> Option<&Arc<str>> {
        self.detail.as_ref()
    }

    /// Input was sent to the agent: the next `processing` counts even from a weak rule.
    pub fn input_sent(&mut self) {
        self.input_pending = true;
    }

    /// Whether a `ready` verdict now would mean `completed` (the agent worked since it was
    /// last idle).
    pub fn worked(&self) -> bool {
        self.worked
    }

    /// The agent itself reported `status` (a hook, an OSC report): turn tracking follows it as
    /// it follows the screen. A working agent opens the latch, so the screen's next working
    /// marker counts even from a weak rule.
    pub fn note_signal(&mut self, status: Status) {
        match status {
            Status::Processing => {
                self.worked = true;
                self.began = true;
                self.input_pending = true;
            }
            Status::WaitingUserAnswer => self.worked |= self.began,
            Status::Completed => {
                self.worked = true;
                self.began = true;
                self.input_pending = false;
            }
            Status::Idle => {
                self.worked = false;
                self.began = true;
                self.input_pending = false;
            }
            Status::Error | Status::Unknown | Status::Exited => {}
        }
    }

    /// A new program replaced the pane's: nothing seen so far counts (`unknown`).
    pub fn restart(&mut self) -> Option<Change> {
        self.worked = false;
        self.began = false;
        self.input_pending = false;
        self.unmatched_since = None;
        self.set(Status::Unknown, None)
    }

    /// The agent's process is gone.
    pub fn exited(&mut self) -> Option<Change> {
        self.worked = false;
        self.began = false;
        self.input_pending = false;
        self.set(Status::Exited, None)
    }

    /// Whether an unreadable screen is waiting out its grace (the caller should evaluate again
    /// after [`StatusTracker::grace_left`]).
    pub fn grace_left(&self, now: Instant) -> Option<Duration> {
        let since = self.unmatched_since?;
        (self.status != Status::Unknown)
            .then(|| self.grace.saturating_sub(now.duration_since(since)))
    }

    /// Takes an evaluation made at `now`; returns the change it causes, if any.
    pub fn observe(&mut self, detection: &Detection, now: Instant) -> Option<Change> {
        let Some(verdict) = detection.verdict else {
            let since = *self.unmatched_since.get_or_insert(now);
            if self.status == Status::Unknown || now.duration_since(since) >= self.grace {
                return self.set(Status::Unknown, None);
            }
            return None;
        };
        self.unmatched_since = None;
        let status = match verdict {
            Verdict::Processing => {
                if self.status.is_ready() && !detection.strong && !self.input_pending {
                    return None; // latched
                }
                self.worked = true;
                Status::Processing
            }
            Verdict::WaitingUserAnswer => {
                self.worked |= self.began;
                Status::WaitingUserAnswer
            }
            Verdict::Ready if self.worked => Status::Completed,
            Verdict::Ready => Status::Idle,
            Verdict::Idle => {
                self.worked = false;
                Status::Idle
            }
            Verdict::Completed => {
                self.worked = true;
                Status::Completed
            }
            Verdict::Error => Status::Error,
        };
        if status.ends_turn() {
            self.input_pending = false;
        }
        if matches!(status.phase(), Phase::Ready | Phase::Busy) {
            self.began = true;
        }
        self.detail = detection.detail.as_deref().map(Arc::from);
        self.set(status, detection.rule.clone())
    }

    fn set(&mut self, status: Status, rule: Option<Arc<str>>) -> Option<Change> {
        if rule.is_none() {
            self.detail = None;
        }
        let previous = self.status;
        self.status = status;
        self.rule = rule.clone();
        (previous != status).then_some(Change {
            status,
            previous,
            rule,
            source: StatusSource::Screen,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(verdict: Option<Verdict>, strong: bool) -> Detection {
        Detection {
            verdict,
            rule: verdict.map(|v| Arc::from(v.as_str())),
            strong,
            detail: None,
        }
    }

    #[test]
    fn a_dialog_before_the_agent_was_ever_ready_is_not_a_turn() {
        let mut tracker = StatusTracker::default();
        let now = Instant::now();
        let statuses: Vec<Status> = [
            Verdict::WaitingUserAnswer, // folder trust at start
            Verdict::Ready,
            Verdict::WaitingUserAnswer, // a permission dialog in a turn
            Verdict::Ready,
        ]
        .into_iter()
        .map(|v| {
            tracker.observe(&seen(Some(v), false), now);
            tracker.status()
        })
        .collect();
        assert_eq!(
            statuses,
            [
                Status::WaitingUserAnswer,
                Status::Idle,
                Status::WaitingUserAnswer,
                Status::Completed
            ]
        );
        // A new program starts over.
        tracker.restart();
        tracker.observe(&seen(Some(Verdict::WaitingUserAnswer), false), now);
        tracker.observe(&seen(Some(Verdict::Ready), false), now);
        assert_eq!(tracker.status(), Status::Idle);
    }

    #[test]
    fn a_turn_goes_idle_processing_completed() {
        let mut tracker = StatusTracker::default();
        let now = Instant::now();
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Ready), false), now)
                .unwrap()
                .status,
            Status::Idle
        );
        let change = tracker
            .observe(&seen(Some(Verdict::Processing), true), now)
            .unwrap();
        assert_eq!(
            (change.previous, change.status),
            (Status::Idle, Status::Processing)
        );
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Ready), false), now)
                .unwrap()
                .status,
            Status::Completed
        );
        // The same screen again changes nothing.
        assert_eq!(
            tracker.observe(&seen(Some(Verdict::Ready), false), now),
            None
        );
    }

    #[test]
    fn dialogs_count_as_work_and_clear_screens_as_idle() {
        let mut tracker = StatusTracker::default();
        let now = Instant::now();
        tracker.observe(&seen(Some(Verdict::Ready), false), now);
        tracker.observe(&seen(Some(Verdict::WaitingUserAnswer), false), now);
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Ready), false), now)
                .unwrap()
                .status,
            Status::Completed
        );
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Idle), false), now)
                .unwrap()
                .status,
            Status::Idle
        );
        assert_eq!(
            tracker.observe(&seen(Some(Verdict::Ready), false), now),
            None
        );
    }

    #[test]
    fn a_weak_working_marker_does_not_break_the_ready_latch() {
        let mut tracker = StatusTracker::default();
        let now = Instant::now();
        tracker.observe(&seen(Some(Verdict::Completed), false), now);
        assert_eq!(
            tracker.observe(&seen(Some(Verdict::Processing), false), now),
            None
        );
        assert_eq!(tracker.status(), Status::Completed);
        // Input opens the latch; so does a strong marker.
        tracker.input_sent();
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Processing), false), now)
                .unwrap()
                .status,
            Status::Processing
        );
        tracker.observe(&seen(Some(Verdict::Ready), false), now);
        assert_eq!(
            tracker
                .observe(&seen(Some(Verdict::Processing), true), now)
                .unwrap()
                .status,
            Status::Processing
        );
    }

    #[test]
    fn unreadable_screens_become_unknown_only_after_the_grace() {
        let mut tracker = StatusTracker::new(Duration::from_millis(100));
        let start = Instant::now();
        tracker.observe(&seen(Some(Verdict::Ready), false), start);
        assert_eq!(tracker.observe(&seen(None, false), start), None);
        assert!(
            tracker
                .grace_left(start + Duration::from_millis(40))
                .is_some()
        );
        assert_eq!(
            tracker.observe(&seen(None, false), start + Duration::from_millis(50)),
            None
        );
        let change = tracker
            .observe(&seen(None, false), start + Duration::from_millis(100))
            .unwrap();
        assert_eq!(
            (change.previous, change.status, change.rule, change.source),
            (Status::Idle, Status::Unknown, None, StatusSource::Screen)
        );
        assert_eq!(tracker.grace_left(start + Duration::from_millis(200)), None);
    }

    #[test]
    fn exit_is_reported_once() {
        let mut tracker = StatusTracker::default();
        tracker.observe(&seen(Some(Verdict::Processing), true), Instant::now());
        assert_eq!(tracker.exited().unwrap().previous, Status::Processing);
        assert_eq!(tracker.exited(), None);
    }
}
