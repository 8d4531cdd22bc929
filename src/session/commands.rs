//! Command lines and their replies: tags, purposes, deadlines, and what each reply is for.

use std::collections::HashMap;
use std::time::Instant;

use tracing::{debug, warn};

use super::batch::{Batch, Item};
use super::{Action, SessionCore};
use crate::control::command::Line;
use crate::control::{Event, Expected, Reply};
use crate::events::ResyncReason;
use crate::ids::PaneId;
use crate::query;
use crate::raw::RawBytes;
use crate::tmux_version::TmuxVersion;

use super::ConnectionError;

/// Names a request that waits for tmux; the shell keeps its reply channel under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplyId(pub u64);

/// The answer to a request that waited for tmux.
#[derive(Debug)]
pub enum Answer {
    /// The replies to a caller's line (`None` for a command tmux skipped), or why there are none.
    Command(Result<Vec<Option<Reply>>, ConnectionError>),
    /// The agent's last answer, read from the scrollback.
    LastResponse(Option<String>),
}

/// What a line of commands was sent for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A caller through the handle.
    External(ReplyId),
    /// Setting flags and options: only failures matter (logged).
    Setup,
    /// `display-message -p '#{version}'`.
    Version,
    /// `list-windows` of the session.
    Windows,
    /// `list-panes` of the session or of one window; new panes are seeded for `reason`.
    Panes(ResyncReason),
    /// A seed line for a pane.
    Seed(PaneId, ResyncReason),
    /// A watchdog check of a pane, with how many layout changes its mirror had seen when it
    /// was sent (one coming between the check and its reply makes it a resize check) and the
    /// check's number in the mirror.
    Check(PaneId, u64, u64),
    /// A check of a pane the mirror resized (and reflowed) on a layout change, with the
    /// check's number in the mirror.
    ResizeCheck(PaneId, u64),
    /// The scrollback of a pane, for its last answer.
    LastResponse(PaneId, ReplyId),
    /// Starting (or re-arming) a pane's pipe, of the given generation.
    PipeStart(PaneId, u64),
    /// A pipe watchdog check of a pane.
    PipeCheck(PaneId),
    /// A question about the program in a pane (see `programs`).
    ProgramCheck(PaneId),
}

/// A line waiting for its replies.
pub(super) struct PendingLine {
    /// What it was sent for.
    pub(super) purpose: Purpose,
    /// The line as sent (for errors).
    pub(super) text: String,
    replies: Vec<Option<Reply>>,
    received: usize,
    deadline: Instant,
}

/// What a reply (or a command tmux skipped) meant for its line.
pub(super) struct Recorded {
    /// What the line was sent for.
    pub(super) purpose: Purpose,
    /// It was the line's first reply (tmux began running the line).
    pub(super) first: bool,
    /// The line's replies, when this one completed it.
    pub(super) complete: Option<Vec<Option<Reply>>>,
}

/// The lines sent and waiting for replies, and those waiting for the attach. Each command of a
/// line gets the next tag; a line is answered when every one of its commands is.
#[derive(Default)]
pub(super) struct Commands {
    next_tag: u64,
    /// Tag of each command sent -> (first tag of its line, index in the line).
    tag_lines: HashMap<u64, (u64, usize)>,
    /// Lines waiting for replies, by their first tag.
    pending: HashMap<u64, PendingLine>,
    /// tmux has confirmed the attach (`%session-changed`). Before that, commands can run
    /// before the client exists and fail with "no current client" (tmux up to 3.3 reads
    /// input while the attach command is still pending), so they wait in `deferred`.
    attached: bool,
    deferred: Vec<(Line, Purpose)>,
}

impl Commands {
    /// Keeps a line until the attach is confirmed; answers it back when it may go now.
    pub(super) fn hold(&mut self, line: Line, purpose: Purpose) -> Option<(Line, Purpose)> {
        if self.attached {
            return Some((line, purpose));
        }
        self.deferred.push((line, purpose));
        None
    }

    /// The attach is confirmed: answers the lines that waited for it, in order (none the
    /// second time).
    pub(super) fn attached(&mut self) -> Vec<(Line, Purpose)> {
        if std::mem::replace(&mut self.attached, true) {
            return Vec::new();
        }
        std::mem::take(&mut self.deferred)
    }

