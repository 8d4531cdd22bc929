//! Keeps one control connection per session of the tmux server.
//!
//! The supervisor attaches to every session at start, to sessions created later (tmux says
//! `%sessions-changed`, then a `list-sessions` tells which), and drops connections of sessions
//! that closed. A connection that ends while its session lives is restarted with backoff and its
//! panes resynced. When the server itself goes away the supervisor waits for it to come back,
//! or, with `exit_with_server`, ends the daemon.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

use crate::control::command::Line;
use crate::events::{EventBus, EventKind, ResyncReason};
use crate::ids::SessionId;
use crate::pipe::Transport;
use crate::query::{self, SessionRow};
use crate::raw::RawBytes;
use crate::status::providers::ProviderSet;
use crate::tmux::connection::{self, ConnectionContext, EndReason, Upcall};
use crate::tmux::{ConnectionConfig, ConnectionHandle, Connections, ServerAddress, ServerStatus};

struct Entry {
    handle: ConnectionHandle,
    cancel: CancellationToken,
    started: Instant,
}

/// What a supervisor is set up with.
#[derive(Debug, Clone)]
pub struct SupervisorOptions {
    /// The tmux server.
    pub address: ServerAddress,
    /// Settings of every connection.
    pub config: ConnectionConfig,
    /// End the daemon when the server ends.
    pub exit_with_server: bool,
    /// Leftover control clients ended at start (reported in health).
    pub leftover_clients_ended: usize,
    /// The provider rules in force.
    pub providers: watch::Receiver<Arc<ProviderSet>>,
    /// Where the control clients started are recorded.
    pub clients: crate::clients::ClientRecord,
}

/// See the module documentation.
pub struct Supervisor {
    address: ServerAddress,
    context: ConnectionContext,
    exit_with_server: bool,
    bus: EventBus,
    tracker: TaskTracker,
    cancel: CancellationToken,
    entries: BTreeMap<SessionId, Entry>,
    backoff: BTreeMap<SessionId, Duration>,
    connections: watch::Sender<Connections>,
    status: watch::Sender<ServerStatus>,
    upcall_receiver: mpsc::UnboundedReceiver<Upcall>,
    restarts: mpsc::UnboundedSender<SessionId>,
    restart_receiver: mpsc::UnboundedReceiver<SessionId>,
    /// When each session's control client ended unexpectedly, recently (`--transport auto`).
    failures: BTreeMap<SessionId, VecDeque<Instant>>,
    /// Sessions whose control client kept failing: their connections start on pipes.
    on_pipes: BTreeSet<SessionId>,
    /// Whether the tmux server answered when last looked at; the one value of it that
    /// [`ServerStatus`] publishes and the wait for a server's return polls on.
    server_alive: bool,
}

/// How many times a remote host that does not answer is asked whether a session whose client
/// ended is still there, before it is taken for closed.
const REMOTE_CLOSE_CHECKS: u32 = 4;
/// The wait between those questions (the link's watch notices a lost link well within it).
const REMOTE_CLOSE_RETRY: Duration = Duration::from_millis(500);

/// What asking tmux for its sessions found.
enum Listing {
    /// The server answered with these sessions.
    Sessions(Vec<SessionRow>),
    /// No server answered.
    NoServer,
    /// An answer that does not parse (logged); nothing is changed on it.
    Unreadable,
}

impl Listing {
    fn parsed(parsed: Result<Vec<SessionRow>, query::QueryError>) -> Listing {
        match parsed {
            Ok(sessions) => Listing::Sessions(sessions),
            Err(error) => {
                warn!(%error, "cannot read tmux's list of sessions");
                Listing::Unreadable
            }
        }
    }
}

type Ended = std::pin::Pin<Box<dyn std::future::Future<Output = (SessionId, EndReason)> + Send>>;

const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The longest the daemon says it is `starting`: a session whose panes are still unknown by
/// then (a control client that never attaches) no longer holds the start up.
const STARTING_BOUND: Duration = Duration::from_secs(30);
/// The longest the start waits for the connection to a remote host (ssh's own connect
/// timeout is 10 s; authentication can add to it).
const LINK_BOUND: Duration = Duration::from_secs(30);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

