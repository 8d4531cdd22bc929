//! The inbox commands: `send` queues a message, `inbox` lists messages, `inbox cancel` cancels
//! a pending one. All go through the daemon, which owns the inbox database.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use panectl::api::routes::Route;
use panectl::api::wire::{Message, SendBody};

use super::client::{block_on, client, json_line, print_pretty, printable, show, show_some};
use super::table::Table;
use super::tmux_client;
use super::{Run, ServerArgs};
use panectl::message::State;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What `panectl send` is given.
#[derive(Debug, clap::Args)]
pub struct SendArgs {
    /// The receiving pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// Who sends it: a pane or a label (default `cli`).
    #[arg(long, value_name = "X")]
    from: Option<String>,
    /// Give up if it cannot be delivered within this long (`90s`, `5m`, `2h`).
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    ttl: Option<std::time::Duration>,
    /// The text, or `-` to read it from stdin.
    #[arg(required_unless_present = "buffer", conflicts_with = "buffer")]
    message: Option<String>,
    /// Take the text from this tmux paste buffer (its exact bytes) instead, and delete the
    /// buffer once the message is queued (a failed send leaves it, text and all).
    #[arg(long, value_name = "NAME")]
    buffer: Option<String>,
    /// Show the outcome (the message id, or the error) on the tmux status line instead of
    /// printing it, for key bindings (`run-shell` output is otherwise lost); the exit code is
    /// then 0 whenever it could be shown.
    #[arg(long)]
    notify: bool,
    /// The tmux client to show it on (default: the one tmux picks, else the one used last).
    #[arg(long, value_name = "NAME", requires = "notify")]
    client: Option<String>,
    /// Print the queued message as JSON instead of its id.
    #[arg(long, conflicts_with = "notify")]
    json: bool,
    /// Send even to a pane that runs no recognised agent: a plain shell would run the text
    /// as commands.
    #[arg(long)]
    allow_shell: bool,
}

/// Queues `body` for `pane`; the stored message as the daemon answers it.
pub(super) fn queue(
    server: &ServerArgs,
    pane: &str,
    body: &[u8],
    from: &str,
    ttl_seconds: Option<f64>,
    allow_shell: bool,
) -> anyhow::Result<Message> {
    let request = SendBody {
        body: None,
        body_hex: Some(hex(body)),
        from: Some(from.to_string()),
        ttl_seconds,
        allow_shell,
    };
    let client = client(server)?;
    let path = Route::PaneMessages { pane }.path();
    block_on(async { Ok(client.post_json(&path, &request).await?) })
}

/// The queued message, or why it was not queued.
fn send_message(server: &ServerArgs, args: &SendArgs) -> anyhow::Result<Message> {
    let body = match (&args.buffer, args.message.as_deref()) {
        (Some(buffer), _) => tmux_client::read_buffer(&server.address()?, buffer)?,
        (None, Some("-")) => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read the message from stdin")?;
            bytes
        }
        (None, message) => message.unwrap_or_default().as_bytes().to_vec(),
    };
    let from = args.from.as_deref().unwrap_or("cli");
    let stored = queue(
        server,
        &args.pane,
        &body,
        from,
        args.ttl.map(|t| t.as_secs_f64()),
        args.allow_shell,
    )
    .map_err(|error| match &args.buffer {
        Some(buffer) => error.context(format!("the text stays in tmux paste buffer {buffer:?}")),
        None => error,
    })?;
    if let Some(buffer) = &args.buffer {
        tmux_client::delete_buffer(&server.address()?, buffer)
            .with_context(|| format!("message {} is queued, but", stored.id))?;
    }
    Ok(stored)
}

