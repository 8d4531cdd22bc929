//! The pipe transport inside a connection: a pane whose output comes through `pipe-pane -O`
//! and a FIFO instead of `%output`.
//!
//! The control client stays: it carries commands, layouts and every other notification; only
//! the pane's output moves. Switching a pane to the pipe starts the pipe first and then turns
//! the pane's `%output` off (`refresh-client -A %N:pause`, then `%N:off`: the pause makes
//! tmux drop output it had queued, which tmux 3.3a would otherwise crash on), so that for a
//! moment both deliver rather than neither; `%output` of a pipe pane is ignored from then on, and the pane is
//! reseeded from `capture-pane`, which tells consumers of the stream about the gap.
//!
//! Pipe panes are checked at every watchdog interval whether they printed or not (a stalled
//! pipe prints nothing): the screen built from the delivered bytes is compared with tmux's and
//! [`PipeLiveness`] says what to do. A pipe that stalls is re-armed (stop, then start, then a
//! reseed); one that cannot be made to deliver, or whose FIFO cannot be read, falls back to
//! the control transport, with an event saying why.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use tracing::{info, warn};

use super::{Purpose, SessionCore, TransportError};
use crate::control::Reply;
use crate::control::command::{Line, commands};
use crate::events::{EventKind, ResyncReason};
use crate::ids::PaneId;
use crate::mirror::SyncState;
use crate::pipe::cross_check::{CrossCheck, Finding};
use crate::pipe::watchdog::RearmReason;
use crate::pipe::{PipeLiveness, Probe, Transport, Verdict, WatchdogConfig};
use crate::query;
use crate::raw::RawBytes;
use std::time::Instant;

/// A pane on the pipe transport.
pub(super) struct PanePipe {
    /// Tells chunks of this pipe from those of an earlier one of the same pane.
    pub(super) generation: u64,
    liveness: PipeLiveness,
    /// A check line is in flight.
    checking: bool,
    /// In cross-check mode, the comparison with `%output` (which then feeds the mirror).
    cross_check: Option<CrossCheck>,
}

impl PanePipe {
    /// Whether `%output` still feeds the mirror and the pipe is only compared with it.
    pub(super) fn is_cross_check(&self) -> bool {
        self.cross_check.is_some()
    }
}

/// What became of bytes handed to [`Pipes`] (from the pipe's reader or from `%output`).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Routed {
    /// They are for the mirror: the caller delivers them.
    Deliver,
    /// They are not for the mirror (another transport feeds it, or an old pipe sent them).
    Ignore,
    /// They were compared with the other transport's, and this difference found; they are
    /// for the mirror when they came through `%output`.
    Differs(Finding),
}

/// The panes on the pipe transport, the numbering of their pipes and what came through them.
/// It owns each pane's [`PipeLiveness`] and cross-check; the core sends the lines and talks to
/// the host (FIFOs), and hands the part the time and the screens it judges.
pub(super) struct Pipes {
    panes: HashMap<PaneId, PanePipe>,
    /// Generation of the last pipe started (a failed start uses no number).
    last_generation: u64,
    /// The settings of each pipe's liveness watchdog.
    watchdog: WatchdogConfig,
    /// Bytes that came through pipes.
    bytes: u64,
    /// Cross-check mode: bytes found equal in both transports.
    matched: u64,
    /// Cross-check mode: differences found.
    findings: u64,
}

impl Pipes {
    /// No pipes yet; each pipe started gets a watchdog with these settings.
    pub(super) fn new(watchdog: WatchdogConfig) -> Pipes {
        Pipes {
            panes: HashMap::new(),
            last_generation: 0,
            watchdog,
            bytes: 0,
            matched: 0,
            findings: 0,
        }
    }

    /// The transport a pane's output comes through.
    pub(super) fn transport_of(&self, pane: PaneId) -> Transport {
        match self.panes.get(&pane) {
            Some(pipe) if pipe.is_cross_check() => Transport::CrossCheck,
            Some(_) => Transport::Pipe,
            None => Transport::Control,
        }
    }

    /// Whether no pane is on a pipe (the usual case: `%output` needs no lookup).
    pub(super) fn is_empty(&self) -> bool {
        self.panes.is_empty()
    }

