//! The daemon: a supervisor of control connections, the event bus and the API, wired together
//! and shut down through one cancellation token.

pub mod api_socket;
pub mod discovery;
pub mod flow_guard;
pub mod link;
pub mod notify;
pub mod pane_poll;
pub mod peers;
pub mod publish;
pub mod rules;
pub mod summary;
pub mod supervisor;

use std::fs::File;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::api::server::PeerCheckedListener;
use crate::api::state::ApiState;
use crate::events::EventBus;
use crate::orchestration::Context;
use crate::paths::{self, RuntimePaths};
use crate::tmux::{ConnectionConfig, ServerAddress};
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
    /// The log file, if the log goes to one (reported in health).
    pub log_file: Option<std::path::PathBuf>,
    /// The command line the daemon was started with (reported in health, for a restart).
    pub command_line: Vec<String>,
    /// Whether MCP clients may send text to panes without a recognised agent.
    pub mcp_allow_shell: bool,
    /// Whether MCP clients may launch agents with arguments and environment of their own.
    pub mcp_allow_args: bool,
    /// Where launches make worktrees and how their branches are named.
    pub worktrees: crate::orchestration::worktree::WorktreeSettings,
    /// The local user's notification command (`--notify-command`): the only one run for a
    /// server on another host.
    pub notify_command: Option<String>,
    /// The local user's webhook (`--notify-webhook`): the only one used for a server on another
    /// host.
    pub notify_webhook: Option<notify::webhook::WebhookUrl>,
    /// How long one webhook POST may take.
    pub notify_webhook_timeout: Duration,
    /// Whether desktop notifications may be shown (`--notify-desktop`).
    pub notify_desktop: bool,
    /// The Unix socket's connection limits.
    pub api_limits: crate::api::listen::Limits,
    /// The TCP listener's connection limits.
    pub tcp_limits: crate::api::listen::Limits,
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
    /// Another daemon serves the same tmux server, and says where.
    #[error(
        "a daemon (pid {pid}) already serves this tmux server ({server}); its API is at {api} \
         (if that socket is missing, `kill -HUP {pid}` makes it again at once; \
         `panectl daemon stop` stops that daemon)"
    )]
    AlreadyServed {
        /// The server.
        server: String,
        /// The other daemon's pid.
        pid: u32,
        /// Its API socket.
        api: String,
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

/// Raises the soft limit on open files to the hard one: every API connection (up to twice the
/// cap while some wait for a place), control client and pipe holds descriptors, and a soft
/// limit of 1,024 would refuse connections long before the caps do.
fn raise_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => {
            if let Err(error) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
                warn!(%error, soft, hard, "cannot raise the limit on open files");
            }
        }
        Ok(_) => {}
        Err(error) => warn!(%error, "cannot read the limit on open files"),
    }
}

/// Holds the single-instance locks for as long as the daemon runs.
pub struct InstanceLock {
    runtime: (std::path::PathBuf, Flock<File>),
    server: Option<(std::path::PathBuf, Flock<File>)>,
}

impl InstanceLock {
    /// Writes the daemon's pid and API socket into the locks, so that a daemon refused can
    /// say which one holds them.
    pub fn record_owner(&mut self, pid: u32, api: &std::path::Path) {
        for (path, lock) in std::iter::once(&mut self.runtime).chain(self.server.as_mut()) {
            if let Err(error) = discovery::write_lock_owner(lock, pid, api) {
                warn!(lock = %path.display(), %error, "cannot write the lock's owner");
            }
        }
    }

    /// Takes again each lock whose file was deleted or replaced (a cleaner emptied the runtime
    /// directory, say: a new daemon would take a new file's lock), and writes this daemon in
    /// it. Returns the path of a lock another process took meanwhile, if one did.
    pub fn retake(&mut self, api: &std::path::Path) -> Option<std::path::PathBuf> {
        use api_socket::FileIdentity;
        for (path, lock) in std::iter::once(&mut self.runtime).chain(self.server.as_mut()) {
            let held = FileIdentity::of_file(lock);
            if held.is_some() && FileIdentity::of_path(path) == held {
                continue;
            }
            let file = match open_lock(path) {
                Ok(file) => file,
                Err(error) => {
                    warn!(%error, "cannot make the lock again");
                    continue;
                }
            };
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(mut taken) => {
                    if let Err(error) =
                        discovery::write_lock_owner(&mut taken, std::process::id(), api)
                    {
                        warn!(lock = %path.display(), %error, "cannot write the lock's owner");
                    }
                    warn!(lock = %path.display(), "the lock file was deleted or replaced; took it again");
                    *lock = taken;
                }
                Err(_) => return Some(path.clone()),
            }
        }
        None
    }
}

