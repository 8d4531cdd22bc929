//! `panectl input` and `panectl key`: type text or press keys in a pane through the daemon, for
//! scripts and orchestrators. Each command is its `Args` and its `run`.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{InputBody, KeysBody};

use super::client::{block_on, client};
use super::{Run, ServerArgs};

/// What `panectl input` is given.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// The text.
    text: String,
    /// Do not press Enter after the text.
    #[arg(long)]
    no_enter: bool,
    /// Type even into a pane that runs no recognised agent: a plain shell would run the
    /// text as commands.
    #[arg(long)]
    allow_shell: bool,
}

impl Run for InputArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        input(
            server,
            &self.pane,
            &self.text,
            !self.no_enter,
            self.allow_shell,
        )
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// What `panectl key` is given.
#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// The keys, pressed in order.
    #[arg(required = true)]
    keys: Vec<String>,
}

impl Run for KeyArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        key(server, &self.pane, &self.keys)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// `panectl input PANE TEXT [--no-enter] [--allow-shell]`.
fn input(
    server: &ServerArgs,
    pane: &str,
    text: &str,
    enter: bool,
    allow_shell: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneInput { pane }.path();
    let body = InputBody {
        text: text.to_string(),
        enter: Some(enter),
        allow_shell,
    };
    let _answer: panectl::orchestration::input::InputAnswer =
        block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl key PANE KEY...`.
fn key(server: &ServerArgs, pane: &str, keys: &[String]) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneKeys { pane }.path();
    let body = KeysBody {
        keys: keys.to_vec(),
    };
    block_on(async { Ok(client.post_empty(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}
