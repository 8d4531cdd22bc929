//! `POST /v1/agents`: starts an agent CLI in a new window (or a new session) from its
//! provider's `[launch]` command, records its provider and name as pane options, and waits
//! until it is ready.
//!
//! User text never reaches a position where tmux expands formats: names are checked to be
//! plain words (they go to `-n`/`-s`), and the working directory, environment and arguments go
//! into the shell command, single-quoted, which tmux passes to `sh -c` unexpanded.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::server::{ApiError, ApiState};
use crate::control::command::{Command, Format, Line, SafeValue, Target};
use crate::ids::PaneId;
use crate::tmux::query;
use crate::tmux::{ConnectionHandle, RunError};

/// The pane option that holds an agent's name.
pub const NAME_OPTION: &str = "@panectl_name";

/// The body of `POST /v1/agents`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct LaunchBody {
    /// The provider whose `[launch]` command to run.
    pub provider: String,
    /// The session to open a window in (name or `$N`; default: the first session), or the
    /// name of the session to create with `new_session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Create the session instead of opening a window in an existing one.
    #[serde(default)]
    pub new_session: bool,
    /// The agent's name: the window's name and the pane option `@panectl_name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The working directory (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables for the agent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Arguments after the provider's command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Return at once instead of waiting until the agent is ready.
    #[serde(default)]
    pub no_wait: bool,
    /// How long to wait until it is ready (default 60 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
}

/// The answer of `POST /v1/agents`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Launched {
    /// The new pane.
    pub pane: String,
    /// Its provider.
    pub provider: String,
    /// Its name, if given.
    pub name: Option<String>,
    /// Its status when the call returned.
    pub status: String,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

/// Whether a name is a plain word tmux cannot read anything into: 1 to 64 ASCII letters,
/// digits, `_`, `-` and `.`, not starting with `-` or `.`.
pub fn is_plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        && !name.starts_with(['-', '.'])
}

/// Quotes a word for `sh`: single quotes, with `'` written as `'\''`.
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The shell command that starts the agent: `cd DIR && exec env -- K=V ... PROGRAM ARGS...`
/// (`env` reads assignments up to the first word without `=`).
pub fn shell_command(
    program: &[String],
    args: &[String],
    cwd: Option<&str>,
    env: &BTreeMap<String, String>,
) -> String {
    let mut command = String::new();
    if let Some(cwd) = cwd {
        command.push_str(&format!("cd {} && ", shell_quote(cwd)));
    }
    command.push_str("exec env --");
    for (key, value) in env {
        command.push(' ');
        command.push_str(&shell_quote(&format!("{key}={value}")));
    }
    for word in program.iter().chain(args) {
        command.push(' ');
        command.push_str(&shell_quote(word));
    }
    command
}

/// Runs a line of commands; the first command's reply, trimmed, or the error of the first that
/// failed.
pub(crate) async fn first_reply_line(
    handle: &ConnectionHandle,
    line: Line,
) -> Result<String, ApiError> {
    match handle.run(line).await {
        Ok(replies) => Ok(replies
            .first()
            .map(|r| String::from_utf8_lossy(&r.joined_body()).trim().to_string())
            .unwrap_or_default()),
        Err(error @ RunError::Connection(_)) => {
            Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, error.to_string()))
        }
        Err(error) => Err(ApiError(StatusCode::BAD_GATEWAY, error.to_string())),
    }
}