fn open_lock(path: &std::path::Path) -> Result<File, DaemonError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let error = |source| DaemonError::Io {
        what: "lock file",
        path: path.display().to_string(),
        source,
    };
    let file = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(error)?;
    // One made by an older panectl may be wider.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(error)?;
    Ok(file)
}

/// The error for a lock another daemon holds: which daemon, if its lock file says.
fn held(options: &DaemonOptions, path: &std::path::Path) -> DaemonError {
    let owner = discovery::read_lock_owner(path).filter(|(pid, _)| discovery::process_alive(*pid));
    let published = discovery::published(&options.address);
    match owner.or_else(|| published.pid.zip(published.api)) {
        Some((pid, api)) => DaemonError::AlreadyServed {
            server: options.address.to_string(),
            pid,
            api: api.display().to_string(),
        },
        None => DaemonError::AlreadyRunning {
            server: options.address.to_string(),
            lock: path.display().to_string(),
        },
    }
}

/// Takes the locks that allow one daemon per tmux server: one in the runtime directory (which
/// guards the API socket there), one next to the tmux socket when its directory is private
/// ([`discovery::server_lock_path`], the same from every environment), and refuses when the
/// server's published daemon (`@panectl_pid`, `@panectl_api`) is another process that is alive
/// and answers.
pub fn lock(options: &DaemonOptions) -> Result<InstanceLock, DaemonError> {
    options.paths.ensure_dir()?;
    let server = match discovery::server_lock_path(&options.address) {
        Some(path) => {
            let file = open_lock(&path)?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => Some((path, lock)),
                Err(_) => return Err(held(options, &path)),
            }
        }
        None => None,
    };
    let path = options.paths.lock();
    let runtime = Flock::lock(open_lock(&path)?, FlockArg::LockExclusiveNonblock)
        .map_err(|_| held(options, &path))?;
    let published = discovery::published(&options.address);
    if let (Some(pid), Some(api)) = (published.pid, published.api)
        && pid != std::process::id()
        && discovery::process_alive(pid)
        && discovery::answers(&api)
    {
        return Err(DaemonError::AlreadyServed {
            server: options.address.to_string(),
            pid,
            api: api.display().to_string(),
        });
    }
    Ok(InstanceLock {
        runtime: (path, runtime),
        server,
    })
}

