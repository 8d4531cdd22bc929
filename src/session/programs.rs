//! Noticing quickly that a pane runs a new program.
//!
//! The daemon asks for every pane's process and command once a second (`daemon::pane_poll`);
//! an agent started in a shell pane would stay a shell for up to a second, and
//! its first status would come that late. So a pane that is not known to run an agent (no
//! provider, or the shell's, and none assigned) and prints is asked for the same fields at once
//! (`display-message -p`, through the control client: no process is started), at most every
//! [`MIN_INTERVAL`] and one question at a time, with a last one after the output stops. An idle
//! shell prints nothing and costs nothing; an agent's pane is left to the poll.
//!
//! tmux names the pane's program and the daemon then reads its processes: an exec between
//! the two (a wrapper script that execs a program of the same name, as pyenv's and asdf's
//! shims do) can give a command and processes that disagree, and since the next answers
//! name the same command, nothing would look again. A pane whose processes do not include
//! the program tmux names is asked again, [`RECHECKS`] times at most for one command.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{Purpose, SessionCore};
use crate::control::Reply;
use crate::control::command::Line;
use crate::ids::PaneId;
use crate::query;

/// Least time between two questions about one pane.
pub(super) const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// How many times a pane whose processes disagree with its command is asked again.
pub(super) const RECHECKS: u8 = 10;

/// The questions about one pane's program.
#[derive(Debug, Default)]
struct ProgramCheck {
    /// When the last question was sent.
    last_sent: Option<Instant>,
    /// A question is waiting for its answer.
    in_flight: bool,
    /// The pane printed since the last question was sent.
    again: bool,
    /// The last detection read processes that disagree with the command: the next answer
    /// is to be looked at again, even if it names the same command.
    recheck: bool,
    /// The command whose processes disagreed, and how many more times to ask.
    unsettled: Option<(String, u8)>,
}

impl ProgramCheck {
    fn due(&self, now: Instant) -> Option<Instant> {
        if self.in_flight || !self.again {
            return None;
        }
        Some(self.last_sent.map_or(now, |at| at + MIN_INTERVAL))
    }
}

/// The questions about the programs of panes that may have started an agent: which pane is
/// due a question, and which has one in flight. It owns only their timing; the core sends the
/// lines (see [`SessionCore::ask_program`]).
#[derive(Debug, Default)]
pub(super) struct Programs {
    checks: HashMap<PaneId, ProgramCheck>,
}

impl Programs {
    /// The pane printed: answers whether a question is due now (then the caller asks).
    pub(super) fn output(&mut self, pane: PaneId, now: Instant) -> bool {
        let check = self.checks.entry(pane).or_default();
        check.again = true;
        check.due(now).is_some_and(|at| at <= now)
    }

    /// Whether a question may be asked at once, whatever the pane printed (none in flight).
    pub(super) fn may_ask_now(&mut self, pane: PaneId) -> bool {
        !self.checks.entry(pane).or_default().in_flight
    }

    /// When the next question is due, if any.
    pub(super) fn next_due(&self, now: Instant) -> Option<Instant> {
        self.checks
            .values()
            .filter_map(|check| check.due(now))
            .min()
    }

    /// The panes whose question is due at `now`.
    pub(super) fn due(&self, now: Instant) -> Vec<PaneId> {
        self.checks
            .iter()
            .filter(|(_, check)| check.due(now).is_some_and(|at| at <= now))
            .map(|(pane, _)| *pane)
            .collect()
    }

    /// A question about the pane is sent at `now`; false if the pane is not followed (then
    /// nothing is to be sent).
    pub(super) fn asked(&mut self, pane: PaneId, now: Instant) -> bool {
        match self.checks.get_mut(&pane) {
            Some(check) => {
                check.last_sent = Some(now);
                check.in_flight = true;
                check.again = false;
                true
            }
            None => false,
        }
    }

    /// The question came back (or failed); false if the pane is not followed any more.
    pub(super) fn answered(&mut self, pane: PaneId) -> bool {
        match self.checks.get_mut(&pane) {
            Some(check) => {
                check.in_flight = false;
                true
            }
            None => false,
        }
    }

    /// A detection of the pane's program: whether its processes include the one tmux names
    /// `command`. If not, another question is due (no sooner than [`MIN_INTERVAL`]) and its
    /// answer is looked at whatever it says, up to [`RECHECKS`] times for one command.
    pub(super) fn detected(&mut self, pane: PaneId, command: &str, consistent: bool) {
        if consistent {
            if let Some(check) = self.checks.get_mut(&pane) {
                check.unsettled = None;
                check.recheck = false;
            }
            return;
        }
        let check = self.checks.entry(pane).or_default();
        let left = match &check.unsettled {
            Some((same, left)) if same == command => *left,
            _ => RECHECKS,
        };
        if left == 0 {
            check.recheck = false;
            return;
        }
        check.unsettled = Some((command.to_string(), left - 1));
        check.recheck = true;
        check.again = true;
    }

