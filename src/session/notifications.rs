//! What tmux tells unasked: pane output, layouts, windows, pauses, the session's name, `%exit`.

use std::collections::{BTreeMap, BTreeSet};

use tracing::info;

use super::{Action, Purpose, SessionCore, TmuxExit, Upcall};
use crate::control::Notification;
use crate::control::command::{Line, Target};
use crate::events::{EventKind, ResyncReason};
use crate::ids::{PaneId, WindowId};
use crate::mirror::SyncState;
use crate::pipe::Transport;
use crate::query::{self, WindowRow};

impl SessionCore {
    pub(super) fn notification(&mut self, notification: Notification) {
        match notification {
            Notification::Output { pane, data }
            | Notification::ExtendedOutput { pane, data, .. } => self.output(pane, &data),
            // A pipe pane's pause is the daemon's own, made as it turned `%output` off.
            Notification::Pause { pane } if self.pipes.transport_of(pane) == Transport::Pipe => {}
            Notification::Pause { pane } => {
                if let Some(mirror) = self.panes.get_mut(pane) {
                    mirror.paused();
                    info!(session = %self.session, %pane, "tmux paused the pane; resyncing");
                    self.seed(pane, ResyncReason::Pause);
                }
            }
            Notification::Continue { .. } => {}
            Notification::LayoutChange {
                window,
                layout,
                visible_layout,
                ..
            } => self.layout(window, &layout, visible_layout.as_ref()),
            Notification::WindowAdd { .. } => {
                self.send(
                    Line::new(query::list_windows(self.session)),
                    Purpose::Windows,
                );
                self.send(
                    Line::new(query::list_panes(Target::Session(self.session))),
                    Purpose::Panes(ResyncReason::Attach),
                );
            }
            Notification::WindowClose { window } | Notification::UnlinkedWindowClose { window } => {
                for pane in self.panes.close_window(window) {
                    self.remove_pane(pane);
                }
            }
            Notification::WindowPaneChanged { window, pane } => {
                for mirror in self.panes.in_window_mut(window) {
                    mirror.row.active = mirror.id() == pane;
                }
                self.publish(EventKind::ViewChanged {});
            }
            Notification::SessionWindowChanged { .. }
            | Notification::ClientSessionChanged { .. }
            | Notification::ClientDetached { .. } => self.publish(EventKind::ViewChanged {}),
            Notification::WindowRenamed { window, name }
                if self.panes.rename_window(window, name.clone()) =>
            {
                self.publish(EventKind::WindowRenamed { window, name });
            }
            Notification::SessionChanged { session, name }
            | Notification::SessionRenamed { session, name }
                if session == self.session =>
            {
                self.session_name = name;
                self.attach_confirmed();
            }
            Notification::SessionsChanged => {
                self.actions.push(Action::Upcall(Upcall::SessionsChanged));
            }
            Notification::Exit { reason } => {
                self.exit_reason = Some(TmuxExit {
                    reason: reason.map(|r| r.to_string()),
                });
            }
            _ => {}
        }
    }

    /// `%output` from the control client; ignored for panes on the pipe transport (a moment of
    /// both while switching, before `%output` is off).
    pub(super) fn output(&mut self, pane: PaneId, data: &[u8]) {
        // No map lookup for the usual case of no pipes at all.
        if self.pipes.is_empty() || self.pipe_control_output(pane, data) {
            self.deliver(pane, data);
        }
    }

    /// A pane's output, from either transport, into its mirror and the event stream.
    pub(super) fn deliver(&mut self, pane: PaneId, data: &[u8]) {
        if self.observer.is_some() && !self.panes.contains(pane) {
            self.adopt(pane, None);
        }
        match self.panes.get_mut(pane) {
            Some(mirror) => {
                let seq = mirror.output(data);
                let mid_frame = mirror.screen().mid_frame();
                self.publish(EventKind::Output {
                    pane,
                    seq,
                    len: data.len() as u64,
                });
                let now = self.now;
                if self.observer.is_none() && self.status_output(pane, data, mid_frame, now) {
                    self.program_output(pane, now);
                }
                if !mid_frame {
                    self.release_reads(Some(pane), now);
                }
                // No map lookup for the usual case of no pipes at all.
                let on_control =
                    self.pipes.is_empty() || self.pipes.transport_of(pane) == Transport::Control;
                if let Some(rate) = self
                    .flood
                    .as_mut()
                    .and_then(|f| f.bytes(pane, data.len(), on_control, now))
                {
                    self.flooded(pane, rate);
                }
            }
            None => self.panes.keep_early(pane, data),
        }
    }

    /// `list-windows` answered: the windows' indexes and names.
    pub(super) fn windows_listed(&mut self, rows: Vec<WindowRow>) {
        self.panes.windows_listed(rows);
    }

    fn layout(
        &mut self,
        window: WindowId,
        layout: &crate::control::Layout,
        visible: Option<&crate::control::Layout>,
    ) {
        let geometries = layout.panes();
        let present: BTreeSet<PaneId> = geometries.iter().map(|g| g.pane).collect();
        let (gone, new) = self.panes.relayout(window, present);
        for pane in gone {
            self.remove_pane(pane);
        }
        if self.observer.is_some() {
            for pane in &new {
                if !self.panes.contains(*pane) {
                    self.adopt(*pane, Some(window));
                }
            }
        }
        // A zoomed pane has the visible layout's size; the others keep their tiled size.
        let mut sizes: BTreeMap<PaneId, (u16, u16)> = BTreeMap::new();
        for geometry in geometries
            .iter()
            .chain(visible.map(|v| v.panes()).unwrap_or_default().iter())
        {
            let clamp = |n: u32| u16::try_from(n).unwrap_or(u16::MAX);
            sizes.insert(
                geometry.pane,
                (clamp(geometry.width), clamp(geometry.height)),
            );
        }
        let mut resized = Vec::new();
        let mut unchanged = Vec::new();
        for (pane, (width, height)) in sizes {
            if let Some(mirror) = self.panes.get_mut(pane) {
                mirror.layout_changed();
                if mirror.resize(width, height) {
                    resized.push((pane, width, height));
                } else if mirror.state() == SyncState::Live {
                    unchanged.push(pane);
                }
            }
        }
        for (pane, width, height) in resized {
            self.publish(EventKind::PaneResized {
                pane,
                width,
                height,
            });
            // The mirror reflowed as tmux does; a check says whether that gave tmux's screen
            // (a pipe's bytes are not in step with the layout change: its panes are reseeded).
            if self.pipes.transport_of(pane) == Transport::Pipe {
                self.seed(pane, ResyncReason::Resize);
            } else {
                self.send_resize_check(pane);
            }
        }
        // A pane of the same size may still have been resized and back: `%layout-change` says
        // the layout when tmux gets to send it, so two quick changes show as the last one
        // twice, and the size in between (which tmux reflowed through) is never seen. Checked
        // too, and resynced as a resize if its screen is not tmux's.
        for pane in unchanged {
            if self.pipes.transport_of(pane) != Transport::Pipe {
                self.send_resize_check(pane);
            }
        }
        if new.iter().any(|pane| !self.panes.contains(*pane)) {
            self.send(
                Line::new(query::list_panes(Target::Window(window))),
                Purpose::Panes(ResyncReason::Attach),
            );
        }
    }
}