    /// Panes on a pipe.
    pub(super) fn len(&self) -> usize {
        self.panes.len()
    }

    /// Whether the pane is on a pipe.
    pub(super) fn contains(&self, pane: PaneId) -> bool {
        self.panes.contains_key(&pane)
    }

    /// The generation the next pipe gets, if it starts.
    pub(super) fn next_generation(&self) -> u64 {
        self.last_generation + 1
    }

    /// A pipe of `generation` started for the pane at `now`; with `compare_from` (the output
    /// sequence number from which the two streams are compared), it is cross-checked.
    pub(super) fn started(
        &mut self,
        pane: PaneId,
        generation: u64,
        compare_from: Option<u64>,
        now: Instant,
    ) {
        self.last_generation = generation;
        self.panes.insert(
            pane,
            PanePipe {
                generation,
                liveness: PipeLiveness::new(self.watchdog, now),
                checking: false,
                cross_check: compare_from.map(CrossCheck::new),
            },
        );
    }

    /// Takes the pane off its pipe.
    pub(super) fn remove(&mut self, pane: PaneId) -> Option<PanePipe> {
        self.panes.remove(&pane)
    }

    /// Takes every pane off its pipe: the panes and their generations.
    pub(super) fn drain(&mut self) -> Vec<(PaneId, u64)> {
        self.panes
            .drain()
            .map(|(pane, pipe)| (pane, pipe.generation))
            .collect()
    }

    /// Whether `generation` is the pane's current pipe (what an older one says is stale).
    pub(super) fn is_current(&self, pane: PaneId, generation: u64) -> bool {
        self.panes.get(&pane).map(|p| p.generation) == Some(generation)
    }

    /// The panes on a pipe only (not cross-checked).
    pub(super) fn piped(&self) -> Vec<PaneId> {
        self.panes
            .iter()
            .filter(|(_, pipe)| !pipe.is_cross_check())
            .map(|(pane, _)| *pane)
            .collect()
    }

    /// Bytes the pipe of `generation` delivered at `now`.
    pub(super) fn pipe_bytes(
        &mut self,
        pane: PaneId,
        generation: u64,
        data: &[u8],
        now: Instant,
    ) -> Routed {
        let Some(pipe) = self.panes.get_mut(&pane) else {
            return Routed::Ignore;
        };
        if pipe.generation != generation {
            return Routed::Ignore;
        }
        // "Has delivered" counts where the bytes reach the consumer, which is here.
        pipe.liveness.delivered(now);
        self.bytes += data.len() as u64;
        match &mut pipe.cross_check {
            Some(check) => {
                let matched = check.matched;
                let finding = check.pipe(data);
                self.matched += check.matched - matched;
                self.found(finding, Routed::Ignore)
            }
            None => Routed::Deliver,
        }
    }

    /// `%output` of the pane, whose mirror's output ends at `seq`: for the mirror unless a pipe
    /// feeds it; in cross-check mode compared with the pipe's first.
    pub(super) fn control_bytes(&mut self, pane: PaneId, seq: u64, data: &[u8]) -> Routed {
        let Some(pipe) = self.panes.get_mut(&pane) else {
            return Routed::Deliver;
        };
        let Some(check) = &mut pipe.cross_check else {
            return Routed::Ignore;
        };
        let matched = check.matched;
        let finding = check.control(seq, data);
        self.matched += check.matched - matched;
        self.found(finding, Routed::Deliver)
    }

    fn found(&mut self, finding: Option<Finding>, otherwise: Routed) -> Routed {
        match finding {
            Some(finding) => {
                self.findings += 1;
                Routed::Differs(finding)
            }
            None => otherwise,
        }
    }

    /// The panes whose pipe is due a check (none in flight, not cross-checked, and not `busy`:
    /// being seeded), marked as asked at `now`.
    pub(super) fn checks_due(
        &mut self,
        now: Instant,
        busy: impl Fn(PaneId) -> bool,
    ) -> Vec<PaneId> {
        let mut due = Vec::new();
        for (pane, pipe) in &mut self.panes {
            // A cross-checked pane's mirror is fed by `%output` and checked as usual.
            if pipe.cross_check.is_none() && !pipe.checking && !busy(*pane) {
                pipe.checking = true;
                pipe.liveness.asked(now);
                due.push(*pane);
            }
        }
        due
    }

