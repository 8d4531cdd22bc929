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

/// What `panectl replay --divergence --json` prints.
#[derive(serde::Serialize)]
struct DivergenceReport<'a> {
    pane: &'a str,
    tmux: &'a str,
    start: panectl::mirror::journal::JournalStart,
    steps: usize,
    output_bytes: usize,
    resizes: usize,
    /// What the daemon logged.
    difference: &'a str,
    explained: Option<&'a str>,
    /// The replay gives the screen the mirror had.
    reproduces_mirror: bool,
    /// The replay gives the screen tmux had.
    equals_tmux: bool,
    /// Where the replay differs from tmux's screen.
    replay_vs_tmux: Option<String>,
    /// The last point of the output (in bytes) at which the replay showed tmux's screen.
    tmux_at_byte: Option<usize>,
}

/// `panectl replay --divergence`: replays a divergence record through the screen model.
pub fn divergence(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use panectl::mirror::journal::{ScreenRecord, Step};
    let text = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    let record: panectl::mirror::DivergenceRecord = match serde_json::from_slice(&text) {
        Ok(record) => record,
        Err(error) => {
            eprintln!(
                "panectl: {} is not a divergence record: {error}",
                path.display()
            );
            return Ok(ExitCode::from(super::exit::REFUSED));
        }
    };
    let replay = record.replay();
    let replayed = ScreenRecord::of(&replay);
    // tmux's rows in the model's codes: tmux 3.4 and later print the same cells otherwise.
    let (width, height) = replay.size();
    let replay_vs_tmux = (replayed != record.tmux_screen)
        .then(|| {
            replayed
                .recaptured(width, height)
                .difference(&record.tmux_screen.recaptured(width, height), "tmux")
        })
        .flatten();
    let report = DivergenceReport {
        pane: &record.pane,
        tmux: &record.tmux,
        start: record.start,
        steps: record.steps.len(),
        output_bytes: record
            .steps
            .iter()
            .map(|step| match step {
                Step::Output(data) => data.len(),
                Step::Resize(_) => 0,
            })
            .sum(),
        resizes: record
            .steps
            .iter()
            .filter(|step| matches!(step, Step::Resize(_)))
            .count(),
        difference: &record.difference,
        explained: record.explained.as_deref(),
        reproduces_mirror: replayed == record.mirror_screen,
        equals_tmux: replay_vs_tmux.is_none(),
        tmux_at_byte: match replay_vs_tmux {
            Some(_) => record.tmux_point(),
            None => None,
        },
        replay_vs_tmux,
    };
    let mut stdout = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut stdout, &report)?;
        stdout.write_all(b"\n")?;
    } else {
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(
            stdout,
            "pane {} (tmux {}): from a {:?} start, {} steps ({} bytes of output, {} resizes)",
            report.pane,
            report.tmux,
            report.start,
            report.steps,
            report.output_bytes,
            report.resizes
        )?;
        writeln!(stdout, "the daemon saw: {}", report.difference)?;
        if let Some(explained) = report.explained {
            writeln!(stdout, "explained: {explained}")?;
        }
        writeln!(
            stdout,
            "replay gives the mirror's screen: {}",
            yes(report.reproduces_mirror)
        )?;
        match &report.replay_vs_tmux {
            None => writeln!(stdout, "replay gives tmux's screen: yes")?,
            Some(difference) => {
                writeln!(stdout, "replay gives tmux's screen: no ({difference})")?;
                match report.tmux_at_byte {
                    Some(at) => writeln!(
                        stdout,
                        "tmux's screen is the replay's after {at} of the {} bytes: tmux answered from an earlier point of the output",
                        report.output_bytes
                    )?,
                    None => writeln!(stdout, "tmux's screen is at no point of the replay")?,
                }
            }
        }
    }
    Ok(if report.equals_tmux {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::exit::NOT_REACHED)
    })
}
