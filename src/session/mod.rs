//! The sans-IO session core: everything one control connection decides, with no IO.
//!
//! A [`SessionCore`] mirrors every pane of one tmux session. It takes inputs (the bytes the
//! control client printed, requests, ticks, pipe data, the provider rules) with an explicit
//! `now`, and answers with [`Action`]s (a command line to write, an event to publish, an upcall,
//! a reply) that the IO shell (`tmux::connection`) carries out. Reads the core needs at once to
//! decide in stream order (a pane's process tree, a pipe's FIFO) go through the [`PaneIo`] it is
//! given; `replay` and the unit tests give it one without processes or pipes.
//!
//! Owning the decoder, the commands waiting for replies and the [`PaneMirror`]s in one place is
//! what makes seeding race-free: the core sees replies and `%output` in exactly the order tmux
//! wrote them, so a snapshot is applied at the point of the stream it describes (see
//! [`query::seed_line`]).
//!
//! The core never sends `refresh-client -C`: a control client that never states a size is
//! ignored when tmux sizes windows, and stating one would resize the windows of every user
//! attached to the session (protocol notes §5.2). panectl only observes.

mod agent_table;
mod agents;
mod batch;
mod commands;
mod flood;
mod notifications;
mod pane_table;
mod panes;
mod pipes;
mod programs;
mod requests;
mod types;

#[cfg(test)]
mod tests;

pub use agents::{
    Explanation, InputView, PROVIDER_OPTION, ProviderError, STATUS_OPTION, SignalReport,
};
pub use commands::{Answer, Purpose, ReplyId};
pub use flood::FloodConfig;
pub use types::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionStats, PaneSummary, RunError,
    ScreenDump, TmuxExit, Upcall,
};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use self::agent_table::AgentTable;
use self::batch::Batch;
use self::pane_table::PaneTable;
use crate::control::Decoder;
use crate::control::command::{Command, Line};
use crate::events::{EventKind, ResyncReason};
use crate::ids::{PaneId, SessionId};
use crate::mirror::PaneMirror;
use crate::query;
use crate::raw::RawBytes;
use crate::screen::PaneScreen;
use crate::status::process::ProcessEntry;
use crate::status::providers::ProviderSet;

/// What the core asks of the world while it decides: reads whose answer it needs at once, in
/// stream order. The IO shell reads `/proc` and makes FIFOs; replay and tests give stand-ins.
/// Why a pane cannot move to the pipe transport, or its pipe cannot be re-armed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// No such pane in the session.
    #[error("no pane {pane} in session {session}")]
    NoPane {
        /// The pane asked for.
        pane: PaneId,
        /// The session asked.
        session: SessionId,
    },
    /// The host cannot make or read the pane's FIFO (a remote host has none).
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    /// The FIFO or its `pipe-pane` command cannot be made.
    #[error(transparent)]
    Pipe(#[from] crate::pipe::PipeError),
    /// There is no running pipe to re-arm.
    #[error("the pipe of {0} is not running")]
    NotRunning(PaneId),
    /// The FIFO of a stalled pipe was removed.
    #[error("the pipe stalled and its FIFO {} is gone", .0.display())]
    FifoGone(std::path::PathBuf),
    /// The FIFO is there but its `pipe-pane` command cannot be made again.
    #[error("cannot re-arm the pipe: {0}")]
    Rearm(crate::pipe::PipeError),
    /// This core has no pipes at all (replay, tests).
    #[error("no pipes here")]
    NoPipes,
}

/// What the core asks of the world about a pane at the moment it decides: its processes and
/// its `pipe-pane` FIFO. The daemon's is the connection's `ShellPaneIo`; replay and tests give
/// [`NoPaneIo`] or a scripted one.
pub trait PaneIo: Send {
    /// The processes under `pid` (at most `limit`), for recognising a pane's agent.
    fn process_tree(&mut self, pid: u32, limit: usize) -> Vec<ProcessEntry>;
    /// Makes the pane's FIFO and starts reading it (its chunks come back through
    /// [`SessionCore::pipe_output`] with `generation`); answers the `pipe-pane` command that
    /// feeds it, or why it cannot.
    fn start_pipe(&mut self, pane: PaneId, generation: u64) -> Result<Command, TransportError>;
    /// The `pipe-pane` command that feeds the pane's FIFO again (a re-arm), or why it cannot
    /// (the FIFO is gone).
    fn restart_pipe(&mut self, pane: PaneId) -> Result<Command, TransportError>;
    /// Stops reading the pane's FIFO (of `generation`) and removes it.
    fn stop_pipe(&mut self, pane: PaneId, generation: u64);
}

/// A [`PaneIo`] with no processes and no pipes: for replay and tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPaneIo;