    /// The pane's check came back (or failed); false if the pane is not on a pipe any more.
    pub(super) fn check_answered(&mut self, pane: PaneId) -> bool {
        match self.panes.get_mut(&pane) {
            Some(pipe) => {
                pipe.checking = false;
                true
            }
            None => false,
        }
    }

    /// The watchdog's verdict on what the pane's check found.
    pub(super) fn judge(&mut self, pane: PaneId, now: Instant, probe: Probe) -> Option<Verdict> {
        Some(self.panes.get_mut(&pane)?.liveness.check(now, probe))
    }

    /// The pane's pipe was re-armed at `now`: its generation, if it is on one.
    pub(super) fn rearmed(&mut self, pane: PaneId, now: Instant) -> Option<u64> {
        let pipe = self.panes.get_mut(&pane)?;
        pipe.liveness.rearmed(now);
        Some(pipe.generation)
    }

    /// Counts into the connection's counters: bytes through pipes, and the cross-check's.
    pub(super) fn count_into(&self, stats: &mut super::ConnectionStats) {
        stats.pipe_bytes = self.bytes;
        stats.cross_check_matched = self.matched;
        stats.cross_check_findings = self.findings;
    }
}

impl SessionCore {
    /// Moves a pane to `transport`; `Err` says why it cannot.
    pub fn set_transport(
        &mut self,
        pane: PaneId,
        transport: Transport,
        now: Instant,
    ) -> Result<(), TransportError> {
        self.now = now;
        if !self.panes.contains(pane) {
            return Err(TransportError::NoPane {
                pane,
                session: self.session,
            });
        }
        // Chosen by hand: not the flood meter's to move back.
        if let Some(flood) = &mut self.flood {
            flood.forget_move(pane);
        }
        let now = self.pipes.transport_of(pane);
        if now == transport {
            return Ok(());
        }
        if now != Transport::Control {
            self.stop_pipe(pane, "asked for".into());
        }
        match transport {
            Transport::Control => Ok(()),
            Transport::Pipe | Transport::CrossCheck => {
                self.start_pipe(pane, "asked for", transport == Transport::CrossCheck)
            }
        }
    }

    /// The session's transport: every pane now, and new panes from now on (until the daemon
    /// restarts). Answers the panes that could not move.
    pub fn set_session_transport(
        &mut self,
        transport: Transport,
        now: Instant,
    ) -> Vec<(PaneId, TransportError)> {
        self.config.transport = transport;
        let panes = self.panes.ids();
        panes
            .into_iter()
            .filter_map(|pane| {
                self.set_transport(pane, transport, now)
                    .err()
                    .map(|error| (pane, error))
            })
            .collect()
    }

    /// Creates the pane's FIFO, starts its reader and the pipe, turns `%output` off and
    /// reseeds; with `cross_check`, leaves `%output` on and compares the two instead.
    pub(super) fn start_pipe(
        &mut self,
        pane: PaneId,
        why: &str,
        cross_check: bool,
    ) -> Result<(), TransportError> {
        let generation = self.pipes.next_generation();
        let start = self.pane_io.start_pipe(pane, generation)?;
        let compare_from = self.panes.get(pane).map_or(0, |m| m.output_end());
        self.pipes.started(
            pane,
            generation,
            cross_check.then_some(compare_from),
            self.now,
        );
        let transport = if cross_check {
            self.send(Line::new(start), Purpose::PipeStart(pane, generation));
            info!(session = %self.session, %pane, why, "pane output compared with pipe-pane's");
            Transport::CrossCheck
        } else {
            // Pause before off: tmux before 3.7 keeps the pane's queued output blocks when
            // it is turned off, drains the data under them, and then crashes writing them;
            // a pause discards them first.
            let line = Line::new(start)
                .then(commands::pane_output(pane, commands::PaneOutput::Pause))
                .then(commands::pane_output(pane, commands::PaneOutput::Off));
            self.send(line, Purpose::PipeStart(pane, generation));
            self.seed(pane, ResyncReason::Transport);
            info!(session = %self.session, %pane, why, "pane output now comes through pipe-pane");
            Transport::Pipe
        };
        self.publish(EventKind::Transport {
            pane,
            transport,
            reason: why.to_string(),
        });
        Ok(())
    }

