//! The `panectl` command line. Errors are reported here, once, as one line on stderr.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use panectl::ids::PaneId;
use panectl::replay::{ReplayError, ReplayOptions, replay};

/// Tracks CLI coding agents running in tmux panes through tmux control mode.
#[derive(Debug, Parser)]
#[command(name = "panectl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a recorded control-mode transcript and print each pane's final screen.
    Replay {
        /// Raw stdout of a `tmux -C` client.
        transcript: PathBuf,
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Only this pane (`%N`).
        #[arg(long)]
        pane: Option<PaneId>,
        /// Size of panes the transcript gives no size for, as WIDTHxHEIGHT.
        #[arg(long, value_parser = parse_size, default_value = "80x24")]
        size: (u16, u16),
    },
}

/// Exit status for input that is not what the command reads.
const EXIT_BAD_INPUT: u8 = 2;

fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let (width, height) = text
        .split_once('x')
        .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT"))?;
    let parse = |s: &str| {
        s.parse::<u16>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT with sizes from 1 to 65535"))
    };
    Ok((parse(width)?, parse(height)?))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("panectl: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Replay {
            transcript,
            json,
            pane,
            size,
        } => {
            let file = File::open(&transcript)
                .with_context(|| format!("cannot open {}", transcript.display()))?;
            let result = match replay(file, ReplayOptions { default_size: size }) {
                Ok(result) => result,
                Err(ReplayError::NotControlMode(reason)) => {
                    eprintln!(
                        "panectl: {} is not a tmux control-mode transcript: {reason}",
                        transcript.display()
                    );
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
                Err(error) => {
                    return Err(error)
                        .with_context(|| format!("replaying {}", transcript.display()));
                }
            };
            if let Some(wanted) = pane
                && !result.panes.contains_key(&wanted)
            {
                anyhow::bail!("pane {wanted} is not in {}", transcript.display());
            }
            let mut stdout = std::io::stdout().lock();
            if json {
                serde_json::to_writer(&mut stdout, &result.report(pane))?;
                stdout.write_all(b"\n")?;
            } else {
                let mut text = result.text(pane);
                if pane.is_some() && !text.is_empty() {
                    text.push('\n');
                }
                stdout.write_all(text.as_bytes())?;
            }
            for error in &result.first_errors {
                eprintln!("panectl: warning: {error}");
            }
            if result.parse_errors > result.first_errors.len() as u64 {
                eprintln!(
                    "panectl: warning: {} more undecodable lines",
                    result.parse_errors - result.first_errors.len() as u64
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