/// Runs the daemon until `cancel` fires (or the server ends with `exit_with_server`).
/// `ready` is called once the API socket accepts connections.
pub async fn run(
    options: DaemonOptions,
    lock: &mut InstanceLock,
    cancel: CancellationToken,
    ready: impl FnOnce(),
) -> Result<(), DaemonError> {
    let started = Instant::now();
    raise_file_limit();
    let leftovers = crate::clients::end_leftovers(
        &options.paths.clients(),
        &options.address,
        &options.connection.attach_dir,
    );
    let clients = crate::clients::ClientRegistry::in_file(options.paths.clients());
    // Relay sockets a daemon killed mid-attach left behind (this one holds the lock).
    crate::tmux::attach::remove_stale_sockets(&options.connection.attach_dir);
    // The inbox first: a database that is not the user's own, empty or damaged stops the start
    // before any client can reach the API.
    let bus = EventBus::new();
    let (inbox, inbox_thread) = crate::inbox::InboxHandle::open(&options.inbox, Some(bus.clone()))?;
    options.paths.ensure_dir()?;
    let socket = options.paths.socket();
    let listener = PeerCheckedListener::bind(&socket).map_err(|source| DaemonError::Io {
        what: "API socket",
        path: socket.display().to_string(),
        source,
    })?;
    lock.record_owner(std::process::id(), &socket);
    let tcp = match &options.tcp {
        Some(tcp) => {
            let token = crate::api::tcp::load_or_create_token(&tcp.token_file)?;
            let listener = crate::api::tcp::bind(tcp).await?;
            Some((listener, token))
        }
        None => None,
    };
    let tracker = TaskTracker::new();
    // A server on another host: its connection first, which everything else goes through. It
    // ends last, once the control clients have detached and the published options are gone
    // (both go through it).
    let link_cancel = CancellationToken::new();
    let link = tokio::spawn(link::keep(
        options.address.shared_host(),
        link_cancel.clone(),
    ));
    let rules = rules::start(options.rules_dir.clone(), cancel.clone(), &tracker);
    let (supervisor, connections, status) = Supervisor::new(
        SupervisorOptions {
            address: options.address.clone(),
            config: options.connection.clone(),
            exit_with_server: options.exit_with_server,
            leftover_clients_ended: leftovers,
            providers: rules.providers.clone(),
            clients: clients.clone(),
        },
        bus.clone(),
        tracker.clone(),
        cancel.clone(),
    );
    tracker.spawn(notify::run(
        notify::NotifyOptions {
            command: options.notify_command.clone(),
            remote: !options.address.is_local(),
            server: options.address.label(),
            webhook: options.notify_webhook.clone(),
            webhook_timing: notify::webhook::Timing {
                timeout: options
                    .notify_webhook_timeout
                    .max(Duration::from_millis(100)),
                ..notify::webhook::Timing::default()
            },
            desktop: options.notify_desktop,
        },
        bus.clone(),
        connections.clone(),
        tracker.clone(),
        cancel.clone(),
    ));
    tracker.spawn(pane_poll::run(connections.clone(), cancel.clone()));
    if options.connection.pause_after > 0 {
        tracker.spawn(flow_guard::run(
            options.address.clone(),
            options.connection.attach_dir.clone(),
            status.clone(),
            clients,
            cancel.clone(),
        ));
    }
    let (seen, seen_panes) = tokio::sync::watch::channel(std::collections::BTreeSet::new());
    tracker.spawn(summary::run(
        bus.clone(),
        connections.clone(),
        seen,
        peers::Peers {
            own: options.paths.counts(),
            server: options.address.label(),
        },
        cancel.clone(),
    ));
    tracker.spawn(crate::inbox::delivery::run(
        inbox.clone(),
        connections.clone(),
        rules.providers.clone(),
        bus.clone(),
        options.delivery.clone(),
        tracker.clone(),
        cancel.clone(),
    ));
    let status_for_publish = status.clone();
    let context = Context {
        inbox,
        connections,
        status,
        bus,
        address: options.address.clone(),
        api_socket: socket.display().to_string(),
        providers: rules.providers.clone(),
        shutdown: cancel.clone(),
        mcp_allow_shell: options.mcp_allow_shell,
        mcp_allow_args: options.mcp_allow_args,
        worktrees: options.worktrees.clone(),
        seen: seen_panes,
        answering: std::sync::Arc::default(),
        tasks: tracker.clone(),
    };
    tracker.spawn(crate::orchestration::handoff::resume(context.clone()));
    tracker.spawn(crate::orchestration::dialogs::follow(context.clone()));
    tracker.spawn(crate::orchestration::conversations::follow(context.clone()));
    let api_state = ApiState {
        ctx: context,
        started,
        rules_errors: rules.errors.clone(),
        log_file: options.log_file.as_ref().map(|p| p.display().to_string()),
        command_line: options.command_line.clone(),
    };
    if let Some((listener, token)) = tcp {
        let address = listener.local_addr().ok();
        let tcp_state = api_state.clone();
        let tcp_cancel = cancel.clone();
        info!(address = ?address, "API also on TCP (bearer token required)");
        let limits = options.tcp_limits;
        tracker.spawn(crate::api::tcp::serve(
            listener, token, tcp_state, limits, tcp_cancel,
        ));
    }
    let api = api_socket::serve(
        options.paths.clone(),
        listener,
        api_state,
        options.api_limits,
        lock,
        tracker.clone(),
        cancel.clone(),
    );
    info!(
        server = %options.address,
        api = %socket.display(),
        processes = ?crate::os::process::Source::current(),
        "panectl daemon started"
    );
    tracker.spawn(publish::run(
        options.address.clone(),
        socket.clone(),
        status_for_publish,
        cancel.clone(),
    ));
    ready();
    let supervise = async {
        supervisor.run().await;
        cancel.cancel();
    };
    // The socket keeper borrows the lock (to take it again if its file goes) and ends with
    // `cancel`.
    let ((), bound) = tokio::join!(supervise, api);
    tracker.close();
    if tokio::time::timeout(Duration::from_secs(5), tracker.wait())
        .await
        .is_err()
    {
        warn!("some tasks did not finish within 5 s of shutdown");
    }
    publish::withdraw(&options.address).await;
    link_cancel.cancel();
    if tokio::time::timeout(Duration::from_secs(5), link)
        .await
        .is_err()
    {
        warn!("the connection to the host did not end within 5 s of shutdown");
    }
    // The inbox thread ends when the last handle is dropped. It is not waited for: every job is
    // one SQLite transaction, so the process may end at any point without a torn state.
    drop(inbox_thread);
    // Only the socket this daemon bound: one another daemon made at the path is left alone.
    if bound.is_some() && api_socket::FileIdentity::of_path(&socket) == bound {
        let _ = std::fs::remove_file(&socket);
    }
    info!("panectl daemon stopped");
    Ok(())
}
