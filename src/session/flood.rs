//! Floods: a pane whose output rate stays high moves to the pipe transport, and back once it
//! is calm.
//!
//! tmux encodes every byte of a pane as `%output` for a control client, which costs the tmux
//! server about three times the CPU of the output alone (BENCHMARKS.md); `pipe-pane` costs it
//! next to nothing. A build or a test suite that prints megabytes would make the user's tmux
//! look slow because of panectl. So the bytes of each pane are metered in windows of
//! [`WINDOW`]: a pane on the control transport whose rate stays at or above
//! [`FloodConfig::rate`] for [`FloodConfig::sustain`] is moved to the pipe transport (its
//! mirror stays exact: the pipe carries every byte from the reseed on), and once its rate has
//! stayed under a tenth of that for [`FloodConfig::calm`] it goes back to `%output`. The
//! session's panes share one control client, so several panes printing at once each arrive
//! slower than one alone would: when the session's whole output keeps to the rate, each of its
//! panes printing at a tenth of it or more moves too. The meter decides; the core moves the
//! pane.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::ids::PaneId;

/// The length of one metering window.
pub const WINDOW: Duration = Duration::from_millis(100);

/// When output is a flood, and when a flood is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloodConfig {
    /// Bytes per second at or above which output, kept up for `sustain`, is a flood.
    pub rate: u64,
    /// How long the rate must hold.
    pub sustain: Duration,
    /// How long the rate must stay under a tenth of `rate` for the flood to be over.
    pub calm: Duration,
}

impl Default for FloodConfig {
    fn default() -> Self {
        FloodConfig {
            rate: 2_000_000,
            sustain: Duration::from_millis(300),
            calm: Duration::from_secs(2),
        }
    }
}

/// One pane's meter.
#[derive(Debug)]
struct Meter {
    window_start: Instant,
    bytes: u64,
    /// Since when every window was at or above the rate.
    over_since: Option<Instant>,
    /// The end of the last window at or above a tenth of the rate.
    last_busy: Instant,
    /// The pane was moved to the pipe for this flood.
    moved: bool,
    /// The rate of the last window closed, in bytes per second.
    last_rate: u64,
}

impl Meter {
    fn new(now: Instant) -> Meter {
        Meter {
            window_start: now,
            bytes: 0,
            over_since: None,
            last_busy: now,
            moved: false,
            last_rate: 0,
        }
    }

    /// Whether every window for `sustain` up to `now` was at or above the rate.
    fn flooding(&self, sustain: Duration, now: Instant) -> bool {
        self.over_since
            .is_some_and(|since| now.duration_since(since) >= sustain)
    }
}

/// The meters of a session's panes. See the module documentation.
#[derive(Debug)]
pub(super) struct FloodMeter {
    config: FloodConfig,
    meters: HashMap<PaneId, Meter>,
    /// The session's output, all panes on the control transport together.
    session: Option<Meter>,
}

impl FloodMeter {
    /// Meters for `config`.
    pub(super) fn new(config: FloodConfig) -> FloodMeter {
        FloodMeter {
            config,
            meters: HashMap::new(),
            session: None,
        }
    }

    /// `len` bytes of the pane's output arrived at `now`, through `%output` (`on_control`) or
    /// a pipe. Answers the rate, in bytes per second, when they make a flood of output that is
    /// not moved yet (the caller moves the pane and says so with [`FloodMeter::moved`]). A pane
    /// on a pipe it did not move (chosen by hand, or the daemon's `--transport`) is not metered,
    /// nor counted in the session's output.
    pub(super) fn bytes(
        &mut self,
        pane: PaneId,
        len: usize,
        on_control: bool,
        now: Instant,
    ) -> Option<u64> {
        let config = self.config;
        if !on_control && !self.meters.get(&pane).is_some_and(|m| m.moved) {
            return None;
        }
        let meter = self.meters.entry(pane).or_insert_with(|| Meter::new(now));
        meter.bytes += len as u64;
        close_window(meter, &config, now);
        if meter.moved {
            return None;
        }
        let session = self.session.get_or_insert_with(|| Meter::new(now));
        session.bytes += len as u64;
        close_window(session, &config, now);
        let alone = meter.flooding(config.sustain, now);
        let together = session.flooding(config.sustain, now) && meter.last_rate >= config.rate / 10;
        (alone || together).then_some(meter.last_rate.max(1))
    }

    /// The pane was moved to the pipe for its flood.
    pub(super) fn moved(&mut self, pane: PaneId) {
        if let Some(meter) = self.meters.get_mut(&pane) {
            meter.moved = true;
        }
    }

    /// The pane's transport was chosen by someone else: it is not the meter's to move back.
    pub(super) fn forget_move(&mut self, pane: PaneId) {
        if let Some(meter) = self.meters.get_mut(&pane) {
            meter.moved = false;
        }
    }

    /// The panes moved for a flood that is over at `now` (each answered once).
    pub(super) fn calmed(&mut self, now: Instant) -> Vec<PaneId> {
        let config = self.config;
        let mut calm = Vec::new();
        for (pane, meter) in &mut self.meters {
            if !meter.moved {
                continue;
            }
            close_window(meter, &config, now);
            if now.duration_since(meter.last_busy) >= config.calm {
                meter.moved = false;
                meter.over_since = None;
                calm.push(*pane);
            }
        }
        calm.sort();
        calm
    }

