//! The status side of one pane: which provider it runs, its tracker, and when it should be
//! evaluated again. Sans-IO: the connection task calls it with the time and the screen.
//!
//! Detection runs on the composited screen, not on the raw stream: after the output has been
//! quiet for `quiet` (a redraw is complete), or at the latest `max_wait` after the first
//! output not yet evaluated (a pane that never stops printing is still followed).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::rules::Provider;
use super::tracker::{Change, StatusTracker};
use super::view::ScreenView;
use super::{Status, engine};

/// How late tmux may report a pane's new process (its subscriptions refresh once a second),
/// with a margin.
const RESPAWN_REPORT_DELAY: Duration = Duration::from_millis(1500);

/// When evaluations run.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Output quiet for this long means the screen is complete.
    pub quiet: Duration,
    /// Evaluate at least this often while output keeps coming.
    pub max_wait: Duration,
    /// How long an unreadable screen may last before the status is `unknown`.
    pub unknown_grace: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            quiet: Duration::from_millis(15),
            max_wait: Duration::from_millis(60),
            unknown_grace: super::tracker::DEFAULT_UNKNOWN_GRACE,
        }
    }
}

/// How a pane's provider was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderSource {
    /// `panectl set-provider` (kept in the pane option `@panectl_provider_override`).
    Assigned,
    /// The processes running in the pane.
    Process,
    /// The banner on the screen.
    Banner,
}

/// The status side of a pane. See the module documentation.
#[derive(Debug, Clone)]
pub struct PaneAgent {
    provider: Option<Arc<Provider>>,
    source: Option<ProviderSource>,
    tracker: StatusTracker,
    timing: Timing,
    /// First output not yet evaluated.
    dirty_since: Option<Instant>,
    /// Latest output.
    last_output: Option<Instant>,
    /// When the current status began.
    since: Instant,
    /// The pane was respawned and its new program has printed nothing yet: the screen is the
    /// old program's, so it is not evaluated.
    awaiting_output: bool,
}

impl PaneAgent {
    /// A pane with no provider yet.
    pub fn new(timing: Timing, now: Instant) -> PaneAgent {
        PaneAgent {
            provider: None,
            source: None,
            tracker: StatusTracker::new(timing.unknown_grace),
            timing,
            dirty_since: None,
            last_output: None,
            since: now,
            awaiting_output: false,
        }
    }

    /// The provider, if one is known.
    pub fn provider(&self) -> Option<&Arc<Provider>> {
        self.provider.as_ref()
    }

    /// How the provider was decided.
    pub fn source(&self) -> Option<ProviderSource> {
        self.source
    }

    /// The current status (`unknown` without a provider).
    pub fn status(&self) -> Status {
        self.tracker.status()
    }

    /// The rule behind the current status.
    pub fn rule(&self) -> Option<&Arc<str>> {
        self.tracker.rule()
    }

    /// When the current status began.
    pub fn since(&self) -> Instant {
        self.since
    }

    /// Sets the provider. A different provider starts a fresh tracker; returns whether it
    /// changed. An agent whose pane went back to a shell or to nothing is `exited` instead
    /// (the caller then calls [`PaneAgent::exited`]).
    pub fn set_provider(
        &mut self,
        provider: Option<Arc<Provider>>,
        source: Option<ProviderSource>,
        now: Instant,
    ) -> bool {
        let same = match (&self.provider, &provider) {
            (Some(old), Some(new)) => Arc::ptr_eq(old, new) || old.id == new.id,
            (None, None) => true,
            _ => false,
        };
        self.source = source;
        if same {
            // A reloaded rule file replaces the rules but keeps the pane's history.
            self.provider = provider;
            return false;
        }
        self.provider = provider;
        self.tracker = StatusTracker::new(self.timing.unknown_grace);
        self.dirty_since = Some(now);
        self.since = now;
        true
    }

    /// A new program replaced the pane's (`respawn-pane`): the status is `unknown` until the new
    /// program prints, since the screen until then is the old program's.
    pub fn respawned(&mut self, now: Instant) -> Option<Change> {
        // tmux reports the new process up to a second late (subscriptions are refreshed once a
        // second): output that recent may already be the new program's, and it may print
        // nothing more until it gets input, so its screen is evaluated at once.
        let recent = self
            .last_output
            .is_some_and(|at| now.saturating_duration_since(at) < RESPAWN_REPORT_DELAY);
        if recent {
            self.dirty_since = Some(now);
        } else {
            self.awaiting_output = true;
            self.dirty_since = None;
        }
        let change = self.tracker.restart();
        if change.is_some() {
            self.since = now;
        }
        change
    }

    /// The pane's program printed (as opposed to a resync or a title change).
    pub fn output_seen(&mut self) {
        self.awaiting_output = false;
    }

    /// The agent's process is gone.
    pub fn exited(&mut self, now: Instant) -> Option<Change> {
        let change = self.tracker.exited();
        if change.is_some() {
            self.since = now;
        }
        change
    }

    /// Input was sent to the pane.
    pub fn input_sent(&mut self) {
        self.tracker.input_sent();
    }

    /// The pane printed (or its screen changed otherwise: resync, title).
    pub fn touched(&mut self, now: Instant) {
        self.dirty_since.get_or_insert(now);
        self.last_output = Some(now);
    }

