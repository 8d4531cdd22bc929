//! `panectl assign` and `panectl assignments`: give another agent a task and return at once;
//! its answer is queued for the assigner. Each command is its `Args` and its `run`.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{Assigned, Assignment, AssignmentState};

use super::client::{block_on, client, json_line, print_pretty, printable};
use super::handoff::TaskArgs;
use super::table::Table;
use super::{Run, ServerArgs};

/// What `panectl assign` is given.
#[derive(Debug, clap::Args)]
pub struct AssignArgs {
    #[command(flatten)]
    task: TaskArgs,
    /// The pane whose inbox gets the answer (default `$TMUX_PANE`).
    #[arg(long, value_name = "PANE", add = super::complete::panes())]
    reply_to: Option<String>,
}

impl Run for AssignArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        // An answer goes to a pane of the worker's server: `--reply-to SERVER/PANE` must name it.
        let reply_to = match &self.reply_to {
            Some(reply_to) => match super::many::route(reply_to)? {
                Some((other, rest)) => {
                    if !other.same_server(server) {
                        anyhow::bail!(
                            "--reply-to {reply_to}: the answer can only go to a pane of the \
                             worker's server"
                        );
                    }
                    Some(rest)
                }
                None => Some(reply_to.clone()),
            },
            None => None,
        };
        assign(server, &self.task, reply_to.as_deref())
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        self.task.pane_mut()
    }
}

/// What `panectl assignments` is given.
#[derive(Debug, clap::Args)]
pub struct AssignmentsArgs {
    /// Only those in this state (working, answered, failed).
    #[arg(long)]
    state: Option<AssignmentState>,
    /// Print one JSON object per line.
    #[arg(long)]
    json: bool,
}

impl Run for AssignmentsArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        list(server, self.state, self.json)
    }
}

/// `panectl assign`: prints the assignment id; the answer arrives in `--reply-to`'s inbox.
fn assign(
    server: &ServerArgs,
    args: &TaskArgs,
    reply_to: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let reply_to = match reply_to {
        Some(pane) => pane.to_string(),
        None => server.own_pane().ok_or_else(|| {
            if std::env::var_os("TMUX_PANE").is_some() {
                anyhow::anyhow!(
                    "give --reply-to PANE: this pane ($TMUX_PANE) is not one of the worker's \
                     server, and the answer goes to a pane of that server"
                )
            } else {
                anyhow::anyhow!(
                    "give --reply-to PANE (outside tmux there is no $TMUX_PANE to default to)"
                )
            }
        })?,
    };
    let mut body = args.body(server.is_remote())?;
    body.reply_to = Some(reply_to);
    let client = client(server)?;
    let assigned: Assigned = block_on(async {
        super::handoff::default_launch_session(&client, &mut body, server.own_pane()).await;
        Ok(client.post_json(&Route::Assign {}.path(), &body).await?)
    })?;
    if args.json {
        print_pretty(&assigned)?;
    } else {
        println!("{}", assigned.assignment);
    }
    eprintln!(
        "panectl: assignment {} to {}; its answer will be queued for {}",
        assigned.assignment, assigned.pane, assigned.reply_to
    );
    Ok(ExitCode::SUCCESS)
}

/// `panectl assignments [--state S] [--json]`.
fn list(
    server: &ServerArgs,
    state: Option<AssignmentState>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let query: Vec<(&str, &str)> = state
        .iter()
        .map(|state| ("state", state.as_str()))
        .collect();
    let path = Route::Assignments {}.with_query(&query);
    let all: Vec<Assignment> = block_on(async { Ok(client.get_json(&path).await?) })?;
    if json {
        for a in &all {
            println!("{}", json_line(a)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "STATE", "WORKER", "REPLY TO", "MESSAGE", "REASON"])
        .right_aligned(0)
        .right_aligned(4);
    for a in &all {
        table.row(vec![
            a.id.to_string(),
            a.state.as_str().to_string(),
            printable(&a.worker),
            printable(&a.reply_to),
            a.message_id.to_string(),
            a.reason.as_deref().map(printable).unwrap_or_default(),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}
