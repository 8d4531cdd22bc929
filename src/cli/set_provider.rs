//! `panectl set-provider`: tell the daemon which agent runs in a pane.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{PaneSummary, ProviderBody};

use super::client::{block_on, client, or_none, print_pretty, show_some};
use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// What `panectl set-provider` is given.
#[derive(Debug, clap::Args)]
pub struct SetProviderArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// A provider id (`panectl providers` lists them) or `auto`.
    #[arg(value_parser = ProviderParser::with_auto())]
    provider: String,
    /// Print the pane (as an entry of `ls --json`) as one JSON document.
    #[arg(long)]
    json: bool,
}

impl Run for SetProviderArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        set_provider(server, &self.pane, &self.provider, self.json)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

fn set_provider(
    server: &ServerArgs,
    pane: &str,
    provider: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneProvider { pane }.path();
    let body = ProviderBody {
        provider: (provider != "auto").then(|| provider.to_string()),
    };
    let pane: PaneSummary = block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    if json {
        print_pretty(&pane)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: provider {} ({}), status {}",
        pane.pane,
        or_none(show_some(pane.provider.as_ref())),
        or_none(show_some(pane.provider_source.map(|s| s.as_str()))),
        pane.status
    );
    Ok(ExitCode::SUCCESS)
}
