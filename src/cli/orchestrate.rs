//! `panectl launch`: start an agent CLI from its provider's `[launch]` command, and the launch
//! options `handoff` and `assign` share.

use std::process::ExitCode;

use std::collections::BTreeMap;

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::api::wire::{LaunchBody, Launched};

use super::client::{block_on, client};
use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// How to start an agent: what `panectl launch` and `handoff/assign --launch` share.
#[derive(Debug, Default, clap::Args)]
pub struct LaunchOptions {
    /// The session to open the window in (default: the session of the pane this runs in,
    /// `$TMUX_PANE`, else the first), or to create with `--new-session`.
    #[arg(long)]
    session: Option<String>,
    /// Create the session.
    #[arg(long)]
    new_session: bool,
    /// The agent's name (the window name and the pane option `@panectl_name`).
    #[arg(long)]
    name: Option<String>,
    /// The working directory.
    #[arg(long)]
    cwd: Option<std::path::PathBuf>,
    /// An environment variable for the agent, `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Answer the start-up dialogs the provider's rules declare (folder trust) for you.
    /// Without it such a dialog ends the launch with an error naming it.
    #[arg(long)]
    accept_startup_prompts: bool,
}

impl LaunchOptions {
    /// Whether any option is set (they need a launch).
    pub fn any(&self) -> bool {
        self.session.is_some()
            || self.new_session
            || self.name.is_some()
            || self.cwd.is_some()
            || !self.env.is_empty()
            || self.accept_startup_prompts
    }

    /// The `POST /v1/agents` body for `provider`.
    /// The launch request. `remote`: the server runs on another host, where `--cwd` is (an
    /// absolute path, checked there), not here.
    pub fn body(&self, provider: &str, remote: bool) -> anyhow::Result<LaunchBody> {
        let mut env = BTreeMap::new();
        for pair in &self.env {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--env {pair:?}: expected KEY=VALUE"))?;
            env.insert(key.to_string(), value.to_string());
        }
        let cwd = match &self.cwd {
            Some(dir) if remote => {
                if !dir.is_absolute() {
                    anyhow::bail!(
                        "--cwd {}: with --ssh, give an absolute path on the remote host",
                        dir.display()
                    );
                }
                Some(dir.to_string_lossy().into_owned())
            }
            Some(dir) => Some(
                std::fs::canonicalize(dir)
                    .map_err(|e| anyhow::anyhow!("--cwd {}: {e}", dir.display()))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => None,
        };
        Ok(LaunchBody {
            provider: provider.to_string(),
            session: self.session.clone(),
            new_session: self.new_session,
            name: self.name.clone(),
            cwd,
            env,
            accept_startup_prompts: self.accept_startup_prompts,
            ..LaunchBody::default()
        })
    }
}

/// What `panectl launch` is given.
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// The provider (`panectl providers` lists them); with `--profile`, the profile's unless
    /// given.
    #[arg(value_parser = ProviderParser::new(), required_unless_present = "profile")]
    provider: Option<String>,
    /// Launch as the profile NAME says (`panectl profiles`); the flags given here win over
    /// the profile's, and its arguments come before the ones after `--`.
    #[arg(long, value_name = "NAME")]
    #[arg(add = super::complete::profiles())]
    profile: Option<String>,
    /// Start the agent in a new git worktree (`--worktree=NAME`; without a name, the agent's
    /// `--name`), on a new branch `panectl/NAME`, made from the repository of `--cwd` (default:
    /// the current directory).
    #[arg(long, value_name = "NAME", num_args = 0..=1, require_equals = true)]
    worktree: Option<Option<String>>,
    /// The worktree's base ref (default: the repository's current branch).
    #[arg(long, value_name = "REF", requires = "worktree")]
    base: Option<String>,
    /// Start the agent in a pane split off PANE (a pane id or an agent's name), to its right,
    /// instead of in a window of its own; `restore` splits it off that agent again.
    #[arg(long, value_name = "PANE", add = super::complete::panes(), conflicts_with = "new_session")]
    split: Option<String>,
    /// With `--split`: below the pane instead of to its right.
    #[arg(long, requires = "split")]
    split_below: bool,
    #[command(flatten)]
    options: LaunchOptions,
    /// Return once started, without waiting until it is ready.
    #[arg(long)]
    no_wait: bool,
    /// How long to wait until it is ready.
    #[arg(long, default_value = "60s", value_name = "DURATION",
          value_parser = super::duration::parse)]
    timeout: std::time::Duration,
    /// Print the new agent as JSON (pane, provider, name, status, prompts answered) instead of
    /// its pane id.
    #[arg(long)]
    json: bool,
    /// Do not install panectl's status hooks for this session (Claude Code).
    #[arg(long)]
    no_hooks: bool,
    /// Arguments for the CLI, after `--`.
    #[arg(last = true)]
    args: Vec<String>,
}

