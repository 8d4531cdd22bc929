//! The status side of one pane: which provider it runs, its tracker, and when it should be
//! evaluated again. Sans-IO: the connection task calls it with the time and the screen.
//!
//! Detection runs on the composited screen, not on the raw stream: after the output has been
//! quiet for `quiet` (a redraw is complete), or at the latest `max_wait` after the first
//! output not yet evaluated (a pane that never stops printing is still followed).
//!
//! **Two channels.** The screen is the base; the agent's own signals ([`super::signal`]:
//! hooks, OSC reports, titles) are a second channel. When they disagree, the newest evidence
//! wins:
//!
//! * a signal applies if it was produced after the screen's status last *changed* (a screen
//!   evaluated again with the same status is not new evidence); one produced before is
//!   dropped, so a `processing` hook sent before a dialog appeared never hides the dialog's
//!   `waiting_user_answer`, however late it arrives;
//! * a change of the screen's status after the signal replaces it (the screen is newer);
//! * a signal older than the signal in force is dropped (hooks run as separate processes and
//!   may arrive out of order);
//! * a signal belongs to the program that sent it: a respawn, a provider change, an exit or
//!   the end of the agent's session (`SessionEnd`) clears it, and the daemon takes a hook only
//!   from the pane's agent process or a process under it (known from the socket's peer);
//! * a signal that a dialog opened waits for the screen to draw it (Claude Code's
//!   `PermissionRequest` hook comes ~0.5 s before its dialog is on the screen): it applies
//!   when the screen shows the dialog, or after [`DIALOG_GRACE`] for a dialog no rule knows,
//!   so `waiting_user_answer` is not said while nothing on the screen can take an answer;
//! * a signal that the agent is ready never hides a dialog the screen shows: a key typed for
//!   the "ready" agent would answer the dialog.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::osc::{AgentReport, OscScanner};
use super::rules::Provider;
use super::signal::{self, Effect, Reported, Signal, StatusSource};
use super::tracker::{Change, StatusTracker};
use super::view::ScreenView;
use super::{Status, engine};

/// How late tmux may report a pane's new process (its subscriptions refresh once a second),
/// with a margin.
const RESPAWN_REPORT_DELAY: Duration = Duration::from_millis(1500);

/// How long a signal that a dialog opened waits for the screen to show the dialog before it
/// applies anyway (a dialog that no rule of the provider knows).
pub const DIALOG_GRACE: Duration = Duration::from_millis(1000);

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

/// How a pane's provider was recognised: `assigned` (`POST .../provider`,
/// `panectl set-provider`, `POST /v1/agents`), from the pane's `process`es, or from a `banner`
/// on its screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderSource {
    /// `panectl set-provider` (kept in the pane option `@panectl_provider_override`).
    Assigned,
    /// The processes running in the pane.
    Process,
    /// The banner on the screen.
    Banner,
}

impl ProviderSource {
    /// The word the API writes.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderSource::Assigned => "assigned",
            ProviderSource::Process => "process",
            ProviderSource::Banner => "banner",
        }
    }
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
    /// The status in force (the screen's, or a signal's that is newer).
    status: Status,
    /// The rule (or the signal, in words) behind `status`.
    rule: Option<Arc<str>>,
    /// Which channel `status` came from.
    status_source: StatusSource,
    /// The agent's latest own report, while it holds, with the status it was read as.
    signal: Option<(Signal, Status)>,
    /// When the screen's status last changed: signals produced before are older evidence.
    screen_at: Instant,
    /// A signal that a dialog opened, waiting for the screen to draw it, and until when.
    pending_dialog: Option<(Signal, Effect, Instant)>,
    /// OSC reports in the pane's output, cut anywhere.
    osc: OscScanner,
}

/// What became of a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalOutcome {
    /// Whether it is now the pane's status (or cleared one).
    pub applied: bool,
    /// Why not, when not applied.
    pub reason: Option<&'static str>,
    /// The status change it caused.
    pub change: Option<Change>,
}

impl SignalOutcome {
    fn dropped(reason: &'static str) -> SignalOutcome {
        SignalOutcome {
            applied: false,
            reason: Some(reason),
            change: None,
        }
    }
}

