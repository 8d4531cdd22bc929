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
}

impl Run for DecisionsArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        decisions(server, self)
    }
}

/// `panectl decisions [--json]`.
fn decisions(server: &ServerArgs, args: &DecisionsArgs) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::Decisions {}.path();
    let found: Vec<PaneDecision> = block_on(async { Ok(client.get_json(&path).await?) })?;
    if args.json {
        print_pretty(&found)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    if found.is_empty() {
        writeln!(out, "no agent waits for an answer")?;
    }
    for waiting in &found {
        writeln!(
            out,
            "{} ({}{}):",
            waiting.pane,
            super::client::printable(waiting.provider.as_deref().unwrap_or("no provider")),
            waiting
                .name
                .as_deref()
                .map(|name| format!(", {}", super::client::printable(name)))
                .unwrap_or_default(),
        )?;
        write_decision(&mut out, &waiting.decision)?;
    }
    Ok(ExitCode::SUCCESS)
}
