//! `panectl status`: a pane's status word.

use std::process::ExitCode;

use super::client::{block_on, client, print_pretty};
use super::{Run, ServerArgs};

/// What `panectl status` is given.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// Print the pane as JSON (as an entry of `ls --json`) instead of the word.
    #[arg(long)]
    json: bool,
}

impl Run for StatusArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        let client = client(server)?;
        let summary = block_on(async { Ok(client.pane(&self.pane).await?) })?;
        if self.json {
            print_pretty(&summary)?;
            return Ok(ExitCode::SUCCESS);
        }
        println!("{}", summary.status);
        Ok(ExitCode::SUCCESS)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}