/// `POST /v1/agents`. See the module documentation.
pub(crate) async fn launch(
    State(state): State<ApiState>,
    axum::Json(body): axum::Json<LaunchBody>,
) -> Result<Response, ApiError> {
    let provider = state
        .rules
        .providers
        .borrow()
        .get(&body.provider)
        .cloned()
        .ok_or_else(|| bad(format!("unknown provider {:?}", body.provider)))?;
    let program = provider
        .launch
        .clone()
        .ok_or_else(|| bad(format!("provider {} has no [launch] command", provider.id)))?;
    if let Some(name) = &body.name
        && !is_plain_name(name)
    {
        return Err(bad(format!(
            "name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
        )));
    }
    if let Some(cwd) = &body.cwd
        && (!cwd.starts_with('/') || !std::path::Path::new(cwd).is_dir())
    {
        return Err(bad(format!(
            "cwd {cwd:?} is not an absolute path to a directory"
        )));
    }
    if let Some(key) = body.env.keys().find(|k| {
        k.is_empty()
            || k.starts_with(|c: char| c.is_ascii_digit())
            || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    }) {
        return Err(bad(format!(
            "environment variable name {key:?} is not valid"
        )));
    }
    let command = shell_command(&program, &body.args, body.cwd.as_deref(), &body.env);
    let handles = state.handles();
    let panes = state.all_panes().await;
    const NEW_PANE: Format = Format::new("#{pane_id}");
    let (handle, create) = if body.new_session {
        let name = body
            .session
            .as_deref()
            .ok_or_else(|| bad("new_session needs a session name"))?;
        if !is_plain_name(name) {
            return Err(bad(format!(
                "session name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
            )));
        }
        let handle = handles.values().next().cloned().ok_or_else(|| {
            ApiError(
                StatusCode::SERVICE_UNAVAILABLE,
                "no tmux session is mirrored to create one from".into(),
            )
        })?;
        let name = SafeValue::new(name).map_err(|e| bad(e.to_string()))?;
        let mut create = Command::new("new-session")
            .flag("-d")
            .flag("-P")
            .format_option("-F", NEW_PANE)
            .flag("-s")
            .safe(&name)
            .number("-x", 200)
            .number("-y", 50);
        if let Some(window) = &body.name {
            let window = SafeValue::new(window.as_str()).map_err(|e| bad(e.to_string()))?;
            create = create.flag("-n").safe(&window);
        }
        (handle, create)
    } else {
        let session = match &body.session {
            Some(wanted) => panes
                .iter()
                .find(|p| {
                    p.session_id.to_string() == *wanted || p.session.as_bytes() == wanted.as_bytes()
                })
                .map(|p| p.session_id)
                .ok_or_else(|| bad(format!("no session {wanted:?}")))?,
            None => *handles.keys().next().ok_or_else(|| {
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no tmux session is mirrored".into(),
                )
            })?,
        };
        let handle = handles.get(&session).cloned().ok_or_else(|| {
            ApiError(
                StatusCode::SERVICE_UNAVAILABLE,
                "the session is reconnecting".into(),
            )
        })?;
        let mut create = Command::new("new-window")
            .flag("-a")
            .flag("-d")
            .flag("-P")
            .format_option("-F", NEW_PANE)
            .target("-t", Target::Session(session));
        if let Some(window) = &body.name {
            let window = SafeValue::new(window.as_str()).map_err(|e| bad(e.to_string()))?;
            create = create.flag("-n").safe(&window);
        }
        (handle, create)
    };
    let create = create
        .text(command.as_bytes())
        .map_err(|e| bad(format!("cannot encode the command: {e}")))?;
    let pane: PaneId = first_reply_line(&handle, Line::new(create))
        .await?
        .parse()
        .map_err(|_| {
            ApiError(
                StatusCode::BAD_GATEWAY,
                "tmux did not say which pane it made".into(),
            )
        })?;
    let provider_value = SafeValue::new(provider.id.to_string()).map_err(|e| bad(e.to_string()))?;
    let mut options = Line::new(query::set_pane_option(
        pane,
        query::PROVIDER_OVERRIDE_OPTION,
        Some(&provider_value),
    ));
    if let Some(name) = &body.name {
        let name = SafeValue::new(name.as_str()).map_err(|e| bad(e.to_string()))?;
        options = options.then(query::set_pane_option(pane, NAME_OPTION, Some(&name)));
    }
    first_reply_line(&handle, options).await?;
    let timeout = Duration::from_secs_f64(body.timeout_seconds.unwrap_or(60.0).clamp(0.0, 3600.0));
    let deadline = tokio::time::Instant::now() + timeout;
    let no_wait = body.no_wait;
    let (ready, status) =
        super::orchestrate::await_status(&state, pane, |s| no_wait || s.is_ready(), Some(deadline))
            .await?;
    if !ready {
        return Err(ApiError(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "{pane} started but was not ready within {timeout:?} (status {})",
                status.map_or("not mirrored yet".to_string(), |s| s.to_string())
            ),
        ));
    }
    let status = status.unwrap_or(crate::status::Status::Unknown);
    Ok((
        StatusCode::CREATED,
        axum::Json(Launched {
            pane: pane.to_string(),
            provider: provider.id.to_string(),
            name: body.name.clone(),
            status: status.to_string(),
        }),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_every_word_for_the_shell() {
        let env = BTreeMap::from([("A_B".to_string(), "it's $HOME #{x}".to_string())]);
        let command = shell_command(
            &["claude".into()],
            &["--model".into(), "a b".into()],
            Some("/tmp/o'k"),
            &env,
        );
        assert_eq!(
            command,
            "cd '/tmp/o'\\''k' && exec env -- 'A_B=it'\\''s $HOME #{x}' 'claude' '--model' 'a b'"
        );
    }

    #[test]
    fn names_are_plain_words() {
        for good in ["worker-1", "a.b_c", "X"] {
            assert!(is_plain_name(good), "{good}");
        }
        for bad in [
            "",
            "-x",
            ".hidden",
            "a b",
            "#{pane_id}",
            "é",
            &"x".repeat(65),
        ] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }
}
