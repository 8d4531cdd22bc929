//! `panectl last`: the agent's last answer, without the TUI around it.

use std::io::Write;
use std::process::ExitCode;

use panectl::api::routes::Route;

use super::client::{block_on, client, print_pretty, printable_lines};
use super::{Run, ServerArgs};

/// What `panectl last` is given.
#[derive(Debug, clap::Args)]
pub struct LastArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// Print `{"pane", "answer"}` as one JSON document.
    #[arg(long)]
    json: bool,
}

impl Run for LastArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        last(server, &self.pane, self.json)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

fn last(server: &ServerArgs, pane: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneLastResponse { pane }.path();
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    if json {
        print_pretty(&serde_json::json!({
            "pane": pane,
            "answer": String::from_utf8_lossy(&answer.body),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(printable_lines(&String::from_utf8_lossy(&answer.body)).as_bytes())?;
    out.write_all(b"\n")?;
    Ok(ExitCode::SUCCESS)
}
