//! Noticing quickly that a pane runs a new program.
//!
//! The daemon asks for every pane's process and command once a second (`daemon::pane_poll`);
//! an agent started in a shell pane would stay a shell for up to a second, and
//! its first status would come that late. So a pane that is not known to run an agent (no
//! provider, or the shell's, and none assigned) and prints is asked for the same fields at once
//! (`display-message -p`, through the control client: no process is started), at most every
//! [`MIN_INTERVAL`] and one question at a time, with a last one after the output stops. An idle
//! shell prints nothing and costs nothing; an agent's pane is left to the poll.

use std::time::{Duration, Instant};

use super::{Purpose, SessionCore};
use crate::control::Reply;
use crate::control::command::Line;
use crate::ids::PaneId;
use crate::query;

/// Least time between two questions about one pane.
pub(super) const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The questions about one pane's program.
#[derive(Debug, Default)]
pub(super) struct ProgramCheck {
    /// When the last question was sent.
    last_sent: Option<Instant>,
    /// A question is waiting for its answer.
    in_flight: bool,
    /// The pane printed since the last question was sent.
    again: bool,
}

impl ProgramCheck {
    fn due(&self, now: Instant) -> Option<Instant> {
        if self.in_flight || !self.again {
            return None;
        }
        Some(self.last_sent.map_or(now, |at| at + MIN_INTERVAL))
    }
}

impl SessionCore {
    /// A pane that may start an agent printed (see `status_output`): ask for its program now,
    /// or mark a question due.
    pub(super) fn program_output(&mut self, pane: PaneId, now: Instant) {
        let check = self.program_checks.entry(pane).or_default();
        check.again = true;
        if check.due(now).is_some_and(|at| at <= now) {
            self.ask_program(pane, now);
        }
    }

    /// When the next question is due, if any.
    pub(super) fn next_program_check(&self, now: Instant) -> Option<Instant> {
        self.program_checks
            .values()
            .filter_map(|check| check.due(now))
            .min()
    }

    /// Sends the questions that are due.
    pub(super) fn program_checks_due(&mut self, now: Instant) {
        let due: Vec<PaneId> = self
            .program_checks
            .iter()
            .filter(|(_, check)| check.due(now).is_some_and(|at| at <= now))
            .map(|(pane, _)| *pane)
            .collect();
        for pane in due {
            self.ask_program(pane, now);
        }
    }

    /// Asks at once, whatever the pane runs (unless a question is in flight).
    pub(super) fn ask_program_now(&mut self, pane: PaneId) {
        let check = self.program_checks.entry(pane).or_default();
        if !check.in_flight {
            self.ask_program(pane, self.now);
        }
    }

    fn ask_program(&mut self, pane: PaneId, now: Instant) {
        if let Some(check) = self.program_checks.get_mut(&pane) {
            *check = ProgramCheck {
                last_sent: Some(now),
                in_flight: true,
                again: false,
            };
            self.send(
                Line::new(query::pane_update(pane)),
                Purpose::ProgramCheck(pane),
            );
        }
    }

    /// The answer: handled like the pane poll's (a new pid is a respawn, a new command
    /// may be an agent).
    pub(super) fn program_checked(&mut self, pane: PaneId, replies: &[Option<Reply>]) {
        match self.program_checks.get_mut(&pane) {
            Some(check) => check.in_flight = false,
            None => return,
        }
        if let Some(Some(reply)) = replies.first()
            && reply.success
            && let Some(update) = query::parse_pane_update(&reply.joined_body())
        {
            self.pane_update(pane, update);
        }
    }
}
