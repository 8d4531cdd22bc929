//! `panectl replay`.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use panectl::ids::PaneId;
use panectl::mirror::journal::ScreenRecord;
use panectl::replay::{ReplayError, ReplayOptions, replay};

use super::client::printable;
use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// What `panectl replay` is given.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Raw stdout of a `tmux -C` client (with `--divergence`: a record).
    transcript: std::path::PathBuf,
    /// The file is a divergence record (the daemon saves one in its runtime directory,
    /// `<server>.divergences/`, each time its watchdog finds the mirror different from
    /// tmux): replay it through the screen model and say whether that gives the mirror's
    /// screen, tmux's, or neither. Exit code 1 when the replay differs from tmux's.
    #[arg(long)]
    divergence: bool,
    /// Print a JSON report instead of text.
    #[arg(long)]
    json: bool,
    /// Only this pane (`%N`).
    #[arg(long)]
    pane: Option<PaneId>,
    /// Size of panes the transcript gives no size for, as WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size, default_value = "80x24")]
    size: (u16, u16),
    /// Read each pane's status with this provider's rules, as the daemon does: through the
    /// whole stream, so a turn that ran and ended is `completed` even when its final screen
    /// does not say so. Shown in each pane's header (JSON: `status`, `rule`, `seen`).
    #[arg(long, value_parser = ProviderParser::new())]
    provider: Option<String>,
}

impl Run for ReplayArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        if self.divergence {
            divergence(&self.transcript, self.json)
        } else {
            let provider = match &self.provider {
                Some(id) => Some(super::detect::provider_rules(id)?),
                None => None,
            };
            let options = ReplayOptions {
                default_size: self.size,
                provider,
            };
            replay_transcript(&self.transcript, self.json, self.pane, options)
        }
    }
}

/// Parses `WIDTHxHEIGHT`.
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

/// `panectl replay TRANSCRIPT`: each pane's final screen.
fn replay_transcript(
    transcript: &Path,
    json: bool,
    pane: Option<PaneId>,
    options: ReplayOptions,
) -> anyhow::Result<ExitCode> {
    let file =
        File::open(transcript).with_context(|| format!("cannot open {}", transcript.display()))?;
    let result = match replay(file, options) {
        Ok(result) => result,
        Err(ReplayError::NotControlMode(reason)) => {
            eprintln!(
                "panectl: {} is not a tmux control-mode transcript: {}",
                printable(&transcript.display().to_string()),
                printable(&reason)
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
        eprintln!("panectl: warning: {}", printable(error));
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
    /// The daemon dropped steps: the record cannot be replayed, and the verdicts below are
    /// `null`.
    truncated: bool,
    /// The replay gives the screen the mirror had.
    reproduces_mirror: Option<bool>,
    /// The replay gives the screen tmux had.
    equals_tmux: Option<bool>,
    /// Where the replay differs from tmux's screen.
    replay_vs_tmux: Option<String>,
    /// The last point of the output (in bytes) at which the replay showed tmux's screen.
    tmux_at_byte: Option<usize>,
}

/// `panectl replay --divergence`: replays a divergence record through the screen model. A
/// record comes from elsewhere (a bug report, say): every field of it is printed with its
/// control characters escaped.
fn divergence(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use panectl::mirror::journal::Step;
    let text = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    let record: panectl::mirror::DivergenceRecord = match serde_json::from_slice(&text) {
        Ok(record) => record,
        Err(error) => {
            eprintln!(
                "panectl: {} is not a divergence record: {}",
                printable(&path.display().to_string()),
                printable(&error.to_string())
            );
            return Ok(ExitCode::from(super::exit::REFUSED));
        }
    };
    let verdict = (!record.truncated).then(|| judge(&record));
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
        truncated: record.truncated,
        reproduces_mirror: verdict.as_ref().map(|v| v.reproduces_mirror),
        equals_tmux: verdict.as_ref().map(|v| v.replay_vs_tmux.is_none()),
        tmux_at_byte: verdict.as_ref().and_then(|v| v.tmux_at_byte),
        replay_vs_tmux: verdict.and_then(|v| v.replay_vs_tmux),
    };
    let mut stdout = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut stdout, &report)?;
        stdout.write_all(b"\n")?;
    } else {
        print_divergence(&mut stdout, &report)?;
    }
    Ok(match report.equals_tmux {
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::from(super::exit::NOT_REACHED),
        None => ExitCode::from(super::exit::REFUSED),
    })
}

/// What replaying a whole record says.
struct Verdict {
    reproduces_mirror: bool,
    replay_vs_tmux: Option<String>,
    tmux_at_byte: Option<usize>,
}

/// Replays a record that is not truncated and compares the result with both screens.
fn judge(record: &panectl::mirror::DivergenceRecord) -> Verdict {
    let replay = record.replay();
    let replayed = ScreenRecord::of(&replay);
    // tmux's rows in the model's codes: tmux 3.4 and later print the same cells otherwise.
    let (width, height) = replay.size();
    let replay_vs_tmux = (replayed != record.tmux_screen)
        .then(|| {
            replayed
                .recaptured(record.dialect, width, height)
                .difference(
                    &record.tmux_screen.recaptured(record.dialect, width, height),
                    "tmux",
                )
        })
        .flatten();
    Verdict {
        reproduces_mirror: replayed == record.mirror_screen,
        tmux_at_byte: replay_vs_tmux.as_ref().and_then(|_| record.tmux_point()),
        replay_vs_tmux,
    }
}

/// The text report: each field from the record made [`printable`].
fn print_divergence(out: &mut impl Write, report: &DivergenceReport<'_>) -> std::io::Result<()> {
    let yes = |b: bool| if b { "yes" } else { "no" };
    writeln!(
        out,
        "pane {} (tmux {}): from a {:?} start, {} steps ({} bytes of output, {} resizes)",
        printable(report.pane),
        printable(report.tmux),
        report.start,
        report.steps,
        report.output_bytes,
        report.resizes
    )?;
    writeln!(out, "the daemon saw: {}", printable(report.difference))?;
    if let Some(explained) = report.explained {
        writeln!(out, "explained: {}", printable(explained))?;
    }
    if report.truncated {
        return writeln!(
            out,
            "truncated: the daemon dropped output it could not keep (the screen stayed inside \
             one escape sequence too long), so the record cannot be replayed from its start \
             and gives no verdict"
        );
    }
    if let Some(reproduces) = report.reproduces_mirror {
        writeln!(out, "replay gives the mirror's screen: {}", yes(reproduces))?;
    }
    match &report.replay_vs_tmux {
        None => writeln!(out, "replay gives tmux's screen: yes")?,
        Some(difference) => {
            writeln!(
                out,
                "replay gives tmux's screen: no ({})",
                printable(difference)
            )?;
            match report.tmux_at_byte {
                Some(at) => writeln!(
                    out,
                    "tmux's screen is the replay's after {at} of the {} bytes: tmux answered from an earlier point of the output",
                    report.output_bytes
                )?,
                None => writeln!(out, "tmux's screen is at no point of the replay")?,
            }
        }
    }
    Ok(())
}
