//! `panectl transport`: where a pane's output comes from, and moving it.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{PaneSummary, SessionTransportAnswer, TransportBody};

use super::client::{block_on, client, print_pretty, printable};
use super::{Run, ServerArgs};

/// What `panectl transport` is given.
#[derive(Debug, clap::Args)]
pub struct TransportArgs {
    /// The pane (with `--session`, the session: `$N` or its name).
    #[arg(add = super::complete::panes())]
    pane: String,
    /// The transport to move it to (omit to print the current one).
    #[arg(value_enum, required_if_eq("session", "true"))]
    transport: Option<panectl::pipe::Transport>,
    /// Move every pane of the session, and the panes it gets later.
    #[arg(long)]
    session: bool,
    /// Print the pane (with `--session`: the moved and failed panes) as one JSON document.
    #[arg(long)]
    json: bool,
}

impl Run for TransportArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        match (self.session, self.transport) {
            (true, Some(transport)) => session_transport(server, &self.pane, transport, self.json),
            _ => transport(server, &self.pane, self.transport, self.json),
        }
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

fn transport(
    server: &ServerArgs,
    pane: &str,
    transport: Option<panectl::pipe::Transport>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let pane: PaneSummary = block_on(async {
        Ok(match transport {
            Some(transport) => {
                let path = Route::PaneTransport { pane }.path();
                client
                    .post_json(&path, &TransportBody { transport })
                    .await?
            }
            None => client.pane(pane).await?,
        })
    })?;
    if json {
        print_pretty(&pane)?;
    } else {
        println!("{}: {}", pane.pane, pane.transport.as_str());
    }
    Ok(ExitCode::SUCCESS)
}

fn session_transport(
    server: &ServerArgs,
    session: &str,
    transport: panectl::pipe::Transport,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::SessionTransport { session }.path();
    let body = TransportBody { transport };
    let answer: SessionTransportAnswer =
        block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    if json {
        print_pretty(&answer)?;
    } else {
        for pane in &answer.panes {
            println!("{}: {}", pane.pane, pane.transport.as_str());
        }
    }
    for pane in &answer.failed {
        eprintln!(
            "panectl: {} stays where it was: {}",
            pane.pane,
            printable(&pane.error)
        );
    }
    Ok(if answer.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
