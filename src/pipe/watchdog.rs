//! The pipe's liveness watchdog, without IO: at each check the caller says whether the screen
//! built from the bytes the pipe delivered matches what tmux shows (`capture-pane`), and the
//! watchdog says what to do. It carries the field's lessons:
//!
//! - **Cold start.** A pipe that never delivered a byte while the pane shows something is
//!   re-armed after a grace, a bounded number of times.
//! - **Sticky baseline.** The baseline is tmux's screen the last time the delivered bytes had
//!   caught up with it, and it moves only then. A pipe that delivered a burst and then stalled
//!   while the pane settled on a new frame, all inside one interval, still diverges from it:
//!   bytes delivered earlier in the interval never excuse a divergence.
//! - **A flowing pipe is not judged.** The pipe's bytes and tmux's `capture-pane` are seen at
//!   different moments, so while bytes keep arriving (just before the check was asked for, or
//!   while it ran) a difference is only bytes in flight. A flood of one repeated line makes
//!   tmux's screen equal the baseline over and over while the model is mid-line.
//! - **Two looks before acting.** A difference seen on one quiet check may still be the last
//!   bytes on their way; only the second in a row acts.
//! - **Model errors are not stalls.** If tmux's screen is still the baseline but the model
//!   differs, the pipe is fine and only the model is reseeded.
//! - **Bounded.** Re-arms that do not bring the pipe back are counted; past the limit the
//!   watchdog gives up (the caller fails over to the control transport).

use std::time::{Duration, Instant};

/// The watchdog's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchdogConfig {
    /// How often the caller checks (it paces the checks; kept here for reference).
    pub interval: Duration,
    /// Consecutive diverged checks before a re-arm or reseed (the first may be bytes still in
    /// flight).
    pub stall_checks: u32,
    /// Bytes delivered this long before a check was asked for, or after, mean the pipe is
    /// flowing: that check's screens are not compared.
    pub flowing: Duration,
    /// How long a pipe may deliver nothing at start before it is re-armed.
    pub cold_start_grace: Duration,
    /// Re-arms at cold start before giving up.
    pub max_cold_starts: u32,
    /// Re-arms without a recovery in between before giving up.
    pub max_rearms: u32,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            interval: Duration::from_secs(2),
            stall_checks: 2,
            flowing: Duration::from_millis(50),
            cold_start_grace: Duration::from_secs(3),
            max_cold_starts: 5,
            max_rearms: 5,
        }
    }
}

/// What the caller observed at a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The screen built from the delivered bytes equals tmux's (`capture-pane`).
    pub model_matches: bool,
    /// A hash of tmux's screen.
    pub screen_hash: u64,
    /// tmux's screen shows anything at all.
    pub pane_has_content: bool,
}

/// Why a pipe is re-armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RearmReason {
    /// It never delivered anything.
    ColdStart,
    /// It stopped delivering while the pane changed.
    Stalled,
}

/// What to do after a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The delivered bytes have caught up with tmux.
    Healthy,
    /// Nothing to do yet.
    Watching,
    /// Rebuild the model's screen from tmux (the pipe is fine; the model went wrong).
    Reseed,
    /// Stop then start the pipe, then reseed the model and tell consumers of the gap.
    Rearm(RearmReason),
    /// Stop using the pipe for this pane.
    GiveUp(String),
}

/// One pane's pipe, as the watchdog sees it.
#[derive(Debug, Clone)]
pub struct PipeLiveness {
    config: WatchdogConfig,
    armed_at: Instant,
    ever_delivered: bool,
    last_delivered: Option<Instant>,
    asked_at: Option<Instant>,
    baseline: Option<u64>,
    strikes: u32,
    cold_starts: u32,
    rearms: u32,
}

impl PipeLiveness {
    /// A pipe armed at `now`.
    pub fn new(config: WatchdogConfig, now: Instant) -> PipeLiveness {
        PipeLiveness {
            config,
            armed_at: now,
            ever_delivered: false,
            last_delivered: None,
            asked_at: None,
            baseline: None,
            strikes: 0,
            cold_starts: 0,
            rearms: 0,
        }
    }

    /// Bytes reached the consumer (call it there, not where they were read).
    pub fn delivered(&mut self, now: Instant) {
        self.ever_delivered = true;
        self.last_delivered = Some(now);
    }

