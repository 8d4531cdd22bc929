//! One control connection: a `tmux -C attach` client for one session, and the mirror of every
//! pane in it.
//!
//! The connection is a task that owns the child process, its decoder, the commands waiting for
//! replies and the [`PaneMirror`]s of the session. Owning all of them in one task is what makes
//! seeding race-free: the task sees replies and `%output` in exactly the order tmux wrote them,
//! so a snapshot is applied at the point of the stream it describes (see [`query::seed_line`]).
//! Other tasks talk to it through a [`ConnectionHandle`].
//!
//! The connection never sends `refresh-client -C`: a control client that never states a size is
//! ignored when tmux sizes windows, and stating one would resize the windows of every user
//! attached to the session (protocol notes §5.2). panectl only observes.

mod agents;
mod batch;
mod pipes;
mod programs;

pub use agents::{
    Explanation, InputView, PROVIDER_OPTION, ProviderError, STATUS_OPTION, SignalReport,
};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use self::batch::{Batch, Item};
use super::attach;
use crate::address::ServerAddress;
use crate::control::command::{Line, Target, commands};
use crate::control::{Decoder, Event, Notification, Reply};
use crate::events::{EventBus, EventKind, ResyncReason};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::mirror::{PaneCounters, PaneMirror, RingRead, SyncState};
use crate::pipe::{Transport, WatchdogConfig};
use crate::query::{self, PaneRow, SEED_PARTS};
use crate::raw::RawBytes;
use crate::status::Status;
use crate::status::pane::PaneAgent;
use crate::status::providers::ProviderSet;

/// Settings of a control connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// `pause-after` in seconds: tmux pauses a pane whose output waited that long for us,
    /// instead of disconnecting us; 0 disables it.
    pub pause_after: u32,
    /// How long a command may wait for its reply.
    pub command_timeout: Duration,
    /// Bytes of recent output kept per pane.
    pub ring_bytes: usize,
    /// How often the divergence watchdog looks at panes that printed since its last look.
    pub watchdog_interval: Duration,
    /// When agent status is evaluated.
    pub status: crate::status::pane::Timing,
    /// The transport new panes start on.
    pub transport: Transport,
    /// Where the pipe transport's FIFOs are made (a private directory).
    pub pipe_dir: PathBuf,
    /// Where the sockets that control clients attach through are made (a private directory;
    /// see [`crate::tmux::attach`]).
    pub attach_dir: PathBuf,
    /// The pipe transport's liveness watchdog (its checks run every `watchdog_interval`).
    pub pipe_watchdog: WatchdogConfig,
    /// `--transport auto`: when a session's control client keeps failing, its panes move to
    /// the pipe transport, and back once it holds (used by the supervisor).
    pub auto: Option<AutoFailover>,
    /// Set by the supervisor on a connection started on pipes because its control client kept
    /// failing: after this long without failing, its panes go back to the control transport.
    pub failover: Option<Duration>,
}

/// The rule of `--transport auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoFailover {
    /// Unexpected ends of a session's control client within `window` that move it to pipes.
    pub failures: u32,
    /// See `failures`.
    pub window: Duration,
    /// How long the control client of a session on pipes must hold before its panes go back.
    pub recover_after: Duration,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            pause_after: 5,
            command_timeout: Duration::from_secs(10),
            ring_bytes: 128 * 1024,
            watchdog_interval: Duration::from_secs(2),
            status: crate::status::pane::Timing::default(),
            transport: Transport::Control,
            pipe_dir: std::env::temp_dir().join(format!("panectl-pipes-{}", std::process::id())),
            attach_dir: std::env::temp_dir().join(format!("panectl-attach-{}", std::process::id())),
            pipe_watchdog: WatchdogConfig::default(),
            auto: None,
            failover: None,
        }
    }
}

/// Why a command through the connection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The connection is gone.
    #[error("the control connection to session {0} is closed")]
    Closed(SessionId),
    /// tmux did not answer in time.
    #[error("tmux did not answer `{command}` within {after:?}")]
    Timeout {
        /// The command line.
        command: String,
        /// The timeout.
        after: Duration,
    },
}

/// Why a line of commands did not all succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The connection failed.
    #[error("tmux connection: {0}")]
    Connection(#[from] ConnectionError),
    /// tmux answered a command with an error.
    #[error("tmux refused: {0}")]
    Refused(String),
    /// tmux skipped a command because an earlier one on the line failed.
    #[error("tmux skipped a command after an earlier one failed")]
    Skipped,
}

/// A pane as the API lists it.
#[derive(Debug, Clone, Serialize)]
pub struct PaneSummary {
    /// The agent's name (`@panectl_name`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The pane id.
    pub pane: PaneId,
    /// The session's id.
    pub session_id: SessionId,
    /// The session's name.
    pub session: RawBytes,
    /// The window's id.
    pub window_id: WindowId,
    /// The window's index.
    pub window_index: u32,
    /// The window's name.
    pub window: RawBytes,
    /// The pane's index in its window.
    pub index: u32,
    /// The title the program set.
    pub title: RawBytes,
    /// The foreground command.
    pub command: RawBytes,
    /// The pane's first process.
    pub pid: u32,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Whether its process exited.
    pub dead: bool,
    /// Whether it is in copy/view mode.
    pub in_mode: bool,
    /// Whether it is the active pane of its window.
    pub active: bool,
    /// Whether the alternate screen is on.
    pub alternate_screen: bool,
    /// How far the mirrored screen can be trusted.
    pub sync: SyncState,
    /// Where its output comes from.
    pub transport: Transport,
    /// Sequence number of the next output byte.
    pub output_seq: u64,
    /// Counters.
    pub counters: PaneCounters,
    /// The agent CLI running in the pane, if one is recognised.
    pub provider: Option<String>,
    /// How the provider was recognised.
    pub provider_source: Option<crate::status::pane::ProviderSource>,
    /// The agent's status (`unknown` for panes without a provider).
    pub status: crate::status::Status,
    /// The rule behind the status (for a signal, what it was).
    pub status_rule: Option<String>,
    /// Where the status came from: `screen`, `hook`, `osc` or `title`.
    pub status_source: crate::status::signal::StatusSource,
    /// Whether the status reflects the latest output (no evaluation pending).
    pub status_settled: bool,
    /// Seconds the status has lasted.
    pub status_seconds: f64,
    /// A `completed` agent whose pane an attached client has had in view since (see
    /// `@panectl-seen`); false for every other status.
    pub seen: bool,
}

