//! `panectl daemon`: runs the daemon in the foreground, or starts it in the background;
//! `panectl daemon stop|restart|status` manage the one that runs. Settings come from the
//! command line and from the `[daemon]` table of the config file ([`super::config`]).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches, Subcommand, ValueEnum};
use panectl::api::client::ClientError;
use panectl::api::routes::Route;
use panectl::api::wire::Health;
use panectl::daemon::discovery;
use panectl::daemon::{self, DaemonOptions};
use panectl::paths::RuntimePaths;
use panectl::pipe::Transport;
use panectl::tmux::{AutoFailover, ConnectionConfig};
use tokio_util::sync::CancellationToken;

use super::ServerArgs;
use super::client::{block_on, client};
use super::duration;

/// `panectl daemon`: with no subcommand, runs the daemon.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DaemonCommand {
    #[command(subcommand)]
    action: Option<DaemonAction>,
    #[command(flatten)]
    args: DaemonArgs,
}

/// What to do with the running daemon.
#[derive(Debug, Clone, Subcommand)]
enum DaemonAction {
    /// Stop the daemon of the tmux server (SIGTERM) and wait until it is gone. Exit code 0
    /// when it stopped or none was running, 1 if it did not stop in time.
    Stop {
        /// How long to wait for it to end.
        #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
        timeout: Duration,
    },
    /// Stop the daemon and start it again, detached, with the command line and environment
    /// it had (after an upgrade: the new binary runs). Starts one if none was running.
    Restart {
        /// How long to wait for the old one to end.
        #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
        timeout: Duration,
    },
    /// Whether a daemon serves the tmux server: pid, version, uptime, API socket, log.
    /// Exit code 0 when one runs, 1 when none does.
    Status {
        /// Print the daemon's state as one JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// `--transport`: a pane transport, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TransportMode {
    Control,
    Pipe,
    #[value(name = "cross-check", alias = "cross_check")]
    CrossCheck,
    Auto,
}

/// Options of `panectl daemon`. Every one but `--detach` and `--config` can also be set in
/// the `[daemon]` table of the config file (key: the flag without `--`, `-` or `_`).
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// Start in the background and return once the API is up. Fails at once when no tmux
    /// server runs (see `--wait-for-server`).
    #[arg(long)]
    detach: bool,
    /// The config file (default `$XDG_CONFIG_HOME/panectl/config.toml`, else
    /// `~/.config/panectl/config.toml`); its `[daemon]` table sets defaults for these flags.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// With `--detach`: start even when no tmux server runs yet, and wait for one.
    #[arg(long)]
    wait_for_server: bool,
    /// Stop when the tmux server stops (what the tmux plugin uses); by default the daemon waits
    /// for the server to come back.
    #[arg(long)]
    exit_with_server: bool,
    /// How long a pane's output may wait for the daemon before tmux pauses the pane (which the
    /// daemon then resyncs), in whole seconds (tmux's unit); 0 turns flow control off (tmux
    /// then holds programs back while the daemon is behind, even while it is stopped).
    #[arg(long, default_value = "5s", value_name = "DURATION",
          value_parser = duration::parse_whole_seconds_or_zero)]
    pause_after: u32,
    /// Bytes of recent output kept per pane.
    #[arg(long, default_value_t = 128 * 1024, value_name = "BYTES")]
    ring_bytes: usize,
    /// How often the divergence watchdog compares screens that changed with tmux's.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = duration::parse)]
    watchdog: Duration,
    /// Where panes' output comes from: `control` (`%output` of one control client per session),
    /// `pipe` (`pipe-pane -O` into a private FIFO per pane, with a liveness watchdog; a pane
    /// whose pipe fails falls back to control), `cross-check` (both, compared byte by byte) or
    /// `auto` (control; a session whose control client keeps failing moves to pipes, and back
    /// once it holds). `panectl transport` changes one pane.
    #[arg(long, value_enum, default_value_t = TransportMode::Control)]
    transport: TransportMode,
    /// With `--transport auto`: unexpected ends of a session's control client within
    /// `--auto-window` that move its panes to pipes.
    #[arg(long, default_value_t = 3, value_name = "N")]
    auto_failures: u32,
    /// See `--auto-failures`.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = duration::parse)]
    auto_window: Duration,
    /// With `--transport auto`: how long the control client of a session on pipes must hold
    /// before its panes go back to it.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = duration::parse)]
    auto_recover: Duration,
    /// How long a command may wait for tmux's reply.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
    command_timeout: Duration,
    /// Directory of provider rule files that add to or replace the built-in ones (default
    /// `$XDG_CONFIG_HOME/panectl/providers`). Re-read when it changes, and on SIGHUP.
    #[arg(long, value_name = "DIR")]
    rules_dir: Option<PathBuf>,
    /// Evaluate a pane's status once its output has been quiet this long.
    #[arg(long, default_value = "15ms", value_name = "DURATION",
          value_parser = duration::parse_or_zero)]
    status_quiet: Duration,
    /// Evaluate a busy pane's status at least this often.
    #[arg(long, default_value = "60ms", value_name = "DURATION", value_parser = duration::parse)]
    status_max_wait: Duration,
    /// The inbox database (default `$XDG_STATE_HOME/panectl/<server>/inbox.sqlite`, else
    /// under `$HOME/.local/state`, else under the user's home from the user database; never a
    /// shared directory). Refused unless it and its directory are the user's own.
    #[arg(long, value_name = "PATH")]
    inbox: Option<PathBuf>,
    /// Wait this long between pasting a message and pressing Enter.
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = duration::parse)]
    submit_delay: Duration,
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
    /// Let MCP clients launch agents with arguments and environment of their choosing
    /// (`args`, `env` of `launch_agent` and of a handoff's or assignment's launch). Refused by
    /// default: an argument such as `--dangerously-skip-permissions` or a variable such as
    /// `LD_PRELOAD` would route around every other guard.
    #[arg(long)]
    mcp_allow_args: bool,
    /// A command of yours, run with `sh -c` on this machine when an agent starts waiting for
    /// you or finishes a turn (`PANECTL_SERVER`, `PANECTL_PANE`, `PANECTL_PROVIDER`,
    /// `PANECTL_STATUS`, `PANECTL_PREVIOUS` in its environment). A local server's
    /// `@panectl-notify-command` option wins over it; a server on another host is never asked
    /// for a command (its options are data), so this is the one that runs for it.
    #[arg(long, value_name = "COMMAND")]
    notify_command: Option<String>,
    /// Connections the API's Unix socket keeps open at once; more are closed as they arrive.
    #[arg(long, default_value_t = 512, value_name = "N")]
    api_max_connections: usize,
    /// Connections the `--listen` TCP listener keeps open at once; more are closed as they
    /// arrive (each listener has its own limit: a flood on TCP leaves the socket served).
    #[arg(long, default_value_t = 128, value_name = "N")]
    listen_max_connections: usize,
    /// How long a request's head (request line and headers) may take to arrive on either
    /// listener before its connection is closed.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
    api_header_timeout: Duration,
}

