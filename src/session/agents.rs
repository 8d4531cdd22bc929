//! The status side of a connection: which provider each pane runs, when its screen is
//! evaluated, and where changes go (the event bus and the pane options `@panectl_status` and
//! `@panectl_provider`, set only when they change, so tmux formats show status without
//! polling).

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tracing::debug;

use super::{Action, Answer, Purpose, ReplyId, SessionCore};
use crate::control::Reply;
use crate::control::command::{Command, Line, SafeValue};
use crate::events::EventKind;
use crate::ids::PaneId;
use crate::query::{self, PROVIDER_OVERRIDE_OPTION};
use crate::status::Status;
use crate::status::engine::{self, RuleReport};
use crate::status::pane::{FRAME_HOLD, PaneAgent, ProviderSource};
use crate::status::providers::SHELL;
use crate::status::signal::{Effect, HookAnswer, HookReport, Reported, Signal, StatusSource};
use crate::status::tracker::Change;
use crate::status::view::{Region, ScreenView};

/// The pane option with the status word.
pub const STATUS_OPTION: &str = "@panectl_status";
/// The pane option with the provider id.
pub const PROVIDER_OPTION: &str = "@panectl_provider";

/// Processes looked at per pane when recognising its provider.
const PROCESS_LIMIT: usize = 64;

/// A pane's input as message delivery reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputView {
    /// The text: the rows inside the input box, else the cursor's row.
    pub text: String,
    /// Whether it was read from an input box the provider draws. Without one, the input is the
    /// cursor's row: a program that prints its prompt on a new row is ready again, which is
    /// how delivery sees the end of a turn too short to be seen busy (a shell's `echo`).
    pub boxed: bool,
}

/// Why `panectl explain` says what it says: the provider, the status, and every rule of the
/// provider evaluated on the current screen.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Explanation {
    /// The pane.
    pub pane: PaneId,
    /// The provider whose rules apply.
    #[schema(required = true)]
    pub provider: Option<String>,
    /// How the provider was recognised.
    #[schema(required = true)]
    pub provider_source: Option<ProviderSource>,
    /// The pane's status.
    #[serde(deserialize_with = "crate::status::lenient")]
    pub status: Status,
    /// The rule behind it (for a signal, what it was).
    #[schema(required = true)]
    pub rule: Option<String>,
    /// Where the status came from: the screen, or the agent's own signal.
    pub source: StatusSource,
    /// The status the screen alone gives.
    #[serde(deserialize_with = "crate::status::lenient")]
    pub screen_status: Status,
    /// Seconds since the screen's status last changed (a signal produced before that is older
    /// evidence and does not apply).
    pub screen_changed_seconds: f64,
    /// The agent's own report in force, if any.
    #[schema(required = true)]
    pub signal: Option<SignalReport>,
    /// Every rule of the provider on the current screen, in the order they are tried (empty
    /// without a provider).
    pub rules: Vec<RuleReport>,
    /// The dialog's question and options, when the pane waits for an answer and its screen
    /// shows them (see `status::decision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<crate::status::decision::Decision>,
}

/// The agent's own report in force, for `explain`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SignalReport {
    /// Where it came from.
    pub source: StatusSource,
    /// The status it was read as.
    #[serde(deserialize_with = "crate::status::lenient")]
    pub status: Status,
    /// What it was: `hook Stop`, `osc 7501 state=blocked kind=permission`, `title "..."`.
    pub detail: String,
    /// Seconds since it was produced.
    pub age_seconds: f64,
    /// The process that sent it (hooks), if known.
    #[schema(required = true)]
    pub pid: Option<u32>,
}

/// A provider request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// No such pane here.
    #[error("no such pane")]
    NoPane,
    /// No such provider: its id, and the ids there are.
    #[error("unknown provider {0:?} ({1})")]
    Unknown(String, String),
}

impl SessionCore {
    fn view(&self, pane: PaneId) -> Option<ScreenView> {
        let mirror = self.panes.get(pane)?;
        Some(ScreenView {
            rows: mirror.screen().rows(),
            title: mirror.row.state.title.to_string(),
            command: mirror.row.state.command.to_string(),
        })
    }

