//! `input`, `key` and `wait`: act on a pane through the daemon, for scripts and orchestrators.

use std::process::ExitCode;

use panectl::api::client::{ApiClient, encode_segment};
use serde_json::{Value, json};

use super::ServerArgs;
use super::client::{block_on, client, text};

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
    pub fn body(&self, provider: &str) -> anyhow::Result<Value> {
        let mut env = serde_json::Map::new();
        for pair in &self.env {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--env {pair:?}: expected KEY=VALUE"))?;
            env.insert(key.to_string(), json!(value));
        }
        let cwd = match &self.cwd {
            Some(dir) => Some(
                std::fs::canonicalize(dir)
                    .map_err(|e| anyhow::anyhow!("--cwd {}: {e}", dir.display()))?
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => None,
        };
        Ok(json!({
            "provider": provider,
            "session": self.session,
            "new_session": self.new_session,
            "name": self.name,
            "cwd": cwd,
            "env": env,
            "accept_startup_prompts": self.accept_startup_prompts,
        }))
    }
}

/// What `panectl launch` is given.
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// The provider (`panectl providers` lists them).
    provider: String,
    #[command(flatten)]
    options: LaunchOptions,
    /// Return once started, without waiting until it is ready.
    #[arg(long)]
    no_wait: bool,
    /// How long to wait until it is ready.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    timeout: f64,
    /// Do not install panectl's status hooks for this session (Claude Code).
    #[arg(long)]
    no_hooks: bool,
    /// Arguments for the CLI, after `--`.
    #[arg(last = true)]
    args: Vec<String>,
}

/// The session of the pane this command runs in (`$TMUX_PANE`), as the daemon knows it: the
/// default session of a launch. `None` outside tmux, or when the daemon does not know the pane
/// (`$TMUX_PANE` of another server).
pub async fn caller_session(client: &ApiClient) -> Option<String> {
    let pane = std::env::var("TMUX_PANE").ok().filter(|p| !p.is_empty())?;
    let path = format!("/v1/panes/{}", encode_segment(&pane));
    let found: Value = client.get_json(&path).await.ok()?;
    found["session_id"].as_str().map(str::to_string)
}

/// Fills in the caller's session as a launch body's session when none is given.
pub async fn default_session(client: &ApiClient, body: &mut Value) {
    if body["session"].is_null()
        && body["new_session"] != true
        && let Some(session) = caller_session(client).await
    {
        body["session"] = json!(session);
    }
}

/// `panectl launch PROVIDER ...`: prints the new pane's id.
pub fn launch(server: &ServerArgs, args: LaunchArgs) -> anyhow::Result<ExitCode> {
    let mut body = args.options.body(&args.provider)?;
    body["args"] = json!(args.args);
    body["no_wait"] = json!(args.no_wait);
    body["timeout_seconds"] = json!(args.timeout);
    body["no_hooks"] = json!(args.no_hooks);
    let client = client(server)?;
    let launched: Value = block_on(async {
        default_session(&client, &mut body).await;
        Ok(client.post_json("/v1/agents", &body).await?)
    })?;
    println!("{}", text(&launched, "pane"));
    Ok(ExitCode::SUCCESS)
}

/// `panectl input PANE TEXT [--no-enter] [--allow-shell]`.
pub fn input(
    server: &ServerArgs,
    pane: &str,
    text: &str,
    enter: bool,
    allow_shell: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = format!("/v1/panes/{}/input", encode_segment(pane));
    let body = json!({ "text": text, "enter": enter, "allow_shell": allow_shell });
    block_on(async { Ok(client.post_empty(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl key PANE KEY...`.
pub fn key(server: &ServerArgs, pane: &str, keys: &[String]) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = format!("/v1/panes/{}/keys", encode_segment(pane));
    let body = json!({ "keys": keys });
    block_on(async { Ok(client.post_empty(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl wait PANE --until S,S [--timeout SECONDS]`: exit code 0 when a status was reached
/// (its name printed), 1 on timeout, 2 on any error.
pub fn wait(
    server: &ServerArgs,
    pane: &str,
    until: &[String],
    timeout: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let result = (|| -> anyhow::Result<Value> {
        let client = client(server)?;
        let path = format!("/v1/panes/{}/wait", encode_segment(pane));
        let mut body = json!({ "until": until });
        if let Some(timeout) = timeout {
            body["timeout_seconds"] = json!(timeout);
        }
        block_on(async { Ok(client.post_json(&path, &body).await?) })
    })();
    match result {
        Ok(answer) if answer["reached"] == true => {
            println!("{}", text(&answer, "status"));
            Ok(ExitCode::SUCCESS)
        }
        Ok(answer) => {
            eprintln!(
                "panectl: timed out after {:.1} s; {} is {}",
                answer["waited_seconds"].as_f64().unwrap_or_default(),
                text(&answer, "pane"),
                text(&answer, "status")
            );
            Ok(ExitCode::from(1))
        }
        Err(error) => {
            eprintln!("panectl: {error:#}");
            Ok(ExitCode::from(2))
        }
    }
}