fn init_logging(log_file: Option<&PathBuf>) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PANECTL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match log_file {
        Some(path) => {
            use std::os::unix::fs::OpenOptionsExt;
            // Created 0600 (messages and pane names go into it); one of another user refused.
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            let metadata = file
                .metadata()
                .with_context(|| format!("cannot read the log file {}", path.display()))?;
            if metadata.is_file() {
                use std::os::unix::fs::MetadataExt;
                if metadata.uid() != panectl::trust::uid() {
                    bail!(
                        "the log file {} belongs to uid {}, not to you; remove it or choose \
                         another --log-file",
                        path.display(),
                        metadata.uid()
                    );
                }
            }
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

/// `panectl daemon [stop|restart|status]`; `matches` are the `daemon` subcommand's.
pub fn command(
    server: &ServerArgs,
    command: DaemonCommand,
    matches: Option<&ArgMatches>,
) -> anyhow::Result<ExitCode> {
    match command.action {
        Some(DaemonAction::Stop { timeout }) => stop(server, timeout),
        Some(DaemonAction::Restart { timeout }) => restart(server, timeout),
        Some(DaemonAction::Status { json }) => status(server, json),
        None => {
            let given = match matches {
                Some(matches) => given_args(matches)?,
                None => Vec::new(),
            };
            let words = super::config::daemon_words(
                &daemon_flags(),
                &given,
                command.args.config.as_deref(),
            )?;
            let args = parse_flags(&words)?;
            run(server, args, &without_detach(std::env::args_os().skip(1)))
        }
    }
}

/// The `daemon` flags as a standalone command, to parse them again with the config file's.
pub(super) fn daemon_flags() -> clap::Command {
    DaemonArgs::augment_args(clap::Command::new("daemon")).no_binary_name(true)
}

/// Parses `args` (`--flag=value` words) as the daemon's flags.
pub(super) fn parse_flags(args: &[OsString]) -> Result<DaemonArgs, clap::Error> {
    let matches = daemon_flags().try_get_matches_from(args)?;
    DaemonArgs::from_arg_matches(&matches)
}

/// A daemon's command line (after the program name) without `--detach`: what a detached or
/// restarted daemon runs with. `--detach` takes no value, so a word equal to it is that flag
/// (a value that looks like it is written `--flag=--detach`).
fn without_detach(words: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    words
        .into_iter()
        .filter(|w| w != "--detach" && !w.to_string_lossy().starts_with("--detach="))
        .collect()
}

/// The flags given on the command line (not defaults), each as `--long` or `--long=VALUE`
/// words, with the id of the argument they set.
fn given_args(matches: &ArgMatches) -> anyhow::Result<Vec<(String, Vec<OsString>)>> {
    let mut given = Vec::new();
    for arg in daemon_flags().get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let mut words = Vec::new();
        if arg.get_action().takes_values() {
            let raw = matches
                .get_raw(id)
                .with_context(|| format!("cannot read --{long}"))?;
            for value in raw {
                let mut word = OsString::from(format!("--{long}="));
                word.push(value);
                words.push(word);
            }
        } else if matches.get_flag(id) {
            words.push(OsString::from(format!("--{long}")));
        }
        if !words.is_empty() {
            given.push((id.to_string(), words));
        }
    }
    Ok(given)
}

/// Runs the daemon (or, with `--detach`, starts it in the background).
fn run(server: &ServerArgs, args: DaemonArgs, forward: &[OsString]) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    if !address.host().has_pipes()
        && matches!(
            args.transport,
            TransportMode::Pipe | TransportMode::CrossCheck | TransportMode::Auto
        )
    {
        anyhow::bail!(
            "--transport {} needs the pipe transport, which is off for a server on another host              (tmux there cannot write into a FIFO here): use --transport control",
            args.transport
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        );
    }
    let paths = RuntimePaths::for_server(&address);
    let pipe_dir = paths.pipes();
    let attach_dir = paths.attach();
    let divergence_dir = paths.divergences();
    let inbox = match args.inbox.clone() {
        Some(inbox) => inbox,
        None => panectl::inbox::default_path(paths.stem())?,
    };
    let tcp = args.listen.map(|address| panectl::api::tcp::TcpOptions {
        address,
        allow_remote: args.allow_remote,
        token_file: args.token_file.clone().unwrap_or_else(|| paths.token()),
    });
    let header_timeout = args.api_header_timeout.max(Duration::from_millis(50));
    let options = DaemonOptions {
        api_limits: panectl::api::listen::Limits {
            max_connections: args.api_max_connections.max(1),
            header_timeout,
        },
        tcp_limits: panectl::api::listen::Limits {
            max_connections: args.listen_max_connections.max(1),
            header_timeout,
        },
        tcp,
        inbox,
        delivery: panectl::inbox::delivery::DeliveryOptions {
            submit_delay: args.submit_delay.max(Duration::from_millis(150)),
            ..Default::default()
        },
        address,
        paths,
        connection: ConnectionConfig {
            pause_after: args.pause_after,
            command_timeout: args.command_timeout.max(Duration::from_millis(100)),
            ring_bytes: args.ring_bytes.max(1024),
            watchdog_interval: args.watchdog.max(Duration::from_millis(100)),
            transport: match args.transport {
                TransportMode::Control | TransportMode::Auto => Transport::Control,
                TransportMode::Pipe => Transport::Pipe,
                TransportMode::CrossCheck => Transport::CrossCheck,
            },
            auto: (args.transport == TransportMode::Auto).then(|| AutoFailover {
                failures: args.auto_failures.max(1),
                window: args.auto_window.max(Duration::from_secs(1)),
                recover_after: args.auto_recover.max(Duration::from_millis(100)),
            }),
            failover: None,
            pipe_dir,
            attach_dir,
            divergence_dir: Some(divergence_dir),
            pipe_watchdog: panectl::pipe::WatchdogConfig {
                interval: args.watchdog.max(Duration::from_millis(100)),
                ..panectl::pipe::WatchdogConfig::default()
            },
            status: panectl::status::pane::Timing {
                quiet: args.status_quiet,
                max_wait: args.status_max_wait.max(args.status_quiet),
                ..panectl::status::pane::Timing::default()
            },
        },
        exit_with_server: args.exit_with_server,
        mcp_allow_shell: args.mcp_allow_shell,
        mcp_allow_args: args.mcp_allow_args,
        notify_command: args.notify_command.clone(),
        rules_dir: args
            .rules_dir
            .clone()
            .or_else(panectl::status::providers::user_dir),
        log_file: args.log_file.clone(),
        command_line: std::env::args().collect(),
    };
    if args.detach {
        return detach(&args, forward, &options);
    }
    init_logging(args.log_file.as_ref())?;
    let mut lock = daemon::lock(&options)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let cancel = CancellationToken::new();
        spawn_signal_handler(cancel.clone())?;
        daemon::run(options, &mut lock, cancel, || {}).await?;
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
/// once its API answers. The child gets this command line as it was typed, `--detach` taken
/// out (`forward`), so no flag can be left behind, and reads the same config file.
fn detach(
    args: &DaemonArgs,
    forward: &[OsString],
    options: &DaemonOptions,
) -> anyhow::Result<ExitCode> {
    if !args.wait_for_server && !options.address.is_alive() {
        bail!(
            "no tmux server at {}; start tmux first, or pass --wait-for-server",
            options.address
        );
    }
    // Fail here, with a clear message, if a daemon already runs.
    drop(daemon::lock(options)?);
    let log = args.log_file.clone().unwrap_or_else(|| options.paths.log());
    let exe = std::env::current_exe().context("cannot find the panectl executable")?;
    let mut command = std::process::Command::new(exe);
    command.args(forward);
    if args.log_file.is_none() {
        let mut word = OsString::from("--log-file=");
        word.push(&log);
        command.arg(word);
    }
    // What the daemon says before its log is set up, or as it fails (the error the binary
    // prints on its way out), goes to the log too: "see the log" then finds the reason.
    let stderr = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&log)
            .map_or_else(|_| Stdio::null(), Stdio::from)
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
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
            wait_for_publication(options, child.id());
            wait_until_started(options, &socket);
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
                "the daemon exited at start ({status}): {}(the whole log: {})",
                last_words(&log),
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

/// The last line the log holds (the reason a daemon exited), followed by a space; empty when
/// there is none.
fn last_words(log: &std::path::Path) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!("{} ", l.trim().escape_debug()))
        .unwrap_or_default()
}

