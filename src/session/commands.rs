//! Command lines and their replies: tags, purposes, deadlines, and what each reply is for.

use std::collections::HashMap;
use std::time::Instant;

use tracing::{debug, warn};

use super::batch::{Batch, Item};
use super::{Action, SessionCore};
use crate::control::command::Line;
use crate::control::{Event, Reply};
use crate::events::ResyncReason;
use crate::ids::PaneId;
use crate::query;
use crate::raw::RawBytes;

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

struct PendingLine {
    purpose: Purpose,
    text: String,
    replies: Vec<Option<Reply>>,
    received: usize,
    deadline: Instant,
}

/// The lines waiting for replies.
#[derive(Default)]
pub(super) struct Commands {
    next_tag: u64,
    /// Tag of each command sent -> (first tag of its line, index in the line).
    tag_lines: HashMap<u64, (u64, usize)>,
    /// Lines waiting for replies, by their first tag.
    pending: HashMap<u64, PendingLine>,
}

impl SessionCore {
    /// Sends a line (after the attach: until then it waits).
    pub(super) fn send(&mut self, line: Line, purpose: Purpose) {
        if self.observer.is_some() {
            return;
        }
        if !self.attached {
            self.deferred.push((line, purpose));
            return;
        }
        let first = self.commands.next_tag;
        let expected = line.expected(first);
        self.commands.next_tag += expected.len() as u64;
        for (index, expect) in expected.iter().enumerate() {
            self.commands.tag_lines.insert(expect.tag, (first, index));
        }
        self.decoder.expect_line(expected.iter().copied());
        let bytes = line.to_bytes();
        self.stats.commands += expected.len() as u64;
        self.commands.pending.insert(
            first,
            PendingLine {
                purpose,
                text: String::from_utf8_lossy(&bytes[..bytes.len().saturating_sub(1)]).into_owned(),
                replies: vec![None; expected.len()],
                received: 0,
                deadline: self.now + self.config.command_timeout,
            },
        );
        self.actions.push(Action::Send {
            bytes,
            purpose,
            first_tag: first,
        });
    }

    /// The attach is confirmed: the lines that waited for it go.
    pub(super) fn attach_confirmed(&mut self) {
        if !self.attached {
            self.attached = true;
            for (line, purpose) in std::mem::take(&mut self.deferred) {
                self.send(line, purpose);
            }
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
        let Some((first, index)) = self.commands.tag_lines.remove(&tag) else {
            return;
        };
        let Some(line) = self.commands.pending.get_mut(&first) else {
            return; // timed out earlier
        };
        if line.received == 0
            && let Purpose::Seed(pane, _) = line.purpose
            && let Some(mirror) = self.panes.get_mut(&pane)
        {
            mirror.seed_started();
        }
        if let Some(slot) = line.replies.get_mut(index) {
            *slot = reply;
        }
        line.received += 1;
        if line.received == line.replies.len()
            && let Some(line) = self.commands.pending.remove(&first)
        {
            self.complete(line.purpose, line.replies);
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
        let now = self.now;
        let expired: Vec<u64> = self
            .commands
            .pending
            .iter()
            .filter(|(_, line)| line.deadline <= now)
            .map(|(first, _)| *first)
            .collect();
        for first in expired {
            let Some(line) = self.commands.pending.remove(&first) else {
                continue;
            };
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
                    self.seeding.remove(&pane);
                    if let Some(mirror) = self.panes.get_mut(&pane) {
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
                    if let Some(mirror) = self.panes.get_mut(&pane) {
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