    /// When bytes last reached the consumer.
    pub fn last_delivered(&self) -> Option<Instant> {
        self.last_delivered
    }

    /// The caller asked tmux for the pane's screen (the check whose answer comes to
    /// [`PipeLiveness::check`]).
    pub fn asked(&mut self, now: Instant) {
        self.asked_at = Some(now);
    }

    /// Whether bytes reached the consumer shortly before the check was asked for, or since.
    fn flowing_during_check(&self) -> bool {
        match (self.asked_at, self.last_delivered) {
            (Some(asked), Some(delivered)) => delivered + self.config.flowing >= asked,
            _ => false,
        }
    }

    /// The pipe was stopped and started again, and the model reseeded, at `now`.
    pub fn rearmed(&mut self, now: Instant) {
        self.armed_at = now;
        self.strikes = 0;
        self.baseline = None;
    }

    /// Takes a check's observation.
    pub fn check(&mut self, now: Instant, probe: Probe) -> Verdict {
        let flowing = self.flowing_during_check();
        self.asked_at = None;
        if probe.model_matches {
            self.baseline = Some(probe.screen_hash);
            self.strikes = 0;
            if self.ever_delivered {
                self.rearms = 0;
                self.cold_starts = 0;
            }
            return Verdict::Healthy;
        }
        if !self.ever_delivered {
            if !probe.pane_has_content
                || now.duration_since(self.armed_at) < self.config.cold_start_grace
            {
                return Verdict::Watching;
            }
            if self.cold_starts >= self.config.max_cold_starts {
                return Verdict::GiveUp(format!(
                    "the pipe delivered nothing after {} re-arms",
                    self.cold_starts
                ));
            }
            self.cold_starts += 1;
            return Verdict::Rearm(RearmReason::ColdStart);
        }
        if flowing {
            // Bytes in flight: the pipe is alive, and the screens were seen apart.
            self.strikes = 0;
            return Verdict::Watching;
        }
        self.strikes += 1;
        if self.strikes < self.config.stall_checks {
            return Verdict::Watching;
        }
        if self.baseline == Some(probe.screen_hash) {
            // tmux shows what it showed when all was well: the model, not the pipe, moved.
            self.strikes = 0;
            return Verdict::Reseed;
        }
        if self.rearms >= self.config.max_rearms {
            return Verdict::GiveUp(format!(
                "the pipe kept stalling after {} re-arms",
                self.rearms
            ));
        }
        self.rearms += 1;
        Verdict::Rearm(RearmReason::Stalled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(model_matches: bool, screen_hash: u64) -> Probe {
        Probe {
            model_matches,
            screen_hash,
            pane_has_content: true,
        }
    }

    #[test]
    fn a_pipe_that_never_delivers_is_rearmed_after_the_grace_a_bounded_number_of_times() {
        let start = Instant::now();
        let mut pipe = PipeLiveness::new(WatchdogConfig::default(), start);
        let grace = WatchdogConfig::default().cold_start_grace;
        assert_eq!(pipe.check(start, probe(false, 1)), Verdict::Watching);
        let blank = Probe {
            pane_has_content: false,
            ..probe(false, 1)
        };
        assert_eq!(pipe.check(start + grace, blank), Verdict::Watching);
        let mut now = start;
        for _ in 0..5 {
            now += grace;
            assert_eq!(
                pipe.check(now, probe(false, 1)),
                Verdict::Rearm(RearmReason::ColdStart)
            );
            pipe.rearmed(now);
        }
        now += grace;
        assert!(matches!(
            pipe.check(now, probe(false, 1)),
            Verdict::GiveUp(_)
        ));
    }

    #[test]
    fn bytes_in_flight_are_forgiven_once() {
        let now = Instant::now();
        let mut pipe = PipeLiveness::new(WatchdogConfig::default(), now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(true, 1)), Verdict::Healthy);
        // The pane moved on and the bytes are still on their way: one strike only.
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(false, 2)), Verdict::Watching);
        assert_eq!(pipe.check(now, probe(true, 2)), Verdict::Healthy);
    }

    #[test]
    fn a_burst_then_a_stall_then_a_settled_frame_in_one_interval_is_caught() {
        let now = Instant::now();
        let mut pipe = PipeLiveness::new(WatchdogConfig::default(), now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(true, 1)), Verdict::Healthy);
        // Burst delivered, then the pipe stalled; tmux settled on frame 3, the model did not.
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(false, 3)), Verdict::Watching);
        // Nothing more arrives; the frame stays: the second divergence re-arms.
        assert_eq!(
            pipe.check(now, probe(false, 3)),
            Verdict::Rearm(RearmReason::Stalled)
        );
        pipe.rearmed(now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(true, 3)), Verdict::Healthy);
    }

    #[test]
    fn a_model_that_went_wrong_is_reseeded_not_the_pipe_rearmed() {
        let now = Instant::now();
        let mut pipe = PipeLiveness::new(WatchdogConfig::default(), now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(true, 7)), Verdict::Healthy);
        // Seen once it may be the last bytes on their way; seen twice, the model is wrong.
        assert_eq!(pipe.check(now, probe(false, 7)), Verdict::Watching);
        assert_eq!(pipe.check(now, probe(false, 7)), Verdict::Reseed);
        // The count starts again after a reseed.
        assert_eq!(pipe.check(now, probe(false, 7)), Verdict::Watching);
    }

    #[test]
    fn a_pipe_delivering_while_it_is_checked_is_never_judged() {
        let config = WatchdogConfig::default();
        let start = Instant::now();
        let mut pipe = PipeLiveness::new(config, start);
        pipe.delivered(start);
        assert_eq!(pipe.check(start, probe(true, 1)), Verdict::Healthy);
        // A flood of one repeated line: tmux's screen hashes as the baseline every time, and
        // the model, fed bytes all along, is mid-line at each check.
        let mut now = start;
        for step in 0..50 {
            now += Duration::from_millis(300);
            pipe.asked(now);
            // Bytes arrive just before the check (within `flowing`) or while it runs.
            if step % 2 == 0 {
                pipe.delivered(now - config.flowing / 2);
            } else {
                pipe.delivered(now + Duration::from_millis(1));
            }
            assert_eq!(
                pipe.check(now, probe(false, 1)),
                Verdict::Watching,
                "{step}"
            );
        }
        // A quiet check in between does not add up with an earlier one across a flowing one.
        now += Duration::from_millis(300);
        pipe.asked(now);
        assert_eq!(pipe.check(now, probe(false, 1)), Verdict::Watching);
        now += Duration::from_millis(300);
        pipe.asked(now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(false, 1)), Verdict::Watching);
        now += Duration::from_millis(300);
        pipe.asked(now);
        assert_eq!(pipe.check(now, probe(false, 1)), Verdict::Watching);
    }

    #[test]
    fn bytes_from_earlier_in_the_interval_do_not_excuse_a_stall() {
        let config = WatchdogConfig::default();
        let start = Instant::now();
        let mut pipe = PipeLiveness::new(config, start);
        pipe.delivered(start);
        pipe.asked(start);
        assert_eq!(pipe.check(start, probe(true, 1)), Verdict::Healthy);
        // A burst early in the interval, then the pipe stalls while the pane settles.
        pipe.delivered(start + Duration::from_millis(100));
        let mut now = start + Duration::from_millis(300);
        pipe.asked(now);
        assert_eq!(pipe.check(now, probe(false, 2)), Verdict::Watching);
        now += Duration::from_millis(300);
        pipe.asked(now);
        assert_eq!(
            pipe.check(now, probe(false, 2)),
            Verdict::Rearm(RearmReason::Stalled)
        );
    }

    #[test]
    fn rearms_that_do_not_help_end_in_giving_up() {
        let now = Instant::now();
        let mut pipe = PipeLiveness::new(WatchdogConfig::default(), now);
        pipe.delivered(now);
        assert_eq!(pipe.check(now, probe(true, 0)), Verdict::Healthy);
        let mut frame = 1;
        let mut rearms = 0;
        loop {
            frame += 1;
            match pipe.check(now, probe(false, frame)) {
                Verdict::Watching => {}
                Verdict::Rearm(RearmReason::Stalled) => {
                    rearms += 1;
                    pipe.rearmed(now);
                }
                Verdict::GiveUp(_) => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(rearms, 5);
    }
}