/// The session of the pane this command runs in (`caller`: [`ServerArgs::own_pane`]), as the
/// daemon knows it: the default session of a launch. `None` outside tmux, or when the daemon
/// does not know the pane.
pub async fn caller_session(client: &ApiClient, caller: Option<String>) -> Option<String> {
    let found = client.pane(&caller?).await.ok()?;
    Some(found.session_id.to_string())
}

/// Fills in the caller's session as a launch body's session when none is given.
pub async fn default_session(client: &ApiClient, body: &mut LaunchBody, caller: Option<String>) {
    if body.session.is_none()
        && !body.new_session
        && body.split.is_none()
        && let Some(session) = caller_session(client, caller).await
    {
        body.session = Some(session);
    }
}

impl Run for LaunchArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        launch(server, self)
    }
}

/// `body` with the values of the launch profile `name` where it gives none (read here, on the
/// caller's machine, with its `from_env` variables from the caller's environment).
pub(super) fn with_profile(name: &str, body: LaunchBody) -> anyhow::Result<LaunchBody> {
    let profile = panectl::orchestration::profile::find(None, name)?;
    let from_env = panectl::orchestration::profile::caller_env(&profile)?;
    Ok(panectl::orchestration::launch_plan::merge(
        &profile, body, from_env,
    ))
}

/// A worktree is made from the repository of the launch's directory: the caller's own when
/// it names none (the daemon's would be a guess; a remote server has no such directory).
pub(super) fn default_worktree_cwd(body: &mut LaunchBody, remote: bool) -> anyhow::Result<()> {
    if body.worktree.is_some() && body.cwd.is_none() && !remote {
        body.cwd = Some(
            std::env::current_dir()?
                .canonicalize()?
                .to_string_lossy()
                .into_owned(),
        );
    }
    Ok(())
}

/// `panectl launch PROVIDER ...`: prints the new pane's id.
fn launch(server: &ServerArgs, args: &LaunchArgs) -> anyhow::Result<ExitCode> {
    let args_json = args.json;
    let mut body = LaunchBody {
        args: args.args.clone(),
        no_wait: args.no_wait,
        timeout_seconds: Some(args.timeout.as_secs_f64()),
        no_hooks: args.no_hooks,
        worktree: args.worktree.clone().flatten(),
        base: args.base.clone(),
        split: args.split.clone(),
        split_below: args.split_below,
        ..args.options.body(
            args.provider.as_deref().unwrap_or_default(),
            server.is_remote(),
        )?
    };
    if let Some(name) = &args.profile {
        body = with_profile(name, body)?;
    }
    if matches!(args.worktree, Some(None)) && body.worktree.is_none() {
        body.worktree = Some(body.name.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "--worktree without a name takes the agent's: give --name or --worktree=NAME"
            )
        })?);
    }
    default_worktree_cwd(&mut body, server.is_remote())?;
    let client = client(server)?;
    let launched: Launched = block_on(async {
        let mut body = body;
        default_session(&client, &mut body, server.own_pane()).await;
        Ok(client.post_json(&Route::Agents {}.path(), &body).await?)
    })?;
    if args_json {
        super::client::print_pretty(&launched)?;
    } else {
        println!("{}", launched.pane);
    }
    Ok(ExitCode::SUCCESS)
}