impl Supervisor {
    /// A supervisor; nothing runs until [`Supervisor::run`].
    pub fn new(
        options: SupervisorOptions,
        bus: EventBus,
        tracker: TaskTracker,
        cancel: CancellationToken,
    ) -> (
        Supervisor,
        watch::Receiver<Connections>,
        watch::Receiver<ServerStatus>,
    ) {
        let SupervisorOptions {
            address,
            config,
            exit_with_server,
            leftover_clients_ended,
            providers,
            clients,
        } = options;
        let (connections, connections_receiver) = watch::channel(Arc::new(BTreeMap::new()));
        let (status, status_receiver) = watch::channel(ServerStatus {
            leftover_clients_ended,
            starting: true,
            ..ServerStatus::default()
        });
        let (upcalls, upcall_receiver) = mpsc::unbounded_channel();
        let (restarts, restart_receiver) = mpsc::unbounded_channel();
        let context = ConnectionContext {
            address: address.clone(),
            config,
            bus: bus.clone(),
            upcalls,
            providers,
            clients,
        };
        let supervisor = Supervisor {
            address,
            context,
            exit_with_server,
            bus,
            tracker,
            cancel,
            entries: BTreeMap::new(),
            backoff: BTreeMap::new(),
            failures: BTreeMap::new(),
            on_pipes: BTreeSet::new(),
            server_alive: false,
            connections,
            status,
            upcall_receiver,
            restarts,
            restart_receiver,
        };
        (supervisor, connections_receiver, status_receiver)
    }

    /// Runs until cancelled, or until the server ends with `exit_with_server`.
    pub async fn run(mut self) {
        let mut ended: FuturesUnordered<Ended> = FuturesUnordered::new();
        // A server on another host: its connection is being made (`daemon::link`); until it
        // is up or has failed, whether the server runs is not known yet.
        let link_deadline = tokio::time::Instant::now() + LINK_BOUND;
        while !self.address.host().link_settled() && tokio::time::Instant::now() < link_deadline {
            tokio::select! {
                () = self.cancel.cancelled() => return,
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
        self.server_alive = self.address.is_alive();
        if self.server_alive {
            self.sync(&mut ended, ResyncReason::Attach).await;
        } else if self.exit_with_server && self.address.host().reachable() {
            warn!(server = %self.address, "no tmux server is running; exiting");
            self.cancel.cancel();
            return;
        } else {
            info!(server = %self.address, "waiting for a tmux server");
        }
        self.publish_status();
        // The start is over once every session found now has had its first sync.
        let first: Vec<ConnectionHandle> =
            self.entries.values().map(|e| e.handle.clone()).collect();
        let mut first_syncs = std::pin::pin!(async move {
            let all = futures::future::join_all(first.iter().map(ConnectionHandle::first_sync));
            if tokio::time::timeout(STARTING_BOUND, all).await.is_err() {
                warn!(bound = ?STARTING_BOUND, "some sessions' panes are still unknown; start-up ends anyway");
            }
            first.len()
        });
        let mut starting = true;
        let mut poll = tokio::time::interval(Duration::from_millis(500));
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = self.cancel.cancelled() => break,
                sessions = &mut first_syncs, if starting => {
                    starting = false;
                    info!(sessions, "every session's panes are known");
                    self.status.send_modify(|status| status.starting = false);
                }
                Some(upcall) = self.upcall_receiver.recv() => match upcall {
                    Upcall::SessionsChanged => self.sync(&mut ended, ResyncReason::Attach).await,
                    Upcall::ControlRecovered(session) => {
                        self.on_pipes.remove(&session);
                        self.failures.remove(&session);
                    }
                },
                Some((session, reason)) = ended.next(), if !ended.is_empty() => {
                    self.ended(session, reason).await;
                    // A server on its way out still accepts connections until its last
                    // client has gone (an attached terminal can take its time): with no
                    // session left, only a server that answers is alive.
                    self.server_alive = if self.entries.is_empty() {
                        self.address.is_alive()
                            && matches!(self.list_sessions().await, Listing::Sessions(_))
                    } else {
                        self.address.is_alive()
                    };
                    if !self.server_alive && self.entries.is_empty() && self.server_gone() {
                        break;
                    }
                    self.publish_status();
                }
                Some(session) = self.restart_receiver.recv() => {
                    if !self.entries.contains_key(&session) && self.address.is_alive() {
                        self.sync(&mut ended, ResyncReason::Reconnect).await;
                    }
                }
                // A server without sessions (one that is reading its config as it starts,
                // where the plugin starts the daemon) has no control client to say when a
                // session appears: it is polled too, until the first session is attached.
                _ = poll.tick(), if !self.server_alive || self.entries.is_empty() => {
                    if self.address.is_alive() {
                        let was_alive = self.server_alive;
                        self.sync(&mut ended, ResyncReason::Attach).await;
                        if self.server_alive && !was_alive {
                            info!(server = %self.address, "tmux server is back");
                        }
                    } else if self.server_alive && self.entries.is_empty() {
                        // It went before it had a session (killed while it read its config):
                        // no connection ends to say so.
                        self.server_alive = false;
                        if self.server_gone() {
                            break;
                        }
                        self.publish_status();
                    }
                }
            }
        }
        for entry in self.entries.values() {
            entry.cancel.cancel();
        }
        // Let every connection close its client and reap it.
        while tokio::time::timeout(Duration::from_secs(3), ended.next())
            .await
            .is_ok_and(|next| next.is_some())
        {}
    }