    /// Works out a pane's provider: assigned, else by its processes, else by its banner. An
    /// agent whose pane went back to a shell (or died) has exited.
    pub(super) fn detect_provider(&mut self, pane: PaneId, now: Instant) {
        let Some(mirror) = self.panes.get(pane) else {
            return;
        };
        let providers = Arc::clone(&self.providers);
        let state = &mirror.row.state;
        let (found, source) = match state
            .assigned_provider
            .as_deref()
            .and_then(|id| providers.get(id))
        {
            Some(provider) => (Some(provider.clone()), Some(ProviderSource::Assigned)),
            None => {
                let processes = if state.pid > 0 {
                    self.pane_io.process_tree(state.pid, PROCESS_LIMIT)
                } else {
                    Vec::new()
                };
                let command = state.command.to_string();
                let found = providers.detect_by_process(&command, &processes);
                // tmux named the program before the processes were read: an exec between the
                // two leaves them disagreeing, and the pane is asked again.
                let consistent = state.dead
                    || processes.is_empty()
                    || command.is_empty()
                    || processes.iter().any(|p| p.is_named(&command));
                debug!(
                    session = %self.session,
                    %pane,
                    pid = state.pid,
                    %command,
                    root = processes.first().map_or("", |p| p.name.as_str()),
                    found = found.map_or("", |p| &*p.id),
                    consistent,
                    "provider by process"
                );
                self.programs.detected(pane, &command, consistent);
                match found {
                    Some(provider) if !state.dead => {
                        (Some(provider.clone()), Some(ProviderSource::Process))
                    }
                    _ => {
                        let rows = mirror.screen().rows();
                        match providers.detect_by_banner(&rows) {
                            Some(provider) if !state.dead => {
                                (Some(provider.clone()), Some(ProviderSource::Banner))
                            }
                            _ => (None, None),
                        }
                    }
                }
            }
        };
        let dead = state.dead;
        let agent = self.agents.get_or_new(pane, self.config.status, now);
        // An agent that was running (not merely assigned, now unassigned) and is gone exited.
        let was_running = agent.provider().is_some_and(|p| &*p.id != SHELL)
            && agent.source() != Some(ProviderSource::Assigned);
        let now_agent = found.as_ref().is_some_and(|p| &*p.id != SHELL);
        let change = if was_running
            && (!now_agent || dead)
            && source != Some(ProviderSource::Assigned)
        {
            agent.exited(now)
        } else {
            // An agent started again after it exited gets a fresh start.
            if agent.status() == Status::Exited {
                agent.set_provider(None, None, now);
            }
            if agent.set_provider(found, source, now) {
                debug!(session = %self.session, %pane, provider = ?agent.provider().map(|p| p.id.clone()), "provider");
            }
            agent.touched(now);
            None
        };
        if let Some(change) = change {
            self.status_changed(pane, change);
        }
        self.publish_options(pane);
    }

    /// The earliest time a pane needs evaluating.
    pub(super) fn next_status_due(&self, now: Instant) -> Option<Instant> {
        self.agents.next_due(now)
    }

    /// Evaluates every pane that is due.
    pub(super) fn evaluate_due(&mut self, now: Instant) {
        for pane in self.agents.due(now) {
            let Some(view) = self.view(pane) else {
                continue;
            };
            let Some(agent) = self.agents.get_mut(pane) else {
                continue;
            };
            let screen_before = agent.screen_status();
            let change = agent.evaluate(&view, now);
            let screen_after = agent.screen_status();
            if screen_after != screen_before {
                // Also when a signal already said so (no status event then): the screen's own
                // timing, for comparing the channels (BENCHMARKS.md).
                debug!(session = %self.session, %pane, screen = %screen_after, previous = %screen_before, "screen status");
            }
            if let Some(change) = change {
                self.status_changed(pane, change);
            }
        }
    }

    /// A pane's screen or metadata changed: evaluate it soon.
    /// A new program replaced the pane's: its status starts over once it prints.
    pub(super) fn status_respawned(&mut self, pane: PaneId, now: Instant) {
        if let Some(change) = self.agents.get_mut(pane).and_then(|a| a.respawned(now)) {
            self.status_changed(pane, change);
        }
    }

