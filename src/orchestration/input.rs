//! Acting on panes for orchestrators: type text (`input`), press keys
//! (`keys`), and wait for a status (`wait`, a long poll on the event stream: no polling).

use serde::{Deserialize, Serialize};

use super::{Context, Error};
use crate::control::command::{Line, commands};
use crate::ids::PaneId;
use crate::status::Status;
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

/// `POST /v1/panes/{pane}/input`: types the text (`send-keys -l`, nothing expanded), then
/// Enter unless `enter` is false.
pub async fn input(state: &Context, name: &str, body: &InputBody, mcp: bool) -> Result<(), Error> {
    let (pane, handle) = state.find(name).await?;
    super::shell_guard::ShellPermission::of(state.mcp_allow_shell, mcp, body.allow_shell)
        .check(&pane)?;
    let mut line = None::<Line>;
    if !body.text.is_empty() {
        let command = commands::send_literal(pane.pane, body.text.as_bytes())
            .map_err(|e| Error::BadRequest(e.to_string()))?;
        line = Some(Line::new(command));
    }
    if body.enter.unwrap_or(true) {
        let enter = commands::send_key(pane.pane, "Enter");
        line = Some(match line {
            Some(line) => line.then(enter),
            None => Line::new(enter),
        });
    }
    let Some(line) = line else {
        return Err(Error::BadRequest(
            "nothing to send: empty text and no Enter".into(),
        ));
    };
    run(&handle, line).await?;
    let _ = handle.input_sent(pane.pane).await;
    Ok(())
}

/// `POST /v1/panes/{pane}/keys`: presses tmux keys by name, each checked first.
pub async fn keys(state: &Context, name: &str, body: &KeysBody) -> Result<(), Error> {
    let Some((first, rest)) = body.keys.split_first() else {
        return Err(Error::BadRequest("no keys given".into()));
    };
    if let Some(bad) = body.keys.iter().find(|k| !commands::is_key_name(k)) {
        return Err(Error::BadRequest(format!(
            "{bad:?} is not a key name (Enter, Escape, C-c, F5, Up, y, ...)"
        )));
    }
    let (pane, handle) = state.find(name).await?;
    let line = rest.iter().fold(
        Line::new(commands::send_key(pane.pane, first)),
        |line, key| line.then(commands::send_key(pane.pane, key)),
    );
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
