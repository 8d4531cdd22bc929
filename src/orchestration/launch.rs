//! `POST /v1/agents`: starts an agent CLI in a new window (or a new session) from its
//! provider's `[launch]` command, records its provider and name as pane options, and waits
//! until it is ready.
//!
//! User text never reaches a position where tmux expands formats: names are checked to be
//! plain words (they go to `-n`/`-s`), and the working directory, environment and arguments go
//! into the shell command, single-quoted, which tmux passes to the shell unexpanded.
//!
//! The window goes after the session's last window (no window of the user's is renumbered).
//! A command that fails at once is an error with the pane's last lines: the new window keeps
//! its pane when the process ends (`remain-on-exit`, set in the same command line), the pane
//! is watched for a moment, and a dead one is read and closed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::input::{await_agent_status, await_status};
use super::{Context, Error, first_reply_line};
use crate::control::command::{Command, Format, Line, SafeValue, Target, commands};
use crate::host::Host;
use crate::ids::PaneId;
use crate::query;
use crate::status::rules::Launch;
use crate::status::{Phase, Status};

pub use super::launch_plan::{CallerEnv, LaunchBody};
pub use super::names::is_plain_name;
pub use crate::agent_hooks::shell_quote;
use crate::tmux::{ConnectionHandle, RunError};

/// The pane option that holds an agent's name.
pub const NAME_OPTION: &str = "@panectl_name";

/// How long a launch waits for its agent to be ready when the request does not say.
const DEFAULT_READY_SECONDS: f64 = 60.0;

/// The answer of `POST /v1/agents`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Launched {
    /// The new pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// Its provider.
    pub provider: String,
    /// Its name, if given.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Its status when the call returned (`unknown` with `no_wait`).
    #[schema(value_type = Status)]
    pub status: String,
    /// The start-up dialogs answered (their rule ids); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_prompts: Vec<String>,
    /// The worktree it runs in, when the launch made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<crate::inbox::WorktreeRecord>,
    /// The ids of the messages queued for it (a system prompt sent as a message, the first
    /// message); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued_messages: Vec<i64>,
}

/// The conversation id a launch starts its CLI on, for a CLI that takes one
/// (`[launch] session_args`): a new one, unless this is a restore (it passes its own) or the
/// launch's arguments already choose a conversation (`--resume ...`, `--session-id ...`: the
/// CLI refuses two).
fn chosen_conversation(spec: &Launch, body: &LaunchBody, args: &[String]) -> Option<String> {
    if body.restoring || spec.session_args.is_empty() {
        return None;
    }
    let flags: Vec<&str> = [spec.session_args.first(), spec.resume_args.first()]
        .into_iter()
        .flatten()
        .map(|flag| flag.split('=').next().unwrap_or(flag))
        .filter(|flag| flag.starts_with('-'))
        .collect();
    let chosen = args
        .iter()
        .any(|arg| flags.iter().any(|flag| arg.split('=').next() == Some(flag)));
    if chosen {
        return None;
    }
    crate::status::rules::new_conversation_id()
}

/// How long a program that cannot start keeps its pane alive after saying why: output written
/// just before a pane's process ends can be lost with the terminal, so a missing command's
/// "not found" line would never reach the screen otherwise.
const FAILED_START_LINGER: &str = "0.5";

/// The shell command that starts the agent, for the pane's shell (tmux hands it to the
/// `default-shell`, whatever that is): `exec /bin/sh -c SCRIPT`, where the script goes to the
/// working directory, exports the environment and `exec`s the program, so that the agent is
/// the pane's process. A program that cannot be found is run without `exec`, so that the
/// shell's own "not found" line reaches the screen, and the pane lingers a moment for it to be
/// read.
pub fn shell_command(
    program: &[String],
    args: &[String],
    cwd: Option<&str>,
    env: &BTreeMap<String, String>,
) -> String {
    let mut script = String::new();
    if let Some(cwd) = cwd {
        script.push_str(&format!(
            "cd {} || {{ sleep {FAILED_START_LINGER}; exit 1; }}; ",
            shell_quote(cwd)
        ));
    }
    for (key, value) in env {
        script.push_str(&format!(
            "export {}; ",
            shell_quote(&format!("{key}={value}"))
        ));
    }
    if let Some(first) = program.first() {
        let first = shell_quote(first);
        script.push_str(&format!(
            "command -v {first} >/dev/null 2>&1 || {{ {first}; s=$?; sleep {FAILED_START_LINGER}; exit $s; }}; "
        ));
    }
    script.push_str("exec");
    for word in program.iter().chain(args) {
        script.push(' ');
        script.push_str(&shell_quote(word));
    }
    format!("exec /bin/sh -c {}", shell_quote(&script))
}

