//! The panes of the session: adding and removing them, seeding their mirrors from snapshots
//! in stream order, the divergence watchdog, and what tmux reports of them.

use tracing::{debug, info, warn};

use super::pane_table::SeedStart;
use super::{Action, Purpose, SessionCore};
use crate::control::Reply;
use crate::control::command::Line;
use crate::events::{EventKind, ResyncReason};
use crate::ids::{PaneId, WindowId};
use crate::mirror::asked::Asked;
use crate::mirror::pane::Verdict;
use crate::mirror::{PaneMirror, SyncState};
use crate::pipe::Transport;
use crate::query::{self, PaneRow, SEED_PARTS};

impl SessionCore {
    pub(super) fn add_pane(&mut self, row: PaneRow, reason: ResyncReason) {
        let id = row.id;
        if self.panes.place(id, row.window) {
            // Its index and name come with the next list-windows.
            self.send(
                Line::new(query::list_windows(self.session)),
                Purpose::Windows,
            );
        }
        if self.panes.contains(id) {
            return;
        }
        self.publish(EventKind::PaneAdded {
            pane: id,
            session: self.session,
            window: row.window,
            width: row.width,
            height: row.height,
        });
        let mirror = PaneMirror::new(row, self.config.ring_bytes);
        if let Some((seq, len)) = self.panes.insert(mirror) {
            self.publish(EventKind::Output { pane: id, seq, len });
        }
        self.detect_provider(id, self.now);
        self.seed(id, reason);
        if self.config.transport != Transport::Control
            && let Err(error) = self.start_pipe(
                id,
                if self.config.failover.is_some() {
                    "the session's control client keeps failing"
                } else {
                    "the daemon's --transport"
                },
                self.config.transport == Transport::CrossCheck,
            )
        {
            warn!(session = %self.session, pane = %id, %error, "cannot use the pipe transport; staying on control");
            self.publish(EventKind::Transport {
                pane: id,
                transport: Transport::Control,
                reason: format!("cannot start the pipe: {error}"),
            });
        }
    }

    /// Replay: a pane the stream shows, taken at the default size (a layout states its own).
    pub(super) fn adopt(&mut self, pane: PaneId, window: Option<WindowId>) {
        let (width, height) = self.observer.unwrap_or((80, 24));
        let row = PaneRow::unlisted(pane, window.unwrap_or(WindowId(u32::MAX)), width, height);
        self.panes
            .insert(PaneMirror::new(row, self.config.ring_bytes));
    }

    pub(super) fn remove_pane(&mut self, pane: PaneId) {
        // Stopping the pipe stops its reader and removes its FIFO; tmux closed its writer.
        if let Some(pipe) = self.pipes.remove(pane) {
            self.pane_io.stop_pipe(pane, pipe.generation);
        }
        self.programs.remove(pane);
        if let Some(flood) = &mut self.flood {
            flood.remove(pane);
        }
        self.agents.remove(pane);
        if self.panes.remove(pane) {
            self.publish(EventKind::PaneRemoved { pane });
        }
    }

    /// Sends a seed line for a pane, unless one is in flight (then another follows it).
    pub(super) fn seed(&mut self, pane: PaneId, reason: ResyncReason) {
        if self.observer.is_some() {
            return;
        }
        if self.panes.seed(pane, reason) == SeedStart::Send {
            self.send(query::seed_line(pane), Purpose::Seed(pane, reason));
        }
    }

