//! Acting on panes for orchestrators: type text (`input`), press keys
//! (`keys`), and wait for a status (`wait`, a long poll on the event stream: no polling).

use serde::{Deserialize, Serialize};

use std::time::Duration;

use super::{Context, Error};
use crate::control::command::{Line, commands};
use crate::ids::PaneId;
use crate::status::{Phase, Status};
use crate::tmux::ConnectionHandle;
use crate::tmux::watch::{PaneWatch, Seen};

/// The body of `POST /v1/panes/{pane}/input`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InputBody {
    /// The text, typed literally (may be empty if `enter` is true).
    pub text: String,
    /// Press Enter after it (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(default = true)]
    pub enter: Option<bool>,
    /// Type it even into a pane that runs no recognised agent (a plain shell runs it as
    /// commands). Ignored for MCP clients: the daemon's `--mcp-allow-shell` decides.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_shell: bool,
}

/// The body of `POST /v1/panes/{pane}/keys`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeysBody {
    /// tmux key names, pressed in order (`Enter`, `Escape`, `C-c`, `F5`, `Up`, `y`...).
    #[schema(min_items = 1)]
    pub keys: Vec<String>,
}

/// The body of `POST /v1/panes/{pane}/wait`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitBody {
    /// The statuses to wait for.
    #[schema(value_type = Vec<Status>, min_items = 1)]
    pub until: Vec<String>,
    /// Give up after this many seconds (0: answer at once; default: wait as long as the
    /// connection lasts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0)]
    pub timeout_seconds: Option<f64>,
}

/// The answer of `POST /v1/panes/{pane}/wait`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WaitAnswer {
    /// The pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// Whether one of the statuses was reached (false: the timeout passed).
    pub reached: bool,
    /// The pane's status when the wait ended (`unknown` if the pane was not mirrored yet).
    #[schema(value_type = Status)]
    pub status: String,
    /// Seconds waited.
    pub waited_seconds: f64,
}

async fn run(handle: &ConnectionHandle, line: Line) -> Result<(), Error> {
    super::first_reply_line(handle, line).await.map(|_| ())
}

/// The answer of `POST /v1/panes/{pane}/input`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InputAnswer {
    /// The pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// Whether the text was submitted: the turn began (the status left `idle`/`completed`)
    /// or the text left the input. `false` only with `enter: false` (nothing to submit).
    pub submitted: bool,
    /// How many times Enter was pressed: 2 when the first was lost (an agent still starting
    /// takes the text but not yet its submit key).
    pub enters: u8,
    /// The pane's status after it.
    #[schema(value_type = Status)]
    pub status: String,
}

/// Between typing the text and pressing Enter: agents that read the Enter in the same read as
/// the text take it as part of the text.
const SUBMIT_DELAY: Duration = Duration::from_millis(150);

/// How long a submit key has to show (the status busy, or the text gone from the input)
/// before Enter is pressed once more.
const CONFIRM: Duration = Duration::from_secs(2);

/// How often the pane is looked at while a submit key is confirmed.
const POLL: Duration = Duration::from_millis(50);

/// `POST /v1/panes/{pane}/input`: types the text (`send-keys -l`, nothing expanded), then
/// presses Enter unless `enter` is false, and confirms the submit as the inbox does: the turn
/// began, or the text left the input. An Enter that left the text sitting in the input of an
/// agent still ready (one still starting drops it) is pressed once more; a text still there
/// after that is an error.
pub async fn input(
    state: &Context,
    name: &str,
    body: &InputBody,
    mcp: bool,
) -> Result<InputAnswer, Error> {
    let (pane, handle) = state.find(name).await?;
    super::shell_guard::ShellPermission::of(state.mcp_allow_shell, mcp, body.allow_shell)
        .check(&pane)?;
    let enter = body.enter.unwrap_or(true);
    if body.text.is_empty() && !enter {
        return Err(Error::BadRequest(
            "nothing to send: empty text and no Enter".into(),
        ));
    }
    let id = pane.pane;
    let input_text = || async { handle.input_text(id).await.ok().flatten() };
    let before = input_text().await.unwrap_or_default();
    if !body.text.is_empty() {
        let command = commands::send_literal(id, body.text.as_bytes())
            .map_err(|e| Error::BadRequest(e.to_string()))?;
        run(&handle, Line::new(command)).await?;
    }
    let status_now = || async {
        state
            .find(&id.to_string())
            .await
            .map(|(p, _)| p.status)
            .unwrap_or(Status::Unknown)
    };
    if !enter {
        return Ok(InputAnswer {
            pane: id.to_string(),
            submitted: false,
            enters: 0,
            status: status_now().await.to_string(),
        });
    }
    if !body.text.is_empty() {
        tokio::time::sleep(SUBMIT_DELAY).await;
    }
    let typed = input_text().await.unwrap_or_default();
    let mut enters = 0;
    let submitted = loop {
        run(&handle, Line::new(commands::send_key(id, "Enter"))).await?;
        enters += 1;
        let _ = handle.input_sent(id).await;
        if submit_seen(&status_now, &input_text, &before, &typed).await {
            break true;
        }
        // Enter once more only if nothing but the typed text can take it: the agent is still
        // ready and the text still sits in its input.
        let sitting = typed != before && input_text().await.as_deref() == Some(typed.as_str());
        if enters == 2 || !sitting || !status_now().await.is_ready() {
            break !sitting;
        }
        tracing::info!(pane = %id, "the text still sits in the input after Enter: once more");
    };
    if !submitted {
        return Err(Error::Failed(format!(
            "{id} did not take the Enter: the text still sits in its input after {enters} \
             presses (is the agent still starting, or showing a dialog?)"
        )));
    }
    Ok(InputAnswer {
        pane: id.to_string(),
        submitted,
        enters,
        status: status_now().await.to_string(),
    })
}