/// Refuses a `cwd` that is not an absolute path to a directory on the server's host.
fn check_cwd(host: &dyn Host, cwd: &str) -> Result<(), Error> {
    if !cwd.starts_with('/') || !host.is_dir(std::path::Path::new(cwd)) {
        return Err(Error::bad_request(format!(
            "cwd {cwd:?} is not an absolute path to a directory"
        )));
    }
    Ok(())
}

/// Refuses an MCP client's launch with arguments or environment of its own, unless the daemon
/// runs with `--mcp-allow-args`: the agents that call MCP tools are the callers the other
/// guards (no typing into shells, no dialogs answered blind) hold back, and an argument
/// (`--dangerously-skip-permissions`) or a variable (`LD_PRELOAD`) would route around them.
fn check_mcp_launch(mcp_allow_args: bool, mcp: bool, body: &LaunchBody) -> Result<(), Error> {
    if !mcp
        || mcp_allow_args
        || (body.args.is_empty() && body.env.is_empty() && body.caller_env.is_empty())
    {
        return Ok(());
    }
    let what = match (
        body.args.is_empty(),
        body.env.is_empty() && body.caller_env.is_empty(),
    ) {
        (false, false) => "arguments and environment",
        (false, true) => "arguments",
        _ => "environment",
    };
    Err(Error::Forbidden(format!(
        "MCP clients may not choose the agent's {what}: the provider's launch command runs as \
         it is (the daemon's --mcp-allow-args allows them)"
    )))
}