    /// The pane's program printed `data`. Answers whether the pane may yet turn out to run an
    /// agent (no provider or the shell's, none assigned): then `programs` asks for its process.
    /// On the `%output` path: one lookup, and one scan for the agent's OSC reports.
    /// `mid_frame`: the output left the screen inside a synchronized update.
    pub(super) fn status_output(
        &mut self,
        pane: PaneId,
        data: &[u8],
        mid_frame: bool,
        now: Instant,
    ) -> bool {
        match self.agents.get_mut(pane) {
            Some(agent) => {
                agent.output_seen();
                agent.touched(now);
                agent.set_mid_frame(mid_frame);
                let maybe_agent = agent.source() != Some(ProviderSource::Assigned)
                    && agent.provider().is_none_or(|p| &*p.id == SHELL);
                if let Some(change) = agent.scan_output(data, now) {
                    self.status_changed(pane, change);
                }
                maybe_agent
            }
            None => true,
        }
    }

    /// The pane's title changed: a signal for providers whose titles say their state.
    pub(super) fn status_title(&mut self, pane: PaneId, now: Instant) {
        let Some(title) = self.panes.get(pane).map(|m| m.row.state.title.to_string()) else {
            return;
        };
        if let Some(agent) = self.agents.get_mut(pane) {
            agent.touched(now);
            if let Some(change) = agent.title_changed(&title, now) {
                self.status_changed(pane, change);
            }
        }
    }

    /// A hook of the agent in `pane` (from `panectl hook`). It counts only if the process that
    /// sent it is the pane's agent or runs under it: `sender` is the sending process and its
    /// ancestors, nearest first, as the kernel tells them for the API connection (never what
    /// the hook's body says). A hook from anywhere else (another pane, a script of the user's,
    /// a program that ended) does not apply.
    /// `now_ms` is the wall clock in milliseconds since the epoch (a hook says when it was
    /// produced by that clock).
    pub fn hook(
        &mut self,
        pane: PaneId,
        report: HookReport,
        sender: &[u32],
        now: Instant,
        now_ms: u64,
    ) -> Option<HookAnswer> {
        self.now = now;
        let mirror = self.panes.get(pane)?;
        let pane_pid = mirror.row.state.pid;
        let answer = |agent: &PaneAgent, applied: bool, reason: Option<String>| HookAnswer {
            pane: pane.to_string(),
            applied,
            reason,
            status: agent.status(),
            status_source: agent.status_source(),
        };
        let agent_pid = self.agent_pid(pane, pane_pid);
        let Some(agent_pid) = agent_pid.filter(|pid| sender.contains(pid)) else {
            let agent = self.agents.get(pane)?;
            let from = sender.first().copied().unwrap_or_default();
            debug!(session = %self.session, %pane, from, event = %report.event, "hook from outside the agent");
            return Some(answer(
                agent,
                false,
                Some(match agent_pid {
                    Some(agent) => format!(
                        "process {from} is not the pane's agent (process {agent}) nor runs \
                         under it: a hook counts only from the agent it reports on"
                    ),
                    None => "the pane runs no process to take a hook from".to_string(),
                }),
            ));
        };
        let signal = Signal {
            reported: Reported::Status(Status::Unknown),
            source: StatusSource::Hook,
            at: report.produced_at(now, now_ms),
            detail: report.detail(),
            pid: Some(agent_pid),
        };
        let agent = self.agents.get_mut(pane)?;
        // What the event means is the provider's data (its `[signals.hooks]`).
        let effect = agent.provider().map_or(Effect::Ignore, |provider| {
            provider
                .signals
                .hook_effect(&report.event, report.detail_word())
        });
        let outcome = agent.signal_received(signal, effect, now);
        debug!(session = %self.session, %pane, event = %report.event, applied = outcome.applied, reason = ?outcome.reason, "hook");
        let reply = answer(agent, outcome.applied, outcome.reason.map(str::to_string));
        if let Some(change) = outcome.change {
            self.status_changed(pane, change);
        }
        Some(reply)
    }

    /// The pid of the agent in `pane`: the process of its tree that its provider recognises,
    /// else (a provider assigned by hand, or only seen on the screen) the pane's own process.
    fn agent_pid(&mut self, pane: PaneId, pane_pid: u32) -> Option<u32> {
        if pane_pid == 0 {
            return None;
        }
        let provider = self.agents.get(pane).and_then(|a| a.provider().cloned());
        let found = provider.and_then(|provider| {
            let tree = self.pane_io.process_tree(pane_pid, PROCESS_LIMIT);
            provider.detect.agent_process(&tree).map(|p| p.pid)
        });
        Some(found.unwrap_or(pane_pid))
    }