    /// The server went and no session is left: with `exit_with_server` (and a host that
    /// answers, so the server is known to be gone) the daemon ends, which `true` says; else it
    /// waits for the server to come back.
    fn server_gone(&self) -> bool {
        if self.exit_with_server && self.address.host().reachable() {
            info!(server = %self.address, "the tmux server is gone; exiting");
            self.cancel.cancel();
            return true;
        }
        info!(server = %self.address, "the tmux server is gone; waiting for it");
        false
    }

    fn publish_status(&self) {
        self.status.send_modify(|status| {
            status.server_alive = self.server_alive;
            status.sessions = self.entries.len();
        });
        let handles: BTreeMap<SessionId, ConnectionHandle> = self
            .entries
            .iter()
            .map(|(id, entry)| (*id, entry.handle.clone()))
            .collect();
        self.connections.send_replace(Arc::new(handles));
    }

    /// The sessions tmux has now: through a live connection if there is one (no process
    /// started), else with a one-shot `tmux list-sessions`.
    async fn list_sessions(&self) -> Listing {
        for entry in self.entries.values() {
            if let Ok(replies) = entry
                .handle
                .command(Line::new(query::list_sessions()))
                .await
                && let Some(Some(reply)) = replies.first()
                && reply.success
            {
                return Listing::parsed(query::parse_sessions(&reply.body));
            }
        }
        match self
            .address
            .run(&["list-sessions", "-F", query::sessions_format()])
            .await
        {
            Ok(lines) => Listing::parsed(query::parse_sessions(&lines)),
            Err(error) => {
                debug!(%error, "cannot list sessions");
                // No server, one on its way out, or no sessions (which ends a server).
                Listing::NoServer
            }
        }
    }

    /// Attaches to sessions without a connection and drops connections of closed sessions.
    async fn sync(&mut self, ended: &mut FuturesUnordered<Ended>, reason: ResyncReason) {
        let sessions = match self.list_sessions().await {
            Listing::Sessions(sessions) => sessions,
            // Its connections end by themselves if the server went; none is cut here.
            Listing::NoServer => {
                self.server_alive = false;
                self.publish_status();
                return;
            }
            Listing::Unreadable => return,
        };
        let live: BTreeMap<SessionId, RawBytes> =
            sessions.into_iter().map(|s| (s.id, s.name)).collect();
        let gone: Vec<SessionId> = self
            .entries
            .keys()
            .filter(|id| !live.contains_key(id))
            .copied()
            .collect();
        // Sessions waiting to be reconnected that closed meanwhile (while a remote host could
        // not be reached, say).
        let vanished: Vec<SessionId> = self
            .backoff
            .keys()
            .filter(|id| !live.contains_key(id) && !self.entries.contains_key(id))
            .copied()
            .collect();
        for session in vanished {
            self.backoff.remove(&session);
            info!(%session, "session closed while its connection was down");
            self.bus.publish(EventKind::SessionRemoved { session });
        }
        for session in gone {
            if let Some(entry) = self.entries.get(&session) {
                entry.cancel.cancel();
            }
        }
        for (session, name) in live {
            if self.entries.contains_key(&session) {
                continue;
            }
            let first_sight = if self.backoff.contains_key(&session) {
                ResyncReason::Reconnect
            } else {
                reason
            };
            let cancel = self.cancel.child_token();
            let mut context = self.context.clone();
            if let Some(auto) = self.context.config.auto
                && self.on_pipes.contains(&session)
            {
                context.config.transport = Transport::Pipe;
                context.config.failover = Some(auto.recover_after);
            }
            let (handle, task) = connection::spawn(
                &context,
                session,
                first_sight,
                cancel.clone(),
                &self.tracker,
            );
            ended.push(Box::pin(async move {
                let reason = task.await.unwrap_or_else(|error| {
                    EndReason::Failed(format!("connection task failed: {error}"))
                });
                (session, reason)
            }));
            self.entries.insert(
                session,
                Entry {
                    handle,
                    cancel,
                    started: Instant::now(),
                },
            );
            info!(%session, name = %name, "attached");
            self.bus.publish(EventKind::SessionAdded { session, name });
        }
        // The server answered. (A sync that a `%sessions-changed` of a server on its way out
        // started finds none, above, and does not mark it alive.)
        self.server_alive = true;
        self.publish_status();
    }