    /// Stops a pane's pipe and gives its output back to the control client.
    pub(super) fn stop_pipe(&mut self, pane: PaneId, why: String) {
        let Some(pipe) = self.pipes.remove(pane) else {
            return;
        };
        self.pane_io.stop_pipe(pane, pipe.generation);
        if self.panes.contains(pane) {
            if pipe.is_cross_check() {
                // `%output` was on all along and fed the mirror.
                self.send(Line::new(commands::pipe_pane_stop(pane)), Purpose::Setup);
            } else {
                // The seed continues the pane paused when the pipe started.
                let line = Line::new(commands::pane_output(pane, commands::PaneOutput::On))
                    .then(commands::pipe_pane_stop(pane));
                self.send(line, Purpose::Setup);
                self.seed(pane, ResyncReason::Transport);
            }
        }
        warn!(session = %self.session, %pane, reason = %why, "pane output back on the control client");
        self.publish(EventKind::Transport {
            pane,
            transport: Transport::Control,
            reason: why,
        });
    }

    /// The control client of a session moved to pipes after failures has held: its panes go
    /// back to the control transport, and new panes start there.
    pub(super) fn recovered(&mut self) {
        let held = self.config.failover.unwrap_or_default();
        self.recover_at = None;
        self.config.failover = None;
        self.config.transport = Transport::Control;
        let panes = self.pipes.piped();
        info!(session = %self.session, ?held, "the control client held; panes go back to it");
        for pane in panes {
            self.stop_pipe(
                pane,
                format!("the control client has held for {} s", held.as_secs()),
            );
        }
        self.actions
            .push(super::Action::Upcall(super::Upcall::ControlRecovered(
                self.session,
            )));
    }

    /// A pane on the control transport floods at `rate` bytes per second: its output moves to
    /// the pipe transport (see `flood`). A pane already on a pipe is left as it is.
    pub(super) fn flooded(&mut self, pane: PaneId, rate: u64) {
        if self.pipes.transport_of(pane) != Transport::Control {
            return;
        }
        let why = format!("a flood of {:.1} MB/s", rate as f64 / 1e6);
        if let Err(error) = self.start_pipe(pane, &why, false) {
            warn!(session = %self.session, %pane, %error, "a flooding pane cannot move to a pipe; it stays on control");
        }
        // Moved or not, this flood is handled: the meter asks again after it is over.
        if let Some(flood) = &mut self.flood {
            flood.moved(pane);
        }
    }

    /// Panes moved to a pipe by a flood that is over go back to the control transport.
    pub(super) fn floods_calmed(&mut self) {
        let Some(flood) = &mut self.flood else {
            return;
        };
        for pane in flood.calmed(self.now) {
            if self.pipes.transport_of(pane) == Transport::Pipe {
                self.stop_pipe(pane, "the flood is over".into());
            }
        }
    }

    /// Stops every pipe in tmux as the daemon shuts down (tmux would otherwise keep a writer
    /// on a FIFO nobody reads).
    pub(super) fn stop_pipes(&mut self) {
        for (pane, generation) in self.pipes.drain() {
            self.pane_io.stop_pipe(pane, generation);
            self.send(Line::new(commands::pipe_pane_stop(pane)), Purpose::Setup);
        }
    }

    /// tmux answered the line that started a pipe.
    pub(super) fn pipe_started(
        &mut self,
        pane: PaneId,
        generation: u64,
        replies: &[Option<Reply>],
    ) {
        if !self.pipes.is_current(pane, generation) {
            return;
        }
        if let Some(refused) = replies.iter().flatten().find(|r| !r.success) {
            let error = RawBytes(refused.joined_body()).to_string();
            self.stop_pipe(pane, format!("tmux refused to start the pipe: {error}"));
        }
    }

    /// Bytes the pipe's reader read, which reach the mirror here.
    pub fn pipe_output(&mut self, pane: PaneId, generation: u64, data: &[u8], now: Instant) {
        self.now = now;
        match self.pipes.pipe_bytes(pane, generation, data, now) {
            Routed::Deliver => self.deliver(pane, data),
            Routed::Ignore => {}
            Routed::Differs(finding) => self.cross_check_found(pane, finding),
        }
    }