    pub(super) fn seeded(&mut self, pane: PaneId, reason: ResyncReason, replies: &[Option<Reply>]) {
        let again = self.panes.seed_over(pane);
        debug_assert_eq!(replies.len(), SEED_PARTS.len());
        let Some(mirror) = self.panes.get_mut(pane) else {
            return;
        };
        match query::parse_seed(replies) {
            Ok(snapshot) => {
                let reason = match reason {
                    ResyncReason::Divergence => match mirror.confirm_divergence() {
                        Some(mut record) => {
                            let difference = &record.difference;
                            warn!(session = %self.session, %pane, %difference, "mirrored screen differed from tmux's; resynced");
                            record.tmux = self.stats.tmux_version.clone();
                            self.actions.push(Action::SaveDivergence(record));
                            reason
                        }
                        None => ResyncReason::Pause,
                    },
                    reason => reason,
                };
                let resized =
                    (mirror.row.width, mirror.row.height) != (snapshot.width, snapshot.height);
                mirror.seeded(&snapshot, reason.gap());
                if resized {
                    self.publish(EventKind::PaneResized {
                        pane,
                        width: snapshot.width,
                        height: snapshot.height,
                    });
                }
                self.publish(EventKind::Resync { pane, reason });
                self.status_touch(pane, self.now);
            }
            Err(error) => {
                debug!(session = %self.session, %pane, %error, "seed failed");
                mirror.seed_failed();
                mirror.mark_stale();
            }
        }
        if let Some(again) = again {
            self.seed(pane, again);
        }
    }

    /// Looks at panes that printed since the last look, and resyncs stale ones.
    pub(super) fn watchdog(&mut self) {
        let mut checks = Vec::new();
        let mut reseeds = Vec::new();
        // Pipe panes have checks of their own, in `pipe_watchdog` (cross-checked ones are fed
        // by `%output` and checked here).
        let pipes = &self.pipes;
        for (id, mirror) in self.panes.settled_mut() {
            let piped = pipes.transport_of(id) == Transport::Pipe;
            match mirror.state() {
                // One check at a time: under load tmux answers late, and checks sent meanwhile
                // would pile up past those whose output the mirror keeps to place a reply.
                SyncState::Live => {
                    if !piped && !mirror.checking() && mirror.take_changed() {
                        checks.push((id, mirror.layouts_seen(), mirror.check_sent()));
                    }
                }
                // A seed that failed (or never ran) is tried again.
                SyncState::Stale | SyncState::Unseeded => reseeds.push(id),
            }
        }
        for pane in reseeds {
            self.seed(pane, ResyncReason::Retry);
        }
        for (pane, layouts, id) in checks {
            self.send(query::check_line(pane), Purpose::Check(pane, layouts, id));
        }
        self.pipe_watchdog();
    }

    /// Sends the check after a layout change of the pane's window.
    pub(super) fn send_resize_check(&mut self, pane: PaneId) {
        let Some(mirror) = self.panes.get_mut(pane) else {
            return;
        };
        let id = mirror.check_sent();
        self.send(query::check_line(pane), Purpose::ResizeCheck(pane, id));
    }

    /// What a check's replies show, when there is something to compare: not while the pane
    /// is being seeded, nor when it died unnoticed.
    fn shown_for_check(
        &mut self,
        pane: PaneId,
        replies: &[Option<Reply>],
    ) -> Option<query::ShownScreen> {
        let shown = query::parse_check(replies).ok()?;
        if self.panes.seeding(pane) || self.died_unnoticed(pane, &shown) {
            return None;
        }
        Some(shown)
    }

    /// The check numbered `id` is over (answered, failed or timed out): what its mirror kept
    /// of it, which the watchdog waits for before it checks the pane again.
    pub(super) fn check_over(&mut self, pane: PaneId, id: u64) -> Option<Asked> {
        self.panes.get_mut(pane)?.check_answered(id)
    }

