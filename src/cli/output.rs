//! `panectl output`: a pane's recent output bytes.

use std::io::Write;
use std::process::ExitCode;

use panectl::api::routes::Route;
use serde_json::Value;

use super::client::{block_on, client, text};
use super::{Run, ServerArgs};

/// What `panectl output` is given.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// Start at this sequence number (default: the oldest byte kept).
    #[arg(long)]
    from: Option<u64>,
}

impl Run for OutputArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        output(server, &self.pane, self.from)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

fn output(server: &ServerArgs, pane: &str, from: Option<u64>) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let from = from.map(|from| from.to_string());
    let query: Vec<(&str, &str)> = from.iter().map(|from| ("from", from.as_str())).collect();
    let path = Route::PaneOutput { pane }.with_query(&query);
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    if let Some(missed) = answer.header("x-panectl-missed") {
        eprintln!("panectl: bytes {missed} have left the daemon's buffer");
    }
    if let Some(gaps) = answer.header("x-panectl-gaps") {
        // Read loosely: a header of a newer daemon must not fail the output it comes with.
        let gaps: Vec<Value> = serde_json::from_str(gaps).unwrap_or_default();
        for gap in gaps {
            eprintln!(
                "panectl: gap before byte {} ({})",
                text(&gap, "seq"),
                text(&gap, "reason")
            );
        }
    }
    if let Some(next) = answer.header("x-panectl-next") {
        eprintln!("panectl: next sequence number {next}");
    }
    std::io::stdout().lock().write_all(&answer.body)?;
    Ok(ExitCode::SUCCESS)
}
