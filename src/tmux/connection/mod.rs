//! One control connection: a `tmux -C attach` client for one session, and the mirror of every
//! pane in it.
//!
//! The connection is the IO shell around a [`SessionCore`]: a task that owns the child process,
//! waits on its output, the requests, the timers and cancellation, feeds the core with an
//! explicit `now`, and carries out the core's actions (writing lines, publishing events,
//! upcalls, replies; the pipe transport's FIFOs and `/proc` reads through its host, `host.rs`).
//! Everything the connection decides is in the core. Other tasks talk to it through a
//! [`ConnectionHandle`].

mod divergences;
mod driver;
mod pane_io;

pub use crate::session::{
    AutoFailover, ConnectionConfig, ConnectionError, ConnectionStats, Explanation, InputView,
    PROVIDER_OPTION, PaneSummary, ProviderError, RunError, STATUS_OPTION, ScreenDump, SignalReport,
    Upcall,
};

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::attach;
use crate::address::ServerAddress;
use crate::control::Reply;
use crate::control::command::Line;
use crate::events::{EventBus, ResyncReason};
use crate::ids::{PaneId, SessionId};
use crate::mirror::RingRead;
use crate::pipe::Transport;
use crate::query;
use crate::session::{SessionCore, TransportError};
use crate::status::providers::ProviderSet;

/// What the handle (and the pipe readers) ask of the connection task.
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
        sender: Vec<u32>,
        reply: oneshot::Sender<Option<crate::status::signal::HookAnswer>>,
    },
    SetTransport {
        pane: PaneId,
        transport: Transport,
        reply: oneshot::Sender<Result<(), TransportError>>,
    },
    SessionTransport {
        transport: Transport,
        reply: oneshot::Sender<Vec<(PaneId, TransportError)>>,
    },
    /// Bytes a pane's pipe reader read (from the reader task, not a handle).
    PipeOutput {
        pane: PaneId,
        generation: u64,
        data: Vec<u8>,
    },
    /// What the daemon's pane poll found of the session's panes.
    PaneStates {
        updates: Vec<(PaneId, query::PaneState)>,
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

    /// The text in a pane's input (see [`SessionCore::input_view`]); `None` if the pane is not
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
    /// this session); `sender` is the sending process and its ancestors, nearest first.
    pub async fn hook(
        &self,
        pane: PaneId,
        report: crate::status::signal::HookReport,
        sender: Vec<u32>,
    ) -> Result<Option<crate::status::signal::HookAnswer>, ConnectionError> {
        self.ask(|reply| Request::Hook {
            pane,
            report,
            sender,
            reply,
        })
        .await
    }

    /// Hands over what the daemon's pane poll found of this session's panes (titles,
    /// programs, pids, dead panes, panectl's pane options).
    pub async fn pane_updates(
        &self,
        updates: Vec<(PaneId, query::PaneState)>,
    ) -> Result<(), ConnectionError> {
        self.requests
            .send(Request::PaneStates { updates })
            .await
            .map_err(|_| ConnectionError::Closed(self.session))
    }

    /// Moves a pane's output to another transport (`Err` says why it cannot).
    pub async fn set_transport(
        &self,
        pane: PaneId,
        transport: Transport,
    ) -> Result<Result<(), TransportError>, ConnectionError> {
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
    ) -> Result<Vec<(PaneId, TransportError)>, ConnectionError> {
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
    /// Where the control clients started are recorded, for a later daemon to end leftovers.
    pub clients: crate::clients::ClientRecord,
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
    let tasks = tracker.clone();
    let task = tracker.spawn(async move {
        let channels = Channels {
            requests: receiver,
            self_requests,
            synced: synced_sender,
        };
        let reason = run(context, session, first_sight, channels, cancel, tasks).await;
        debug!(%session, %reason, "control connection ended");
        reason
    });
    (handle, task)
}

/// The ends of a connection's channels that its task keeps.
struct Channels {
    /// Requests from handles.
    requests: mpsc::Receiver<Request>,
    /// The connection's own request channel, for its pipe readers.
    self_requests: mpsc::WeakSender<Request>,
    /// Set once the session's panes are known.
    synced: watch::Sender<bool>,
}

async fn run(
    context: ConnectionContext,
    session: SessionId,
    first_sight: ResyncReason,
    channels: Channels,
    cancel: CancellationToken,
    tasks: tokio_util::task::TaskTracker,
) -> EndReason {
    let Channels {
        requests,
        self_requests,
        synced,
    } = channels;
    let ConnectionContext {
        address,
        config,
        bus,
        upcalls,
        providers,
        clients,
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
        clients.remember(pid);
    }
    let (lines, line_receiver) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_lines(stdin, line_receiver));
    let pipes_cancel = cancel.child_token();
    let host = pane_io::ShellPaneIo::new(
        address.shared_host(),
        config.pipe_dir.clone(),
        self_requests,
        pipes_cancel.clone(),
        tasks,
    );
    let divergence_dir = config.divergence_dir.clone();
    let core = SessionCore::new(
        session,
        config,
        first_sight,
        providers.borrow().clone(),
        Box::new(host),
        Instant::now(),
    );
    let mut driver = driver::Driver::new(core, lines, bus, upcalls, providers, synced);
    driver.save_divergences_in(divergence_dir);
    let reason = driver.run(&mut stdout, requests, &cancel).await;
    if reason == EndReason::Cancelled {
        driver.shutdown();
    }
    pipes_cancel.cancel();
    drop(driver);
    // Dropping the line sender closes the client's stdin: tmux treats EOF as detach. Its
    // output is read to the end meanwhile, so that tmux can write what it still holds and let
    // the client go at once: a client whose output cannot be written stays in tmux, attached to
    // nothing, until it is killed.
    let _ = writer.await;
    drain(&mut stdout).await;
    end_child(&mut child, &clients).await;
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
async fn end_child(child: &mut Child, clients: &crate::clients::ClientRegistry) {
    let pid = child.id();
    if tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .is_err()
    {
        warn!(?pid, "tmux control client did not exit; killing it");
        let _ = child.kill().await;
    }
    if let Some(pid) = pid {
        clients.forget(pid);
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
