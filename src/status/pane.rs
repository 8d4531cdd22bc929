//! The status side of one pane: which provider it runs, its tracker, and when it should be
//! evaluated again. Sans-IO: the connection task calls it with the time and the screen.
//!
//! Detection runs on the composited screen, not on the raw stream: after the output has been
//! quiet for `quiet` (a redraw is complete), or at the latest `max_wait` after the first
//! output not yet evaluated (a pane that never stops printing is still followed). A program
//! that frames its redraws as synchronized updates (`?2026h` … `?2026l`) is read only once a
//! frame has ended, or [`FRAME_HOLD`] after the output began if a frame never ends: on a
//! loaded machine one frame's writes can be further apart than `quiet`, and half a frame (rows
//! erased, not yet drawn again) must not decide a status.
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

/// How long an unfinished synchronized update may hold off reading the screen.
pub const FRAME_HOLD: Duration = Duration::from_millis(500);

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
    /// The latest output left a synchronized update open (see [`FRAME_HOLD`]).
    mid_frame: bool,
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
            mid_frame: false,
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

    /// What the screen read about the status (a retry's attempt), while the screen decides it.
    pub fn detail(&self) -> Option<&Arc<str>> {
        (self.status_source == StatusSource::Screen)
            .then(|| self.tracker.detail())
            .flatten()
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

    /// Whether the pane's screen is in the middle of a synchronized update after its latest
    /// output ([`crate::screen::PaneScreen::mid_frame`]).
    pub fn set_mid_frame(&mut self, mid_frame: bool) {
        self.mid_frame = mid_frame;
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
            Some(dirty) if self.mid_frame => Some(dirty + FRAME_HOLD),
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
#[path = "pane_tests.rs"]
mod tests;
