//! `handoff`, `assign` and `assignments`: give another agent a task through the daemon.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use panectl::api::routes::Route;
use panectl::api::wire::{Assigned, Assignment, HandoffAnswer, HandoffBody};

use super::ServerArgs;
use super::client::{block_on, client, json_line, printable};
use super::orchestrate::LaunchOptions;
use super::table::Table;

/// What `panectl handoff` and `panectl assign` are given.
#[derive(Debug, clap::Args)]
pub struct TaskArgs {
    /// The worker's pane and the task (`-` reads the task from stdin); with `--launch`, only
    /// the task.
    #[arg(required = true, num_args = 1..=2, value_name = "PANE MESSAGE")]
    words: Vec<String>,
    /// Start a worker of this provider first (as `panectl launch` does) instead of naming a
    /// pane.
    #[arg(long, value_name = "PROVIDER")]
    launch: Option<String>,
    #[command(flatten)]
    launch_options: LaunchOptions,
    /// Give up after this long (handoff: default 10m; assign: no limit). The answer
    /// of a timed-out assignment says so.
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
    /// Close the worker's pane once its answer is read.
    #[arg(long)]
    teardown: bool,
    /// Who sends the task: a pane or a label (default: `cli`, or the replying pane for assign).
    #[arg(long, value_name = "X")]
    from: Option<String>,
    /// Send even to a pane that runs no recognised agent (a plain shell would run the text,
    /// and for assign the answer, as commands).
    #[arg(long)]
    allow_shell: bool,
    /// Print the answer (handoff: `pane`, `answer`, ...; assign: the assignment) as one JSON
    /// document.
    #[arg(long)]
    json: bool,
}

impl TaskArgs {
    /// The worker's pane, when the words name one (not with `--launch`).
    pub fn pane_mut(&mut self) -> Option<&mut String> {
        match (&self.launch, self.words.as_mut_slice()) {
            (None, [pane, _]) => Some(pane),
            _ => None,
        }
    }

    /// The request body shared by handoff and assign.
    fn body(&self, remote: bool) -> anyhow::Result<HandoffBody> {
        let (pane, message) = match (&self.launch, self.words.as_slice()) {
            (Some(_), [message]) => (None, message),
            (None, [pane, message]) => (Some(pane), message),
            (Some(_), _) => anyhow::bail!("with --launch, give only the message"),
            (None, _) => anyhow::bail!("give the worker's pane and the message (or --launch)"),
        };
        if self.launch.is_none() && self.launch_options.any() {
            anyhow::bail!(
                "--session, --name, --cwd, --env and --accept-startup-prompts need --launch"
            );
        }
        let message = if message == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the message from stdin (it must be UTF-8)")?;
            text
        } else {
            message.clone()
        };
        let launch = match &self.launch {
            Some(provider) => Some(self.launch_options.body(provider, remote)?),
            None => None,
        };
        Ok(HandoffBody {
            pane: pane.cloned(),
            launch,
            message,
            from: self.from.clone(),
            timeout_seconds: self.timeout.map(|t| t.as_secs_f64()),
            teardown: self.teardown,
            reply_to: None,
            allow_shell: self.allow_shell,
        })
    }
}

/// `panectl handoff`: prints the worker's answer. Exit codes as every command's
/// ([`super::exit`]): 0 with the answer, 1 timed out or no such pane, 2 refused, 3 unreachable.
pub fn handoff(server: &ServerArgs, args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let result = (|| -> Result<HandoffAnswer, anyhow::Error> {
        let mut body = args.body(server.is_remote())?;
        body.from.get_or_insert_with(|| "cli".to_string());
        let client = client(server)?;
        block_on(async {
            default_launch_session(&client, &mut body, server.own_pane()).await;
            Ok(client.post_json(&Route::Handoff {}.path(), &body).await?)
        })
    })();
    match result {
        Ok(answer) if args.json => {
            super::client::print_pretty(&answer)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(answer) => {
            // The worker's answer is its pane's text: shown, never obeyed by the terminal.
            let text = super::client::printable_lines(&answer.answer);
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("panectl: {}", super::client::printable_error(&error));
            Ok(super::exit::of_error(&error))
        }
    }
}

/// The caller's session for a worker launched without `--session`.
async fn default_launch_session(
    client: &panectl::api::client::ApiClient,
    body: &mut HandoffBody,
    caller: Option<String>,
) {
    if let Some(launch) = &mut body.launch {
        super::orchestrate::default_session(client, launch, caller).await;
    }
}

/// `panectl assign`: prints the assignment id; the answer arrives in `--reply-to`'s inbox.
pub fn assign(
    server: &ServerArgs,
    args: &TaskArgs,
    reply_to: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let reply_to = match reply_to {
        Some(pane) => pane.to_string(),
        None => server.own_pane().ok_or_else(|| {
            if std::env::var_os("TMUX_PANE").is_some() {
                anyhow::anyhow!(
                    "give --reply-to PANE: this pane ($TMUX_PANE) is not one of the worker's \
                     server, and the answer goes to a pane of that server"
                )
            } else {
                anyhow::anyhow!(
                    "give --reply-to PANE (outside tmux there is no $TMUX_PANE to default to)"
                )
            }
        })?,
    };
    let mut body = args.body(server.is_remote())?;
    body.reply_to = Some(reply_to);
    let client = client(server)?;
    let assigned: Assigned = block_on(async {
        default_launch_session(&client, &mut body, server.own_pane()).await;
        Ok(client.post_json(&Route::Assign {}.path(), &body).await?)
    })?;
    if args.json {
        super::client::print_pretty(&assigned)?;
    } else {
        println!("{}", assigned.assignment);
    }
    eprintln!(
        "panectl: assignment {} to {}; its answer will be queued for {}",
        assigned.assignment, assigned.pane, assigned.reply_to
    );
    Ok(ExitCode::SUCCESS)
}

/// `panectl assignments [--state S] [--json]`.
pub fn list(server: &ServerArgs, state: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let query: Vec<(&str, &str)> = state.iter().map(|state| ("state", *state)).collect();
    let path = Route::Assignments {}.with_query(&query);
    let all: Vec<Assignment> = block_on(async { Ok(client.get_json(&path).await?) })?;
    if json {
        for a in &all {
            println!("{}", json_line(a)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "STATE", "WORKER", "REPLY TO", "MESSAGE", "REASON"])
        .right_aligned(0)
        .right_aligned(4);
    for a in &all {
        table.row(vec![
            a.id.to_string(),
            a.state.as_str().to_string(),
            printable(&a.worker),
            printable(&a.reply_to),
            a.message_id.to_string(),
            a.reason.as_deref().map(printable).unwrap_or_default(),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}