/// A pane's screen, as the API returns it.
#[derive(Debug, Clone)]
pub struct ScreenDump {
    /// Text or ANSI bytes.
    pub content: Vec<u8>,
    /// Width.
    pub width: u16,
    /// Height.
    pub height: u16,
    /// Cursor column and row.
    pub cursor: (u16, u16),
    /// Alternate screen on.
    pub alternate_screen: bool,
    /// Output sequence number the screen reflects.
    pub output_seq: u64,
    /// Sync state.
    pub sync: SyncState,
}

/// Counters of one connection.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConnectionStats {
    /// The session.
    pub session: Option<SessionId>,
    /// Whether the control client has attached (tmux answered its first commands).
    pub attached: bool,
    /// tmux's version as it reports it.
    pub tmux_version: String,
    /// Lines the decoder could not read.
    pub parse_errors: u64,
    /// Bare lines outside reply blocks.
    pub stray_lines: u64,
    /// Commands that timed out.
    pub timeouts: u64,
    /// Commands sent.
    pub commands: u64,
    /// Panes mirrored.
    pub panes: usize,
    /// Sum of the pane counters.
    pub totals: PaneCounters,
    /// Panes on the pipe transport.
    pub pipe_panes: usize,
    /// Bytes that came through pipes since the connection began (in cross-check mode, the
    /// bytes compared).
    pub pipe_bytes: u64,
    /// Cross-check mode: bytes found equal in both transports.
    pub cross_check_matched: u64,
    /// Cross-check mode: differences reported.
    pub cross_check_findings: u64,
}

/// What a connection tells its supervisor.
#[derive(Debug)]
pub enum Upcall {
    /// tmux reported `%sessions-changed`: a session was created or destroyed.
    SessionsChanged,
    /// A connection started on pipes after failures held long enough, and moved its panes
    /// back to the control transport.
    ControlRecovered(SessionId),
}

enum Request {
    Command {
        line: Line,
        reply: oneshot::Sender<Result<Vec<Option<Reply>>, ConnectionError>>,
    },
    Panes {
        reply: oneshot::Sender<Vec<PaneSummary>>,
    },
    Screen {
        pane: PaneId,
        ansi: bool,
        reply: oneshot::Sender<Option<ScreenDump>>,
    },
    Output {
        pane: PaneId,
        from: Option<u64>,
        limit: usize,
        reply: oneshot::Sender<Option<RingRead>>,
    },
    Stats {
        reply: oneshot::Sender<ConnectionStats>,
    },
    Explain {
        pane: PaneId,
        reply: oneshot::Sender<Option<Explanation>>,
    },
    LastResponse {
        pane: PaneId,
        reply: oneshot::Sender<Option<String>>,
    },
    SetProvider {
        pane: PaneId,
        provider: Option<String>,
        reply: oneshot::Sender<Result<(), ProviderError>>,
    },
    InputText {
        pane: PaneId,
        reply: oneshot::Sender<Option<InputView>>,
    },
    InputSent {
        pane: PaneId,
    },
    Hook {
        pane: PaneId,
        report: crate::status::signal::HookReport,
        reply: oneshot::Sender<Option<crate::status::signal::HookAnswer>>,
    },
    SetTransport {
        pane: PaneId,
        transport: Transport,
        reply: oneshot::Sender<Result<(), String>>,
    },
    SessionTransport {
        transport: Transport,
        reply: oneshot::Sender<Vec<(PaneId, String)>>,
    },
    /// Bytes a pane's pipe reader read (from the reader task, not a handle).
    PipeOutput {
        pane: PaneId,
        generation: u64,
        data: Vec<u8>,
    },
    /// What the daemon's pane poll found of the session's panes.
    PaneUpdates {
        updates: Vec<(PaneId, query::PaneUpdate)>,
    },
    /// A pane's pipe reader failed.
    PipeFailed {
        pane: PaneId,
        generation: u64,
        error: String,
    },
}

/// Talks to a connection task. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ConnectionHandle {
    session: SessionId,
    requests: mpsc::Sender<Request>,
    /// Becomes `true` once the session's panes are known (its first `list-panes` answered,
    /// failed or timed out); closed when the connection ends.
    synced: watch::Receiver<bool>,
}