impl Run for SendArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        send(server, self)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// `panectl send PANE [--from X] [--ttl D] (MESSAGE | - | --buffer NAME) [--notify]`: prints
/// the message id (or shows it in tmux).
fn send(server: &ServerArgs, args: &SendArgs) -> anyhow::Result<ExitCode> {
    let outcome = send_message(server, args);
    if args.json {
        print_pretty(&outcome?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.notify {
        let stored = outcome?;
        println!("{}", stored.id);
        if stored.state == State::Held {
            eprintln!(
                "panectl: agent {} is not running: message {} waits for it (panectl restore, or \
                 launch --name {})",
                args.pane, stored.id, args.pane
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let message = match &outcome {
        Ok(stored) if stored.state == State::Held => format!(
            "panectl: message {} waits for agent {} to come back",
            stored.id, args.pane
        ),
        Ok(stored) => format!("panectl: message {} queued for {}", stored.id, args.pane),
        Err(error) => format!("panectl: {error:#}"),
    };
    let address = server.address()?;
    tmux_client::notify(&address, args.client.as_deref(), &message)
        .with_context(|| format!("cannot show {message:?} in tmux"))?;
    Ok(ExitCode::SUCCESS)
}

/// What `panectl inbox` is given.
#[derive(Debug, clap::Args)]
pub struct InboxArgs {
    #[command(subcommand)]
    action: Option<InboxAction>,
    /// Only this pane's messages.
    #[arg(long)]
    #[arg(add = super::complete::panes())]
    pane: Option<String>,
    /// Only messages in this state (pending, delivering, delivered, failed, uncertain,
    /// expired, cancelled).
    #[arg(long)]
    state: Option<State>,
    /// Print one JSON object per line.
    #[arg(long)]
    json: bool,
}

/// `inbox cancel ID`: what `panectl inbox` does besides listing.
#[derive(Debug, clap::Subcommand)]
enum InboxAction {
    /// Cancel a pending message.
    Cancel {
        /// The message id.
        id: i64,
        /// Print the message as one JSON document.
        #[arg(long)]
        json: bool,
    },
}

impl Run for InboxArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        match self.action {
            Some(InboxAction::Cancel { id, json }) => cancel(server, id, json),
            None => list(server, self.pane.as_deref(), self.state, self.json),
        }
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        self.pane.as_mut()
    }
}

/// `panectl inbox [--pane P] [--state S] [--json]`.
fn list(
    server: &ServerArgs,
    pane: Option<&str>,
    state: Option<State>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut query = Vec::new();
    if let Some(pane) = pane {
        query.push(("pane", pane));
    }
    if let Some(state) = state {
        query.push(("state", state.as_str()));
    }
    let path = Route::Messages {}.with_query(&query);
    let client = client(server)?;
    let messages: Vec<Message> = block_on(async { Ok(client.get_json(&path).await?) })?;
    if json {
        let mut out = std::io::stdout().lock();
        for message in &messages {
            writeln!(out, "{}", json_line(message)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "PANE", "STATE", "FROM", "MESSAGE"]).right_aligned(0);
    for message in &messages {
        let body = String::from_utf8_lossy(&message.body);
        let first: String = body
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(50)
            .collect();
        let state = match show_some(message.reason.as_ref()) {
            reason if reason.is_empty() => show(message.state.as_str()),
            reason => format!("{} ({reason})", show(message.state.as_str())),
        };
        // The pane, and the agent the message follows when it has a name.
        let to = match (message.to_agent.as_deref(), message.pane.as_str()) {
            (Some(name), "") => printable(name),
            (Some(name), pane) => format!("{} {}", printable(pane), printable(name)),
            (None, pane) => printable(pane),
        };
        table.row(vec![
            message.id.to_string(),
            to,
            state,
            printable(&message.sender),
            format!("{first:?}"),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl inbox cancel ID`.
fn cancel(server: &ServerArgs, id: i64, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::CancelMessage {
        id: &id.to_string(),
    }
    .path();
    let message: Message =
        block_on(async { Ok(client.post_json(&path, &serde_json::json!({})).await?) })?;
    if json {
        print_pretty(&message)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}: {}", message.id, message.state.as_str());
    Ok(ExitCode::SUCCESS)
}
