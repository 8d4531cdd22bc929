//! The daemon in the foreground: its options built from the flags, the lock taken, and the
//! daemon run until SIGTERM or SIGINT.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::ValueEnum;
use panectl::daemon::{self, DaemonOptions};
use panectl::paths::RuntimePaths;
use panectl::pipe::Transport;
use panectl::tmux::{AutoFailover, ConnectionConfig};
use tokio_util::sync::CancellationToken;

use super::args::{DaemonArgs, TransportMode};
use super::detach::{detach, init_logging};
use crate::cli::ServerArgs;

/// Runs the daemon (or, with `--detach`, starts it in the background).
pub(super) fn run(
    server: &ServerArgs,
    args: DaemonArgs,
    forward: &[OsString],
) -> anyhow::Result<ExitCode> {
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
            flood: (args.flood_rate > 0).then(|| panectl::session::FloodConfig {
                rate: args.flood_rate,
                ..panectl::session::FloodConfig::default()
            }),
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
        worktrees: panectl::orchestration::worktree::WorktreeSettings {
            dir: args.worktree_dir.clone(),
            branch_prefix: args.worktree_branch_prefix.clone(),
        },
        notify_command: args.notify_command.clone(),
        notify_webhook: args
            .notify_webhook
            .as_deref()
            .map(panectl::daemon::notify::webhook::WebhookUrl::parse)
            .transpose()
            .context("--notify-webhook")?,
        notify_webhook_timeout: args.notify_webhook_timeout,
        notify_desktop: args.notify_desktop,
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
