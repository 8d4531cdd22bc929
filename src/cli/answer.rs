//! `panectl answer` and `panectl decisions`: the dialogs agents wait on, read as decisions and
//! answered by option through the daemon (never keys typed blind). Each command is its `Args`
//! and its `run`.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use panectl::api::routes::Route;
use panectl::api::wire::{AnswerBody, AnswerOutcome, Outcome, PaneDecision};

use super::client::{block_on, client, print_pretty};
use super::exit::NOT_REACHED;
use super::explanation::write_decision;
use super::{Run, ServerArgs};

/// Answer the dialog a pane shows, by option. Exit code 0 when the dialog took the answer and
/// left the screen, 1 when no dialog was there, another one was, or it stayed.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("choice").required(true).args(["option", "label", "yes", "no"])))]
pub struct AnswerArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// The option's number, as the dialog shows it.
    #[arg(long)]
    option: Option<usize>,
    /// The option's label (any case), or the start of exactly one option's label.
    #[arg(long)]
    label: Option<String>,
    /// The dialog's affirmative option (Yes, Allow, Approve, Proceed, Trust...), by its label.
    #[arg(long)]
    yes: bool,
    /// The dialog's negative option (No, Deny, Reject, Cancel, Don't...), by its label.
    #[arg(long)]
    no: bool,
    /// Answer only the dialog with this fingerprint (from `panectl decisions` or `explain`):
    /// another dialog in its place is left alone.
    #[arg(long, value_name = "FINGERPRINT")]
    decision: Option<String>,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
}

impl Run for AnswerArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        answer(server, self)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// `panectl answer PANE (--option N | --label TEXT | --yes | --no) [--decision FINGERPRINT]`.
fn answer(server: &ServerArgs, args: &AnswerArgs) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneDecision { pane: &args.pane }.path();
    let body = AnswerBody {
        option: args.option,
        label: args.label.clone(),
        yes: args.yes,
        no: args.no,
        decision: args.decision.clone(),
    };
    let outcome: AnswerOutcome = block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    if args.json {
        print_pretty(&outcome)?;
    } else {
        let mut out = std::io::stdout().lock();
        let picked = format!(
            "{}. {}",
            outcome.option.unwrap_or_default(),
            super::client::printable(outcome.label.as_deref().unwrap_or_default())
        );
        match outcome.outcome {
            Outcome::Answered => writeln!(
                out,
                "answered {picked} in {}; now {}",
                outcome.pane, outcome.status
            )?,
            Outcome::Unconfirmed => writeln!(
                out,
                "pressed {} for {picked} in {}, and the dialog is still there",
                outcome.keys.join(" "),
                outcome.pane
            )?,
            Outcome::Gone => writeln!(
                out,
                "no dialog in {} (answered already, or closed); nothing pressed",
                outcome.pane
            )?,
            Outcome::Changed => {
                writeln!(
                    out,
                    "another dialog is in {}; nothing pressed. It is:",
                    outcome.pane
                )?;
                if let Some(decision) = &outcome.decision {
                    write_decision(&mut out, decision)?;
                }
            }
        }
    }
    Ok(match outcome.outcome {
        Outcome::Answered => ExitCode::SUCCESS,
        _ => ExitCode::from(NOT_REACHED),
    })
}

/// List the dialogs agents wait on: the question, the options and the keys that pick each.
#[derive(Debug, Args)]
pub struct DecisionsArgs {
    /// Print them as JSON.
    #[arg(long)]
    json: bool,
    /// Every server's dialogs (every daemon of this user on this machine, local and remote
    /// servers alike), each pane named `SERVER/%N` so that `panectl answer` takes it as it is.
    #[arg(long)]
    all: bool,
}

impl Run for DecisionsArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        decisions(server, self)
    }
}

/// A waiting dialog with its server's label (with `--all`).
type Labelled = (Option<String>, PaneDecision);

/// `panectl decisions [--json] [--all]`.
fn decisions(server: &ServerArgs, args: &DecisionsArgs) -> anyhow::Result<ExitCode> {
    let path = Route::Decisions {}.path();
    let (found, code): (Vec<Labelled>, ExitCode) = if args.all {
        every_servers_decisions(&path)?
    } else {
        let client = client(server)?;
        let found: Vec<PaneDecision> = block_on(async { Ok(client.get_json(&path).await?) })?;
        (
            found.into_iter().map(|d| (None, d)).collect(),
            ExitCode::SUCCESS,
        )
    };
    if args.json {
        if args.all {
            let values = found
                .iter()
                .map(|(label, waiting)| {
                    let mut value = serde_json::to_value(waiting)?;
                    if let (Some(object), Some(label)) = (value.as_object_mut(), label) {
                        object.insert("server".into(), serde_json::Value::String(label.clone()));
                    }
                    Ok(value)
                })
                .collect::<Result<Vec<_>, serde_json::Error>>()?;
            print_pretty(&values)?;
        } else {
            let plain: Vec<&PaneDecision> = found.iter().map(|(_, d)| d).collect();
            print_pretty(&plain)?;
        }
        return Ok(code);
    }
    let mut out = std::io::stdout().lock();
    if found.is_empty() {
        writeln!(out, "no agent waits for an answer")?;
    }
    for (label, waiting) in &found {
        let pane = match label {
            Some(label) => format!("{}/{}", super::client::printable(label), waiting.pane),
            None => waiting.pane.to_string(),
        };
        writeln!(
            out,
            "{} ({}{}):",
            pane,
            super::client::printable(waiting.provider.as_deref().unwrap_or("no provider")),
            waiting
                .name
                .as_deref()
                .map(|name| format!(", {}", super::client::printable(name)))
                .unwrap_or_default(),
        )?;
        write_decision(&mut out, &waiting.decision)?;
    }
    Ok(code)
}

/// The dialogs of every daemon's server, each with its server's label. A daemon that does
/// not answer is reported on stderr and left out (and the exit code says so).
fn every_servers_decisions(path: &str) -> anyhow::Result<(Vec<Labelled>, ExitCode)> {
    let (answers, code) = super::many::ask_every(|client| {
        let path = path.to_string();
        async move { client.get_json::<Vec<PaneDecision>>(&path).await }
    })?;
    let found = answers
        .into_iter()
        .flat_map(|(label, list)| list.into_iter().map(move |d| (Some(label.clone()), d)))
        .collect();
    Ok((found, code))
}

/// The dialog the agent `target` (a pane id or an agent's name) waits on, as the daemon reads
/// it; `None` when it shows none the daemon reads.
pub(super) async fn waiting_decision(
    api: &panectl::api::client::ApiClient,
    target: &str,
) -> anyhow::Result<Option<PaneDecision>> {
    let waiting: Vec<PaneDecision> = api.get_json(&Route::Decisions {}.path()).await?;
    Ok(waiting
        .into_iter()
        .find(|w| w.pane == target || w.name.as_deref() == Some(target)))
}