    /// Whether the attach is confirmed.
    pub(super) fn is_attached(&self) -> bool {
        self.attached
    }

    /// Numbers the commands of `line`, sent now for `purpose` and due by `deadline`: answers
    /// the line's first tag (which names it) and the replies the decoder is to expect.
    pub(super) fn sent(
        &mut self,
        line: &Line,
        text: String,
        purpose: Purpose,
        deadline: Instant,
    ) -> (u64, Vec<Expected>) {
        let first = self.next_tag;
        let expected = line.expected(first);
        self.next_tag += expected.len() as u64;
        for (index, expect) in expected.iter().enumerate() {
            self.tag_lines.insert(expect.tag, (first, index));
        }
        self.pending.insert(
            first,
            PendingLine {
                purpose,
                text,
                replies: vec![None; expected.len()],
                received: 0,
                deadline,
            },
        );
        (first, expected)
    }

    /// The reply to the command tagged `tag` (`None`: tmux skipped it). Nothing for a tag
    /// not sent, or of a line that timed out.
    pub(super) fn record(&mut self, tag: u64, reply: Option<Reply>) -> Option<Recorded> {
        let (first, index) = self.tag_lines.remove(&tag)?;
        let line = self.pending.get_mut(&first)?;
        let purpose = line.purpose;
        let first_reply = line.received == 0;
        if let Some(slot) = line.replies.get_mut(index) {
            *slot = reply;
        }
        line.received += 1;
        let complete = if line.received == line.replies.len() {
            self.pending.remove(&first).map(|line| line.replies)
        } else {
            None
        };
        Some(Recorded {
            purpose,
            first: first_reply,
            complete,
        })
    }

    /// Takes the lines whose replies are overdue at `now`.
    pub(super) fn expired(&mut self, now: Instant) -> Vec<PendingLine> {
        let firsts: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, line)| line.deadline <= now)
            .map(|(first, _)| *first)
            .collect();
        firsts
            .into_iter()
            .filter_map(|first| self.pending.remove(&first))
            .collect()
    }
}

impl SessionCore {
    /// Sends a line (after the attach: until then it waits).
    pub(super) fn send(&mut self, line: Line, purpose: Purpose) {
        if self.observer.is_some() {
            return;
        }
        let Some((line, purpose)) = self.commands.hold(line, purpose) else {
            return;
        };
        let bytes = line.to_bytes();
        let text = String::from_utf8_lossy(&bytes[..bytes.len().saturating_sub(1)]).into_owned();
        let deadline = self.now + self.config.command_timeout;
        let (first_tag, expected) = self.commands.sent(&line, text, purpose, deadline);
        self.stats.commands += expected.len() as u64;
        self.decoder.expect_line(expected);
        self.actions.push(Action::Send {
            bytes,
            purpose,
            first_tag,
        });
    }

    /// The attach is confirmed: the lines that waited for it go.
    pub(super) fn attach_confirmed(&mut self) {
        for (line, purpose) in self.commands.attached() {
            self.send(line, purpose);
        }
    }

    /// Handles what a read decoded, in stream order, and empties the batch.
    pub(super) fn handle(&mut self, batch: &mut Batch) {
        for item in batch.items.drain(..) {
            match item {
                Item::Output { pane, range } => self.output(pane, &batch.data[range]),
                Item::Event(event) => self.handle_event(event),
            }
        }
        batch.clear();
    }

    pub(super) fn handle_event(&mut self, event: Event) {
        match event {
            Event::Notification(notification) => self.notification(notification),
            Event::Reply(reply) => self.reply(reply),
            Event::Abandoned { tag } => self.record(tag, None),
            Event::Stray(line) => {
                self.stats.stray_lines += 1;
                debug!(session = %self.session, ?line, "stray line from tmux");
            }
            Event::ParseError(error) => {
                self.stats.parse_errors += 1;
                warn!(session = %self.session, %error, "undecodable line from tmux");
            }
        }
    }