    /// `--transport auto`: a session whose control client ended unexpectedly `failures` times
    /// within `window` starts its next connections on pipes.
    fn count_failure(&mut self, session: SessionId) {
        let Some(auto) = self.context.config.auto else {
            return;
        };
        let now = Instant::now();
        let failures = self.failures.entry(session).or_default();
        failures.push_back(now);
        while failures
            .front()
            .is_some_and(|at| now.duration_since(*at) > auto.window)
        {
            failures.pop_front();
        }
        if failures.len() >= auto.failures as usize && self.on_pipes.insert(session) {
            warn!(
                %session,
                failures = failures.len(),
                window = ?auto.window,
                "the session's control client keeps failing; its panes move to the pipe transport"
            );
        }
    }

    /// Whether a session whose control client ended is still on the server. A host that
    /// cannot be reached (a remote server's link is down) says nothing about it: it is
    /// reconnected once the host answers again. A remote host that does not answer may have
    /// lost its link with this very client, before the link's own watch has seen it: it is
    /// asked again, a few times, before the session is taken for closed.
    async fn session_still_there(&self, session: SessionId) -> bool {
        let remote = self.address.host().link_socket().is_some();
        let mut attempts = 0;
        loop {
            if !self.address.host().reachable() {
                return true;
            }
            if self.address.is_alive() {
                match self.list_sessions().await {
                    Listing::Sessions(sessions) => {
                        return sessions.iter().any(|s| s.id == session);
                    }
                    Listing::Unreadable => return false,
                    Listing::NoServer => {}
                }
            }
            attempts += 1;
            if !remote || attempts >= REMOTE_CLOSE_CHECKS {
                return false;
            }
            tokio::time::sleep(REMOTE_CLOSE_RETRY).await;
        }
    }

    async fn ended(&mut self, session: SessionId, reason: EndReason) {
        let Some(entry) = self.entries.remove(&session) else {
            return;
        };
        self.publish_status();
        if reason == EndReason::Cancelled || self.cancel.is_cancelled() {
            self.backoff.remove(&session);
            self.bus.publish(EventKind::SessionRemoved { session });
            return;
        }
        // Did the session close, or only our client?
        let still_there = self.session_still_there(session).await;
        if !still_there {
            self.backoff.remove(&session);
            info!(%session, %reason, "session closed");
            self.bus.publish(EventKind::SessionRemoved { session });
            return;
        }
        warn!(%session, %reason, "control connection lost; reconnecting");
        self.count_failure(session);
        self.bus.publish(EventKind::ConnectionLost {
            session,
            reason: reason.to_string(),
        });
        self.status.send_modify(|status| status.reconnects += 1);
        let delay = match self.backoff.get(&session) {
            Some(previous) if entry.started.elapsed() < Duration::from_secs(10) => {
                (*previous * 2).min(MAX_BACKOFF)
            }
            _ => FIRST_BACKOFF,
        };
        self.backoff.insert(session, delay);
        let restarts = self.restarts.clone();
        let cancel = self.cancel.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = cancel.cancelled() => {}
                () = tokio::time::sleep(delay) => { let _ = restarts.send(session); }
            }
        });
    }
}