    pub(super) fn status_touch(&mut self, pane: PaneId, now: Instant) {
        let mid_frame = self
            .panes
            .get(pane)
            .is_some_and(|mirror| mirror.screen().mid_frame());
        if let Some(agent) = self.agents.get_mut(pane) {
            agent.touched(now);
            agent.set_mid_frame(mid_frame);
        }
    }

    fn status_changed(&mut self, pane: PaneId, change: Change) {
        let agent = self.agents.get(pane);
        let provider = agent.and_then(|a| a.provider()).map(|p| p.id.to_string());
        let detail = agent.and_then(|a| a.detail()).map(|d| d.to_string());
        debug!(session = %self.session, %pane, status = %change.status, previous = %change.previous, rule = ?change.rule, source = %change.source, "status");
        self.publish(EventKind::Status {
            pane,
            status: change.status,
            previous: change.previous,
            rule: change.rule.map(|r| r.to_string()),
            provider,
            source: change.source,
            detail,
        });
        self.publish_options(pane);
    }

    /// Sets `@panectl_status` and `@panectl_provider` on an agent pane when they changed.
    fn publish_options(&mut self, pane: PaneId) {
        let Some(wanted) = self.agents.options_due(pane) else {
            return;
        };
        let mut line: Option<Line> = None;
        let mut push = |command: Command| {
            line = Some(match line.take() {
                Some(line) => line.then(command),
                None => Line::new(command),
            });
        };
        let safe = |text: &str| SafeValue::new(text).ok();
        match &wanted {
            (Some(status), Some(provider)) => {
                push(query::set_pane_option(
                    pane,
                    STATUS_OPTION,
                    safe(status.as_str()).as_ref(),
                ));
                push(query::set_pane_option(
                    pane,
                    PROVIDER_OPTION,
                    safe(provider).as_ref(),
                ));
            }
            _ => {
                push(query::set_pane_option(pane, STATUS_OPTION, None));
                push(query::set_pane_option(pane, PROVIDER_OPTION, None));
            }
        }
        if let Some(line) = line {
            self.send(line, Purpose::Setup);
        }
    }

    /// Unsets the options of every pane (at shutdown: a status nobody updates would mislead).
    pub(super) fn clear_options(&mut self) {
        for pane in self.agents.showing_status() {
            let line = Line::new(query::set_pane_option(pane, STATUS_OPTION, None))
                .then(query::set_pane_option(pane, PROVIDER_OPTION, None));
            self.send(line, Purpose::Setup);
        }
    }

    /// The text in a pane's input: the rows inside the input box when its provider draws one,
    /// else the row the cursor is on. Message delivery compares it before and after a paste
    /// to tell whether pasted text still waits to be submitted.
    pub fn input_view(&self, pane: PaneId) -> Option<InputView> {
        let view = self.view(pane)?;
        if let Some(provider) = self.agents.get(pane).and_then(|a| a.provider()) {
            let layout = view.layout(&provider.rule_line);
            if layout.input_box.is_some() {
                return Some(InputView {
                    text: view.region_rows(Region::Input, layout).join("\n"),
                    boxed: true,
                });
            }
        }
        let (_, row) = self.panes.get(pane)?.screen().cursor();
        Some(InputView {
            text: view.rows.get(usize::from(row)).cloned().unwrap_or_default(),
            boxed: false,
        })
    }

    /// Why a pane has its status.
    pub fn explain(&self, pane: PaneId, now: Instant) -> Option<Explanation> {
        let agent = self.agents.get(pane)?;
        let view = self.view(pane)?;
        let rules = agent
            .provider()
            .map(|provider| engine::explain(provider, &view))
            .unwrap_or_default();
        Some(Explanation {
            pane,
            provider: agent.provider().map(|p| p.id.to_string()),
            provider_source: agent.source(),
            status: agent.status(),
            rule: agent.rule().map(|r| r.to_string()),
            source: agent.status_source(),
            screen_status: agent.screen_status(),
            screen_changed_seconds: now
                .saturating_duration_since(agent.screen_changed_at())
                .as_secs_f64(),
            signal: agent.signal().map(|(signal, status)| SignalReport {
                source: signal.source,
                status: *status,
                detail: signal.detail.clone(),
                age_seconds: now.saturating_duration_since(signal.at).as_secs_f64(),
                pid: signal.pid,
            }),
            rules,
            decision: agent.provider().and_then(|provider| {
                let waiting =
                    [agent.status(), agent.screen_status()].contains(&Status::WaitingUserAnswer);
                let rows: Vec<&str> = view.rows.iter().map(String::as_str).collect();
                waiting
                    .then(|| {
                        let shades = (self.panes.get(pane))
                            .map(|m| crate::status::shading::screen_rows(m.screen()));
                        let shades = shades.unwrap_or_default();
                        crate::status::decision::for_provider(provider, &rows, &shades)
                    })
                    .flatten()
            }),
        })
    }

