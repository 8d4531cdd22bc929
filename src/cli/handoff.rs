//! `panectl handoff`: give another agent a task through the daemon and wait for its answer.
//! [`TaskArgs`], what it is given, is also what `assign` gives.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use panectl::api::routes::Route;
use panectl::api::wire::{HandoffAnswer, HandoffBody};

use super::client::{block_on, client};
use super::orchestrate::LaunchOptions;
use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// What `panectl handoff` and `panectl assign` are given.
#[derive(Debug, clap::Args)]
pub struct TaskArgs {
    /// The worker's pane and the task (`-` reads the task from stdin); with `--launch`, only
    /// the task.
    #[arg(required = true, num_args = 1..=2, value_name = "PANE MESSAGE", add = super::complete::panes())]
    words: Vec<String>,
    /// Start a worker of this provider first (as `panectl launch` does) instead of naming a
    /// pane.
    #[arg(long, value_name = "PROVIDER", value_parser = ProviderParser::new())]
    launch: Option<String>,
    /// Start the worker as the launch profile NAME says (`panectl profiles`: its provider,
    /// arguments, environment, prompt, worktree...); `--launch` and the launch flags given
    /// here win over the profile's.
    #[arg(long, value_name = "NAME")]
    #[arg(add = super::complete::profiles())]
    launch_profile: Option<String>,
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
    pub(super) json: bool,
}

impl TaskArgs {
    /// The request body shared by handoff and assign.
    pub(super) fn body(&self, remote: bool) -> anyhow::Result<HandoffBody> {
        let (pane, message) = match (self.launching(), self.words.as_slice()) {
            (true, [message]) => (None, message),
            (false, [pane, message]) => (Some(pane), message),
            (true, _) => anyhow::bail!("with --launch or --launch-profile, give only the message"),
            (false, _) => anyhow::bail!(
                "give the worker's pane and the message (or --launch, --launch-profile)"
            ),
        };
        if !self.launching() && self.launch_options.any() {
            anyhow::bail!(
                "--session, --name, --cwd, --env and --accept-startup-prompts need --launch or \
                 --launch-profile"
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
        let launch = if self.launching() {
            let provider = self.launch.as_deref().unwrap_or_default();
            let mut body = self.launch_options.body(provider, remote)?;
            if let Some(profile) = &self.launch_profile {
                body = super::orchestrate::with_profile(profile, body)?;
            }
            if body.provider.is_empty() {
                anyhow::bail!("--launch needs a provider");
            }
            super::orchestrate::default_worktree_cwd(&mut body, remote)?;
            Some(body)
        } else {
            None
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

impl TaskArgs {
    /// Whether the worker is started for the task rather than named.
    fn launching(&self) -> bool {
        self.launch.is_some() || self.launch_profile.is_some()
    }
}

impl Run for TaskArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        handoff(server, self)
    }

    /// The worker's pane, when the words name one (not with `--launch`).
    fn pane_mut(&mut self) -> Option<&mut String> {
        match (self.launching(), self.words.as_mut_slice()) {
            (false, [pane, _]) => Some(pane),
            _ => None,
        }
    }
}

/// `panectl handoff`: prints the worker's answer. Exit codes as every command's
/// ([`super::exit`]): 0 with the answer, 1 timed out or no such pane, 2 refused, 3 unreachable.
fn handoff(server: &ServerArgs, args: &TaskArgs) -> anyhow::Result<ExitCode> {
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
pub(super) async fn default_launch_session(
    client: &panectl::api::client::ApiClient,
    body: &mut HandoffBody,
    caller: Option<String>,
) {
    if let Some(launch) = &mut body.launch {
        super::orchestrate::default_session(client, launch, caller).await;
    }
}
