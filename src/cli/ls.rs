//! `panectl ls`: the panes, of one server or (`--all`) of every server with a daemon.

use std::process::ExitCode;

use panectl::api::wire::PaneSummary;
use serde_json::Value;

use super::client::{block_on, client, print_pretty, printable, show, show_some};
use super::table::Table;
use super::{Run, ServerArgs};

/// What `panectl ls` is given.
#[derive(Debug, clap::Args)]
pub struct LsArgs {
    /// Print one JSON document: the array of panes.
    #[arg(long)]
    json: bool,
    /// Every server with a daemon on this machine (local and remote), with a SERVER
    /// column; `SERVER/PANE` names a pane of any of them.
    #[arg(long)]
    all: bool,
}

impl Run for LsArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        if self.all {
            ls_all(self.json)
        } else {
            ls(server, self.json)
        }
    }
}

/// `panectl ls`: the panes of one server.
fn ls(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let panes = block_on(async { Ok(client.panes().await?) })?;
    if json {
        print_pretty(&panes)?;
        return Ok(ExitCode::SUCCESS);
    }
    let listed: Vec<(Option<&str>, &PaneSummary)> = panes.iter().map(|p| (None, p)).collect();
    print_panes(&listed)?;
    Ok(ExitCode::SUCCESS)
}

/// The pane table, with a SERVER column first when the rows carry their server, in the order
/// tmux shows panes: by server, session, window, pane.
fn print_panes(panes: &[(Option<&str>, &PaneSummary)]) -> anyhow::Result<()> {
    let with_server = panes.iter().any(|(server, _)| server.is_some());
    let mut sorted: Vec<&(Option<&str>, &PaneSummary)> = panes.iter().collect();
    sorted.sort_by(|(sa, a), (sb, b)| {
        (sa, a.session.as_bytes(), a.window_index, a.index, a.pane).cmp(&(
            sb,
            b.session.as_bytes(),
            b.window_index,
            b.index,
            b.pane,
        ))
    });
    let mut headers = vec![
        "PANE", "SESSION", "WINDOW", "NAME", "STATUS", "PROVIDER", "SIZE", "COMMAND", "TITLE",
    ];
    if with_server {
        headers.insert(0, "SERVER");
    }
    let mut table = Table::new(&headers).status_column(headers.len() - 5);
    for (server, p) in sorted {
        let mut row = Vec::with_capacity(headers.len());
        if with_server {
            row.push(printable(server.unwrap_or_default()));
        }
        row.extend([
            show(p.pane),
            show(&p.session),
            format!("{}:{}", p.window_index, show(&p.window)),
            dash(show_some(p.name.as_ref())),
            show(p.status),
            dash(show_some(p.provider.as_ref())),
            format!("{}x{}", p.width, p.height),
            show(&p.command),
            show(&p.title),
        ]);
        table.row(row);
    }
    table.print()?;
    Ok(())
}

/// An empty cell as `-`, so that every row has a word in every column (`awk` reads it).
fn dash(cell: String) -> String {
    if cell.is_empty() { "-".into() } else { cell }
}

/// `panectl ls --all`: the panes of every daemon's server, each with its server (a `server`
/// field in JSON). A daemon that does not answer is reported on stderr and left out.
fn ls_all(json: bool) -> anyhow::Result<ExitCode> {
    let (answers, code) = super::many::ask_every(|client| async move { client.panes().await })?;
    let listed: Vec<(&str, PaneSummary)> = answers
        .iter()
        .flat_map(|(label, panes)| panes.iter().map(|p| (label.as_str(), p.clone())))
        .collect();
    if json {
        let values: Vec<Value> = listed
            .iter()
            .map(|(server, pane)| {
                let mut value = serde_json::to_value(pane)?;
                if let Some(object) = value.as_object_mut() {
                    object.insert("server".into(), Value::String((*server).to_string()));
                }
                Ok(value)
            })
            .collect::<Result<_, serde_json::Error>>()?;
        print_pretty(&values)?;
        return Ok(code);
    }
    let rows: Vec<(Option<&str>, &PaneSummary)> =
        listed.iter().map(|(s, p)| (Some(*s), p)).collect();
    print_panes(&rows)?;
    Ok(code)
}