/// Starts an agent as `body` says and waits until it is ready (unless `no_wait`).
pub async fn launch_agent(
    state: &Context,
    body: &LaunchBody,
    mcp: bool,
) -> Result<Launched, Error> {
    check_mcp_launch(state.mcp_allow_args, mcp, body)?;
    let provider = {
        let providers = state.providers.borrow();
        providers.get(&body.provider).cloned().ok_or_else(|| {
            Error::bad_request(format!(
                "unknown provider {:?} ({})",
                body.provider,
                providers.ids()
            ))
        })?
    };
    let spec = provider.launch.clone().ok_or_else(|| {
        Error::bad_request(format!("provider {} has no [launch] command", provider.id))
    })?;
    // Checked before anything is created: a refused request leaves no pane behind.
    let timeout = crate::orchestration::limits::seconds(
        "timeout_seconds",
        body.timeout_seconds.unwrap_or(DEFAULT_READY_SECONDS),
        crate::orchestration::limits::Zero::Refused,
        crate::orchestration::limits::MAX_LAUNCH_SECONDS,
    )?;
    if let Some(name) = &body.name
        && !is_plain_name(name)
    {
        return Err(Error::bad_request(format!(
            "name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
        )));
    }
    if let Some(cwd) = &body.cwd {
        check_cwd(state.address.host(), cwd)?;
    }
    if let Some(key) = body.env.keys().chain(body.caller_env.0.keys()).find(|k| {
        k.is_empty()
            || k.starts_with(|c: char| c.is_ascii_digit())
            || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    }) {
        return Err(Error::bad_request(format!(
            "environment variable name {key:?} is not valid"
        )));
    }
    let mut args = if body.no_hooks {
        Vec::new()
    } else {
        super::launch_hooks::for_launch(state, &provider)
    };
    let (agent_args, messages) = super::launch_plan::agent_args(&provider.id, &spec, body)?;
    let conversation = chosen_conversation(&spec, body, &agent_args);
    args.extend(agent_args);
    if let Some(session) = conversation.as_deref().and_then(|id| spec.session(id)) {
        args.extend(session);
    }
    if body.worktree.is_some() && body.cwd.is_none() {
        return Err(Error::bad_request(
            "a worktree is made from the repository of cwd: give cwd",
        ));
    }
    let handles = state.handles();
    let panes = state.all_panes().await;
    const NEW_PANE: Format = Format::new("#{pane_id}");
    let (handle, create, new_window) = if let Some(target) = &body.split {
        if body.new_session {
            return Err(Error::bad_request(
                "split puts the agent in that pane's window: not with new_session",
            ));
        }
        let (beside, handle) = state.find(target).await?;
        // The pane of the window that is active now gets the focus back after the split.
        let active = panes
            .iter()
            .find(|p| p.window_id == beside.window_id && p.active)
            .map_or(beside.pane, |p| p.pane);
        let create = Command::new("split-window")
            .flag("-P")
            .format_option("-F", NEW_PANE)
            .flag(if body.split_below { "-v" } else { "-h" })
            .target("-t", Target::Pane(beside.pane));
        (
            handle,
            create,
            NewWindow::Split {
                window: beside.window_id,
                refocus: active,
            },
        )
    } else if body.new_session {
        let name = body
            .session
            .as_deref()
            .ok_or_else(|| Error::bad_request("new_session needs a session name"))?;
        if !is_plain_name(name) || name.contains('.') {
            // tmux turns '.' (and ':') in a session name into '_': the session would not be
            // found by the name asked for.
            return Err(Error::bad_request(format!(
                "session name {name:?}: use 1-64 letters, digits, '_' or '-' (tmux would turn \
                 '.' into '_')"
            )));
        }
        let handle = handles.values().next().cloned().ok_or_else(|| {
            Error::Unavailable("no tmux session is mirrored to create one from".into())
        })?;
        let name = SafeValue::new(name).map_err(|e| Error::bad_request(e.to_string()))?;
        let mut create = Command::new("new-session")
            .flag("-d")
            .flag("-P")
            .format_option("-F", NEW_PANE)
            .flag("-s")
            .safe(&name)
            .number("-x", 200)
            .number("-y", 50);
        if let Some(window) = &body.name {
            let window =
                SafeValue::new(window.as_str()).map_err(|e| Error::bad_request(e.to_string()))?;
            create = create.flag("-n").safe(&window);
        }
        (handle, create, NewWindow::InSessionNamed(name))
    } else {
        let session = match &body.session {
            Some(wanted) => panes
                .iter()
                .find(|p| {
                    p.session_id.to_string() == *wanted || p.session.as_bytes() == wanted.as_bytes()
                })
                .map(|p| p.session_id)
                .ok_or_else(|| Error::bad_request(format!("no session {wanted:?}")))?,
            None => *handles
                .keys()
                .next()
                .ok_or_else(|| Error::Unavailable("no tmux session is mirrored".into()))?,
        };
        let handle = handles
            .get(&session)
            .cloned()
            .ok_or_else(|| Error::Unavailable("the session is reconnecting".into()))?;
        // A restored agent's window goes back to its index when that is free. Otherwise after
        // the session's last window (`-a` moves no window when the index after the target is
        // free, as it is after the last): the user's windows keep their numbers.
        let free_index = body.window_index.filter(|index| {
            !panes
                .iter()
                .any(|p| p.session_id == session && p.window_index == *index)
        });
        let create = Command::new("new-window")
            .flag("-d")
            .flag("-P")
            .format_option("-F", NEW_PANE);
        let (mut create, new_window) = match free_index {
            Some(index) => (
                create.target_window_index("-t", session, index),
                NewWindow::At(session, index),
            ),
            None => (
                create.flag("-a").target_last_window("-t", session),
                NewWindow::In(session),
            ),
        };
        if let Some(window) = &body.name {
            let window =
                SafeValue::new(window.as_str()).map_err(|e| Error::bad_request(e.to_string()))?;
            create = create.flag("-n").safe(&window);
        }
        (handle, create, new_window)
    };
    // The worktree is made last, once everything else was checked: a refused request leaves
    // none behind.
    let worktree = match &body.worktree {
        Some(name) => Some(super::launch_setup::create_for_launch(state, body, name).await?),
        None => None,
    };
    let cwd = worktree
        .as_ref()
        .map(|w| w.path.clone())
        .or_else(|| body.cwd.clone());
    let command = shell_command(&spec.command, &args, cwd.as_deref(), &body.env);
    let mut create = create;
    for (key, value) in &body.caller_env.0 {
        create = create
            .text_option("-e", format!("{key}={value}").as_bytes())
            .map_err(|e| Error::bad_request(format!("cannot encode {key}: {e}")))?;
    }
    let create = create
        .text(command.as_bytes())
        .map_err(|e| Error::bad_request(format!("cannot encode the command: {e}")))?;
    // `remain-on-exit` is set in the same line, before tmux looks at the new process again: a
    // command that fails at once leaves its pane, and its last lines, to be read. The pane's
    // provider and name too: tmux runs the whole line or none of it, so no pane of a launch is
    // ever left without them (a daemon killed in between would not know it as the agent, and
    // a restore would start it twice).
    // A split pane's window is the user's: the option is the new pane's alone.
    let scope = match new_window {
        NewWindow::Split { .. } => "-p",
        _ => "-w",
    };
    let keep = new_window
        .target(Command::new("set-option").flag(scope))
        .safe(&remain_on_exit()?)
        .safe(&on()?);
    let provider_value =
        SafeValue::new(provider.id.to_string()).map_err(|e| Error::bad_request(e.to_string()))?;
    let mut line = Line::new(create).then(keep).then(
        new_window
            .target(Command::new("set-option").flag("-p"))
            .option_name(query::PROVIDER_OVERRIDE_OPTION)
            .safe(&provider_value),
    );
    if let Some(name) = &body.name {
        let name = SafeValue::new(name.as_str()).map_err(|e| Error::bad_request(e.to_string()))?;
        line = line.then(
            new_window
                .target(Command::new("set-option").flag("-p"))
                .option_name(NAME_OPTION)
                .safe(&name),
        );
    }
    if let NewWindow::Split { refocus, .. } = &new_window {
        // The split made the agent's pane active, so that the commands above could aim at it
        // through its window: the pane that was active is again.
        line = line.then(Command::new("select-pane").target("-t", Target::Pane(*refocus)));
    }
    let pane: PaneId = first_reply_line(&handle, line)
        .await?
        .parse()
        .map_err(|_| Error::Failed("tmux did not say which pane it made".into()))?;
    if let (NewWindow::InSessionNamed(session), Some(index)) = (&new_window, body.window_index) {
        // A restore made the session again: its first window goes back to its index (tmux
        // refuses when it is there already, which is as good).
        let to_index = format!("={}:{index}", session.as_str());
        let moved = Command::new("move-window")
            .target("-s", Target::Pane(pane))
            .flag("-t")
            .safe(&SafeValue::new(to_index).map_err(|e| Error::Internal(e.to_string()))?);
        if let Err(error) = handle.run(Line::new(moved)).await {
            tracing::debug!(%pane, %error, "the restored window stays where tmux made it");
        }
    }
    let worktree = match worktree {
        Some(record) => Some(super::launch_setup::note_pane(state, record, pane).await?),
        None => None,
    };
    let worktree_path = worktree.as_ref().map(|w| w.path.as_str());
    let split = matches!(new_window, NewWindow::Split { .. });
    started_or_failed(state, &handle, pane, split).await?;
    // Only a command that started is recorded: restore would start a failing one again.
    super::agent_records::record_launch(
        state,
        body,
        pane,
        &provider.id,
        worktree_path,
        conversation,
    )
    .await;
    // What waits for an agent of this name (sent while it was down, or left on its last pane)
    // is its now; queued before the launch's own messages, delivered in that order.
    if let Some(name) = &body.name {
        super::follow::release_to_launched(state, &handle, pane, name).await?;
    }
    let queued_messages =
        super::launch_setup::queue_messages(state, &handle, pane, body.name.as_deref(), messages)
            .await?;
    let deadline = tokio::time::Instant::now() + timeout;
    let (status, accepted_prompts) = if body.no_wait {
        (Status::Unknown, Vec::new())
    } else {
        wait_until_ready(
            state,
            &handle,
            pane,
            &provider.id,
            &spec,
            body.accept_startup_prompts,
            deadline,
        )
        .await
        .map_err(|error| match error {
            WaitError::Api(error) => error,
            WaitError::NotReady(status) => Error::TimedOut(format!(
                "{pane} started but was not ready within {timeout:?} (status {})",
                status.map_or("not mirrored yet".to_string(), |s| s.to_string())
            )),
        })?
    };
    Ok(Launched {
        pane: pane.to_string(),
        provider: provider.id.to_string(),
        name: body.name.clone(),
        status: status.to_string(),
        accepted_prompts,
        worktree,
        queued_messages,
    })
}

