//! `panectl jump`: switch a tmux client to the next agent that waits for the user, else to the
//! next one that has completed, cycling from the current pane.

use std::process::ExitCode;

use std::time::Duration;

use anyhow::bail;
use panectl::api::wire::{PaneDecision, PaneSummary};
use panectl::status::Status;

use super::ServerArgs;
use super::agents;
use super::client::{block_on, client};
use super::tmux_client;

/// The message shown when there is nowhere to go.
const NOTHING: &str = "panectl: no agent is waiting or completed";

/// What `panectl jump` is given.
#[derive(Debug, clap::Args)]
pub struct JumpArgs {
    /// The tmux client to switch (default: the one tmux picks, else the one used last).
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
    /// The current pane: the search starts after it (default: the client's current pane).
    #[arg(add = super::complete::panes())]
    #[arg(long, value_name = "PANE")]
    from: Option<String>,
}

/// The pane to go to: the first agent after `from` (in the stable order, wrapping) in the
/// first [notable](panectl::status::Status::notable) status by rank (one that waits for the
/// user, else one that has completed). `panes` are in the stable order.
pub(super) fn next_target<'a>(
    panes: &'a [PaneSummary],
    from: Option<&str>,
) -> Option<&'a PaneSummary> {
    let start = from
        .and_then(|from| panes.iter().position(|p| p.pane.to_string() == from))
        .map_or(0, |at| at + 1);
    panectl::status::meaning::notable_by_rank()
        .into_iter()
        .find_map(|status| {
            panes[start..]
                .iter()
                .chain(&panes[..start])
                .find(|p| agents::is_agent(p) && p.status == status)
        })
}

/// How long the dialog's question and options stay on the status line after a jump.
const DECISION_SHOWN_FOR: Duration = Duration::from_secs(8);

/// Shows the dialog the agent jumped to waits on (its question and options) on the client's
/// status line. Best effort: the jump is done, and a dialog the daemon reads no options from
/// (or one that went meanwhile) shows nothing.
fn show_decision(
    server: &ServerArgs,
    address: &panectl::tmux::ServerAddress,
    client_name: &str,
    target: &PaneSummary,
) {
    let pane = target.pane.to_string();
    let found =
        client(server).and_then(|api| block_on(super::answer::waiting_decision(&api, &pane)));
    let waiting = match found {
        Ok(found) => found,
        Err(error) => {
            tracing::debug!(%error, "no decisions read");
            None
        }
    };
    if let Some(waiting) = waiting {
        let text = decision_message(&waiting);
        if let Err(error) =
            tmux_client::display_for(address, client_name, &text, Some(DECISION_SHOWN_FOR))
        {
            tracing::debug!(%error, "the decision not shown");
        }
    }
}

/// The most characters of a question shown on the status line (its end, where the question
/// itself is; the options follow).
const QUESTION_SHOWN: usize = 120;

/// One status line for a dialog: `%2 claude_code: Do you want to proceed? 1. Yes  2. No`.
fn decision_message(waiting: &PaneDecision) -> String {
    let question: Vec<&str> = waiting
        .decision
        .question
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let question = question.join(" · ");
    let count = question.chars().count();
    let question = if count > QUESTION_SHOWN {
        let tail: String = question.chars().skip(count - QUESTION_SHOWN).collect();
        format!("…{tail}")
    } else {
        question
    };
    let options: Vec<String> = waiting
        .decision
        .options
        .iter()
        .map(|o| format!("{}. {}", o.number, o.label))
        .collect();
    let who = waiting.name.as_deref().or(waiting.provider.as_deref());
    format!(
        "{}{}: {question}  {}",
        waiting.pane,
        who.map(|w| format!(" {w}")).unwrap_or_default(),
        options.join("  ")
    )
}

/// A pane given as `session:window.pane` or a window name, as its `%N` id (through the daemon).
/// An id is taken as it is, even one the daemon has not seen yet (the search then starts at
/// the beginning).
fn pane_id(server: &ServerArgs, pane: &str) -> anyhow::Result<String> {
    if pane.starts_with('%') {
        return Ok(pane.to_string());
    }
    let client = client(server)?;
    let found = block_on(async { Ok(client.pane(pane).await?) })?;
    Ok(found.pane.to_string())
}