impl ConnectionHandle {
    /// The session this connection mirrors.
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// Whether the connection has had its first sync: the session's panes are known (or will
    /// not be: the connection ended, or tmux did not answer in time). Until then a pane of the
    /// session is missing from [`ConnectionHandle::panes`] although it exists.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow() || self.synced.has_changed().is_err()
    }

    /// Waits until [`ConnectionHandle::is_synced`].
    pub async fn first_sync(&self) {
        let mut synced = self.synced.clone();
        // An error means the connection ended: nothing more to wait for.
        let _ = synced.wait_for(|synced| *synced).await;
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Request,
    ) -> Result<T, ConnectionError> {
        let (sender, receiver) = oneshot::channel();
        self.requests
            .send(make(sender))
            .await
            .map_err(|_| ConnectionError::Closed(self.session))?;
        receiver
            .await
            .map_err(|_| ConnectionError::Closed(self.session))
    }

    /// Sends a line and waits for the replies to its commands (`None` for a command tmux
    /// skipped because an earlier one on the line failed).
    pub async fn command(&self, line: Line) -> Result<Vec<Option<Reply>>, ConnectionError> {
        self.ask(|reply| Request::Command { line, reply }).await?
    }

    /// Sends a line and checks that every command on it succeeded; returns the replies.
    pub async fn run(&self, line: Line) -> Result<Vec<Reply>, RunError> {
        self.command(line)
            .await?
            .into_iter()
            .map(|reply| match reply {
                Some(reply) if reply.success => Ok(reply),
                Some(reply) => Err(RunError::Refused(
                    crate::raw::RawBytes(reply.joined_body()).to_string(),
                )),
                None => Err(RunError::Skipped),
            })
            .collect()
    }

    /// The panes of the session.
    pub async fn panes(&self) -> Result<Vec<PaneSummary>, ConnectionError> {
        self.ask(|reply| Request::Panes { reply }).await
    }

    /// A pane's screen, if the pane is in this session.
    pub async fn screen(
        &self,
        pane: PaneId,
        ansi: bool,
    ) -> Result<Option<ScreenDump>, ConnectionError> {
        self.ask(|reply| Request::Screen { pane, ansi, reply })
            .await
    }

    /// A pane's recent output from `from`.
    pub async fn output(
        &self,
        pane: PaneId,
        from: Option<u64>,
        limit: usize,
    ) -> Result<Option<RingRead>, ConnectionError> {
        self.ask(|reply| Request::Output {
            pane,
            from,
            limit,
            reply,
        })
        .await
    }

    /// The connection's counters.
    pub async fn stats(&self) -> Result<ConnectionStats, ConnectionError> {
        self.ask(|reply| Request::Stats { reply }).await
    }

    /// Why a pane has its status (`None` if the pane is not in this session).
    pub async fn explain(&self, pane: PaneId) -> Result<Option<Explanation>, ConnectionError> {
        self.ask(|reply| Request::Explain { pane, reply }).await
    }

    /// The agent's last answer, read from the pane's scrollback.
    pub async fn last_response(&self, pane: PaneId) -> Result<Option<String>, ConnectionError> {
        self.ask(|reply| Request::LastResponse { pane, reply })
            .await
    }

    /// The text in a pane's input (see [`Connection::input_text`]); `None` if the pane is not
    /// in this session.
    pub async fn input_text(&self, pane: PaneId) -> Result<Option<String>, ConnectionError> {
        Ok(self.input_view(pane).await?.map(|view| view.text))
    }

    /// The text in a pane's input and where it was read (see [`InputView`]); `None` if the
    /// pane is not in this session.
    pub async fn input_view(&self, pane: PaneId) -> Result<Option<InputView>, ConnectionError> {
        self.ask(|reply| Request::InputText { pane, reply }).await
    }

    /// Tells the status tracker that input was sent to a pane (a message, `panectl input`), so
    /// that the turn it starts is followed even from a weak working marker.
    pub async fn input_sent(&self, pane: PaneId) -> Result<(), ConnectionError> {
        self.requests
            .send(Request::InputSent { pane })
            .await
            .map_err(|_| ConnectionError::Closed(self.session))
    }

    /// Hands a hook of the agent in `pane` to its status side (`None` if the pane is not in
    /// this session).
    pub async fn hook(
        &self,
        pane: PaneId,
        report: crate::status::signal::HookReport,
    ) -> Result<Option<crate::status::signal::HookAnswer>, ConnectionError> {
        self.ask(|reply| Request::Hook {
            pane,
            report,
            reply,
        })
        .await
    }

    /// Hands over what the daemon's pane poll found of this session's panes (titles,
    /// programs, pids, dead panes, panectl's pane options).
    pub async fn pane_updates(
        &self,
        updates: Vec<(PaneId, query::PaneUpdate)>,
    ) -> Result<(), ConnectionError> {
        self.requests
            .send(Request::PaneUpdates { updates })
            .await
            .map_err(|_| ConnectionError::Closed(self.session))
    }

    /// Moves a pane's output to another transport (`Err` says why it cannot).
    pub async fn set_transport(
        &self,
        pane: PaneId,
        transport: Transport,
    ) -> Result<Result<(), String>, ConnectionError> {
        self.ask(|reply| Request::SetTransport {
            pane,
            transport,
            reply,
        })
        .await
    }

    /// Moves every pane of the session, and the panes it gets later, to another transport;
    /// answers the panes that could not move, with why.
    pub async fn set_session_transport(
        &self,
        transport: Transport,
    ) -> Result<Vec<(PaneId, String)>, ConnectionError> {
        self.ask(|reply| Request::SessionTransport { transport, reply })
            .await
    }

    /// Assigns a provider to a pane (`None`: recognise it again).
    pub async fn set_provider(
        &self,
        pane: PaneId,
        provider: Option<String>,
    ) -> Result<Result<(), ProviderError>, ConnectionError> {
        self.ask(|reply| Request::SetProvider {
            pane,
            provider,
            reply,
        })
        .await
    }
}

/// How a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// Shutdown was requested.
    Cancelled,
    /// tmux said `%exit` (with its reason, if any).
    Exit(Option<String>),
    /// The client's output ended without `%exit`.
    Eof,
    /// The client could not be started or talked to.
    Failed(String),
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndReason::Cancelled => write!(f, "shut down"),
            EndReason::Exit(None) => write!(f, "tmux ended the control client"),
            EndReason::Exit(Some(reason)) => write!(f, "tmux ended the control client: {reason}"),
            EndReason::Eof => write!(f, "the control client's output ended"),
            EndReason::Failed(reason) => write!(f, "{reason}"),
        }
    }
}