/// Joins two successive changes into one (or none, if the second undid the first).
fn chain(first: Option<Change>, second: Option<Change>) -> Option<Change> {
    match (first, second) {
        (Some(first), Some(mut second)) => {
            second.previous = first.previous;
            (second.previous != second.status).then_some(second)
        }
        (first, second) => second.or(first),
    }
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
            status: Status::Unknown,
            rule: None,
            status_source: StatusSource::Screen,
            signal: None,
            screen_at: now,
            pending_dialog: None,
            osc: OscScanner::new(),
        }
    }

    /// Which channel the current status came from.
    pub fn status_source(&self) -> StatusSource {
        self.status_source
    }

    /// The status the screen alone gives.
    pub fn screen_status(&self) -> Status {
        self.tracker.status()
    }

    /// The agent's own report in force, if any, and the status it was read as.
    pub fn signal(&self) -> Option<&(Signal, Status)> {
        self.signal.as_ref()
    }

    /// When the screen's status last changed.
    pub fn screen_changed_at(&self) -> Instant {
        self.screen_at
    }

    /// Works out the status in force after either channel moved; returns the change.
    fn settle(&mut self, now: Instant) -> Option<Change> {
        // A dialog on the screen is not hidden by a signal that the agent is ready.
        let dialog_shown = self.tracker.status() == Status::WaitingUserAnswer;
        let signal = self
            .signal
            .as_ref()
            .filter(|(_, status)| !(dialog_shown && status.is_ready()));
        let (status, rule, source) = match signal {
            Some((signal, status)) => (
                *status,
                Some(Arc::from(signal.detail.as_str())),
                signal.source,
            ),
            None => (
                self.tracker.status(),
                self.tracker.rule().cloned(),
                StatusSource::Screen,
            ),
        };
        let previous = self.status;
        self.status = status;
        self.rule = rule.clone();
        self.status_source = source;
        (previous != status).then(|| {
            self.since = now;
            Change {
                status,
                previous,
                rule,
                source,
            }
        })
    }

    /// The screen's status changed (`change` from the tracker): it is the newest evidence.
    fn screen_changed(&mut self, change: Option<Change>, now: Instant) -> Option<Change> {
        change.as_ref()?;
        self.screen_at = now;
        self.signal = None;
        // The screen moved after the dialog's signal: it shows the dialog itself, or the
        // signal is older evidence.
        self.pending_dialog = None;
        self.settle(now)
    }

    /// Takes a signal of the agent's (see the module documentation for when it applies). The
    /// caller has checked that a hook's process runs in the pane.
    pub fn signal_received(
        &mut self,
        signal: Signal,
        effect: Effect,
        now: Instant,
    ) -> SignalOutcome {
        if self.tracker.status() == Status::Exited {
            return SignalOutcome::dropped("the agent has exited");
        }
        if signal.at < self.screen_at {
            return SignalOutcome::dropped("older than the screen's last status change");
        }
        if self
            .signal
            .as_ref()
            .is_some_and(|(current, _)| signal.at < current.at)
        {
            return SignalOutcome::dropped("older than the signal in force");
        }
        if effect == Effect::Report(Reported::Status(Status::WaitingUserAnswer))
            && self.tracker.status() != Status::WaitingUserAnswer
        {
            let deadline = now + DIALOG_GRACE;
            self.pending_dialog = Some((signal, effect, deadline));
            return SignalOutcome::dropped(
                "held until the screen shows the dialog (at most 1 s): an answer needs it there",
            );
        }
        self.apply_signal(signal, effect, now)
    }

    /// Puts a signal that passed the checks in force.
    fn apply_signal(&mut self, signal: Signal, effect: Effect, now: Instant) -> SignalOutcome {
        if effect == Effect::Ignore {
            return SignalOutcome::dropped("it says nothing about the status");
        }
        // Newer than a dialog's signal still held: that one no longer holds.
        self.pending_dialog = None;
        let status = match effect {
            Effect::Ignore => return SignalOutcome::dropped("it says nothing about the status"),
            Effect::Clear => {
                self.signal = None;
                return SignalOutcome {
                    applied: true,
                    reason: None,
                    change: self.settle(now),
                };
            }
            Effect::Report(Reported::Status(status)) => status,
            Effect::Report(Reported::Ready) if self.tracker.worked() => Status::Completed,
            Effect::Report(Reported::Ready) => Status::Idle,
        };
        self.tracker.note_signal(status);
        self.signal = Some((signal, status));
        SignalOutcome {
            applied: true,
            reason: None,
            change: self.settle(now),
        }
    }

    /// Scans output for the agent's OSC reports; returns the status change they cause. On the
    /// `%output` path: one `memchr` over the bytes when no escape sequence is in flight.
    pub fn scan_output(&mut self, data: &[u8], now: Instant) -> Option<Change> {
        // Only a CLI that sends them is read for them: elsewhere the bytes are some other
        // program's output (a `tail -f` of a file holding them) and would forge a status.
        if !self.provider.as_ref().is_some_and(|p| p.signals.osc_7501) {
            return None;
        }
        let mut reports: Vec<AgentReport> = Vec::new();
        self.osc.feed(data, |report| reports.push(report));
        let mut change = None;
        for report in reports {
            let effect = signal::osc_effect(&report);
            let detail = match &report.kind {
                Some(kind) => format!("osc 7501 state={} kind={kind}", report.state),
                None => format!("osc 7501 state={}", report.state),
            };
            let signal = Signal {
                reported: Reported::Status(Status::Unknown),
                source: StatusSource::Osc,
                at: now,
                detail,
                pid: None,
            };
            let outcome = self.signal_received(signal, effect, now);
            change = chain(change, outcome.change);
        }
        change
    }

    /// The pane's title changed: for providers whose titles carry a status, that is a signal.
    pub fn title_changed(&mut self, title: &str, now: Instant) -> Option<Change> {
        let provider = self.provider.as_ref()?;
        let effect = provider.signals.title_effect(title);
        match effect {
            Effect::Ignore => None,
            // A title that no longer says anything clears only what a title said.
            Effect::Clear => {
                if self
                    .signal
                    .as_ref()
                    .is_some_and(|(s, _)| s.source == StatusSource::Title)
                {
                    self.signal = None;
                    self.settle(now)
                } else {
                    None
                }
            }
            Effect::Report(reported) => {
                let signal = Signal {
                    reported,
                    source: StatusSource::Title,
                    at: now,
                    detail: format!("title {:?}", title.trim_end()),
                    pid: None,
                };
                self.signal_received(signal, effect, now).change
            }
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
        self.status
    }

    /// The rule behind the current status (for a signal, what it was).
    pub fn rule(&self) -> Option<&Arc<str>> {
        self.rule.as_ref()
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
        self.signal = None;
        self.pending_dialog = None;
        self.screen_at = now;
        self.status = Status::Unknown;
        self.rule = None;
        self.status_source = StatusSource::Screen;
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
        self.screen_at = now;
        self.signal = None;
        self.pending_dialog = None;
        self.osc = OscScanner::new();
        let _ = change;
        self.settle(now)
    }

    /// The pane's program printed (as opposed to a resync or a title change).
    pub fn output_seen(&mut self) {
        self.awaiting_output = false;
    }

    /// The agent's process is gone.
    pub fn exited(&mut self, now: Instant) -> Option<Change> {
        let change = self.tracker.exited();
        self.screen_at = now;
        self.signal = None;
        self.pending_dialog = None;
        let _ = change;
        self.settle(now)
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
        let pending = self
            .pending_dialog
            .as_ref()
            .map(|(_, _, deadline)| *deadline);
        let screen = match self.dirty_since {
            Some(dirty) => {
                let quiet = self.last_output.unwrap_or(dirty) + self.timing.quiet;
                Some(quiet.min(dirty + self.timing.max_wait))
            }
            None => self.tracker.grace_left(now).map(|left| now + left),
        };
        match (screen, pending) {
            (Some(screen), Some(pending)) => Some(screen.min(pending)),
            (screen, pending) => screen.or(pending),
        }
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
        let change = self.screen_changed(change, now);
        chain(change, self.pending_dialog_due(now))
    }

    /// Applies the held signal of a dialog once its grace is over (a dialog the screen rules
    /// do not see); the screen showing the dialog drops it (see `screen_changed`).
    fn pending_dialog_due(&mut self, now: Instant) -> Option<Change> {
        if self.tracker.status() == Status::WaitingUserAnswer {
            self.pending_dialog = None;
            return None;
        }
        match self.pending_dialog.take() {
            Some((signal, effect, deadline)) if deadline <= now => {
                self.apply_signal(signal, effect, now).change
            }
            pending => {
                self.pending_dialog = pending;
                None
            }
        }
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
    fn spinner() -> ScreenView {
        ScreenView::from_text(
            "✻ Waddling…\n──────────\n❯ \n──────────\n  esc to interrupt",
            "",
            "claude",
        )
    }

    fn ready() -> ScreenView {
        ScreenView::from_text(
            "● done\n──────────\n❯ \n──────────\n  ? for shortcuts",
            "",
            "claude",
        )
    }

    fn dialog() -> ScreenView {
        ScreenView::from_text(
            " Bash command\n   ls\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel",
            "",
            "claude",
        )
    }

    fn hook(event: &str, kind: Option<&str>, at: Instant) -> (Signal, Effect) {
        (
            Signal {
                reported: Reported::Status(Status::Unknown),
                source: StatusSource::Hook,
                at,
                detail: format!("hook {event}"),
                pid: Some(42),
            },
            claude().signals.hook_effect(event, kind),
        )
    }

    #[test]
    fn a_waiting_hook_beats_a_spinner_until_the_screen_changes() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&spinner(), ms(10));
        assert_eq!(pane.status(), Status::Processing);
        // The permission dialog is drawn in a way no rule knows: the spinner stays. The hook
        // waits for the screen to draw the dialog, then applies after the grace.
        let (signal, effect) = hook("Notification", Some("permission_prompt"), ms(20));
        let outcome = pane.signal_received(signal, effect, ms(30));
        assert!(!outcome.applied && outcome.change.is_none());
        assert_eq!(pane.due(ms(30)), Some(ms(30) + DIALOG_GRACE));
        assert_eq!(pane.evaluate(&spinner(), ms(35)), None);
        assert_eq!(pane.status(), Status::Processing);
        let change = pane.evaluate(&spinner(), ms(30) + DIALOG_GRACE).unwrap();
        assert_eq!(
            (change.previous, change.status, change.source),
            (
                Status::Processing,
                Status::WaitingUserAnswer,
                StatusSource::Hook
            )
        );
        // The same spinner evaluated again is no new evidence.
        assert_eq!(pane.evaluate(&spinner(), ms(1040)), None);
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        assert_eq!(pane.status_source(), StatusSource::Hook);
        assert_eq!(pane.screen_status(), Status::Processing);
        // The screen changes: newer than the hook, it wins.
        let change = pane.evaluate(&ready(), ms(1050)).unwrap();
        assert_eq!(
            (change.previous, change.status, change.source),
            (
                Status::WaitingUserAnswer,
                Status::Completed,
                StatusSource::Screen
            )
        );
        assert!(pane.signal().is_none());
    }

    #[test]
    fn a_processing_signal_older_than_a_dialog_does_not_hide_it() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&dialog(), ms(100));
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        // PreToolUse ran before the dialog was drawn and arrives after it.
        let (signal, effect) = hook("PreToolUse", None, ms(90));
        let outcome = pane.signal_received(signal, effect, ms(150));
        assert!(!outcome.applied);
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        // Two hooks out of order: the older one is dropped.
        let (stop, effect) = hook("PreToolUse", None, ms(300));
        assert!(pane.signal_received(stop, effect, ms(310)).applied);
        let (late, effect) = hook("PostToolUse", None, ms(200));
        assert!(!pane.signal_received(late, effect, ms(320)).applied);
        assert_eq!(pane.status(), Status::Processing);
    }

    #[test]
    fn a_ready_signal_never_hides_a_dialog_on_the_screen() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&dialog(), ms(100));
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        // A Stop hook (forged, or out of step) while the dialog is drawn: the dialog stays, so
        // the inbox does not type a message into it.
        let (stop, effect) = hook("Stop", None, ms(300));
        pane.signal_received(stop, effect, ms(310));
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        assert_eq!(pane.status_source(), StatusSource::Screen);
        // Once the dialog is gone the screen decides again.
        let change = pane.evaluate(&ready(), ms(400)).unwrap();
        assert_eq!(change.status, Status::Completed);
    }

    #[test]
    fn a_dialog_signal_waits_for_the_screen_to_draw_the_dialog() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&spinner(), ms(10));
        // PermissionRequest comes half a second before the dialog is drawn.
        let (signal, effect) = hook("PermissionRequest", None, ms(20));
        assert!(!pane.signal_received(signal, effect, ms(20)).applied);
        assert_eq!(pane.status(), Status::Processing);
        assert_eq!(pane.evaluate(&spinner(), ms(500)), None);
        assert_eq!(pane.status(), Status::Processing);
        // The dialog is drawn: the screen says so itself, and the held signal goes.
        let change = pane.evaluate(&dialog(), ms(520)).unwrap();
        assert_eq!(
            (change.status, change.source),
            (Status::WaitingUserAnswer, StatusSource::Screen)
        );
        assert_eq!(pane.evaluate(&dialog(), ms(2000)), None);
        assert_eq!(pane.status_source(), StatusSource::Screen);
        // A newer signal replaces one still held.
        pane.evaluate(&spinner(), ms(3000));
        let (signal, effect) = hook("PermissionRequest", None, ms(3010));
        pane.signal_received(signal, effect, ms(3010));
        let (signal, effect) = hook("PostToolUse", None, ms(3020));
        assert!(pane.signal_received(signal, effect, ms(3020)).applied);
        assert_eq!(pane.evaluate(&spinner(), ms(5000)), None);
        assert_eq!(pane.status(), Status::Processing);
    }

    #[test]
    fn signals_end_with_the_program_that_sent_them() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&ready(), ms(10));
        let (signal, effect) = hook("UserPromptSubmit", None, ms(20));
        pane.signal_received(signal, effect, ms(20));
        assert_eq!(pane.status(), Status::Processing);
        // Respawned: the signal goes with the old program.
        let change = pane.respawned(ms(5000)).unwrap();
        assert_eq!(
            (change.status, change.source),
            (Status::Unknown, StatusSource::Screen)
        );
        assert!(pane.signal().is_none());
        // A hook the old program sent before it was replaced is older than the respawn.
        let (stale, effect) = hook("Stop", None, ms(4000));
        assert!(!pane.signal_received(stale, effect, ms(5100)).applied);
        // SessionEnd clears what the session said; an exited agent takes no signal.
        pane.output_seen();
        pane.evaluate(&ready(), ms(6000));
        let (signal, effect) = hook("PermissionRequest", None, ms(6100));
        pane.signal_received(signal, effect, ms(6100));
        pane.evaluate(&ready(), ms(6100) + DIALOG_GRACE);
        assert_eq!(pane.status(), Status::WaitingUserAnswer);
        let (end, effect) = hook("SessionEnd", None, ms(7200));
        let change = pane.signal_received(end, effect, ms(7200)).change.unwrap();
        // The screen decides again: ready, after a dialog (which counts as a turn).
        assert_eq!(
            (change.status, change.source),
            (Status::Completed, StatusSource::Screen)
        );
        pane.exited(ms(8000));
        let (late, effect) = hook("Stop", None, ms(8100));
        assert!(!pane.signal_received(late, effect, ms(8100)).applied);
        assert_eq!(pane.status(), Status::Exited);
    }

    #[test]
    fn osc_reports_count_only_in_the_panes_of_the_cli_that_sends_them() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
        pane.evaluate(&ready(), ms(10));
        // A `tail -f` of a file holding Codex's reports, in a Claude Code pane.
        let forged =
            b"\x1b]7501;state=working:app=codex\x1b\\\x1b]7501;state=blocked:app=codex\x1b\\";
        assert_eq!(pane.scan_output(forged, ms(20)), None);
        assert_eq!(pane.evaluate(&ready(), ms(20) + DIALOG_GRACE), None);
        assert_eq!(pane.status_source(), StatusSource::Screen);
        assert!(pane.signal().is_none());
    }

    #[test]
    fn codex_osc_reports_split_across_chunks_drive_the_status() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let codex = ProviderSet::builtin()
            .unwrap()
            .get("codex")
            .unwrap()
            .clone();
        let mut pane = PaneAgent::new(Timing::default(), start);
        pane.set_provider(Some(codex), Some(ProviderSource::Process), start);
        assert_eq!(pane.scan_output(b"\x1b]7501;state=wor", ms(10)), None);
        let change = pane.scan_output(b"king:app=codex\x1b", ms(11));
        assert_eq!(change, None, "not ended yet");
        let change = pane.scan_output(b"\\\x1b[1mhi", ms(12)).unwrap();
        assert_eq!(
            (change.status, change.source),
            (Status::Processing, StatusSource::Osc)
        );
        // done, then idle at once: the turn is over, so idle reads as completed.
        let change = pane
            .scan_output(
                b"\x1b]7501;state=done:app=codex\x1b\\\x1b]7501;state=idle:app=codex\x1b\\",
                ms(20),
            )
            .unwrap();
        assert_eq!(
            (change.previous, change.status),
            (Status::Processing, Status::Completed)
        );
        assert_eq!(pane.status_source(), StatusSource::Osc);
        // Garbage changes nothing.
        assert_eq!(
            pane.scan_output(b"\x1b]7501;\xff\x07\x1b]7501;state=\x07", ms(30)),
            None
        );
        assert_eq!(pane.status(), Status::Completed);
    }
}
