//! How a launch is put together, without I/O: a profile merged with the caller's own flags
//! ([`merge`], run by the client, which reads the profile and its `from_env` variables), and
//! the provider's way of taking a model and a system prompt ([`agent_args`], run by the daemon,
//! which knows the provider rules in force).
//!
//! The caller's flags win over the profile's; the profile's arguments come before the
//! caller's `-- ARGS`; a system prompt goes with the provider's `system_prompt_flag`, or, for a
//! provider without one, as the agent's first message.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Error;
use super::profile::{Profile, WorktreeName};
use crate::status::rules::Launch;

/// The body of `POST /v1/agents`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchBody {
    /// The provider whose `[launch]` command to run (`GET /v1/providers`).
    pub provider: String,
    /// The session to open a window in, after its last window (name or `$N`; default: the
    /// first session: the API does not know its caller, so `panectl launch` and MCP send the
    /// session of the caller's pane), or the name of the session to create with
    /// `new_session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Create the session instead of opening a window in an existing one.
    #[serde(default)]
    pub new_session: bool,
    /// The agent's name: the window's name and the pane option `@panectl_name`. 1-64 ASCII
    /// letters, digits, `_`, `-`, `.`, not starting with `-` or `.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]
    pub name: Option<String>,
    /// The working directory (an absolute path to a directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables for the agent (names: ASCII letters, digits, `_`, not starting
    /// with a digit).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Arguments after the provider's command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Return at once instead of waiting until the agent is ready.
    #[serde(default)]
    pub no_wait: bool,
    /// Answer the start-up dialogs the provider's rules declare (folder trust, say) with the
    /// keys they give. Without it, such a dialog ends the launch with a 409 naming it.
    #[serde(default)]
    pub accept_startup_prompts: bool,
    /// How long to wait until it is ready, in seconds (default 60; clamped to 0..3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(default = 60)]
    pub timeout_seconds: Option<f64>,
    /// Do not install panectl's status hooks for the session. By default a Claude Code it
    /// launches gets `--settings` with hooks that run `panectl hook` (added to the user's
    /// settings, whose files are not touched).
    #[serde(default)]
    pub no_hooks: bool,
    /// Environment variables taken from the caller's environment (a profile's `from_env`):
    /// given to the new window with `new-window -e`, never written into its command line, a
    /// log or the inbox database.
    #[serde(default, skip_serializing_if = "CallerEnv::is_empty")]
    #[schema(value_type = BTreeMap<String, String>)]
    pub caller_env: CallerEnv,
    /// The profile the launch was made from (informational: the client merges the profile
    /// into this body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The model, passed with the provider's `[launch] model_flag` (refused for a provider
    /// without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A system prompt, passed with the provider's `[launch] system_prompt_flag`, or queued
    /// as the agent's first message for a provider without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// A message queued in the agent's inbox, delivered once it is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_message: Option<String>,
    /// Start the agent in a new git worktree of this name, made from the repository `cwd` is
    /// in, on a new branch (`panectl/NAME` by default; the daemon's `--worktree-branch-prefix`)
    /// in the daemon's `--worktree-dir` (default `<repo>/../<repo name>.worktrees/NAME`).
    /// Needs `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]
    pub worktree: Option<String>,
    /// The worktree's base ref (default: the repository's current branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Start the agent in a pane split off this pane or agent (`%N` or a name) instead of a
    /// window of its own: beside it, or below it with `split_below`. Not with `new_session`
    /// (the window is that pane's). `restore` splits the same agent again when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// With `split`: the new pane goes below (`split-window -v`) instead of to the right.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split_below: bool,
    /// A restore's launch of a recorded agent (never from a request): not recorded again.
    #[serde(skip)]
    #[schema(ignore)]
    pub restoring: bool,
    /// (A restore's launch) the index the agent's window had: the new window goes there when
    /// the index is free in its session.
    #[serde(skip)]
    #[schema(ignore)]
    pub window_index: Option<u32>,
}