    /// `%output` of a pane with a pipe: `true` if the caller should still deliver it (in
    /// cross-check mode, after comparing it), `false` to ignore it (the pipe delivers).
    pub(super) fn pipe_control_output(&mut self, pane: PaneId, data: &[u8]) -> bool {
        let seq = self.panes.get(pane).map_or(0, |m| m.output_end());
        match self.pipes.control_bytes(pane, seq, data) {
            Routed::Deliver => true,
            Routed::Ignore => false,
            Routed::Differs(finding) => {
                self.cross_check_found(pane, finding);
                true
            }
        }
    }

    /// Tells of a difference between a pane's two streams (counted by [`Pipes`]).
    fn cross_check_found(&mut self, pane: PaneId, finding: Finding) {
        warn!(session = %self.session, %pane, %finding, "cross-check: the transports differ");
        let seq = match &finding {
            Finding::Mismatch { seq, .. } => Some(*seq),
            _ => None,
        };
        self.publish(EventKind::CrossCheck {
            pane,
            finding: finding.kind().to_string(),
            seq,
            detail: finding.to_string(),
        });
    }

    /// The pipe's reader ended with an error (its FIFO was removed, say).
    pub fn pipe_failed(&mut self, pane: PaneId, generation: u64, error: String, now: Instant) {
        self.now = now;
        if !self.pipes.is_current(pane, generation) {
            return;
        }
        self.stop_pipe(pane, format!("the pipe failed: {error}"));
    }

    /// Sends a check for every pipe pane, printing or not.
    pub(super) fn pipe_watchdog(&mut self) {
        let panes = &self.panes;
        let due = self.pipes.checks_due(self.now, |pane| panes.seeding(pane));
        for pane in due {
            self.send(query::check_line(pane), Purpose::PipeCheck(pane));
        }
    }