/// Where a launch's window is made, so that the commands after `new-window`/`new-session` in
/// the same line can aim at it (and at its only pane, the agent's).
enum NewWindow {
    /// The last window of this session (`new-window -a` after the last one).
    In(crate::ids::SessionId),
    /// The window at this index of this session (a restored agent's own index).
    At(crate::ids::SessionId, u32),
    /// The last window of the session of this name (`new-session`).
    InSessionNamed(SafeValue),
    /// A pane split off another in `window` (`split-window` without `-d`: the new pane is the
    /// window's active one, which is what a window target of `set-option -p` names), and the
    /// pane to make active again after.
    Split {
        /// The window split.
        window: crate::ids::WindowId,
        /// Its active pane before the split.
        refocus: PaneId,
    },
}

impl NewWindow {
    /// `command` with `-t` aimed at the new window.
    fn target(&self, command: Command) -> Command {
        match self {
            NewWindow::In(session) => command.target_last_window("-t", *session),
            NewWindow::At(session, index) => command.target_window_index("-t", *session, *index),
            NewWindow::InSessionNamed(name) => command.target_last_window_named("-t", name),
            NewWindow::Split { window, .. } => command.target("-t", Target::Window(*window)),
        }
    }
}

fn remain_on_exit() -> Result<SafeValue, Error> {
    SafeValue::new("remain-on-exit").map_err(|e| Error::bad_request(e.to_string()))
}