    /// Whether the pane's next answer is to be looked at again (and forgets it).
    pub(super) fn take_recheck(&mut self, pane: PaneId) -> bool {
        self.checks
            .get_mut(&pane)
            .is_some_and(|check| std::mem::take(&mut check.recheck))
    }

    /// The pane is gone.
    pub(super) fn remove(&mut self, pane: PaneId) {
        self.checks.remove(&pane);
    }
}

impl SessionCore {
    /// A pane that may start an agent printed (see `status_output`): ask for its program now,
    /// or mark a question due.
    pub(super) fn program_output(&mut self, pane: PaneId, now: Instant) {
        if self.programs.output(pane, now) {
            self.ask_program(pane, now);
        }
    }

    /// Sends the questions that are due.
    pub(super) fn program_checks_due(&mut self, now: Instant) {
        for pane in self.programs.due(now) {
            self.ask_program(pane, now);
        }
    }

    /// Asks at once, whatever the pane runs (unless a question is in flight).
    pub(super) fn ask_program_now(&mut self, pane: PaneId) {
        if self.programs.may_ask_now(pane) {
            self.ask_program(pane, self.now);
        }
    }

    fn ask_program(&mut self, pane: PaneId, now: Instant) {
        if self.programs.asked(pane, now) {
            self.send(
                Line::new(query::pane_state(pane)),
                Purpose::ProgramCheck(pane),
            );
        }
    }

    /// The answer: handled like the pane poll's (a new pid is a respawn, a new command
    /// may be an agent).
    pub(super) fn program_checked(&mut self, pane: PaneId, replies: &[Option<Reply>]) {
        if !self.programs.answered(pane) {
            return;
        }
        if let Some(Some(reply)) = replies.first()
            && reply.success
            && let Some(update) = query::parse_pane_state(&reply.joined_body())
        {
            self.pane_update(pane, update);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_asked_at_once_then_at_most_every_interval_and_one_at_a_time() {
        let t0 = Instant::now();
        let pane = PaneId(1);
        let mut programs = Programs::default();
        assert_eq!(programs.next_due(t0), None);
        // The first output asks at once.
        assert!(programs.output(pane, t0));
        assert!(programs.asked(pane, t0));
        // More output while it is in flight: nothing due until the answer.
        assert!(!programs.output(pane, t0 + Duration::from_millis(10)));
        assert_eq!(programs.next_due(t0), None);
        assert!(!programs.may_ask_now(pane));
        assert!(programs.answered(pane));
        // The output meanwhile makes a last question due, no sooner than the interval.
        assert_eq!(programs.next_due(t0), Some(t0 + MIN_INTERVAL));
        assert!(programs.due(t0 + Duration::from_millis(50)).is_empty());
        assert_eq!(programs.due(t0 + MIN_INTERVAL), [pane]);
        assert!(programs.asked(pane, t0 + MIN_INTERVAL));
        assert!(programs.answered(pane));
        // Quiet since: nothing more is due.
        assert_eq!(programs.next_due(t0 + MIN_INTERVAL * 5), None);
        // A pane that is gone is asked nothing, and its late answer is ignored.
        programs.remove(pane);
        assert!(!programs.asked(pane, t0));
        assert!(!programs.answered(pane));
    }

    #[test]
    fn processes_that_disagree_with_the_command_are_asked_again_a_bounded_number_of_times() {
        let t0 = Instant::now();
        let pane = PaneId(2);
        let mut programs = Programs::default();
        programs.detected(pane, "python3", true);
        assert!(!programs.take_recheck(pane));
        assert_eq!(programs.next_due(t0), None);
        let mut asked = 0;
        let mut at = t0;
        loop {
            programs.detected(pane, "python3", false);
            match programs.next_due(at) {
                Some(due) => {
                    assert!(programs.asked(pane, due));
                    assert!(programs.answered(pane));
                    assert!(programs.take_recheck(pane));
                    assert!(!programs.take_recheck(pane));
                    asked += 1;
                    at = due + MIN_INTERVAL;
                }
                None => break,
            }
            assert!(asked <= RECHECKS, "asked forever");
        }
        assert_eq!(asked, RECHECKS);
        // Another command is another count; agreeing processes end it.
        programs.detected(pane, "node", false);
        assert!(programs.take_recheck(pane));
        programs.detected(pane, "node", true);
        assert!(!programs.take_recheck(pane));
    }
}