    fn reply(&mut self, reply: Reply) {
        match reply.tag {
            Some(tag) => self.record(tag, Some(reply)),
            None if reply.is_solicited() && self.observer.is_none() => {
                warn!(session = %self.session, "reply to a command nobody sent")
            }
            None => {} // hooks and the attach command
        }
    }

    fn record(&mut self, tag: u64, reply: Option<Reply>) {
        let Some(recorded) = self.commands.record(tag, reply) else {
            return; // not sent, or timed out earlier
        };
        if recorded.first
            && let Purpose::Seed(pane, _) = recorded.purpose
            && let Some(mirror) = self.panes.get_mut(pane)
        {
            mirror.seed_started();
        }
        if let Some(replies) = recorded.complete {
            self.complete(recorded.purpose, replies);
        }
    }

    fn complete(&mut self, purpose: Purpose, replies: Vec<Option<Reply>>) {
        match purpose {
            Purpose::External(id) => {
                self.actions
                    .push(Action::Reply(id, Answer::Command(Ok(replies))));
            }
            Purpose::Setup => {
                for reply in replies.iter().flatten().filter(|r| !r.success) {
                    warn!(session = %self.session, error = %RawBytes(reply.joined_body()), "tmux refused a setup command");
                }
            }
            Purpose::Version => {
                if let Some(Some(reply)) = replies.first() {
                    self.stats.tmux_version = RawBytes(reply.joined_body()).to_string();
                    let dialect = TmuxVersion::dialect_of(&self.stats.tmux_version);
                    if dialect != self.panes.dialect() {
                        debug!(session = %self.session, version = %self.stats.tmux_version, %dialect, "the mirrors follow this tmux's rules");
                        self.panes.set_dialect(dialect);
                    }
                }
            }
            Purpose::Windows => match replies
                .first()
                .and_then(Option::as_ref)
                .map(query::parse_windows)
            {
                Some(Ok(rows)) => self.windows_listed(rows),
                Some(Err(error)) => warn!(session = %self.session, %error),
                None => {}
            },
            Purpose::Panes(reason) => {
                match replies.first().and_then(Option::as_ref) {
                    Some(reply) if reply.success => match query::parse_panes(reply) {
                        Ok(rows) => {
                            for row in rows {
                                self.add_pane(row, reason);
                            }
                        }
                        Err(error) => warn!(session = %self.session, %error),
                    },
                    _ => {} // the window or session is gone already
                }
                // The first `list-panes` is the session's (sent at start, answered first).
                self.mark_synced();
            }
            Purpose::Seed(pane, reason) => self.seeded(pane, reason, &replies),
            Purpose::Check(pane, layouts, id) => self.checked(pane, layouts, id, &replies),
            Purpose::ResizeCheck(pane, id) => {
                let asked = self.check_over(pane, id);
                self.resize_checked(pane, asked.as_ref(), &replies);
            }
            Purpose::LastResponse(pane, id) => self.last_response_read(pane, &replies, id),
            Purpose::PipeStart(pane, generation) => self.pipe_started(pane, generation, &replies),
            Purpose::PipeCheck(pane) => self.pipe_checked(pane, &replies),
            Purpose::ProgramCheck(pane) => self.program_checked(pane, &replies),
        }
    }