impl PaneIo for NoPaneIo {
    fn process_tree(&mut self, _pid: u32, _limit: usize) -> Vec<ProcessEntry> {
        Vec::new()
    }

    fn start_pipe(&mut self, _pane: PaneId, _generation: u64) -> Result<Command, TransportError> {
        Err(TransportError::NoPipes)
    }

    fn restart_pipe(&mut self, _pane: PaneId) -> Result<Command, TransportError> {
        Err(TransportError::NoPipes)
    }

    fn stop_pipe(&mut self, _pane: PaneId, _generation: u64) {}
}

/// What the core wants done; the shell does it, in order.
#[derive(Debug)]
pub enum Action {
    /// Write a command line to the control client.
    Send {
        /// The line, ending with `\n`.
        bytes: Vec<u8>,
        /// What it was sent for.
        purpose: Purpose,
        /// The tag of its first command (the decoder matches replies to tags).
        first_tag: u64,
    },
    /// Publish an event on the daemon's bus.
    Publish(EventKind),
    /// Tell the supervisor.
    Upcall(Upcall),
    /// Answer a request that waited for tmux.
    Reply(ReplyId, Answer),
    /// Let go of a request that will not be answered (its caller sees the connection closed).
    Forget(ReplyId),
    /// The session's panes are known (its first `list-panes` answered, failed or timed out).
    Synced,
    /// Keep what led to a divergence, for it to be replayed (see
    /// [`crate::mirror::DivergenceRecord`]).
    SaveDivergence(Box<crate::mirror::DivergenceRecord>),
}

/// One session's mirror and everything the connection decides. See the module documentation.
pub struct SessionCore {
    session: SessionId,
    config: ConnectionConfig,
    pane_io: Box<dyn PaneIo>,
    /// The time of the input being handled.
    now: Instant,
    /// What the shell is to do, in order.
    actions: Vec<Action>,
    decoder: Decoder,
    /// What the last read decoded (kept for its memory).
    batch: Batch,
    /// The lines waiting for replies, and those waiting for the attach.
    commands: commands::Commands,
    /// The panes, their windows and their seeds.
    panes: PaneTable,
    session_name: RawBytes,
    stats: ConnectionStats,
    first_sight: ResyncReason,
    /// tmux's `%exit`, once it came.
    exit_reason: Option<TmuxExit>,
    /// The status side of each pane, and its options as last written.
    agents: AgentTable,
    /// The provider rules in force.
    providers: Arc<ProviderSet>,
    /// Panes on the pipe transport.
    pipes: pipes::Pipes,
    /// Questions about the programs of panes that may have started an agent.
    programs: programs::Programs,
    /// The panes' output rates, when floods move panes to the pipe transport.
    flood: Option<flood::FloodMeter>,
    /// When a connection started on pipes after failures moves its panes back to control.
    recover_at: Option<Instant>,
    /// When the divergence watchdog looks next.
    next_watchdog: Instant,
    /// Whether [`Action::Synced`] was given.
    synced: bool,
    /// Replay: no commands are sent, and panes are taken as they appear in the stream (at
    /// this size until a layout states theirs).
    observer: Option<(u16, u16)>,
    /// Reads of a last answer waiting for their pane's frame to end, until when at most.
    held_reads: Vec<(ReplyId, PaneId, Instant)>,
}

impl SessionCore {
    /// A core for `session`; `first_sight` says why its panes get seeded. Nothing is sent
    /// before [`SessionCore::start`].
    pub fn new(
        session: SessionId,
        config: ConnectionConfig,
        first_sight: ResyncReason,
        providers: Arc<ProviderSet>,
        pane_io: Box<dyn PaneIo>,
        now: Instant,
    ) -> SessionCore {
        let pipe_watchdog = config.pipe_watchdog;
        let ring_bytes = config.ring_bytes;
        let flood_config = config.flood;
        SessionCore {
            session,
            next_watchdog: now + config.watchdog_interval,
            config,
            pane_io,
            now,
            actions: Vec::new(),
            decoder: Decoder::new(),
            batch: Batch::default(),
            commands: commands::Commands::default(),
            panes: PaneTable::new(ring_bytes),
            session_name: RawBytes::default(),
            stats: ConnectionStats {
                session: Some(session),
                ..ConnectionStats::default()
            },
            first_sight,
            exit_reason: None,
            agents: AgentTable::default(),
            providers,
            pipes: pipes::Pipes::new(pipe_watchdog),
            programs: programs::Programs::default(),
            flood: flood_config.map(flood::FloodMeter::new),
            recover_at: None,
            synced: false,
            observer: None,
            held_reads: Vec::new(),
        }
    }