    /// Assigns a provider (or, with `None`, goes back to recognising it) and keeps the choice
    /// in the pane option `@panectl_provider_override`, which outlives the daemon.
    pub fn set_provider(
        &mut self,
        pane: PaneId,
        provider: Option<String>,
        now: Instant,
    ) -> Result<(), ProviderError> {
        self.now = now;
        if let Some(id) = &provider
            && self.providers.get(id).is_none()
        {
            return Err(ProviderError::Unknown(id.clone(), self.providers.ids()));
        }
        let Some(mirror) = self.panes.get_mut(pane) else {
            return Err(ProviderError::NoPane);
        };
        mirror.row.state.assigned_provider = provider.clone();
        let value = provider.as_deref().and_then(|id| SafeValue::new(id).ok());
        self.send(
            Line::new(query::set_pane_option(
                pane,
                PROVIDER_OVERRIDE_OPTION,
                value.as_ref(),
            )),
            Purpose::Setup,
        );
        self.detect_provider(pane, now);
        Ok(())
    }

    /// Starts reading a pane's scrollback for its last answer.
    /// The answer comes as [`Answer::LastResponse`] under `id`.
    pub fn last_response(&mut self, id: ReplyId, pane: PaneId, now: Instant) {
        self.now = now;
        let Some(mirror) = self.panes.get(pane) else {
            self.actions
                .push(Action::Reply(id, Answer::LastResponse(None)));
            return;
        };
        // Half a frame on the screen (rows erased, not yet drawn again) would hide the answer:
        // read once the frame ends.
        if mirror.screen().mid_frame() {
            self.held_reads.push((id, pane, now + FRAME_HOLD));
            return;
        }
        self.capture_last_response(id, pane);
    }

    /// Sends the reads of last answers that waited for `pane`'s frame to end (any pane's, for
    /// `None`) and those that waited [`FRAME_HOLD`].
    pub(super) fn release_reads(&mut self, pane: Option<PaneId>, now: Instant) {
        if self.held_reads.is_empty() {
            return;
        }
        let (due, held) = std::mem::take(&mut self.held_reads)
            .into_iter()
            .partition(|(_, held, until)| Some(*held) == pane || *until <= now);
        self.held_reads = held;
        for (id, pane, _) in due {
            self.capture_last_response(id, pane);
        }
    }

    fn capture_last_response(&mut self, id: ReplyId, pane: PaneId) {
        // The whole history and the screen, wrapped lines joined; with the colours for a
        // provider whose answer is told from the prompts by its background.
        let shaded = self
            .agents
            .get(pane)
            .and_then(|a| a.provider())
            .is_some_and(|p| {
                p.last_response.as_ref().is_some_and(|l| {
                    matches!(l.start, crate::status::rules::AnswerStart::AfterShaded)
                })
            });
        let capture = Command::new("capture-pane").flag("-p").flag("-J");
        let capture = if shaded { capture.flag("-e") } else { capture }
            .number("-S", -1_000_000)
            .target("-t", pane);
        self.send(Line::new(capture), Purpose::LastResponse(pane, id));
    }

    /// The scrollback arrived: cut the answer out of it.
    pub(super) fn last_response_read(
        &mut self,
        pane: PaneId,
        replies: &[Option<Reply>],
        id: ReplyId,
    ) {
        let provider = self.agents.get(pane).and_then(|a| a.provider()).cloned();
        let answer = match (replies.first(), provider) {
            (Some(Some(capture)), Some(provider)) if capture.success => {
                // Read as a capture with colours: without any, the rows are the plain text.
                let rows = crate::status::shading::rows(&capture.body);
                crate::status::last_response_shaded(&provider, &rows)
            }
            _ => None,
        };
        self.actions
            .push(Action::Reply(id, Answer::LastResponse(answer)));
    }
}