/// Waits (a few seconds at most) until the server's `@panectl_pid` names the daemon started, so
/// that clients in other environments find it once `--detach` returns.
fn wait_for_publication(options: &DaemonOptions, pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while options.address.is_alive() && Instant::now() < deadline {
        let published = discovery::server_option(&options.address, discovery::PID_OPTION);
        if published.is_some_and(|p| p.trim() == pid.to_string()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (10 s at most) until the daemon's health no longer says `starting`: the panes of
/// every session are known once `--detach` returns.
fn wait_until_started(options: &DaemonOptions, socket: &std::path::Path) {
    let client = panectl::api::client::ApiClient::new(
        socket.to_path_buf(),
        options.address.to_string(),
        String::new(),
    );
    let waited = block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::time::Instant::now() < deadline {
            match client.get_json::<Health>(&Route::Health {}.path()).await {
                Ok(health) if health.status == "starting" => {}
                _ => return Ok(()),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    });
    if let Err(error) = waited {
        tracing::debug!(%error, "cannot wait for the daemon's start");
    }
}

/// The health of the daemon serving the server, found as any client finds it; `None` when
/// none answers.
fn running(server: &ServerArgs) -> anyhow::Result<Option<Health>> {
    let client = client(server)?;
    let answer = block_on(async { Ok(client.get_json::<Health>(&Route::Health {}.path()).await) })?;
    match answer {
        Ok(health) => Ok(Some(health)),
        Err(ClientError::NoDaemon { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Whether the process looks like a panectl daemon of this user: its command line is
/// `panectl ... daemon ...` and `/proc/PID` belongs to this user (when /proc can be read).
fn looks_like_daemon(pid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ours = std::fs::metadata(format!("/proc/{pid}"))
        .map_or(true, |m| m.uid() == nix::unistd::getuid().as_raw());
    let daemon = match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => {
            let mut words = cmdline.split(|&b| b == 0);
            let program = words.next().unwrap_or_default();
            let name = program.rsplit(|&b| b == b'/').next().unwrap_or_default();
            name.starts_with(b"panectl") && words.any(|word| word == b"daemon")
        }
        Err(_) => true,
    };
    ours && daemon
}

/// The daemon's pid: from its health, else (its API does not answer: its socket was deleted,
/// say) from the server's `@panectl_pid` or the owner written in its lock files, when that
/// process lives and looks like a panectl daemon of this user.
fn daemon_pid(server: &ServerArgs, health: Option<&Health>) -> anyhow::Result<Option<u32>> {
    if let Some(pid) = health.map(|h| h.pid).filter(|pid| *pid != 0) {
        return Ok(Some(pid));
    }
    let address = server.address()?;
    let locks = [
        Some(RuntimePaths::for_server(&address).lock()),
        discovery::server_lock_path(&address),
    ];
    let owners = locks.into_iter().flatten().filter_map(|lock| {
        discovery::read_lock_owner(&lock)
            .map(|(pid, _)| pid)
            .filter(|pid| discovery::holds_lock(*pid, &lock))
    });
    Ok(discovery::published(&address)
        .pid
        .into_iter()
        .chain(owners)
        .filter(|pid| *pid != std::process::id())
        .find(|pid| discovery::process_alive(*pid) && looks_like_daemon(*pid)))
}

/// Sends SIGTERM and waits up to `timeout` for the process to end.
fn terminate(pid: u32, timeout: Duration) -> anyhow::Result<bool> {
    let raw = i32::try_from(pid).context("pid out of range")?;
    match nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(raw),
        nix::sys::signal::Signal::SIGTERM,
    ) {
        Ok(()) => {}
        Err(nix::errno::Errno::ESRCH) => return Ok(true),
        Err(error) => bail!("cannot signal the daemon (pid {pid}): {error}"),
    }
    let deadline = Instant::now() + timeout;
    while discovery::process_alive(pid) {
        if Instant::now() > deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

/// Stops the daemon; `Ok(None)` when none was running, `Ok(Some(pid))` once it has ended.
fn stop_daemon(
    server: &ServerArgs,
    health: Option<&Health>,
    timeout: Duration,
) -> anyhow::Result<Option<u32>> {
    let Some(pid) = daemon_pid(server, health)? else {
        if let Some(health) = health {
            bail!(
                "the daemon (panectl {}) does not report its pid; stop it by hand",
                health.version
            );
        }
        return Ok(None);
    };
    if !terminate(pid, timeout)? {
        bail!(
            "the daemon (pid {pid}) did not stop within {} s",
            timeout.as_secs()
        );
    }
    Ok(Some(pid))
}

fn stop(server: &ServerArgs, timeout: Duration) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let health = running(server)?;
    match stop_daemon(server, health.as_ref(), timeout)? {
        Some(pid) => {
            println!("stopped the panectl daemon (pid {pid}) of the tmux server {address}")
        }
        None => println!("no daemon was running for the tmux server {address}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The NUL-separated words of a /proc file.
fn proc_words(pid: u32, file: &str) -> Option<Vec<OsString>> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = std::fs::read(format!("/proc/{pid}/{file}")).ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| OsString::from_vec(w.to_vec()))
            .collect(),
    )
}

fn restart(server: &ServerArgs, timeout: Duration) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let exe = std::env::current_exe().context("cannot find the panectl executable")?;
    let health = running(server)?;
    let pid = daemon_pid(server, health.as_ref())?;
    // The old daemon's arguments (after the program name) and environment.
    let old_args: Option<Vec<OsString>> = health
        .as_ref()
        .map(|h| {
            h.command_line
                .iter()
                .map(OsString::from)
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .or_else(|| pid.and_then(|pid| proc_words(pid, "cmdline")))
        .map(|words| words.into_iter().skip(1).collect());
    let environment = pid.and_then(|pid| proc_words(pid, "environ"));
    let mut command = std::process::Command::new(exe);
    match &old_args {
        Some(words) => {
            command.args(without_detach(words.iter().cloned()));
        }
        None if pid.is_some() => bail!(
            "cannot read the command line of the daemon (pid {}); stop it with `panectl daemon \
             stop` and start it again by hand",
            pid.unwrap_or_default()
        ),
        None => {
            command.arg("-S").arg(address.socket()).arg("daemon");
        }
    }
    command.arg("--detach");
    if let Some(environment) = environment {
        command.env_clear();
        for entry in environment {
            let entry = entry.to_string_lossy().into_owned();
            if let Some((key, value)) = entry.split_once('=')
                && key != "TMUX"
            {
                command.env(key, value);
            }
        }
    }
    match stop_daemon(server, health.as_ref(), timeout)? {
        Some(pid) => println!("stopped the panectl daemon (pid {pid})"),
        None => println!("no daemon was running for the tmux server {address}; starting one"),
    }
    let status = command
        .stdin(Stdio::null())
        .status()
        .context("cannot start the daemon again")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn status(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let health = running(server)?;
    if json {
        let value = match &health {
            Some(health) => serde_json::json!({
                "running": true,
                "tmux_socket": address.to_string(),
                "pid": health.pid,
                "version": health.version,
                "uptime_seconds": health.uptime_seconds,
                "api_socket": health.api_socket,
                "log_file": health.log_file,
                "status": health.status,
                "command_line": health.command_line,
            }),
            None => serde_json::json!({
                "running": false,
                "tmux_socket": address.to_string(),
            }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        match &health {
            Some(health) => {
                println!(
                    "running       pid {}, panectl {}",
                    health.pid, health.version
                );
                println!("uptime        {} s", health.uptime_seconds);
                println!("status        {}", health.status);
                println!("tmux          {}", health.tmux_socket);
                println!("api           {}", health.api_socket);
                println!(
                    "log           {}",
                    health.log_file.as_deref().unwrap_or("(its stderr)")
                );
            }
            None => println!("not running   no daemon serves the tmux server {address}"),
        }
    }
    Ok(if health.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};

    use super::*;
    use crate::cli::Cli;

    fn daemon_matches(args: &[&str]) -> Result<ArgMatches, clap::Error> {
        let matches = Cli::command().try_get_matches_from(args)?;
        Ok(matches
            .subcommand_matches("daemon")
            .expect("the daemon subcommand")
            .clone())
    }

    #[test]
    fn the_plugin_command_line_and_the_subcommands_parse() {
        let matches = daemon_matches(&["panectl", "daemon", "--detach", "--exit-with-server"])
            .expect("the plugin's command line");
        let given: Vec<String> = given_args(&matches)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(given, ["detach", "exit_with_server"]);
        for args in [
            &["panectl", "daemon", "stop"][..],
            &["panectl", "-L", "x", "daemon", "restart", "--timeout", "3"],
            &["panectl", "daemon", "status", "--json"],
        ] {
            let matches = Cli::command().try_get_matches_from(args).expect("parses");
            Cli::from_arg_matches(&matches).expect("converts");
        }
        assert!(daemon_matches(&["panectl", "daemon", "--detach", "stop"]).is_err());
    }

    #[test]
    fn a_detached_daemon_gets_the_command_line_as_typed_without_detach() {
        let typed = [
            "-L",
            "x",
            "daemon",
            "--detach",
            "--submit-delay-ms",
            "250",
            "--log-file=--detach",
            "--a-flag-added-later",
        ];
        let forwarded = without_detach(typed.iter().map(OsString::from));
        assert_eq!(
            forwarded,
            [
                "-L",
                "x",
                "daemon",
                "--submit-delay-ms",
                "250",
                "--log-file=--detach",
                "--a-flag-added-later"
            ]
        );
    }

    #[test]
    fn only_flags_given_are_passed_on_with_their_values_as_given() {
        let matches = daemon_matches(&[
            "panectl",
            "daemon",
            "--status-quiet",
            "33ms",
            "--rules-dir=-odd dir",
            "--detach",
        ])
        .unwrap();
        let words: Vec<String> = given_args(&matches)
            .unwrap()
            .into_iter()
            .filter(|(id, _)| id != "detach")
            .flat_map(|(_, words)| words)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        assert_eq!(words, ["--rules-dir=-odd dir", "--status-quiet=33ms"]);
        // They parse back to the same settings.
        let words: Vec<OsString> = words.into_iter().map(OsString::from).collect();
        let args = parse_flags(&words).unwrap();
        assert_eq!(args.status_quiet, Duration::from_millis(33));
        assert_eq!(args.rules_dir, Some(PathBuf::from("-odd dir")));
    }
}

/// The config file read against the daemon's real flags (in this module: `config` knows no flag).
#[cfg(test)]
mod config_tests {
    use std::ffi::OsString;
    use std::path::Path;

    use super::*;

    fn args_of(text: &str) -> anyhow::Result<Vec<(String, Vec<OsString>)>> {
        super::super::config::file_args(&daemon_flags(), Path::new("config.toml"), text)
    }

    #[test]
    fn keys_become_flags() {
        let args = args_of(
            "[daemon]\nstatus_quiet_ms = 30\ntransport = \"auto\"\nexit-with-server = true\n\
             allow_remote = false\n",
        )
        .unwrap();
        let words: Vec<String> = args
            .iter()
            .flat_map(|(_, w)| w.iter().map(|w| w.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            words,
            [
                "--exit-with-server",
                "--status-quiet=30ms",
                "--transport=auto"
            ]
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_the_file() {
        let error = args_of("[daemon]\nstatus_quite = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`status_quite`") && error.contains("config.toml"),
            "{error}"
        );
        let error = args_of("[daemon]\nwatchdog = \"2 fortnights\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("config.toml") && error.contains("unknown unit"),
            "{error}"
        );
        let error = args_of("[deamon]\n").unwrap_err().to_string();
        assert!(error.contains("`deamon`"), "{error}");
        let error = args_of("[daemon]\ndetach = true\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`detach`"), "{error}");
        let error = args_of("[daemon]\ntransport = \"carrier-pigeon\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("config.toml") && error.contains("carrier-pigeon"),
            "{error}"
        );
        let error = args_of("[daemon]\nexit_with_server = 1\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("true or false"), "{error}");
    }

    #[test]
    fn the_command_line_wins() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            file.path(),
            "[daemon]\nstatus_quiet_ms = 30\nsubmit_delay = \"0.4s\"\n",
        )
        .unwrap();
        let given = vec![(
            "status_quiet".to_string(),
            vec![OsString::from("--status-quiet=7ms")],
        )];
        let words =
            super::super::config::daemon_words(&daemon_flags(), &given, Some(file.path())).unwrap();
        let args = parse_flags(&words).unwrap();
        let shown = format!("{args:?}");
        assert!(shown.contains("status_quiet: 7ms"), "{shown}");
        assert!(shown.contains("submit_delay: 400ms"), "{shown}");
    }
}