    pub(super) fn checked(
        &mut self,
        pane: PaneId,
        layouts: u64,
        id: u64,
        replies: &[Option<Reply>],
    ) {
        let asked = self.check_over(pane, id);
        // A layout change came between the check and its reply: the mirror reflowed after
        // tmux may have parsed output at the new size, so the check is one after a resize.
        if self
            .panes
            .get(pane)
            .is_some_and(|mirror| mirror.layouts_seen() != layouts)
        {
            self.resize_checked(pane, asked.as_ref(), replies);
            return;
        }
        let Some(shown) = self.shown_for_check(pane, replies) else {
            return;
        };
        let Some(mirror) = self.panes.get_mut(pane) else {
            return;
        };
        // Another size: tmux resized the pane and its `%layout-change` is still on its way
        // (tmux queues the notification, it does not queue the resize), so the screens
        // cannot be compared. A resync makes the mirror right whatever comes, and is no
        // divergence.
        if mirror.other_size(&shown) {
            if mirror.state() == SyncState::Live {
                mirror.mark_stale();
                self.seed(pane, ResyncReason::Resize);
            }
            return;
        }
        // The resync confirms the divergence, unless tmux pauses the pane first.
        match mirror.judge(&shown, asked.as_ref()) {
            Verdict::Same => {}
            Verdict::Differs => self.seed(pane, ResyncReason::Divergence),
            Verdict::Unsure => {
                debug!(session = %self.session, %pane, difference = %mirror.difference(&shown), "screen differs where the check cannot be placed (a seed raced output, or too much came since); resyncing");
                self.seed(pane, ResyncReason::Retry);
            }
        }
    }

    /// The check after a resize: the mirror reflowed its screen as tmux does, and stays as it
    /// is when that gave tmux's screen. Otherwise it is reseeded (no divergence: the reflow
    /// could not know better), and the log says where it differed. It differs when tmux parsed
    /// output at the new size before `%layout-change` reached the client (the notification is
    /// queued, the resize is not), or when lines come back from history the mirror never saw
    /// (a taller pane after a reseed).
    pub(super) fn resize_checked(
        &mut self,
        pane: PaneId,
        asked: Option<&Asked>,
        replies: &[Option<Reply>],
    ) {
        let Some(shown) = self.shown_for_check(pane, replies) else {
            return;
        };
        let Some(mirror) = self.panes.get_mut(pane) else {
            return;
        };
        // A further resize is on its way; its own check follows.
        if mirror.other_size(&shown) {
            return;
        }
        let same = mirror.showed(&shown, asked);
        debug!(session = %self.session, %pane, state = ?mirror.state(), same, "resize check");
        if mirror.state() == SyncState::Live && !same {
            info!(
                session = %self.session,
                %pane,
                difference = %mirror.difference(&shown),
                "reflow differs from tmux's after a resize"
            );
            mirror.mark_stale();
            self.seed(pane, ResyncReason::Resize);
        }
    }

    /// Whether a check found the pane dead before the pane poll said so. With
    /// `remain-on-exit` tmux then draws its own message into the pane, which no `%output`
    /// carries: that is no divergence. The pane's process is asked for at once, and its death
    /// reseeds it.
    pub(super) fn died_unnoticed(&mut self, pane: PaneId, shown: &query::ShownScreen) -> bool {
        let unnoticed = shown.dead && self.panes.get(pane).is_some_and(|m| !m.row.state.dead);
        if unnoticed {
            self.ask_program_now(pane);
        }
        unnoticed
    }

    /// What tmux reports of a pane now (the daemon's pane poll, or a question about its
    /// program).
    pub(super) fn pane_update(&mut self, pane: PaneId, update: query::PaneState) {
        let Some(mirror) = self.panes.get_mut(pane) else {
            return;
        };
        let change = mirror.update(update);
        let mirror_dead = mirror.row.state.dead;
        if change.title {
            self.actions.push(Action::Publish(EventKind::PaneRenamed {
                pane,
                title: mirror.row.state.title.clone(),
            }));
        }
        if change.command || change.dead {
            self.actions.push(Action::Publish(EventKind::PaneCommand {
                pane,
                command: mirror.row.state.command.clone(),
                dead: mirror.row.state.dead,
            }));
        }
        let now = self.now;
        let recheck = self.programs.take_recheck(pane);
        if change.respawned {
            self.status_respawned(pane, now);
            self.seed(pane, ResyncReason::Respawn);
        } else if change.dead && mirror_dead {
            // With `remain-on-exit`, tmux writes its message into the dead pane itself.
            self.seed(pane, ResyncReason::Died);
        }
        if change.command || change.dead || change.provider || change.respawned || recheck {
            self.detect_provider(pane, now);
        } else if change.title {
            self.status_title(pane, now);
        }
    }
}