/// Waits up to [`CONFIRM`] for a submit to show: a busy status, or the input no longer holding
/// the typed text. A text that was not seen in the input (an empty one, or a program that
/// shows no input) shows nothing to wait for but the status.
async fn submit_seen<S, SF, I, IF>(status: &S, input: &I, before: &str, typed: &str) -> bool
where
    S: Fn() -> SF,
    SF: std::future::Future<Output = Status>,
    I: Fn() -> IF,
    IF: std::future::Future<Output = Option<String>>,
{
    let deadline = tokio::time::Instant::now() + CONFIRM;
    loop {
        let now = status().await;
        if matches!(now.phase(), Phase::Busy | Phase::Blocked) {
            return true;
        }
        if typed != before && input().await.is_some_and(|text| text != typed) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            // Nothing was typed to watch leave: a ready status is all there is to see.
            return typed == before;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// `POST /v1/panes/{pane}/keys`: presses tmux keys by name, each checked first.
pub async fn keys(state: &Context, name: &str, body: &KeysBody) -> Result<(), Error> {
    if body.keys.is_empty() {
        return Err(Error::BadRequest("no keys given".into()));
    }
    if let Some(bad) = body.keys.iter().find(|k| !commands::is_key_name(k)) {
        return Err(Error::BadRequest(format!(
            "{bad:?} is not a key name (Enter, Escape, C-c, F5, Up, y, ...)"
        )));
    }
    let (pane, handle) = state.find(name).await?;
    let Some(line) = Line::keys(pane.pane, &body.keys) else {
        return Err(Error::BadRequest("no keys given".into()));
    };
    run(&handle, line).await
}

/// `POST /v1/panes/{pane}/wait`: answers when the pane's status is one of `until` (at once if
/// it already is), or when the timeout passes (`reached: false`).
pub async fn wait(state: &Context, name: &str, body: &WaitBody) -> Result<WaitAnswer, Error> {
    let wanted = body
        .until
        .iter()
        .map(|word| {
            Status::parse(word).ok_or_else(|| {
                Error::BadRequest(format!("unknown status {word:?} ({})", Status::words()))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if wanted.is_empty() {
        return Err(Error::BadRequest("until is empty".into()));
    }
    let timeout = body
        .timeout_seconds
        .map(|s| {
            crate::orchestration::limits::seconds(
                "timeout_seconds",
                s,
                crate::orchestration::limits::Zero::Allowed,
                crate::orchestration::limits::MAX_WAIT_SECONDS,
            )
        })
        .transpose()?;
    let started = std::time::Instant::now();
    let (pane, _) = state.find(name).await?;
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let (reached, status) =
        await_status(state, pane.pane, |s| wanted.contains(&s), deadline).await?;
    Ok(WaitAnswer {
        pane: pane.pane.to_string(),
        reached,
        status: status.map_or_else(|| "unknown".to_string(), |s| s.to_string()),
        waited_seconds: started.elapsed().as_secs_f64(),
    })
}

/// Waits on the event stream (no polling) until `pane`'s status satisfies `wanted`, or until
/// `deadline`. The pane may not be mirrored yet (a window just created): its arrival is waited
/// for too. Returns whether the status was reached and the last status seen.
pub async fn await_status(
    state: &Context,
    pane: PaneId,
    wanted: impl Fn(Status) -> bool,
    deadline: Option<tokio::time::Instant>,
) -> Result<(bool, Option<Status>), Error> {
    await_agent_status(state, pane, |status, _| wanted(status), deadline).await
}

/// Like [`await_status`], with the pane's provider given to `wanted` too (a new window runs a
/// shell before the agent: its `idle` is not the agent's).
pub async fn await_agent_status(
    state: &Context,
    pane: PaneId,
    wanted: impl Fn(Status, Option<&str>) -> bool,
    deadline: Option<tokio::time::Instant>,
) -> Result<(bool, Option<Status>), Error> {
    // Watch before reading the status, so that no change falls between the two.
    let mut watch = PaneWatch::new(&state.bus, pane);
    let current_status = || async {
        state
            .find(&pane.to_string())
            .await
            .ok()
            .map(|(p, _)| (p.status, p.provider))
    };
    let mut current: Option<(Status, Option<String>)> = current_status().await;
    loop {
        if let Some((status, provider)) = &current
            && wanted(*status, provider.as_deref())
        {
            return Ok((true, Some(*status)));
        }
        let stopping = || Error::Unavailable("the daemon is stopping".into());
        let seen = tokio::select! {
            () = state.shutdown.cancelled() => return Err(stopping()),
            seen = watch.next_until(deadline) => seen,
        };
        match seen {
            None => return Ok((false, current.map(|(s, _)| s))),
            Some(Seen::Status { status, provider }) => current = Some((status, provider)),
            // Listed now, or events were missed: its status may be known already.
            Some(Seen::Stale) => current = current_status().await,
            Some(Seen::Gone) => return Err(Error::Gone(format!("{pane} closed"))),
            Some(Seen::Other(_)) => {}
            Some(Seen::Closed) => return Err(stopping()),
        }
    }
}
