//! `panectl daemon`: runs the daemon in the foreground, or starts it in the background.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use panectl::daemon::paths::RuntimePaths;
use panectl::daemon::{self, DaemonOptions};
use panectl::pipe::Transport;
use panectl::tmux::{AutoFailover, ConnectionConfig};
use tokio_util::sync::CancellationToken;

use super::ServerArgs;

/// `--transport`: a pane transport, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TransportMode {
    Control,
    Pipe,
    #[value(name = "cross-check", alias = "cross_check")]
    CrossCheck,
    Auto,
}

/// Options of `panectl daemon`.
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// Start in the background and return once the API is up.
    #[arg(long)]
    detach: bool,
    /// Stop when the tmux server stops (what the tmux plugin uses); by default the daemon waits
    /// for the server to come back.
    #[arg(long)]
    exit_with_server: bool,
    /// Seconds a pane's output may wait for the daemon before tmux pauses the pane (which the
    /// daemon then resyncs); 0 turns flow control off.
    #[arg(long, default_value_t = 5, value_name = "SECONDS")]
    pause_after: u32,
    /// Bytes of recent output kept per pane.
    #[arg(long, default_value_t = 128 * 1024, value_name = "BYTES")]
    ring_bytes: usize,
    /// How often the divergence watchdog compares screens that changed with tmux's.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    watchdog_ms: u64,
    /// Where panes' output comes from: `control` (`%output` of one control client per session),
    /// `pipe` (`pipe-pane -O` into a private FIFO per pane, with a liveness watchdog; a pane
    /// whose pipe fails falls back to control), `cross-check` (both, compared byte by byte) or
    /// `auto` (control; a session whose control client keeps failing moves to pipes, and back
    /// once it holds). `panectl transport` changes one pane.
    #[arg(long, value_enum, default_value_t = TransportMode::Control)]
    transport: TransportMode,
    /// With `--transport auto`: unexpected ends of a session's control client within
    /// `--auto-window-s` that move its panes to pipes.
    #[arg(long, default_value_t = 3, value_name = "N")]
    auto_failures: u32,
    /// See `--auto-failures`.
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    auto_window_s: u64,
    /// With `--transport auto`: how long the control client of a session on pipes must hold
    /// before its panes go back to it.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    auto_recover_ms: u64,
    /// How long a command may wait for tmux's reply.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    command_timeout_ms: u64,
    /// Directory of provider rule files that add to or replace the built-in ones (default
    /// `$XDG_CONFIG_HOME/panectl/providers`). Re-read when it changes, and on SIGHUP.
    #[arg(long, value_name = "DIR")]
    rules_dir: Option<PathBuf>,
    /// Evaluate a pane's status once its output has been quiet this long.
    #[arg(long, default_value_t = 15, value_name = "MS")]
    status_quiet_ms: u64,
    /// Evaluate a busy pane's status at least this often.
    #[arg(long, default_value_t = 60, value_name = "MS")]
    status_max_wait_ms: u64,
    /// The inbox database (default `$XDG_STATE_HOME/panectl/<server>/inbox.sqlite`).
    #[arg(long, value_name = "PATH")]
    inbox: Option<PathBuf>,
    /// Wait this long between pasting a message and pressing Enter.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    submit_delay_ms: u64,
    /// Write the log here instead of stderr (a detached daemon logs to the runtime directory).
    #[arg(long, value_name = "PATH")]
    log_file: Option<PathBuf>,
    /// Also serve the API on this TCP address (e.g. 127.0.0.1:7878), for tools that cannot use
    /// a Unix socket. Every request needs `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<std::net::SocketAddr>,
    /// Allow `--listen` on an address that is not loopback.
    #[arg(long, requires = "listen")]
    allow_remote: bool,
    /// The bearer token file for `--listen` (default: `<runtime dir>/<server>.token`, created
    /// with a random token, mode 0600).
    #[arg(long, value_name = "PATH", requires = "listen")]
    token_file: Option<PathBuf>,
    /// Let MCP clients (`panectl mcp`) send text to panes that run no recognised agent, such
    /// as a plain shell, which runs it as commands. Refused by default.
    #[arg(long)]
    mcp_allow_shell: bool,
}

fn init_logging(log_file: Option<&PathBuf>) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PANECTL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

