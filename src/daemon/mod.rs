//! The daemon: a supervisor of control connections, the event bus and the API, wired together
//! and shut down through one cancellation token.

pub mod clients;
pub mod events;
pub mod notify;
pub mod pane_poll;
pub mod paths;
pub mod rules;
pub mod summary;
pub mod supervisor;

use std::fs::File;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::api::server::{ApiState, PeerCheckedListener};
use crate::tmux::{ConnectionConfig, ServerAddress};
use events::EventBus;
use paths::RuntimePaths;
use supervisor::{Supervisor, SupervisorOptions};

/// Everything a daemon needs to know.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// The tmux server to mirror.
    pub address: ServerAddress,
    /// Where its files go.
    pub paths: RuntimePaths,
    /// Per-connection settings.
    pub connection: ConnectionConfig,
    /// End when the tmux server ends (what the tmux plugin wants) instead of waiting for it.
    pub exit_with_server: bool,
    /// The user's provider rule files (`None`: built-in rules only).
    pub rules_dir: Option<std::path::PathBuf>,
    /// The inbox database.
    pub inbox: std::path::PathBuf,
    /// How messages are delivered.
    pub delivery: crate::inbox::delivery::DeliveryOptions,
    /// The optional TCP listener.
    pub tcp: Option<crate::api::tcp::TcpOptions>,
    /// Whether MCP clients may send text to panes without a recognised agent.
    pub mcp_allow_shell: bool,
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The runtime directory is unusable.
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    /// Another daemon serves the same tmux server.
    #[error("a panectl daemon is already running for the tmux server {server} (lock {lock})")]
    AlreadyRunning {
        /// The server.
        server: String,
        /// The lock file.
        lock: String,
    },
    /// The inbox database cannot be opened.
    #[error(transparent)]
    Inbox(#[from] crate::inbox::InboxError),
    /// The TCP listener cannot start.
    #[error(transparent)]
    Tcp(#[from] crate::api::tcp::TcpError),
    /// A file could not be created.
    #[error("{what} {path}: {source}")]
    Io {
        /// What the file is for.
        what: &'static str,
        /// Its path.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// Holds the single-instance lock for as long as the daemon runs.
pub struct InstanceLock {
    _lock: Flock<File>,
}

/// Takes the lock that allows one daemon per tmux server.
pub fn lock(options: &DaemonOptions) -> Result<InstanceLock, DaemonError> {
    options.paths.ensure_dir()?;
    let path = options.paths.lock();
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| DaemonError::Io {
            what: "lock file",
            path: path.display().to_string(),
            source,
        })?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| {
        DaemonError::AlreadyRunning {
            server: options.address.to_string(),
            lock: path.display().to_string(),
        }
    })?;
    Ok(InstanceLock { _lock: lock })
}

/// Runs the daemon until `cancel` fires (or the server ends with `exit_with_server`).
/// `ready` is called once the API socket accepts connections.
pub async fn run(
    options: DaemonOptions,
    _lock: &InstanceLock,
    cancel: CancellationToken,
    ready: impl FnOnce(),
) -> Result<(), DaemonError> {
    let started = Instant::now();
    let leftovers = clients::end_leftovers(
        &options.paths.clients(),
        &options.address,
        &options.connection.attach_dir,
    );
    clients::init(options.paths.clients());
    // Relay sockets a daemon killed mid-attach left behind (this one holds the lock).
    crate::tmux::attach::remove_stale_sockets(&options.connection.attach_dir);
    let socket = options.paths.socket();
    let listener = PeerCheckedListener::bind(&socket).map_err(|source| DaemonError::Io {
        what: "API socket",
        path: socket.display().to_string(),
        source,
    })?;
    let tcp = match &options.tcp {
        Some(tcp) => {
            let token = crate::api::tcp::load_or_create_token(&tcp.token_file)?;
            let listener = crate::api::tcp::bind(tcp).await?;
            Some((listener, token))
        }
        None => None,
    };
    let bus = EventBus::new();
    let (inbox, inbox_thread) = crate::inbox::InboxHandle::open(&options.inbox, Some(bus.clone()))?;
    let tracker = TaskTracker::new();
    let rules = rules::start(options.rules_dir.clone(), cancel.clone(), &tracker);
    let (supervisor, connections, status) = Supervisor::new(
        SupervisorOptions {
            address: options.address.clone(),
            config: options.connection.clone(),
            exit_with_server: options.exit_with_server,
            leftover_clients_ended: leftovers,
            providers: rules.providers.clone(),
        },
        bus.clone(),
        tracker.clone(),
        cancel.clone(),
    );
    tracker.spawn(notify::run(
        bus.clone(),
        connections.clone(),
        cancel.clone(),
    ));
    tracker.spawn(pane_poll::run(connections.clone(), cancel.clone()));
    let (seen, seen_panes) = tokio::sync::watch::channel(std::collections::BTreeSet::new());
    tracker.spawn(summary::run(
        bus.clone(),
        connections.clone(),
        seen,
        cancel.clone(),
    ));
    tracker.spawn(crate::inbox::delivery::run(
        inbox.clone(),
        connections.clone(),
        rules.providers.clone(),
        bus.clone(),
        options.delivery.clone(),
        cancel.clone(),
    ));
    let api_state = ApiState {
        inbox,
        connections,
        status,
        bus,
        address: options.address.clone(),
        api_socket: socket.display().to_string(),
        started,
        shutdown: cancel.clone(),
        rules,
        mcp_allow_shell: options.mcp_allow_shell,
        seen: seen_panes,
    };
    tracker.spawn(crate::api::handoff::resume(api_state.clone()));
    if let Some((listener, token)) = tcp {
        let address = listener.local_addr().ok();
        let tcp_state = api_state.clone();
        let tcp_cancel = cancel.clone();
        info!(address = ?address, "API also on TCP (bearer token required)");
        tracker.spawn(async move {
            if let Err(error) = crate::api::tcp::serve(listener, token, tcp_state, tcp_cancel).await
            {
                warn!(%error, "the TCP API listener stopped");
            }
        });
    }
    let api_cancel = cancel.clone();
    let api = tracker.spawn(async move {
        if let Err(error) = crate::api::server::serve(listener, api_state, api_cancel).await {
            warn!(%error, "the API server stopped");
        }
    });
    info!(server = %options.address, api = %socket.display(), "panectl daemon started");
    ready();
    supervisor.run().await;
    cancel.cancel();
    tracker.close();
    if tokio::time::timeout(Duration::from_secs(5), tracker.wait())
        .await
        .is_err()
    {
        warn!("some tasks did not finish within 5 s of shutdown");
    }
    drop(api);
    // The inbox thread ends when the last handle is dropped. It is not waited for: every job is
    // one SQLite transaction, so the process may end at any point without a torn state.
    drop(inbox_thread);
    let _ = std::fs::remove_file(&socket);
    info!("panectl daemon stopped");
    Ok(())
}