fn on() -> Result<SafeValue, Error> {
    SafeValue::new("on").map_err(|e| Error::bad_request(e.to_string()))
}

/// How long a new agent has at most to fail before it counts as started.
const START_GRACE: Duration = Duration::from_secs(3);

/// How long a dead pane's exit status may take to show after its end (tmux may see the end of
/// the output before it learns the exit status; it sometimes takes longer, and the error then
/// says the command ended, without a status).
const STATUS_GRACE: Duration = Duration::from_millis(500);

/// How many of a failed command's last lines the error shows.
const FAILED_LINES: usize = 8;

/// Watches the new pane until its program runs (the launch script has `exec`ed into something
/// that is not a shell or the `sleep` of a failed start) or [`START_GRACE`] has passed: a
/// command that ended by then is an error showing the pane's last lines, and its window is
/// closed. Otherwise `remain-on-exit` is unset again, so that the agent's pane closes when it
/// exits, as any other.
async fn started_or_failed(
    state: &Context,
    handle: &ConnectionHandle,
    pane: PaneId,
    split: bool,
) -> Result<(), Error> {
    const DEAD: Format = Format::new(
        "#{pane_dead}:#{pane_dead_status}#{?pane_dead_signal,signal #{pane_dead_signal},}:#{pane_current_command}",
    );
    let shells: Vec<String> = state
        .providers
        .borrow()
        .get(crate::status::providers::SHELL)
        .map(|shell| shell.detect.commands.clone())
        .unwrap_or_default();
    let started = tokio::time::Instant::now();
    let mut died: Option<(String, tokio::time::Instant)> = None;
    loop {
        let line = Line::new(commands::display_print(DEAD, Some(Target::Pane(pane))));
        let text = match handle.run(line).await {
            Ok(replies) => replies
                .first()
                .map(|r| String::from_utf8_lossy(&r.joined_body()).trim().to_string())
                .unwrap_or_default(),
            Err(RunError::Connection(error)) => {
                return Err(Error::Unavailable(error.to_string()));
            }
            // The pane is gone already (someone closed it).
            Err(_) => {
                return Err(Error::Failed(format!(
                    "launch failed: {pane} closed at once"
                )));
            }
        };
        let mut fields = text.splitn(3, ':');
        let (dead, status, command) = (
            fields.next().unwrap_or_default() == "1",
            fields.next().unwrap_or_default().to_string(),
            fields.next().unwrap_or_default().to_string(),
        );
        let now = tokio::time::Instant::now();
        if dead {
            // tmux may see the end of the output a moment before the exit status.
            let since = died.as_ref().map_or(now, |(_, since)| *since);
            if !status.is_empty() || now >= since + STATUS_GRACE {
                died = Some((status, since));
                break;
            }
            died = Some((status, since));
        } else {
            // (The agent's status is no sign: the provider is assigned before the program
            // runs, and an empty screen may pass for a ready one.)
            // `tmux` is the server's child before it has run the default shell: a loaded
            // machine shows it for a while, and it is not the agent yet.
            let running = !command.is_empty()
                && command != "sleep"
                && command != "tmux"
                && !shells.contains(&command);
            if running || now >= started + START_GRACE {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let died = died.map(|(status, _)| status);
    let Some(status) = died else {
        // Where it was set: a split pane's window is the user's, and keeps its own value.
        let unset = Command::new("set-option")
            .flag(if split { "-p" } else { "-w" })
            .flag("-u")
            .target("-t", pane)
            .safe(&remain_on_exit()?);
        first_reply_line(handle, Line::new(unset)).await?;
        return Ok(());
    };
    // With some history: tmux scrolls the screen up a line to write its "Pane is dead".
    let capture = Command::new("capture-pane")
        .flag("-p")
        .flag("-J")
        .number("-S", -100)
        .target("-t", pane);
    let screen = first_reply_line(handle, Line::new(capture))
        .await
        .unwrap_or_default();
    let lines: Vec<&str> = screen
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with("Pane is dead"))
        .collect();
    let last = lines[lines.len().saturating_sub(FAILED_LINES)..].join("\n");
    let kill = Command::new("kill-pane").target("-t", pane);
    if let Err(error) = first_reply_line(handle, Line::new(kill)).await {
        tracing::warn!(%pane, %error, "cannot close a failed launch's pane");
    }
    let how = if status.is_empty() {
        "the command ended at once".to_string()
    } else if status.starts_with("signal") {
        format!("the command was killed by {status}")
    } else {
        format!("the command exited with status {status}")
    };
    Err(Error::CommandFailed(if last.is_empty() {
        format!("launch failed: {how} (it printed nothing)")
    } else {
        format!("launch failed: {how}: {last}")
    }))
}

/// Why a launched agent did not become ready.
enum WaitError {
    Api(Error),
    NotReady(Option<Status>),
}

/// How long a launched agent's status must stay ready before the launch says it is.
const READY_HOLD: Duration = Duration::from_millis(1000);

/// How many times one start-up dialog is answered before panectl gives up on it.
const MAX_ANSWERS_PER_PROMPT: usize = 3;

/// Waits until the new agent is ready, answering the start-up dialogs of `spec` when `accept`;
/// returns its status and the dialogs answered.
async fn wait_until_ready(
    state: &Context,
    handle: &ConnectionHandle,
    pane: PaneId,
    provider: &str,
    spec: &Launch,
    accept: bool,
    deadline: tokio::time::Instant,
) -> Result<(Status, Vec<String>), WaitError> {
    let mut accepted: Vec<String> = Vec::new();
    loop {
        let (reached, status) = await_agent_status(
            state,
            pane,
            // Ready, or blocked on a start-up dialog.
            |s, p| p == Some(provider) && matches!(s.phase(), Phase::Ready | Phase::Blocked),
            Some(deadline),
        )
        .await
        .map_err(WaitError::Api)?;
        let status = match status {
            Some(status) if reached => status,
            other => return Err(WaitError::NotReady(other)),
        };
        if status.is_ready() {
            // Ready for a moment is not ready: Claude Code 2.1.332 draws its prompt, then a
            // start-up dialog, or takes a submit only a moment later. Ready means ready for
            // READY_HOLD without a change.
            let hold = (tokio::time::Instant::now() + READY_HOLD).min(deadline);
            let (changed, _) = await_status(state, pane, |s| s != status, Some(hold))
                .await
                .map_err(WaitError::Api)?;
            if changed {
                continue;
            }
            return Ok((status, accepted));
        }
        // A dialog: one the rules declare, answered if the caller opted in.
        let (summary, _) = state
            .find(&pane.to_string())
            .await
            .map_err(WaitError::Api)?;
        let rule = summary.status_rule.unwrap_or_default();
        let prompt = spec.startup_prompts.iter().find(|p| p.rule == rule);
        let answered = accepted.iter().filter(|r| **r == rule).count();
        match prompt {
            Some(prompt) if accept && answered < MAX_ANSWERS_PER_PROMPT => {
                let screen = handle
                    .screen(pane, false)
                    .await
                    .map_err(|e| WaitError::Api(Error::Unavailable(e.to_string())))?
                    .map(|dump| String::from_utf8_lossy(&dump.content).into_owned())
                    .unwrap_or_default();
                let rows: Vec<&str> = screen.lines().collect();
                let keys = prompt.keys_for(&rows).map_err(|why| {
                    WaitError::Api(Error::Conflict(format!(
                        "{pane} shows its start-up dialog ({rule}), but {why}"
                    )))
                })?;
                if let Some(line) = Line::keys(pane, &keys) {
                    first_reply_line(handle, line)
                        .await
                        .map_err(WaitError::Api)?;
                }
                tracing::info!(%pane, rule, "answered a start-up dialog");
                accepted.push(rule);
                // Give the dialog a moment to close before looking again.
                let settle = (tokio::time::Instant::now() + Duration::from_secs(5)).min(deadline);
                await_status(state, pane, |s| s.phase() != Phase::Blocked, Some(settle))
                    .await
                    .map_err(WaitError::Api)?;
            }
            Some(_) if accept => {
                return Err(WaitError::Api(Error::Conflict(format!(
                    "{pane} still shows its start-up dialog ({rule}) after {MAX_ANSWERS_PER_PROMPT} answers"
                ))));
            }
            Some(_) => {
                return Err(WaitError::Api(Error::Conflict(format!(
                    "{pane} shows a start-up dialog ({rule}); answer it in the pane, or launch \
                         with --accept-startup-prompts (accept_startup_prompts) to accept it"
                ))));
            }
            None => {
                return Err(WaitError::Api(Error::Conflict(format!(
                    "{pane} is waiting for an answer ({}) before it is ready; its rules \
                         declare no start-up prompt for it, so answer it in the pane",
                    if rule.is_empty() {
                        "no rule"
                    } else {
                        rule.as_str()
                    }
                ))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwd_is_checked_on_the_servers_host() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        assert!(check_cwd(&crate::host::LocalHost, cwd).is_ok());
        // A host on which the directory does not exist refuses it, as the local host refuses
        // a missing one.
        let fake = crate::host::fake::FakeHost::default();
        let refused = check_cwd(&fake, cwd).unwrap_err();
        let missing = format!("{cwd}/missing");
        let local = check_cwd(&crate::host::LocalHost, &missing).unwrap_err();
        assert!(matches!(refused, Error::BadRequest(_)));
        assert_eq!(
            refused.to_string(),
            format!("cwd {cwd:?} is not an absolute path to a directory")
        );
        assert_eq!(
            local.to_string(),
            format!("cwd {missing:?} is not an absolute path to a directory")
        );
        assert_eq!(fake.asked(), [format!("dir {cwd}")]);
        // A relative path is refused before the host is asked.
        assert!(check_cwd(&fake, "relative").is_err());
        assert_eq!(fake.asked().len(), 1);
    }

    #[test]
    fn commands_quote_every_word_for_the_shell() {
        let env = BTreeMap::from([("A_B".to_string(), "it's $HOME #{x}".to_string())]);
        let command = shell_command(
            &["claude".into()],
            &["--model".into(), "a b".into()],
            Some("/tmp/o'k"),
            &env,
        );
        let script = "cd '/tmp/o'\\''k' || { sleep 0.5; exit 1; }; export 'A_B=it'\\''s $HOME #{x}'; \
             command -v 'claude' >/dev/null 2>&1 || { 'claude'; s=$?; sleep 0.5; exit $s; }; \
             exec 'claude' '--model' 'a b'";
        assert_eq!(command, format!("exec /bin/sh -c {}", shell_quote(script)));
    }

    #[test]
    fn the_script_runs_in_sh_as_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let cwd = real.to_string_lossy().into_owned();
        let env = BTreeMap::from([("PANECTL_T".to_string(), "it's $HOME".to_string())]);
        let command = shell_command(
            &[
                "sh".into(),
                "-c".into(),
                "printf '%s|%s|%s' \"$PWD\" \"$PANECTL_T\" \"$1\"".into(),
                "x".into(),
            ],
            &["a 'b' #{c}".into()],
            Some(&cwd),
            &env,
        );
        let output = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            format!("{}|it's $HOME|a 'b' #{{c}}", real.display())
        );
        let missing = shell_command(
            &["panectl-no-such-program".into()],
            &[],
            None,
            &BTreeMap::new(),
        );
        let output = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&missing)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(127));
        assert!(String::from_utf8_lossy(&output.stderr).contains("not found"));
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