    /// Fails the lines whose replies are overdue.
    pub(super) fn expire(&mut self) {
        for line in self.commands.expired(self.now) {
            self.stats.timeouts += 1;
            let error = ConnectionError::Timeout {
                command: line.text.clone(),
                after: self.config.command_timeout,
            };
            warn!(session = %self.session, %error);
            match line.purpose {
                Purpose::External(id) => {
                    self.actions
                        .push(Action::Reply(id, Answer::Command(Err(error))));
                }
                Purpose::Seed(pane, _) => {
                    self.panes.seed_over(pane);
                    if let Some(mirror) = self.panes.get_mut(pane) {
                        mirror.seed_failed();
                        mirror.mark_stale();
                    }
                }
                // Its panes stay unknown until tmux says more; waiting for them ends here.
                Purpose::Panes(_) => self.mark_synced(),
                // The next watchdog round checks again.
                Purpose::PipeCheck(pane) => self.pipe_checked(pane, &[]),
                Purpose::ResizeCheck(pane, id) => {
                    self.check_over(pane, id);
                    if let Some(mirror) = self.panes.get_mut(pane) {
                        mirror.mark_stale();
                    }
                }
                // The next watchdog round checks again.
                Purpose::Check(pane, _, id) => {
                    self.check_over(pane, id);
                }
                Purpose::ProgramCheck(pane) => self.program_checked(pane, &[]),
                // The caller is let go unanswered.
                Purpose::LastResponse(_, id) => self.actions.push(Action::Forget(id)),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::control::Guard;
    use crate::ids::SessionId;

    fn reply(tag: u64, text: &str) -> Reply {
        Reply {
            guard: Guard {
                time: 0,
                number: tag,
                flags: 1,
            },
            success: true,
            body: vec![RawBytes::from(text)],
            tag: Some(tag),
            incomplete: false,
        }
    }

    fn two_commands() -> Line {
        Line::new(query::version()).then(query::list_windows(SessionId(1)))
    }

    #[test]
    fn lines_wait_for_the_attach_and_go_in_order_once() {
        let mut commands = Commands::default();
        assert!(!commands.is_attached());
        assert!(
            commands
                .hold(Line::new(query::version()), Purpose::Version)
                .is_none()
        );
        assert!(commands.hold(two_commands(), Purpose::Setup).is_none());
        let released: Vec<Purpose> = commands.attached().into_iter().map(|(_, p)| p).collect();
        assert_eq!(released, vec![Purpose::Version, Purpose::Setup]);
        assert!(commands.is_attached());
        assert!(commands.attached().is_empty());
        assert!(commands.hold(two_commands(), Purpose::Windows).is_some());
    }

    #[test]
    fn a_line_is_answered_when_each_of_its_commands_is_in_any_order() {
        let mut commands = Commands::default();
        let now = Instant::now();
        let (first, expected) = commands.sent(
            &Line::new(query::version()),
            "v".into(),
            Purpose::Version,
            now,
        );
        assert_eq!((first, expected.len()), (0, 1));
        let (second, expected) = commands.sent(&two_commands(), "w".into(), Purpose::Setup, now);
        assert_eq!(second, 1);
        let tags: Vec<u64> = expected.iter().map(|e| e.tag).collect();
        assert_eq!(tags, vec![1, 2]);
        // The second command of the line answers first, then a command tmux skipped.
        let recorded = commands.record(2, Some(reply(2, "b"))).expect("sent");
        assert!(recorded.first && recorded.complete.is_none());
        assert_eq!(recorded.purpose, Purpose::Setup);
        let recorded = commands.record(1, None).expect("sent");
        assert!(!recorded.first);
        let replies = recorded.complete.expect("complete");
        assert_eq!(replies, vec![None, Some(reply(2, "b"))]);
        // A tag answered twice, or never sent, is nothing.
        assert!(commands.record(2, Some(reply(2, "b"))).is_none());
        assert!(commands.record(99, None).is_none());
        let recorded = commands.record(0, Some(reply(0, "3.5a"))).expect("sent");
        assert_eq!(recorded.complete.map(|r| r.len()), Some(1));
    }

    #[test]
    fn overdue_lines_are_taken_once_and_their_late_replies_ignored() {
        let mut commands = Commands::default();
        let now = Instant::now();
        let soon = now + Duration::from_secs(1);
        let later = now + Duration::from_secs(5);
        commands.sent(&two_commands(), "late".into(), Purpose::Setup, soon);
        commands.sent(
            &Line::new(query::version()),
            "v".into(),
            Purpose::Version,
            later,
        );
        assert!(commands.expired(now).is_empty());
        let expired = commands.expired(soon);
        assert_eq!(expired.len(), 1);
        assert_eq!(
            (expired[0].purpose, expired[0].text.as_str()),
            (Purpose::Setup, "late")
        );
        assert!(commands.expired(soon).is_empty());
        assert!(commands.record(0, Some(reply(0, "a"))).is_none());
        assert!(commands.record(2, Some(reply(2, "v"))).is_some());
    }
}