    /// Forgets a pane.
    pub(super) fn remove(&mut self, pane: PaneId) {
        self.meters.remove(&pane);
    }
}

/// Closes the meter's window if it is over at `now`: answers its rate (bytes per second).
fn close_window(meter: &mut Meter, config: &FloodConfig, now: Instant) -> Option<u64> {
    let elapsed = now.duration_since(meter.window_start);
    if elapsed < WINDOW {
        return None;
    }
    let rate = (u128::from(meter.bytes) * 1_000_000_000 / elapsed.as_nanos().max(1))
        .try_into()
        .unwrap_or(u64::MAX);
    if rate >= config.rate {
        meter.over_since.get_or_insert(meter.window_start);
    } else {
        meter.over_since = None;
    }
    if rate >= config.rate / 10 {
        meter.last_busy = now;
    }
    meter.window_start = now;
    meter.bytes = 0;
    meter.last_rate = rate;
    Some(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PANE: PaneId = PaneId(3);

    /// Feeds `per_window` bytes every 10 ms for `windows` windows from `start`; answers the
    /// first flood rate reported and when, and the time after the last byte.
    fn feed(
        meter: &mut FloodMeter,
        start: Instant,
        per_window: usize,
        windows: u32,
    ) -> (Option<(u64, Duration)>, Instant) {
        let mut first = None;
        let mut now = start;
        for _ in 0..windows * 10 {
            now += Duration::from_millis(10);
            if let Some(rate) = meter.bytes(PANE, per_window / 10, true, now)
                && first.is_none()
            {
                first = Some((rate, now.duration_since(start)));
            }
        }
        (first, now)
    }

    #[test]
    fn a_sustained_flood_is_reported_once_after_the_sustain_time() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let start = Instant::now();
        // 1 MB per 100 ms window: 10 MB/s.
        let (first, end) = feed(&mut meter, start, 1_000_000, 10);
        let (rate, after) = first.expect("a flood");
        assert!((9_000_000..=11_000_000).contains(&rate), "{rate}");
        assert!(
            after >= Duration::from_millis(300) && after <= Duration::from_millis(500),
            "{after:?}"
        );
        // Still reported while it was not moved; never once it was.
        meter.moved(PANE);
        let (again, _) = feed(&mut meter, end, 1_000_000, 10);
        assert_eq!(again, None);
    }

    #[test]
    fn short_bursts_and_steady_output_under_the_rate_are_no_flood() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let start = Instant::now();
        // 150 KB per window: 1.5 MB/s, for 5 s.
        let (first, end) = feed(&mut meter, start, 150_000, 50);
        assert_eq!(first, None);
        // A 100 ms burst at 10 MB/s, then quiet output: well under the sustain time.
        let (burst, end) = feed(&mut meter, end, 1_000_000, 1);
        assert_eq!(burst, None);
        let (after, _) = feed(&mut meter, end, 1_000, 20);
        assert_eq!(after, None);
    }

    #[test]
    fn a_moved_pane_is_calm_after_the_calm_time_under_a_tenth_of_the_rate() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let start = Instant::now();
        let (first, end) = feed(&mut meter, start, 1_000_000, 10);
        assert!(first.is_some());
        meter.moved(PANE);
        // Output at a third of the rate keeps the pane on the pipe.
        let (_, end) = feed(&mut meter, end, 66_000, 30);
        assert!(meter.calmed(end).is_empty());
        // Silence: calm two seconds after the last busy window, once.
        assert!(meter.calmed(end + Duration::from_millis(1500)).is_empty());
        assert_eq!(meter.calmed(end + Duration::from_millis(2100)), vec![PANE]);
        assert!(meter.calmed(end + Duration::from_secs(5)).is_empty());
    }

    #[test]
    fn panes_printing_together_at_the_rate_move_each_when_busy_enough() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let start = Instant::now();
        let mut moved = Vec::new();
        let mut now = start;
        // Four panes at 0.6 MB/s each (2.4 MB/s together), one at 0.1 MB/s, for 2 s.
        for _ in 0..200 {
            now += Duration::from_millis(10);
            for (pane, bytes) in [(1, 6_000), (2, 6_000), (3, 6_000), (4, 6_000), (5, 1_000)] {
                if meter.bytes(PaneId(pane), bytes, true, now).is_some() {
                    meter.moved(PaneId(pane));
                    moved.push(pane);
                }
            }
        }
        moved.sort();
        assert_eq!(moved, vec![1, 2, 3, 4], "the quiet one stays");
    }

    #[test]
    fn panes_on_a_pipe_chosen_elsewhere_are_not_metered_nor_counted_for_the_session() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let mut now = Instant::now();
        for _ in 0..200 {
            now += Duration::from_millis(10);
            // A pipe pane at 10 MB/s, a control pane at 0.5 MB/s.
            assert_eq!(meter.bytes(PaneId(1), 100_000, false, now), None);
            assert_eq!(meter.bytes(PaneId(2), 5_000, true, now), None);
        }
    }

    #[test]
    fn a_pane_moved_by_someone_else_is_not_moved_back() {
        let mut meter = FloodMeter::new(FloodConfig::default());
        let start = Instant::now();
        let (_, end) = feed(&mut meter, start, 1_000_000, 10);
        meter.moved(PANE);
        meter.forget_move(PANE);
        assert!(meter.calmed(end + Duration::from_secs(10)).is_empty());
        meter.remove(PANE);
        assert!(meter.calmed(end + Duration::from_secs(20)).is_empty());
    }
}
