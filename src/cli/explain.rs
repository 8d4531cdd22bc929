//! `panectl explain`: which status rule fired and why the others did not, for a pane (through
//! the daemon) or a capture file (offline, as `detect` reads it).

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::Explanation;

use super::client::{block_on, client, print_pretty};
use super::explanation::{Shown, print_explanation};
use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// What `panectl explain` is given.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A pane, or a file holding a screen capture (plain or `capture-pane -e` text).
    #[arg(add = super::complete::panes())]
    target: String,
    /// The provider whose rules to use for a file (default: recognised from its banner).
    #[arg(long, value_parser = ProviderParser::new())]
    provider: Option<String>,
    /// Print the explanation as one JSON document.
    #[arg(long)]
    json: bool,
}

impl Run for ExplainArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        let file = std::path::Path::new(&self.target);
        if file.is_file() {
            super::detect::explain_file(file, self.provider.as_deref(), self.json)
        } else {
            explain(server, &self.target, self.json)
        }
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.target)
    }
}

fn explain(server: &ServerArgs, pane: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneExplain { pane }.path();
    let explanation: Explanation = block_on(async { Ok(client.get_json(&path).await?) })?;
    if json {
        print_pretty(&explanation)?;
    } else {
        print_explanation(&Shown::pane(&explanation))?;
    }
    Ok(ExitCode::SUCCESS)
}