    /// A pipe pane's check came back: compare, then follow the watchdog's verdict.
    pub(super) fn pipe_checked(&mut self, pane: PaneId, replies: &[Option<Reply>]) {
        if !self.pipes.check_answered(pane) {
            return;
        }
        let Ok(shown) = query::parse_check(replies) else {
            return;
        };
        if self.panes.seeding(pane) || self.died_unnoticed(pane, &shown) {
            return;
        }
        let Some(mirror) = self.panes.get(pane) else {
            return;
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        shown.rows.hash(&mut hasher);
        shown.cursor.hash(&mut hasher);
        shown.alternate.hash(&mut hasher);
        let probe = Probe {
            // Only a live mirror is judged (one being seeded, or held, is skipped).
            model_matches: mirror.state() != SyncState::Live || mirror.shows(&shown),
            screen_hash: hasher.finish(),
            pane_has_content: shown.rows.iter().any(|row| !row.trim().is_empty()),
        };
        let Some(verdict) = self.pipes.judge(pane, self.now, probe) else {
            return;
        };
        match verdict {
            Verdict::Healthy | Verdict::Watching => {}
            Verdict::Reseed => {
                // Counted, and logged with where the screens differ, when the resync is in.
                if let Some(mirror) = self.panes.get_mut(pane) {
                    mirror.suspect(&shown);
                }
                self.seed(pane, ResyncReason::Divergence);
            }
            Verdict::Rearm(reason) => self.rearm(pane, reason),
            Verdict::GiveUp(why) => self.stop_pipe(pane, why),
        }
    }

    /// Stops and starts a pane's pipe (tmux's writer is replaced; the FIFO and its reader stay),
    /// then reseeds: what the stall swallowed is replaced by tmux's screen, and the gap is in
    /// the stream.
    fn rearm(&mut self, pane: PaneId, reason: RearmReason) {
        if !self.pipes.contains(pane) {
            return;
        }
        // A FIFO removed under the daemon (its directory cleaned away, say) cannot be re-armed:
        // tmux's writer would open a new plain file, or fail, and the pane would go blind.
        let start = match self.pane_io.restart_pipe(pane) {
            Ok(start) => start,
            Err(why) => {
                self.stop_pipe(pane, why.to_string());
                return;
            }
        };
        let Some(generation) = self.pipes.rearmed(pane, self.now) else {
            return;
        };
        warn!(session = %self.session, %pane, ?reason, "the pipe stopped delivering; re-arming it");
        let line = Line::new(commands::pipe_pane_stop(pane)).then(start);
        self.send(line, Purpose::PipeStart(pane, generation));
        self.seed(pane, ResyncReason::PipeStall);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_are_numbered_and_an_older_pipes_bytes_are_ignored() {
        let t0 = Instant::now();
        let (one, two) = (PaneId(1), PaneId(2));
        let mut pipes = Pipes::new(WatchdogConfig::default());
        assert_eq!(pipes.next_generation(), 1);
        pipes.started(one, 1, None, t0);
        // A start that failed (the host refused its FIFO) uses no number.
        assert_eq!(pipes.next_generation(), 2);
        pipes.started(two, 2, Some(0), t0);
        assert_eq!(pipes.transport_of(one), Transport::Pipe);
        assert_eq!(pipes.transport_of(two), Transport::CrossCheck);
        assert_eq!(pipes.transport_of(PaneId(3)), Transport::Control);
        assert_eq!(pipes.piped(), [one]);
        // The pane's pipe is started again: the first one's late bytes are not delivered.
        pipes.remove(one);
        pipes.started(one, pipes.next_generation(), None, t0);
        assert!(pipes.is_current(one, 3) && !pipes.is_current(one, 1));
        assert_eq!(pipes.pipe_bytes(one, 1, b"old", t0), Routed::Ignore);
        assert_eq!(pipes.pipe_bytes(one, 3, b"new", t0), Routed::Deliver);
        // `%output` of a pipe pane is ignored; of any other pane, delivered.
        assert_eq!(pipes.control_bytes(one, 0, b"x"), Routed::Ignore);
        assert_eq!(pipes.control_bytes(PaneId(3), 0, b"x"), Routed::Deliver);
        let mut stats = crate::session::ConnectionStats::default();
        pipes.count_into(&mut stats);
        assert_eq!(stats.pipe_bytes, 3);
        assert_eq!(pipes.drain().len(), 2);
        assert!(pipes.is_empty());
    }

    #[test]
    fn a_cross_checked_pane_is_fed_by_output_and_its_differences_are_counted() {
        let t0 = Instant::now();
        let pane = PaneId(1);
        let mut pipes = Pipes::new(WatchdogConfig::default());
        pipes.started(pane, 1, Some(0), t0);
        let line = b"0123456789abcdefghijklmnopqrstuvwxyz";
        assert_eq!(pipes.control_bytes(pane, 0, line), Routed::Deliver);
        assert_eq!(pipes.pipe_bytes(pane, 1, line, t0), Routed::Ignore);
        assert_eq!(
            pipes.control_bytes(pane, 36, b"hello world"),
            Routed::Deliver
        );
        assert!(matches!(
            pipes.pipe_bytes(pane, 1, b"hello wXrld", t0),
            Routed::Differs(Finding::Mismatch { seq: 43, .. })
        ));
        let mut stats = crate::session::ConnectionStats::default();
        pipes.count_into(&mut stats);
        assert_eq!(stats.cross_check_matched, 36 + 7);
        assert_eq!(stats.cross_check_findings, 1);
        // Its mirror is checked as a control pane's: the pipe watchdog leaves it alone.
        assert!(pipes.checks_due(t0, |_| false).is_empty());
    }

    #[test]
    fn a_pipe_pane_has_one_check_at_a_time_and_none_while_it_is_seeded() {
        let t0 = Instant::now();
        let (one, two) = (PaneId(1), PaneId(2));
        let mut pipes = Pipes::new(WatchdogConfig::default());
        pipes.started(one, 1, None, t0);
        pipes.started(two, 2, None, t0);
        assert_eq!(pipes.checks_due(t0, |pane| pane == two), [one]);
        assert!(pipes.checks_due(t0, |_| false) == [two]);
        assert!(pipes.checks_due(t0, |_| false).is_empty());
        assert!(pipes.check_answered(one));
        assert_eq!(pipes.checks_due(t0, |_| false), [one]);
        pipes.remove(one);
        assert!(!pipes.check_answered(one));
        assert_eq!(pipes.rearmed(one, t0), None);
        assert_eq!(pipes.rearmed(two, t0), Some(2));
    }
}