/// What every connection of a daemon shares: where tmux is, settings, and whom to tell.
#[derive(Debug, Clone)]
pub struct ConnectionContext {
    /// The tmux server.
    pub address: ServerAddress,
    /// Settings.
    pub config: ConnectionConfig,
    /// Where pane events go.
    pub bus: EventBus,
    /// Where `%sessions-changed` goes.
    pub upcalls: mpsc::UnboundedSender<Upcall>,
    /// The provider rules in force (replaced when they are reloaded).
    pub providers: watch::Receiver<Arc<ProviderSet>>,
}

/// Starts a connection task for a session; `first_sight` says why its panes get seeded.
/// Returns its handle and a join handle that yields how it ended.
pub fn spawn(
    context: &ConnectionContext,
    session: SessionId,
    first_sight: ResyncReason,
    cancel: CancellationToken,
    tracker: &tokio_util::task::TaskTracker,
) -> (ConnectionHandle, tokio::task::JoinHandle<EndReason>) {
    let (requests, receiver) = mpsc::channel(256);
    let (synced_sender, synced) = watch::channel(false);
    let handle = ConnectionHandle {
        session,
        requests,
        synced,
    };
    let context = context.clone();
    let self_requests = handle.requests.downgrade();
    let task = tracker.spawn(async move {
        let reason = run(
            context,
            session,
            first_sight,
            receiver,
            self_requests,
            cancel,
            synced_sender,
        )
        .await;
        debug!(%session, %reason, "control connection ended");
        reason
    });
    (handle, task)
}

async fn run(
    context: ConnectionContext,
    session: SessionId,
    first_sight: ResyncReason,
    requests: mpsc::Receiver<Request>,
    self_requests: mpsc::WeakSender<Request>,
    cancel: CancellationToken,
    synced: watch::Sender<bool>,
) -> EndReason {
    let ConnectionContext {
        address,
        config,
        bus,
        upcalls,
        providers,
    } = context;
    let client = match attach::control_client(&address, session, &config.attach_dir).await {
        Ok(client) => client,
        Err(error) => return EndReason::Failed(error.to_string()),
    };
    let attach::ControlClient {
        mut child,
        stdin,
        mut stdout,
        mut relay,
    } = client;
    if let Some(pid) = child.id() {
        crate::clients::remember(&address, pid);
    }
    let (lines, line_receiver) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_lines(stdin, line_receiver));
    let mut connection = Connection {
        session,
        config,
        bus,
        upcalls,
        decoder: Decoder::new(),
        batch: Batch::default(),
        lines,
        next_tag: 0,
        tag_lines: HashMap::new(),
        pending: HashMap::new(),
        panes: BTreeMap::new(),
        windows: BTreeMap::new(),
        early_output: HashMap::new(),
        seeding: HashMap::new(),
        session_name: RawBytes::default(),
        stats: ConnectionStats {
            session: Some(session),
            ..ConnectionStats::default()
        },
        first_sight,
        exit_reason: None,
        attached: false,
        deferred: Vec::new(),
        agents: BTreeMap::new(),
        published: BTreeMap::new(),
        providers,
        pipes: HashMap::new(),
        next_pipe: 0,
        self_requests,
        cancel: cancel.child_token(),
        program_checks: HashMap::new(),
        recover_at: None,
        synced,
    };
    connection.start();
    let reason = connection.run(&mut stdout, requests, &cancel).await;
    if reason == EndReason::Cancelled {
        connection.clear_options();
        connection.stop_pipes();
    }
    connection.cancel.cancel();
    drop(connection);
    // Dropping the line sender closes the client's stdin: tmux treats EOF as detach. Its
    // output is read to the end meanwhile, so that tmux can write what it still holds and let
    // the client go at once: a client whose output cannot be written stays in tmux, attached to
    // nothing, until it is killed.
    let _ = writer.await;
    drain(&mut stdout).await;
    end_child(&mut child).await;
    if let Some(pid) = child.id() {
        crate::clients::forget(&address, pid);
    }
    // The client has gone, so the relay has seen its connection close.
    if tokio::time::timeout(Duration::from_secs(1), &mut relay)
        .await
        .is_err()
    {
        warn!(%session, "the relay of an ended control client did not stop; ending it");
        relay.abort();
    }
    reason
}

/// Reads the client's output until it ends (the client exited), for at most two seconds.
async fn drain(stdout: &mut tokio::process::ChildStdout) {
    let mut buffer = vec![0u8; 64 * 1024];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while let Ok(Ok(read)) = tokio::time::timeout_at(deadline, stdout.read(&mut buffer)).await
        && read > 0
    {}
}

/// Waits for the client to exit after its stdin closed; kills it if it lingers. Always reaps.
async fn end_child(child: &mut Child) {
    let pid = child.id();
    if tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .is_err()
    {
        warn!(?pid, "tmux control client did not exit; killing it");
        let _ = child.kill().await;
    }
    if let Some(pid) = pid {
        crate::clients::forget_pid(pid);
    }
}

async fn write_lines(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if let Err(error) = stdin.write_all(&line).await {
            debug!(%error, "writing to the control client failed");
            break;
        }
    }
    let _ = stdin.shutdown().await;
}