    /// Whether the status reflects the latest output (no evaluation is pending). A status read
    /// while output waits to be evaluated may be out of date. An exited agent's status, and a
    /// pane without a provider, are never evaluated, so output does not unsettle them.
    pub fn settled(&self) -> bool {
        self.dirty_since.is_none()
            || self.provider.is_none()
            || self.tracker.status() == Status::Exited
    }

    /// When the pane should be evaluated next, if at all.
    pub fn due(&self, now: Instant) -> Option<Instant> {
        self.provider.as_ref()?;
        if self.awaiting_output {
            return None;
        }
        if self.tracker.status() == Status::Exited {
            return None;
        }
        if let Some(dirty) = self.dirty_since {
            let quiet = self.last_output.unwrap_or(dirty) + self.timing.quiet;
            return Some(quiet.min(dirty + self.timing.max_wait));
        }
        self.tracker.grace_left(now).map(|left| now + left)
    }

    /// Evaluates the screen; returns the status change it causes.
    pub fn evaluate(&mut self, view: &ScreenView, now: Instant) -> Option<Change> {
        self.dirty_since = None;
        if self.awaiting_output {
            return None;
        }
        let provider = self.provider.as_ref()?;
        if self.tracker.status() == Status::Exited {
            return None;
        }
        let detection = engine::evaluate(provider, view);
        let change = self.tracker.observe(&detection, now);
        if change.is_some() {
            self.since = now;
        }
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::providers::ProviderSet;

    fn claude() -> Arc<Provider> {
        ProviderSet::builtin()
            .unwrap()
            .get("claude_code")
            .unwrap()
            .clone()
    }

    #[test]
    fn evaluations_wait_for_quiet_output_but_not_forever() {
        let start = Instant::now();
        let timing = Timing {
            quiet: Duration::from_millis(10),
            max_wait: Duration::from_millis(50),
            unknown_grace: Duration::from_secs(1),
        };
        let mut pane = PaneAgent::new(timing, start);
        pane.touched(start);
        assert_eq!(pane.due(start), None, "no provider, nothing to evaluate");
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.touched(start);
        assert_eq!(pane.due(start), Some(start + Duration::from_millis(10)));
        // Output keeps coming: the deadline moves, up to max_wait after the first.
        for ms in [5, 20, 35, 45] {
            pane.touched(start + Duration::from_millis(ms));
        }
        assert_eq!(pane.due(start), Some(start + Duration::from_millis(50)));
        let view = ScreenView::from_text(
            "──────────\n❯ \n──────────\n  esc to interrupt",
            "",
            "claude",
        );
        let change = pane
            .evaluate(&view, start + Duration::from_millis(50))
            .unwrap();
        assert_eq!(change.status, Status::Processing);
        assert_eq!(pane.due(start + Duration::from_millis(50)), None);
    }

    #[test]
    fn a_respawned_pane_waits_for_its_new_program_to_print() {
        let start = Instant::now();
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        let ready = ScreenView::from_text(
            "──────────\n❯ \n──────────\n  ? for shortcuts",
            "",
            "claude",
        );
        pane.evaluate(&ready, start);
        assert!(pane.status().is_ready());
        // Long after the last output: the screen is the old program's.
        let later = start + Duration::from_secs(10);
        assert_eq!(pane.respawned(later).unwrap().status, Status::Unknown);
        assert_eq!(pane.due(later), None);
        assert_eq!(pane.evaluate(&ready, later), None);
        assert_eq!(pane.status(), Status::Unknown);
        pane.output_seen();
        pane.touched(later);
        assert!(pane.due(later).is_some());
        assert!(pane.evaluate(&ready, later).unwrap().status.is_ready());
        // Output just before tmux reported the respawn: evaluated at once.
        let soon = later + Duration::from_millis(500);
        pane.touched(soon);
        pane.evaluate(&ready, soon);
        let reported = soon + Duration::from_millis(900);
        pane.respawned(reported);
        assert!(pane.due(reported).is_some());
        assert!(pane.evaluate(&ready, reported).unwrap().status.is_ready());
    }

    #[test]
    fn a_new_provider_starts_over_and_exit_stops_evaluating() {
        let now = Instant::now();
        let mut pane = PaneAgent::new(Timing::default(), now);
        assert!(pane.set_provider(Some(claude()), Some(ProviderSource::Banner), now));
        assert!(!pane.set_provider(Some(claude()), Some(ProviderSource::Process), now));
        assert_eq!(pane.source(), Some(ProviderSource::Process));
        assert_eq!(pane.exited(now).unwrap().status, Status::Exited);
        pane.touched(now);
        assert_eq!(pane.due(now), None);
        // Nothing will evaluate it, so the exit is the settled status (the inbox waits for a
        // settled status before it judges a message).
        assert!(pane.settled());
    }

    #[test]
    fn output_unsettles_only_a_status_that_will_be_evaluated() {
        let now = Instant::now();
        let mut pane = PaneAgent::new(Timing::default(), now);
        pane.touched(now);
        assert!(pane.settled(), "no provider: nothing to wait for");
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), now);
        pane.touched(now);
        assert!(!pane.settled());
        assert!(pane.due(now).is_some());
    }
}
