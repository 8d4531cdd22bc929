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

use std::hash::{Hash, Hasher};

use tracing::{info, warn};

use super::{Purpose, SessionCore};
use crate::control::Reply;
use crate::control::command::{Line, commands};
use crate::events::{EventKind, ResyncReason};
use crate::ids::PaneId;
use crate::mirror::SyncState;
use crate::pipe::cross_check::{CrossCheck, Finding};
use crate::pipe::watchdog::RearmReason;
use crate::pipe::{PipeLiveness, Probe, Transport, Verdict};
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
    pub(super) cross_check: Option<CrossCheck>,
}

impl SessionCore {
    /// The transport a pane's output comes through.
    pub(super) fn transport_of(&self, pane: PaneId) -> Transport {
        match self.pipes.get(&pane) {
            Some(pipe) if pipe.cross_check.is_some() => Transport::CrossCheck,
            Some(_) => Transport::Pipe,
            None => Transport::Control,
        }
    }

    /// Moves a pane to `transport`; `Err` says why it cannot.
    pub fn set_transport(
        &mut self,
        pane: PaneId,
        transport: Transport,
        now: Instant,
    ) -> Result<(), String> {
        self.now = now;
        if !self.panes.contains_key(&pane) {
            return Err(format!("no pane {pane} in session {}", self.session));
        }
        let now = self.transport_of(pane);
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
    ) -> Vec<(PaneId, String)> {
        self.config.transport = transport;
        let panes: Vec<PaneId> = self.panes.keys().copied().collect();
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
    ) -> Result<(), String> {
        let generation = self.next_pipe + 1;
        let start = self.host.start_pipe(pane, generation)?;
        self.next_pipe = generation;
        let now = self.now;
        let compare_from = self.panes.get(&pane).map_or(0, |m| m.output_end());
        self.pipes.insert(
            pane,
            PanePipe {
                generation,
                liveness: PipeLiveness::new(self.config.pipe_watchdog, now),
                checking: false,
                cross_check: cross_check.then(|| CrossCheck::new(compare_from)),
            },
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
        let Some(pipe) = self.pipes.remove(&pane) else {
            return;
        };
        self.host.stop_pipe(pane, pipe.generation);
        if self.panes.contains_key(&pane) {
            if pipe.cross_check.is_some() {
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
        let panes: Vec<PaneId> = self
            .pipes
            .iter()
            .filter(|(_, pipe)| pipe.cross_check.is_none())
            .map(|(pane, _)| *pane)
            .collect();
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

    /// Stops every pipe in tmux as the daemon shuts down (tmux would otherwise keep a writer
    /// on a FIFO nobody reads).
    pub(super) fn stop_pipes(&mut self) {
        let pipes: Vec<(PaneId, u64)> = self
            .pipes
            .drain()
            .map(|(pane, pipe)| (pane, pipe.generation))
            .collect();
        for (pane, generation) in pipes {
            self.host.stop_pipe(pane, generation);
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
        if self.pipes.get(&pane).map(|p| p.generation) != Some(generation) {
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
        let Some(pipe) = self.pipes.get_mut(&pane) else {
            return;
        };
        if pipe.generation != generation {
            return;
        }
        // "Has delivered" counts where the bytes reach the consumer, which is here.
        pipe.liveness.delivered(self.now);
        self.stats.pipe_bytes += data.len() as u64;
        match &mut pipe.cross_check {
            Some(check) => {
                let matched = check.matched;
                let finding = check.pipe(data);
                self.stats.cross_check_matched += check.matched - matched;
                if let Some(finding) = finding {
                    self.cross_check_found(pane, finding);
                }
            }
            None => self.deliver(pane, data),
        }
    }

    /// `%output` of a pane with a pipe: `true` if the caller should still deliver it (in
    /// cross-check mode, after comparing it), `false` to ignore it (the pipe delivers).
    pub(super) fn pipe_control_output(&mut self, pane: PaneId, data: &[u8]) -> bool {
        let seq = self.panes.get(&pane).map_or(0, |m| m.output_end());
        let Some(pipe) = self.pipes.get_mut(&pane) else {
            return true;
        };
        let Some(check) = &mut pipe.cross_check else {
            return false;
        };
        let matched = check.matched;
        let finding = check.control(seq, data);
        self.stats.cross_check_matched += check.matched - matched;
        if let Some(finding) = finding {
            self.cross_check_found(pane, finding);
        }
        true
    }

    /// Tells of a difference between a pane's two streams.
    fn cross_check_found(&mut self, pane: PaneId, finding: Finding) {
        self.stats.cross_check_findings += 1;
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
        if self.pipes.get(&pane).map(|p| p.generation) != Some(generation) {
            return;
        }
        self.stop_pipe(pane, format!("the pipe failed: {error}"));
    }

    /// Sends a check for every pipe pane, printing or not.
    pub(super) fn pipe_watchdog(&mut self) {
        let due: Vec<PaneId> = self
            .pipes
            .iter()
            .filter(|(pane, pipe)| {
                // A cross-checked pane's mirror is fed by `%output` and checked as usual.
                pipe.cross_check.is_none() && !pipe.checking && !self.seeding.contains_key(pane)
            })
            .map(|(pane, _)| *pane)
            .collect();
        for pane in due {
            if let Some(pipe) = self.pipes.get_mut(&pane) {
                pipe.checking = true;
                pipe.liveness.asked(self.now);
            }
            self.send(query::check_line(pane), Purpose::PipeCheck(pane));
        }
    }

    /// A pipe pane's check came back: compare, then follow the watchdog's verdict.
    pub(super) fn pipe_checked(&mut self, pane: PaneId, replies: &[Option<Reply>]) {
        let Some(pipe) = self.pipes.get_mut(&pane) else {
            return;
        };
        pipe.checking = false;
        let Ok(shown) = query::parse_check(replies) else {
            return;
        };
        if self.seeding.contains_key(&pane) || self.died_unnoticed(pane, &shown) {
            return;
        }
        let (Some(pipe), Some(mirror)) = (self.pipes.get_mut(&pane), self.panes.get(&pane)) else {
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
        match pipe.liveness.check(self.now, probe) {
            Verdict::Healthy | Verdict::Watching => {}
            Verdict::Reseed => {
                // Counted, and logged with where the screens differ, when the resync is in.
                if let Some(mirror) = self.panes.get_mut(&pane) {
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
        if !self.pipes.contains_key(&pane) {
            return;
        }
        // A FIFO removed under the daemon (its directory cleaned away, say) cannot be re-armed:
        // tmux's writer would open a new plain file, or fail, and the pane would go blind.
        let start = match self.host.restart_pipe(pane) {
            Ok(start) => start,
            Err(why) => {
                self.stop_pipe(pane, why);
                return;
            }
        };
        let Some(pipe) = self.pipes.get_mut(&pane) else {
            return;
        };
        pipe.liveness.rearmed(self.now);
        let generation = pipe.generation;
        warn!(session = %self.session, %pane, ?reason, "the pipe stopped delivering; re-arming it");
        let line = Line::new(commands::pipe_pane_stop(pane)).then(start);
        self.send(line, Purpose::PipeStart(pane, generation));
        self.seed(pane, ResyncReason::PipeStall);
    }
}
