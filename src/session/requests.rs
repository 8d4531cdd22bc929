//! Requests from the rest of the daemon: lines to run, and what it asks of the panes.

use std::time::Instant;

use super::{Purpose, ReplyId, SessionCore};
use crate::control::command::Line;
use crate::ids::PaneId;
use crate::mirror::RingRead;
use crate::query;
use crate::status::Status;
use crate::status::pane::PaneAgent;

use super::{ConnectionStats, PaneSummary, ScreenDump};

impl SessionCore {
    /// Sends a caller's line; its replies come as [`super::Answer::Command`] under `id`.
    pub fn command(&mut self, id: ReplyId, line: Line, now: Instant) {
        self.now = now;
        self.send(line, Purpose::External(id));
    }

    /// Input was sent to a pane (a message, `panectl input`): the turn it starts is followed
    /// even from a weak working marker.
    pub fn input_sent(&mut self, pane: PaneId, now: Instant) {
        self.now = now;
        if let Some(agent) = self.agents.get_mut(pane) {
            agent.input_sent();
        }
    }

    /// What the daemon's pane poll found of the session's panes.
    pub fn pane_updates(&mut self, updates: Vec<(PaneId, query::PaneState)>, now: Instant) {
        self.now = now;
        for (pane, update) in updates {
            self.pane_update(pane, update);
        }
    }

    /// A pane's screen, if the pane is in this session.
    pub fn screen(&self, pane: PaneId, ansi: bool) -> Option<ScreenDump> {
        self.panes.get(pane).map(|mirror| {
            let screen = mirror.screen();
            let (width, height) = screen.size();
            ScreenDump {
                content: if ansi {
                    screen.ansi()
                } else {
                    screen.text().into_bytes()
                },
                width,
                height,
                cursor: screen.cursor(),
                alternate_screen: screen.alternate_screen(),
                output_seq: mirror.output_end(),
                sync: mirror.state(),
            }
        })
    }

    /// A pane's recent output from `from`.
    pub fn output_from(&self, pane: PaneId, from: Option<u64>, limit: usize) -> Option<RingRead> {
        self.panes.get(pane).map(|m| m.read_output(from, limit))
    }

    /// The connection's counters.
    pub fn stats(&self) -> ConnectionStats {
        let mut stats = self.stats.clone();
        stats.attached = self.commands.is_attached();
        stats.panes = self.panes.len();
        stats.pipe_panes = self.pipes.len();
        self.pipes.count_into(&mut stats);
        for mirror in self.panes.mirrors() {
            stats.totals += mirror.counters;
        }
        stats
    }

    /// The panes of the session, as the API lists them.
    pub fn panes(&self, now: Instant) -> Vec<PaneSummary> {
        self.panes
            .mirrors()
            .map(|mirror| {
                let agent = self.agents.get(mirror.id());
                let window = self.panes.window(mirror.window());
                PaneSummary {
                    pane: mirror.id(),
                    name: mirror.row.state.name.clone(),
                    session_id: self.session,
                    session: self.session_name.clone(),
                    window_id: mirror.window(),
                    window_index: window.map_or(0, |w| w.index),
                    window: window.map(|w| w.name.clone()).unwrap_or_default(),
                    index: mirror.row.index,
                    title: mirror.row.state.title.clone(),
                    command: mirror.row.state.command.clone(),
                    pid: mirror.row.state.pid,
                    width: mirror.row.width,
                    height: mirror.row.height,
                    dead: mirror.row.state.dead,
                    in_mode: mirror.row.state.in_mode,
                    active: mirror.row.active,
                    alternate_screen: mirror.screen().alternate_screen(),
                    sync: mirror.state(),
                    output_seq: mirror.output_end(),
                    counters: mirror.counters,
                    provider: agent.and_then(|a| a.provider()).map(|p| p.id.to_string()),
                    provider_source: agent.and_then(PaneAgent::source),
                    status: agent.map_or(Status::Unknown, PaneAgent::status),
                    status_rule: agent.and_then(|a| a.rule()).map(|r| r.to_string()),
                    status_detail: agent.and_then(|a| a.detail()).map(|d| d.to_string()),
                    status_source: agent.map(PaneAgent::status_source).unwrap_or_default(),
                    status_settled: agent.is_none_or(PaneAgent::settled),
                    status_seconds: agent
                        .map_or(0.0, |a| now.duration_since(a.since()).as_secs_f64()),
                    seen: false,
                    transport: self.pipes.transport_of(mirror.id()),
                }
            })
            .collect()
    }
}