/// Variables from the caller's environment: serialized as a map, but never shown by `Debug`
/// (only their names), so that no log line can carry a secret.
#[derive(Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallerEnv(pub BTreeMap<String, String>);

impl CallerEnv {
    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for CallerEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// `body` (what the caller asked for) with the profile's values where the caller gave none,
/// and `from_env`, the values of the profile's `from_env` variables read from the caller's
/// environment (sent apart from `env`: never in a command line, a log or the database).
pub fn merge(
    profile: &Profile,
    body: LaunchBody,
    from_env: BTreeMap<String, String>,
) -> LaunchBody {
    let mut env = profile.env.clone();
    env.extend(body.env);
    let mut caller_env = from_env;
    // A variable the caller sets with --env wins over the one taken from its environment.
    caller_env.retain(|key, _| !env.contains_key(key));
    caller_env.extend(body.caller_env.0);
    let name = body.name.or_else(|| profile.agent_name.clone());
    let worktree = body.worktree.or_else(|| match profile.worktree_name() {
        Some(WorktreeName::Named(named)) => Some(named),
        Some(WorktreeName::AfterAgent) => name.clone(),
        None => None,
    });
    LaunchBody {
        provider: if body.provider.is_empty() {
            profile.provider.clone()
        } else {
            body.provider
        },
        session: body.session.or_else(|| profile.session.clone()),
        name,
        cwd: body.cwd.or_else(|| profile.cwd.clone()),
        env,
        caller_env: CallerEnv(caller_env),
        args: profile.args.iter().cloned().chain(body.args).collect(),
        profile: Some(profile.name.clone()),
        model: body.model.or_else(|| profile.model.clone()),
        system_prompt: body.system_prompt.or_else(|| profile.system_prompt.clone()),
        first_message: body.first_message.or_else(|| profile.first_message.clone()),
        base: body.base.or_else(|| profile.base.clone()),
        worktree,
        ..body
    }
}

/// What the provider's command is given for a launch: arguments before the body's own (the
/// model and the system prompt with the provider's flags, then `body.args`), and the messages
/// to queue once it runs (a system prompt the provider takes no flag for, then the first
/// message). A model for a provider without a `model_flag` is refused.
pub fn agent_args(
    provider: &str,
    spec: &Launch,
    body: &LaunchBody,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut args = Vec::new();
    let mut messages = Vec::new();
    if let Some(model) = &body.model {
        let flag = spec.model_flag.as_ref().ok_or_else(|| {
            Error::BadRequest(format!(
                "provider {provider} has no model_flag in its [launch]: it cannot be given a model"
            ))
        })?;
        args.extend([flag.clone(), model.clone()]);
    }
    if let Some(prompt) = body.system_prompt.as_ref().filter(|p| !p.trim().is_empty()) {
        match &spec.system_prompt_flag {
            Some(flag) => args.extend([flag.clone(), prompt.clone()]),
            None => messages.push(prompt.clone()),
        }
    }
    args.extend(body.args.iter().cloned());
    if let Some(first) = body.first_message.as_ref().filter(|m| !m.trim().is_empty()) {
        messages.push(first.clone());
    }
    Ok((args, messages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orchestration::profile::Source;

    fn profile(text: &str) -> Profile {
        Profile::parse("p", text, Source::User, "p.toml", None).unwrap()
    }

    fn spec(model: Option<&str>, prompt: Option<&str>) -> Launch {
        Launch {
            command: vec!["agent".into()],
            startup_prompts: Vec::new(),
            model_flag: model.map(str::to_string),
            system_prompt_flag: prompt.map(str::to_string),
            resume_args: Vec::new(),
            session_args: Vec::new(),
            conversation_list: Vec::new(),
            hook_args: Vec::new(),
        }
    }

    #[test]
    fn the_callers_flags_win_and_profile_args_come_first() {
        let found = profile(
            "provider = \"codex\"\nargs = [\"--p1\", \"x\"]\nmodel = \"m1\"\nname = \"n1\"\n\
             session = \"s1\"\ncwd = \"/p\"\nworktree = true\nbase = \"main\"\n\
             [env]\nA = \"profile\"\nB = \"profile\"\n",
        );
        let caller = LaunchBody {
            name: Some("mine".into()),
            model: Some("m2".into()),
            args: vec!["--c1".into()],
            env: BTreeMap::from([("A".into(), "caller".into())]),
            ..LaunchBody::default()
        };
        let merged = merge(&found, caller, BTreeMap::new());
        assert_eq!(merged.provider, "codex");
        assert_eq!(merged.name.as_deref(), Some("mine"));
        assert_eq!(merged.model.as_deref(), Some("m2"));
        assert_eq!(merged.session.as_deref(), Some("s1"));
        assert_eq!(merged.cwd.as_deref(), Some("/p"));
        assert_eq!(merged.args, ["--p1", "x", "--c1"]);
        assert_eq!(merged.env["A"], "caller");
        assert_eq!(merged.env["B"], "profile");
        assert_eq!(merged.profile.as_deref(), Some("p"));
        // `worktree = true`: named after the agent (the caller's name).
        assert_eq!(merged.worktree.as_deref(), Some("mine"));
        assert_eq!(merged.base.as_deref(), Some("main"));
        // The caller's provider and worktree win too.
        let other = merge(
            &found,
            LaunchBody {
                provider: "claude_code".into(),
                worktree: Some("w2".into()),
                ..LaunchBody::default()
            },
            BTreeMap::new(),
        );
        assert_eq!(other.provider, "claude_code");
        assert_eq!(other.worktree.as_deref(), Some("w2"));
        assert_eq!(other.name.as_deref(), Some("n1"));
    }

    #[test]
    fn from_env_values_go_apart_and_yield_to_the_callers_env() {
        let found = profile("provider = \"codex\"\nfrom_env = [\"TOKEN\", \"OTHER\"]\n");
        let caller = LaunchBody {
            env: BTreeMap::from([("OTHER".into(), "given".into())]),
            ..LaunchBody::default()
        };
        let values = BTreeMap::from([
            ("TOKEN".to_string(), "s3cret".to_string()),
            ("OTHER".to_string(), "from env".to_string()),
        ]);
        let merged = merge(&found, caller, values);
        assert_eq!(merged.caller_env.0.len(), 1);
        assert_eq!(merged.caller_env.0["TOKEN"], "s3cret");
        assert!(!merged.env.contains_key("TOKEN"));
        assert_eq!(merged.env["OTHER"], "given");
        // Never in a debug print.
        assert!(!format!("{merged:?}").contains("s3cret"));
    }

    #[test]
    fn the_model_and_prompt_go_the_providers_way() {
        let body = LaunchBody {
            model: Some("sonnet".into()),
            system_prompt: Some("be brief".into()),
            first_message: Some("hello".into()),
            args: vec!["--x".into()],
            ..LaunchBody::default()
        };
        let (args, messages) = agent_args(
            "claude_code",
            &spec(Some("--model"), Some("--append-system-prompt")),
            &body,
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "--model",
                "sonnet",
                "--append-system-prompt",
                "be brief",
                "--x"
            ]
        );
        assert_eq!(messages, ["hello"]);
        // Without a system prompt flag: the prompt is the first message, before the other.
        let (args, messages) = agent_args("codex", &spec(Some("-m"), None), &body).unwrap();
        assert_eq!(args, ["-m", "sonnet", "--x"]);
        assert_eq!(messages, ["be brief", "hello"]);
        // Without a model flag: refused, naming the provider.
        let refused = agent_args("kiro_cli", &spec(None, None), &body).unwrap_err();
        assert!(
            matches!(&refused, Error::BadRequest(why) if why.contains("kiro_cli")),
            "{refused}"
        );
        let plain = LaunchBody {
            args: vec!["a".into()],
            ..LaunchBody::default()
        };
        assert_eq!(
            agent_args("x", &spec(None, None), &plain).unwrap(),
            (vec!["a".to_string()], Vec::new())
        );
    }
}