/// What a line of commands was sent for.
enum Purpose {
    /// A caller through the handle.
    External(oneshot::Sender<Result<Vec<Option<Reply>>, ConnectionError>>),
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
    /// A watchdog check of a pane.
    Check(PaneId),
    /// The scrollback of a pane, for its last answer.
    LastResponse(PaneId, oneshot::Sender<Option<String>>),
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

struct WindowState {
    index: u32,
    name: RawBytes,
    panes: BTreeSet<PaneId>,
}

struct Connection {
    session: SessionId,
    config: ConnectionConfig,
    bus: EventBus,
    upcalls: mpsc::UnboundedSender<Upcall>,
    decoder: Decoder,
    /// What the last read decoded (kept for its memory).
    batch: Batch,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    next_tag: u64,
    /// Tag of each command sent -> (first tag of its line, index in the line).
    tag_lines: HashMap<u64, (u64, usize)>,
    /// Lines waiting for replies, by their first tag.
    pending: HashMap<u64, PendingLine>,
    panes: BTreeMap<PaneId, PaneMirror>,
    windows: BTreeMap<WindowId, WindowState>,
    /// Output of panes not listed yet (they appear before `list-panes` answers).
    early_output: HashMap<PaneId, Vec<u8>>,
    /// Panes with a seed line in flight -> the reason for another seed due after it.
    seeding: HashMap<PaneId, Option<ResyncReason>>,
    session_name: RawBytes,
    stats: ConnectionStats,
    first_sight: ResyncReason,
    exit_reason: Option<Option<String>>,
    /// tmux has confirmed the attach (`%session-changed`). Before that, commands can run
    /// before the client exists and fail with "no current client" (tmux up to 3.3 reads
    /// input while the attach command is still pending), so they wait in `deferred`.
    attached: bool,
    deferred: Vec<(Line, Purpose)>,
    /// The status side of each pane.
    agents: BTreeMap<PaneId, PaneAgent>,
    /// The `(status, provider)` last written to each pane's options.
    published: BTreeMap<PaneId, (Option<Status>, Option<Arc<str>>)>,
    /// The provider rules in force.
    providers: watch::Receiver<Arc<ProviderSet>>,
    /// Panes on the pipe transport.
    pipes: HashMap<PaneId, pipes::PanePipe>,
    /// Generation of the last pipe started.
    next_pipe: u64,
    /// The connection's own request channel, for its pipe readers.
    self_requests: mpsc::WeakSender<Request>,
    /// Cancelled when the connection ends (its pipe readers hold child tokens).
    cancel: CancellationToken,
    /// Questions about the programs of panes that may have started an agent.
    program_checks: HashMap<PaneId, programs::ProgramCheck>,
    /// When a connection started on pipes after failures moves its panes back to control.
    recover_at: Option<Instant>,
    /// Set once the first `list-panes` of the session has completed (see
    /// [`ConnectionHandle::is_synced`]).
    synced: watch::Sender<bool>,
}

impl Connection {
    /// The first lines: flow control and the state of the session.
    fn start(&mut self) {
        self.recover_at = self.config.failover.map(|after| Instant::now() + after);
        if self.config.pause_after > 0 {
            let command = commands::pause_after(self.config.pause_after);
            self.send(Line::new(command), Purpose::Setup);
        }
        self.send(Line::new(query::version()), Purpose::Version);
        self.send(
            Line::new(query::list_windows(self.session)),
            Purpose::Windows,
        );
        let reason = self.first_sight;
        self.send(
            Line::new(query::list_panes(Target::Session(self.session))),
            Purpose::Panes(reason),
        );
    }

    /// The session's panes are known: requests waiting for them go on.
    fn mark_synced(&mut self) {
        self.synced
            .send_if_modified(|synced| !std::mem::replace(synced, true));
    }

    fn send(&mut self, line: Line, purpose: Purpose) {
        if !self.attached {
            self.deferred.push((line, purpose));
            return;
        }
        let first = self.next_tag;
        let expected = line.expected(first);
        self.next_tag += expected.len() as u64;
        for (index, expect) in expected.iter().enumerate() {
            self.tag_lines.insert(expect.tag, (first, index));
        }
        self.decoder.expect_line(expected.iter().copied());
        let bytes = line.to_bytes();
        self.stats.commands += expected.len() as u64;
        self.pending.insert(
            first,
            PendingLine {
                purpose,
                text: String::from_utf8_lossy(&bytes[..bytes.len().saturating_sub(1)]).into_owned(),
                replies: vec![None; expected.len()],
                received: 0,
                deadline: Instant::now() + self.config.command_timeout,
            },
        );
        // A closed writer means the client is gone; the read side notices and ends the task.
        let _ = self.lines.send(bytes);
    }