pub fn run(server: &ServerArgs, args: DaemonArgs) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let paths = RuntimePaths::for_server(&address);
    let pipe_dir = paths.pipes();
    let attach_dir = paths.attach();
    let inbox = args
        .inbox
        .clone()
        .unwrap_or_else(|| panectl::inbox::default_path(paths.stem()));
    let tcp = args.listen.map(|address| panectl::api::tcp::TcpOptions {
        address,
        allow_remote: args.allow_remote,
        token_file: args.token_file.clone().unwrap_or_else(|| paths.token()),
    });
    let options = DaemonOptions {
        tcp,
        inbox,
        delivery: panectl::inbox::delivery::DeliveryOptions {
            submit_delay: Duration::from_millis(args.submit_delay_ms.max(150)),
            ..Default::default()
        },
        address,
        paths,
        connection: ConnectionConfig {
            pause_after: args.pause_after,
            command_timeout: Duration::from_millis(args.command_timeout_ms.max(100)),
            ring_bytes: args.ring_bytes.max(1024),
            watchdog_interval: Duration::from_millis(args.watchdog_ms.max(100)),
            transport: match args.transport {
                TransportMode::Control | TransportMode::Auto => Transport::Control,
                TransportMode::Pipe => Transport::Pipe,
                TransportMode::CrossCheck => Transport::CrossCheck,
            },
            auto: (args.transport == TransportMode::Auto).then(|| AutoFailover {
                failures: args.auto_failures.max(1),
                window: Duration::from_secs(args.auto_window_s.max(1)),
                recover_after: Duration::from_millis(args.auto_recover_ms.max(100)),
            }),
            failover: None,
            pipe_dir,
            attach_dir,
            pipe_watchdog: panectl::pipe::WatchdogConfig {
                interval: Duration::from_millis(args.watchdog_ms.max(100)),
                ..panectl::pipe::WatchdogConfig::default()
            },
            status: panectl::status::pane::Timing {
                quiet: Duration::from_millis(args.status_quiet_ms),
                max_wait: Duration::from_millis(args.status_max_wait_ms.max(args.status_quiet_ms)),
                ..panectl::status::pane::Timing::default()
            },
        },
        exit_with_server: args.exit_with_server,
        mcp_allow_shell: args.mcp_allow_shell,
        rules_dir: args
            .rules_dir
            .clone()
            .or_else(panectl::status::providers::user_dir),
    };
    if args.detach {
        return detach(server, &args, &options);
    }
    init_logging(args.log_file.as_ref())?;
    let lock = daemon::lock(&options)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let cancel = CancellationToken::new();
        spawn_signal_handler(cancel.clone())?;
        daemon::run(options, &lock, cancel, || {}).await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn spawn_signal_handler(cancel: CancellationToken) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
            () = cancel.cancelled() => return,
        }
        tracing::info!("shutting down");
        cancel.cancel();
    });
    Ok(())
}

/// Starts `panectl daemon` in a new session with its log in the runtime directory, and returns
/// once its API answers.
fn detach(
    server: &ServerArgs,
    args: &DaemonArgs,
    options: &DaemonOptions,
) -> anyhow::Result<ExitCode> {
    // Fail here, with a clear message, if a daemon already runs.
    drop(daemon::lock(options)?);
    let log = args.log_file.clone().unwrap_or_else(|| options.paths.log());
    let exe = std::env::current_exe().context("cannot find the panectl executable")?;
    let mut command = std::process::Command::new(exe);
    if let Some(name) = &server.socket_name {
        command.arg("-L").arg(name);
    }
    if let Some(path) = &server.socket_path {
        command.arg("-S").arg(path);
    }
    command
        .arg("daemon")
        .arg("--pause-after")
        .arg(args.pause_after.to_string())
        .arg("--ring-bytes")
        .arg(args.ring_bytes.to_string())
        .arg("--watchdog-ms")
        .arg(args.watchdog_ms.to_string())
        .arg("--command-timeout-ms")
        .arg(args.command_timeout_ms.to_string())
        .arg("--status-quiet-ms")
        .arg(args.status_quiet_ms.to_string())
        .arg("--status-max-wait-ms")
        .arg(args.status_max_wait_ms.to_string())
        .arg("--submit-delay-ms")
        .arg(args.submit_delay_ms.to_string())
        .arg("--transport")
        .arg(
            args.transport
                .to_possible_value()
                .map_or_else(|| "control".to_string(), |v| v.get_name().to_string()),
        )
        .arg("--auto-failures")
        .arg(args.auto_failures.to_string())
        .arg("--auto-window-s")
        .arg(args.auto_window_s.to_string())
        .arg("--auto-recover-ms")
        .arg(args.auto_recover_ms.to_string())
        .arg("--inbox")
        .arg(&options.inbox)
        .arg("--log-file")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if args.exit_with_server {
        command.arg("--exit-with-server");
    }
    if let Some(dir) = &args.rules_dir {
        command.arg("--rules-dir").arg(dir);
    }
    if args.mcp_allow_shell {
        command.arg("--mcp-allow-shell");
    }
    if let Some(tcp) = &options.tcp {
        command.arg("--listen").arg(tcp.address.to_string());
        command.arg("--token-file").arg(&tcp.token_file);
        if tcp.allow_remote {
            command.arg("--allow-remote");
        }
    }
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = command.spawn().context("cannot start the daemon")?;
    let socket = options.paths.socket();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
            println!(
                "panectl daemon started (pid {}) for the tmux server {}; API {}; log {}",
                child.id(),
                options.address,
                socket.display(),
                log.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(status) = child.try_wait()? {
            bail!(
                "the daemon exited at start ({status}); see {}",
                log.display()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "the daemon did not open its API within 10 s; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
