//! `panectl replay`.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use panectl::ids::PaneId;
use panectl::replay::{ReplayError, ReplayOptions, replay};

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(text: &str) -> Result<(u16, u16), String> {
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

pub fn run(
    transcript: &Path,
    json: bool,
    pane: Option<PaneId>,
    size: (u16, u16),
) -> anyhow::Result<ExitCode> {
    let file =
        File::open(transcript).with_context(|| format!("cannot open {}", transcript.display()))?;
    let result = match replay(file, ReplayOptions { default_size: size }) {
        Ok(result) => result,
        Err(ReplayError::NotControlMode(reason)) => {
            eprintln!(
                "panectl: {} is not a tmux control-mode transcript: {reason}",
                transcript.display()
            );
            return Ok(ExitCode::from(super::exit::REFUSED));
        }
        Err(error) => {
            return Err(error).with_context(|| format!("replaying {}", transcript.display()));
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
    let unlisted = result
        .parse_errors
        .saturating_sub(result.first_errors.len() as u64);
    if unlisted > 0 {
        eprintln!("panectl: warning: {unlisted} more undecodable lines");
    }
    Ok(ExitCode::SUCCESS)
}
