//! `panectl daemon`: runs the daemon in the foreground, or starts it in the background;
//! `panectl daemon stop|restart|status` manage the one that runs. Settings come from the
//! command line and from the `[daemon]` table of the config file ([`super::config`]).
//!
//! This module holds the command and its dispatch; [`args`] the flags and how the config
//! file's are merged in, [`run`] the daemon in the foreground, [`detach`] starting it in the
//! background and its log, [`control`] stop, restart and status of the one that runs.

mod args;
mod control;
mod detach;
mod run;

use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, Args, Subcommand};

use self::args::{DaemonArgs, daemon_flags, given_args, parse_flags, without_detach};
use super::ServerArgs;
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

/// `panectl daemon [stop|restart|status]`; `matches` are the `daemon` subcommand's.
pub fn command(
    server: &ServerArgs,
    command: DaemonCommand,
    matches: Option<&ArgMatches>,
) -> anyhow::Result<ExitCode> {
    match command.action {
        Some(DaemonAction::Stop { timeout }) => control::stop(server, timeout),
        Some(DaemonAction::Restart { timeout }) => control::restart(server, timeout),
        Some(DaemonAction::Status { json }) => control::status(server, json),
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
            run::run(server, args, &without_detach(std::env::args_os().skip(1)))
        }
    }
}
