//! `panectl providers`: the provider rules the daemon uses.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::ProviderInfo;

use super::client::{block_on, client, print_pretty, printable};
use super::table::Table;
use super::{Run, ServerArgs};

/// What `panectl providers` is given.
#[derive(Debug, clap::Args)]
pub struct ProvidersArgs {
    /// Print one JSON document: the array of providers.
    #[arg(long)]
    json: bool,
}

impl Run for ProvidersArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        providers(server, self.json)
    }
}

fn providers(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let providers: Vec<ProviderInfo> =
        block_on(async { Ok(client.get_json(&Route::Providers {}.path()).await?) })?;
    if json {
        print_pretty(&providers)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "NAME", "RULES", "SOURCE"]).right_aligned(2);
    for provider in &providers {
        table.row(vec![
            printable(&provider.id),
            printable(&provider.name),
            provider.rules.to_string(),
            printable(&provider.source),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}