    /// A core that only watches a recorded stream (`panectl replay`): it sends nothing, and
    /// takes each pane as it appears, at `default_size` until a layout states its size.
    pub fn observer(default_size: (u16, u16), now: Instant) -> SessionCore {
        let mut core = SessionCore::new(
            SessionId(0),
            ConnectionConfig::default(),
            ResyncReason::Attach,
            Arc::new(ProviderSet::default()),
            Box::new(NoPaneIo),
            now,
        );
        core.observer = Some(default_size);
        core.flood = None;
        core
    }

    /// The session.
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// Moves the actions decided so far into `out` (which should be empty; it is swapped).
    pub fn take_actions(&mut self, out: &mut Vec<Action>) {
        std::mem::swap(&mut self.actions, out);
    }

    /// The first lines: flow control and the state of the session.
    pub fn start(&mut self, now: Instant) {
        self.now = now;
        self.next_watchdog = now + self.config.watchdog_interval;
        self.recover_at = self.config.failover.map(|after| now + after);
        if self.config.pause_after > 0 {
            let command = crate::control::command::commands::pause_after(self.config.pause_after);
            self.send(Line::new(command), Purpose::Setup);
        }
        self.send(Line::new(query::version()), Purpose::Version);
        self.send(
            Line::new(query::list_windows(self.session)),
            Purpose::Windows,
        );
        let reason = self.first_sight;
        self.send(
            Line::new(query::list_panes(crate::control::command::Target::Session(
                self.session,
            ))),
            Purpose::Panes(reason),
        );
    }

    /// Bytes the control client printed.
    pub fn feed(&mut self, data: &[u8], now: Instant) {
        self.now = now;
        let mut batch = std::mem::take(&mut self.batch);
        self.decoder.feed_to(data, &mut batch);
        self.handle(&mut batch);
        self.batch = batch;
    }

    /// The control client's output ended: the rest of the stream is handled. Answers tmux's
    /// `%exit` (with its reason, if any), if it said so.
    pub fn finish(&mut self, now: Instant) -> Option<TmuxExit> {
        self.now = now;
        let mut batch = std::mem::take(&mut self.batch);
        self.decoder.finish_to(&mut batch);
        self.handle(&mut batch);
        self.exit_reason.take()
    }

    /// An event decoded elsewhere (replay decodes the stream itself to count what it holds).
    pub fn event(&mut self, event: crate::control::Event, now: Instant) {
        self.now = now;
        self.handle_event(event);
    }

    /// The regular tick: commands past their deadline fail, a connection on pipes recovers,
    /// panes moved to pipes by a flood that is over go back, and the divergence watchdog looks
    /// when its interval has passed.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        self.expire();
        if self.recover_at.is_some_and(|at| now >= at) {
            self.recovered();
        }
        self.floods_calmed();
        if now >= self.next_watchdog {
            self.watchdog();
            self.next_watchdog = now + self.config.watchdog_interval;
        }
    }

    /// When [`SessionCore::wake`] is next due (a status evaluation or a question about a
    /// pane's program), if ever.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        [
            self.next_status_due(now),
            self.programs.next_due(now),
            self.held_reads.iter().map(|(_, _, until)| *until).min(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Evaluates the panes whose status is due and asks the questions that are due.
    pub fn wake(&mut self, now: Instant) {
        self.now = now;
        self.evaluate_due(now);
        self.program_checks_due(now);
        self.release_reads(None, now);
    }

    /// The provider rules were reloaded: every pane's provider is looked up again.
    pub fn providers_reloaded(&mut self, providers: Arc<ProviderSet>, now: Instant) {
        self.now = now;
        self.providers = providers;
        let panes = self.panes.ids();
        for pane in panes {
            self.detect_provider(pane, now);
        }
    }

    /// The daemon shuts down: every pane's options are unset (a status nobody updates would
    /// mislead) and every pipe is stopped in tmux (tmux would otherwise keep a writer on a
    /// FIFO nobody reads).
    pub fn shutdown(&mut self, now: Instant) {
        self.now = now;
        self.clear_options();
        self.stop_pipes();
    }

    /// The mirror of a pane.
    pub fn mirror(&self, pane: PaneId) -> Option<&PaneMirror> {
        self.panes.get(pane)
    }

    /// The panes' screens, in pane order (what replay reports).
    pub fn into_screens(self) -> BTreeMap<PaneId, PaneScreen> {
        self.panes
            .into_mirrors()
            .into_iter()
            .map(|(id, mirror)| (id, mirror.into_screen()))
            .collect()
    }

    fn publish(&mut self, event: EventKind) {
        self.actions.push(Action::Publish(event));
    }

    /// The session's panes are known: requests waiting for them go on.
    fn mark_synced(&mut self) {
        if !std::mem::replace(&mut self.synced, true) {
            self.actions.push(Action::Synced);
        }
    }
}