impl super::Run for JumpArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        jump(server, self)
    }
}

/// `panectl jump [--client NAME] [--from PANE]`: prints the pane switched to.
fn jump(server: &ServerArgs, args: &JumpArgs) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let panes = agents::panes(server)?;
    let current = tmux_client::find_client(&address, args.client.as_deref())?;
    let from = match (&args.from, &current) {
        (Some(from), _) => Some(pane_id(server, from)?),
        (None, Some(current)) => Some(current.pane.clone()),
        (None, None) => None,
    };
    match (next_target(&panes, from.as_deref()), &current) {
        (Some(target), Some(client)) => {
            tmux_client::switch_to(&address, &client.name, &target.pane.to_string())?;
            println!("{}", target.pane);
            if target.status == Status::WaitingUserAnswer {
                show_decision(server, &address, &client.name, target);
            }
        }
        (Some(target), None) => bail!("no tmux client is attached to switch to {}", target.pane),
        (None, Some(client)) => tmux_client::display(&address, &client.name, NOTHING)?,
        (None, None) => eprintln!("{NOTHING}"),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::agents::tests::pane;

    fn target(panes: &[PaneSummary], from: Option<&str>) -> Option<String> {
        next_target(panes, from).map(|p| p.pane.to_string())
    }

    #[test]
    fn waiting_agents_come_first_and_cycle() {
        let mut panes = vec![
            pane(0, "a", 0, 0, "completed"),
            pane(1, "a", 0, 1, "waiting_user_answer"),
            pane(2, "a", 1, 0, "idle"),
            pane(3, "b", 0, 0, "waiting_user_answer"),
            pane(4, "b", 1, 0, "completed"),
        ];
        assert_eq!(target(&panes, None).as_deref(), Some("%1"));
        assert_eq!(target(&panes, Some("%1")).as_deref(), Some("%3"));
        assert_eq!(target(&panes, Some("%2")).as_deref(), Some("%3"));
        assert_eq!(target(&panes, Some("%3")).as_deref(), Some("%1"));
        assert_eq!(target(&panes, Some("%99")).as_deref(), Some("%1"));
        // Nobody waits: the completed ones, cycling.
        for p in &mut panes {
            if p.status == Status::WaitingUserAnswer {
                p.status = Status::Processing;
            }
        }
        assert_eq!(target(&panes, Some("%0")).as_deref(), Some("%4"));
        assert_eq!(target(&panes, Some("%4")).as_deref(), Some("%0"));
        // A lone candidate is chosen even from itself.
        panes[4].status = Status::Idle;
        assert_eq!(target(&panes, Some("%0")).as_deref(), Some("%0"));
        // Shells do not count, whatever their status.
        panes[0].provider = Some("shell".into());
        assert_eq!(target(&panes, Some("%0")), None);
        assert_eq!(target(&[], None), None);
    }

    #[test]
    fn a_dialog_is_one_status_line_with_the_end_of_its_question_and_every_option() {
        let choice = |number: usize, label: &str| panectl::status::decision::Choice {
            number,
            label: label.into(),
            detail: String::new(),
            pointed: number == 1,
            keys: vec!["Enter".into()],
        };
        let mut waiting = PaneDecision {
            pane: "%2".into(),
            name: None,
            session: "work".into(),
            provider: Some("claude_code".into()),
            decision: panectl::status::decision::Decision {
                question: "Bash command\n\n  cargo test\n\nDo you want to proceed?".into(),
                options: vec![choice(1, "Yes"), choice(3, "No")],
                fingerprint: "00ff00ff00ff00ff".into(),
            },
        };
        assert_eq!(
            decision_message(&waiting),
            "%2 claude_code: Bash command · cargo test · Do you want to proceed?  1. Yes  3. No"
        );
        // A name wins over the provider; a long question keeps its end.
        waiting.name = Some("beta".into());
        waiting.decision.question = format!("{}\nProceed?", "x".repeat(300));
        let shown = decision_message(&waiting);
        assert!(shown.starts_with("%2 beta: …xxx"), "{shown}");
        assert!(shown.ends_with("x · Proceed?  1. Yes  3. No"), "{shown}");
    }
}