    async fn run(
        &mut self,
        stdout: &mut tokio::process::ChildStdout,
        mut requests: mpsc::Receiver<Request>,
        cancel: &CancellationToken,
    ) -> EndReason {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut ticker = tokio::time::interval(Duration::from_millis(200));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut next_watchdog = Instant::now() + self.config.watchdog_interval;
        loop {
            let now = Instant::now();
            let status_due = match (self.next_status_due(now), self.next_program_check(now)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let status_timer = async {
                match status_due {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = cancel.cancelled() => return EndReason::Cancelled,
                () = status_timer => {
                    let now = Instant::now();
                    self.evaluate_due(now);
                    self.program_checks_due(now);
                }
                Ok(()) = self.providers.changed() => self.providers_reloaded(Instant::now()),
                read = stdout.read(&mut buffer) => match read {
                    Ok(0) => {
                        let mut batch = std::mem::take(&mut self.batch);
                        self.decoder.finish_to(&mut batch);
                        self.handle(&mut batch);
                        return match self.exit_reason.take() {
                            Some(reason) => EndReason::Exit(reason),
                            None => EndReason::Eof,
                        };
                    }
                    Ok(n) => {
                        let mut batch = std::mem::take(&mut self.batch);
                        self.decoder.feed_to(&buffer[..n], &mut batch);
                        self.handle(&mut batch);
                        self.batch = batch;
                    }
                    Err(error) => return EndReason::Failed(format!("reading the control client: {error}")),
                },
                Some(request) = requests.recv() => self.request(request),
                _ = ticker.tick() => {
                    self.expire();
                    if self.recover_at.is_some_and(|at| Instant::now() >= at) {
                        self.recovered();
                    }
                    if Instant::now() >= next_watchdog {
                        self.watchdog();
                        next_watchdog = Instant::now() + self.config.watchdog_interval;
                    }
                }
            }
        }
    }

    /// Handles what a read decoded, in stream order, and empties the batch.
    fn handle(&mut self, batch: &mut Batch) {
        for item in batch.items.drain(..) {
            match item {
                Item::Output { pane, range } => self.output(pane, &batch.data[range]),
                Item::Event(event) => self.event(event),
            }
        }
        batch.clear();
    }

    fn event(&mut self, event: Event) {
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
            None if reply.is_solicited() => {
                warn!(session = %self.session, "reply to a command nobody sent")
            }
            None => {} // hooks and the attach command
        }
    }

    fn record(&mut self, tag: u64, reply: Option<Reply>) {
        let Some((first, index)) = self.tag_lines.remove(&tag) else {
            return;
        };
        let Some(line) = self.pending.get_mut(&first) else {
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
            && let Some(line) = self.pending.remove(&first)
        {
            self.complete(line.purpose, line.replies);
        }
    }

    fn complete(&mut self, purpose: Purpose, replies: Vec<Option<Reply>>) {
        match purpose {
            Purpose::External(sender) => {
                let _ = sender.send(Ok(replies));
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
                Some(Ok(rows)) => {
                    for row in rows {
                        let window = self.windows.entry(row.id).or_insert_with(|| WindowState {
                            index: row.index,
                            name: row.name.clone(),
                            panes: BTreeSet::new(),
                        });
                        window.index = row.index;
                        window.name = row.name;
                    }
                }
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
            Purpose::Check(pane) => self.checked(pane, &replies),
            Purpose::LastResponse(pane, reply) => self.last_response_read(pane, &replies, reply),
            Purpose::PipeStart(pane, generation) => self.pipe_started(pane, generation, &replies),
            Purpose::PipeCheck(pane) => self.pipe_checked(pane, &replies),
            Purpose::ProgramCheck(pane) => self.program_checked(pane, &replies),
        }
    }

    fn expire(&mut self) {
        let now = Instant::now();
        let expired: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, line)| line.deadline <= now)
            .map(|(first, _)| *first)
            .collect();
        for first in expired {
            let Some(line) = self.pending.remove(&first) else {
                continue;
            };
            self.stats.timeouts += 1;
            let error = ConnectionError::Timeout {
                command: line.text.clone(),
                after: self.config.command_timeout,
            };
            warn!(session = %self.session, %error);
            match line.purpose {
                Purpose::External(sender) => {
                    let _ = sender.send(Err(error));
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
                Purpose::ProgramCheck(pane) => self.program_checked(pane, &[]),
                _ => {}
            }
        }
    }

    fn add_pane(&mut self, row: PaneRow, reason: ResyncReason) {
        let id = row.id;
        if let Some(window) = self.windows.get_mut(&row.window) {
            window.panes.insert(id);
        } else {
            self.windows.insert(
                row.window,
                WindowState {
                    index: 0,
                    name: RawBytes::default(),
                    panes: BTreeSet::from([id]),
                },
            );
            // Its index and name come with the next list-windows.
            self.send(
                Line::new(query::list_windows(self.session)),
                Purpose::Windows,
            );
        }
        if self.panes.contains_key(&id) {
            return;
        }
        self.bus.publish(EventKind::PaneAdded {
            pane: id,
            session: self.session,
            window: row.window,
            width: row.width,
            height: row.height,
        });
        let mut mirror = PaneMirror::new(row, self.config.ring_bytes);
        if let Some(early) = self.early_output.remove(&id) {
            let seq = mirror.output(&early);
            self.bus.publish(EventKind::Output {
                pane: id,
                seq,
                len: early.len() as u64,
            });
        }
        self.panes.insert(id, mirror);
        self.detect_provider(id, Instant::now());
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
            self.bus.publish(EventKind::Transport {
                pane: id,
                transport: Transport::Control,
                reason: format!("cannot start the pipe: {error}"),
            });
        }
    }

    fn remove_pane(&mut self, pane: PaneId) {
        // Dropping the pipe stops its reader and removes its FIFO; tmux closed its writer.
        self.pipes.remove(&pane);
        self.program_checks.remove(&pane);
        self.agents.remove(&pane);
        self.published.remove(&pane);
        if self.panes.remove(&pane).is_some() {
            self.seeding.remove(&pane);
            self.bus.publish(EventKind::PaneRemoved { pane });
        }
        self.early_output.remove(&pane);
    }

    /// Sends a seed line for a pane, unless one is in flight (then another follows it).
    fn seed(&mut self, pane: PaneId, reason: ResyncReason) {
        if let Some(again) = self.seeding.get_mut(&pane) {
            *again = Some(reason);
            return;
        }
        self.seeding.insert(pane, None);
        self.send(query::seed_line(pane), Purpose::Seed(pane, reason));
    }

    fn seeded(&mut self, pane: PaneId, reason: ResyncReason, replies: &[Option<Reply>]) {
        let again = self.seeding.remove(&pane).flatten();
        debug_assert_eq!(replies.len(), SEED_PARTS.len());
        let Some(mirror) = self.panes.get_mut(&pane) else {
            return;
        };
        match query::parse_seed(replies) {
            Ok(snapshot) => {
                let reason = match reason {
                    ResyncReason::Divergence => match mirror.confirm_divergence() {
                        Some(difference) => {
                            warn!(session = %self.session, %pane, %difference, "mirrored screen differed from tmux's; resynced");
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
                    self.bus.publish(EventKind::PaneResized {
                        pane,
                        width: snapshot.width,
                        height: snapshot.height,
                    });
                }
                self.bus.publish(EventKind::Resync { pane, reason });
                self.status_touch(pane, Instant::now());
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
    fn watchdog(&mut self) {
        let mut checks = Vec::new();
        let mut reseeds = Vec::new();
        for (id, mirror) in &mut self.panes {
            if self.seeding.contains_key(id) {
                continue;
            }
            match mirror.state() {
                SyncState::Live => {
                    if mirror.take_changed() {
                        checks.push(*id);
                    }
                }
                // A seed that failed (or never ran) is tried again.
                SyncState::Stale | SyncState::Unseeded => reseeds.push(*id),
            }
        }
        for pane in reseeds {
            self.seed(pane, ResyncReason::Retry);
        }
        for pane in checks {
            // Pipe panes have checks of their own, below (cross-checked ones are fed by
            // `%output` and checked here).
            if self.transport_of(pane) != Transport::Pipe {
                self.send(query::check_line(pane), Purpose::Check(pane));
            }
        }
        self.pipe_watchdog();
    }

    fn checked(&mut self, pane: PaneId, replies: &[Option<Reply>]) {
        let Ok(shown) = query::parse_check(replies) else {
            return;
        };
        if self.seeding.contains_key(&pane) || self.died_unnoticed(pane, &shown) {
            return;
        }
        let Some(mirror) = self.panes.get_mut(&pane) else {
            return;
        };
        // The resync confirms the divergence, unless tmux pauses the pane first.
        if mirror.diverges_from(&shown) {
            self.seed(pane, ResyncReason::Divergence);
        }
    }

    /// Whether a check found the pane dead before the pane poll said so. With
    /// `remain-on-exit` tmux then draws its own message into the pane, which no `%output`
    /// carries: that is no divergence. The pane's process is asked for at once, and its death
    /// reseeds it.
    fn died_unnoticed(&mut self, pane: PaneId, shown: &query::ShownScreen) -> bool {
        let unnoticed = shown.dead && self.panes.get(&pane).is_some_and(|m| !m.row.dead);
        if unnoticed {
            self.ask_program_now(pane);
        }
        unnoticed
    }

    fn notification(&mut self, notification: Notification) {
        match notification {
            Notification::Output { pane, data }
            | Notification::ExtendedOutput { pane, data, .. } => self.output(pane, &data),
            // A pipe pane's pause is the daemon's own, made as it turned `%output` off.
            Notification::Pause { pane } if self.transport_of(pane) == Transport::Pipe => {}
            Notification::Pause { pane } => {
                if let Some(mirror) = self.panes.get_mut(&pane) {
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
                if let Some(state) = self.windows.remove(&window) {
                    for pane in state.panes {
                        self.remove_pane(pane);
                    }
                }
            }
            Notification::WindowPaneChanged { window, pane } => {
                for mirror in self.panes.values_mut().filter(|m| m.window() == window) {
                    mirror.row.active = mirror.id() == pane;
                }
                self.bus.publish(EventKind::ViewChanged {});
            }
            Notification::SessionWindowChanged { .. }
            | Notification::ClientSessionChanged { .. }
            | Notification::ClientDetached { .. } => self.bus.publish(EventKind::ViewChanged {}),
            Notification::WindowRenamed { window, name } => {
                if let Some(state) = self.windows.get_mut(&window) {
                    state.name = name.clone();
                    self.bus.publish(EventKind::WindowRenamed { window, name });
                }
            }
            Notification::SessionChanged { session, name }
            | Notification::SessionRenamed { session, name }
                if session == self.session =>
            {
                self.session_name = name;
                if !self.attached {
                    self.attached = true;
                    for (line, purpose) in std::mem::take(&mut self.deferred) {
                        self.send(line, purpose);
                    }
                }
            }
            Notification::SessionsChanged => {
                let _ = self.upcalls.send(Upcall::SessionsChanged);
            }
            Notification::Exit { reason } => {
                self.exit_reason = Some(reason.map(|r| r.to_string()));
            }
            _ => {}
        }
    }

    /// `%output` from the control client; ignored for panes on the pipe transport (a moment of
    /// both while switching, before `%output` is off).
    fn output(&mut self, pane: PaneId, data: &[u8]) {
        // No map lookup for the usual case of no pipes at all.
        if self.pipes.is_empty() || self.pipe_control_output(pane, data) {
            self.deliver(pane, data);
        }
    }

    /// A pane's output, from either transport, into its mirror and the event stream.
    fn deliver(&mut self, pane: PaneId, data: &[u8]) {
        match self.panes.get_mut(&pane) {
            Some(mirror) => {
                let seq = mirror.output(data);
                self.bus.publish(EventKind::Output {
                    pane,
                    seq,
                    len: data.len() as u64,
                });
                let now = Instant::now();
                if self.status_output(pane, data, now) {
                    self.program_output(pane, now);
                }
            }
            None => {
                let early = self.early_output.entry(pane).or_default();
                early.extend_from_slice(data);
                let excess = early.len().saturating_sub(self.config.ring_bytes);
                early.drain(..excess);
            }
        }
    }

    fn layout(
        &mut self,
        window: WindowId,
        layout: &crate::control::Layout,
        visible: Option<&crate::control::Layout>,
    ) {
        let geometries = layout.panes();
        let present: BTreeSet<PaneId> = geometries.iter().map(|g| g.pane).collect();
        let state = self.windows.entry(window).or_insert_with(|| WindowState {
            index: 0,
            name: RawBytes::default(),
            panes: BTreeSet::new(),
        });
        let gone: Vec<PaneId> = state.panes.difference(&present).copied().collect();
        let new: Vec<PaneId> = present.difference(&state.panes).copied().collect();
        state.panes = present;
        for pane in gone {
            self.remove_pane(pane);
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
        for (pane, (width, height)) in sizes {
            if let Some(mirror) = self.panes.get_mut(&pane)
                && mirror.resize(width, height)
            {
                resized.push((pane, width, height));
            }
        }
        for (pane, width, height) in resized {
            self.bus.publish(EventKind::PaneResized {
                pane,
                width,
                height,
            });
            self.seed(pane, ResyncReason::Resize);
        }
        if new.iter().any(|pane| !self.panes.contains_key(pane)) {
            self.send(
                Line::new(query::list_panes(Target::Window(window))),
                Purpose::Panes(ResyncReason::Attach),
            );
        }
    }

    /// What tmux reports of a pane now (the daemon's pane poll, or a question about its
    /// program).
    fn pane_update(&mut self, pane: PaneId, update: query::PaneUpdate) {
        let Some(mirror) = self.panes.get_mut(&pane) else {
            return;
        };
        let change = mirror.update(update);
        let mirror_dead = mirror.row.dead;
        if change.title {
            self.bus.publish(EventKind::PaneRenamed {
                pane,
                title: mirror.row.title.clone(),
            });
        }
        if change.command || change.dead {
            self.bus.publish(EventKind::PaneCommand {
                pane,
                command: mirror.row.command.clone(),
                dead: mirror.row.dead,
            });
        }
        let now = Instant::now();
        if change.respawned {
            self.status_respawned(pane, now);
            self.seed(pane, ResyncReason::Respawn);
        } else if change.dead && mirror_dead {
            // With `remain-on-exit`, tmux writes its message into the dead pane itself.
            self.seed(pane, ResyncReason::Died);
        }
        if change.command || change.dead || change.provider || change.respawned {
            self.detect_provider(pane, now);
        } else if change.title {
            self.status_title(pane, now);
        }
    }

    fn request(&mut self, request: Request) {
        match request {
            Request::Command { line, reply } => self.send(line, Purpose::External(reply)),
            Request::Explain { pane, reply } => {
                let _ = reply.send(self.explain(pane));
            }
            Request::LastResponse { pane, reply } => self.last_response(pane, reply),
            Request::InputText { pane, reply } => {
                let _ = reply.send(self.input_text(pane));
            }
            Request::SetTransport {
                pane,
                transport,
                reply,
            } => {
                let _ = reply.send(self.set_transport(pane, transport));
            }
            Request::SessionTransport { transport, reply } => {
                let _ = reply.send(self.set_session_transport(transport));
            }
            Request::PipeOutput {
                pane,
                generation,
                data,
            } => self.pipe_output(pane, generation, &data),
            Request::PipeFailed {
                pane,
                generation,
                error,
            } => self.pipe_failed(pane, generation, error),
            Request::PaneUpdates { updates } => {
                for (pane, update) in updates {
                    self.pane_update(pane, update);
                }
            }
            Request::Hook {
                pane,
                report,
                reply,
            } => {
                let _ = reply.send(self.hook(pane, report));
            }
            Request::InputSent { pane } => {
                if let Some(agent) = self.agents.get_mut(&pane) {
                    agent.input_sent();
                }
            }
            Request::SetProvider {
                pane,
                provider,
                reply,
            } => {
                let _ = reply.send(self.set_provider(pane, provider, Instant::now()));
            }
            Request::Panes { reply } => {
                let _ = reply.send(self.summaries());
            }
            Request::Screen { pane, ansi, reply } => {
                let dump = self.panes.get(&pane).map(|mirror| {
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
                });
                let _ = reply.send(dump);
            }
            Request::Output {
                pane,
                from,
                limit,
                reply,
            } => {
                let _ = reply.send(self.panes.get(&pane).map(|m| m.read_output(from, limit)));
            }
            Request::Stats { reply } => {
                let mut stats = self.stats.clone();
                stats.attached = self.attached;
                stats.panes = self.panes.len();
                stats.pipe_panes = self.pipes.len();
                for mirror in self.panes.values() {
                    let c = mirror.counters;
                    stats.totals.bytes += c.bytes;
                    stats.totals.chunks += c.chunks;
                    stats.totals.resyncs += c.resyncs;
                    stats.totals.pauses += c.pauses;
                    stats.totals.divergences += c.divergences;
                }
                let _ = reply.send(stats);
            }
        }
    }

    fn summaries(&self) -> Vec<PaneSummary> {
        let now = Instant::now();
        self.panes
            .values()
            .map(|mirror| {
                let agent = self.agents.get(&mirror.id());
                let window = self.windows.get(&mirror.window());
                PaneSummary {
                    pane: mirror.id(),
                    name: mirror.row.name.clone(),
                    session_id: self.session,
                    session: self.session_name.clone(),
                    window_id: mirror.window(),
                    window_index: window.map_or(0, |w| w.index),
                    window: window.map(|w| w.name.clone()).unwrap_or_default(),
                    index: mirror.row.index,
                    title: mirror.row.title.clone(),
                    command: mirror.row.command.clone(),
                    pid: mirror.row.pid,
                    width: mirror.row.width,
                    height: mirror.row.height,
                    dead: mirror.row.dead,
                    in_mode: mirror.row.in_mode,
                    active: mirror.row.active,
                    alternate_screen: mirror.screen().alternate_screen(),
                    sync: mirror.state(),
                    output_seq: mirror.output_end(),
                    counters: mirror.counters,
                    provider: agent.and_then(|a| a.provider()).map(|p| p.id.to_string()),
                    provider_source: agent.and_then(PaneAgent::source),
                    status: agent.map_or(Status::Unknown, PaneAgent::status),
                    status_rule: agent.and_then(|a| a.rule()).map(|r| r.to_string()),
                    status_source: agent.map(PaneAgent::status_source).unwrap_or_default(),
                    status_settled: agent.is_none_or(PaneAgent::settled),
                    status_seconds: agent
                        .map_or(0.0, |a| now.duration_since(a.since()).as_secs_f64()),
                    seen: false,
                    transport: self.transport_of(mirror.id()),
                }
            })
            .collect()
    }
}
