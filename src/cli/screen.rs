//! `panectl screen`: a pane's screen as the daemon mirrors it.

use std::io::Write;
use std::process::ExitCode;

use panectl::api::routes::Route;

use super::client::{block_on, client, printable_lines};
use super::{Run, ServerArgs};

/// What `panectl screen` is given.
#[derive(Debug, clap::Args)]
pub struct ScreenArgs {
    /// The pane: %N, session:window.pane, or a unique window name.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// Keep colours and attributes (ANSI escape sequences).
    #[arg(long)]
    ansi: bool,
}

impl Run for ScreenArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        screen(server, &self.pane, self.ansi)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

fn screen(server: &ServerArgs, pane: &str, ansi: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let query: &[(&str, &str)] = if ansi { &[("format", "ansi")] } else { &[] };
    let path = Route::PaneScreen { pane }.with_query(query);
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    let mut out = std::io::stdout().lock();
    // `--ansi` asks for the screen's own codes; the text alone never holds a control
    // character, and escaping makes sure of it.
    if ansi {
        out.write_all(&answer.body)?;
    } else {
        out.write_all(printable_lines(&String::from_utf8_lossy(&answer.body)).as_bytes())?;
    }
    if !answer.body.ends_with(b"\n") {
        out.write_all(b"\n")?;
    }
    Ok(ExitCode::SUCCESS)
}
