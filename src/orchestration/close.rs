//! `POST /v1/panes/{pane}/close`: closes an agent the way a person would. Its messages still
//! pending are cancelled first (no delivery may type into a CLI on its way out), one being
//! typed at that moment is let finish (its text and the close keys must not interleave), then
//! the CLI
//! is asked to exit its own way (its provider's `[close]` table: `/exit` and Enter; without
//! one, Ctrl-C then Ctrl-D), and given until the timeout to do so; whatever is left of the
//! pane (a shell it returned to, a dead pane, or the program that ignored the keys) is then
//! closed with `kill-pane`. A `closed` event says which of the two it was.
//!
//! Everything goes to tmux through the daemon's control connection: the text with
//! `send-keys -l` (nothing in it is expanded or read as a key name), keys checked as key names
//! when the rules were loaded, and `kill-pane -t %N`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::limits::{self, Zero};
use super::{Context, Error};
use crate::control::command::{Command, Format, Line, Target, commands};
use crate::events::{CloseHow, EventKind};
use crate::ids::PaneId;
use crate::status::Status;
use crate::status::rules::Close;
use crate::tmux::watch::{PaneWatch, Seen};
use crate::tmux::{ConnectionHandle, RunError};

/// How long the agent has to exit after the close keys, unless the request says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest timeout a close may ask for (an hour).
pub const MAX_CLOSE_SECONDS: f64 = 3_600.0;

/// The reason recorded on the messages a close cancels.
pub const CANCEL_REASON: &str = "agent closed";

/// Between the close text and the keys after it when the provider sets no submit delay:
/// CLIs that read the key in the same read as the text take it as part of the text.
const TEXT_DELAY: Duration = Duration::from_millis(150);

/// How often the pane's process is looked at while the agent is given time to exit.
const POLL: Duration = Duration::from_millis(100);

/// The longest a close waits for a message being typed into the agent to be done (a delivery
/// types, submits and confirms in well under this; one that takes longer is given up on in
/// the inbox as `uncertain`).
const DELIVERY_WAIT: Duration = Duration::from_secs(15);

/// The body of `POST /v1/panes/{pane}/close`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {
    /// How long the agent has to exit by itself before its pane is killed, in seconds
    /// (default 10; 0: kill at once, after the keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 3600, default = 10)]
    pub timeout_seconds: Option<f64>,
    /// Remove the git worktree the agent was launched in (`launch` with `worktree`) once it
    /// closed; its branch stays. Refused before anything is closed when the worktree has
    /// uncommitted changes or commits on no remote and not on its base, unless `force`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remove_worktree: bool,
    /// With `remove_worktree`: remove it even so (`git worktree remove --force`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

/// The answer of `POST /v1/panes/{pane}/close`: what was sent and how the pane closed.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Closed {
    /// The pane, now closed.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// `exited`: the program exited by itself after the close keys (or had already);
    /// `killed`: it was still running at the timeout, and its pane was killed.
    pub how: CloseHow,
    /// The pane's provider when it was closed (`null`: no agent was recognised).
    #[schema(required = true)]
    pub provider: Option<String>,
    /// The text typed first (the provider's `[close]` text), if any.
    #[schema(required = true)]
    pub text: Option<String>,
    /// The keys pressed after it.
    pub keys: Vec<String>,
    /// Whether the keys were the fallback (`C-c`, `C-d`): the pane's provider has no `[close]`
    /// table, or no provider was recognised.
    pub fallback: bool,
    /// The messages that were still pending for the pane, now cancelled with the reason
    /// `agent closed`.
    pub cancelled: Vec<i64>,
    /// The messages that were being typed into the agent when the close came: each was let
    /// finish (delivered, or failed) before the close keys, so that the two did not mix.
    pub finished_first: Vec<i64>,
    /// With `remove_worktree`: the worktree removed (its branch kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_worktree: Option<String>,
    /// With `remove_worktree`: why the worktree could not be removed after the agent closed
    /// (it changed as the agent exited, or git failed); the worktree is still there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_error: Option<String>,
}

/// How the wait for the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The pane is gone (the program exited and tmux closed its pane).
    Gone,
    /// The program exited and left its pane (dead, or back at its shell).
    Exited,
    /// The timeout passed with the program still running.
    Running,
}

/// What the pane holds now, as tmux says.
enum Probe {
    Gone,
    Dead,
    Running(String),
}

/// `POST /v1/panes/{pane}/close`: see the module's documentation.
pub async fn close(state: &Context, name: &str, body: &CloseBody) -> Result<Closed, Error> {
    let timeout = body
        .timeout_seconds
        .map(|s| limits::seconds("timeout_seconds", s, Zero::Allowed, MAX_CLOSE_SECONDS))
        .transpose()?
        .unwrap_or(DEFAULT_TIMEOUT);
    if body.force && !body.remove_worktree {
        return Err(Error::bad_request("force goes with remove_worktree"));
    }
    let (pane, handle) = state.find(name).await?;
    let id = pane.pane;
    // A worktree that cannot be removed is said before anything is closed.
    let worktree = if body.remove_worktree {
        Some(super::worktrees::of_agent(state, &pane, body.force).await?)
    } else {
        None
    };
    // Watch before acting, so that no exit falls between the keys and the wait.
    let mut watch = PaneWatch::new(&state.bus, id);
    let (rules, shells) = {
        let providers = state.providers.borrow();
        let rules = pane.provider.as_deref().and_then(|p| providers.get(p));
        let shells = providers
            .get(crate::status::providers::SHELL)
            .map(|shell| shell.detect.commands.clone())
            .unwrap_or_default();
        (
            rules.map(|p| (p.close.clone(), p.delivery.submit_delay)),
            shells,
        )
    };
    let (close, delay) = match rules {
        Some((Some(close), delay)) => (Some(close), delay.unwrap_or(TEXT_DELAY)),
        _ => (None, TEXT_DELAY),
    };
    let fallback = close.is_none();
    let close = close.unwrap_or_else(Close::fallback);
    let receiver = id.to_string();
    let mut cancelled: Vec<i64> = state
        .inbox
        .call(move |store| store.cancel_pending(&receiver, CANCEL_REASON))
        .await?
        .into_iter()
        .map(|message| message.id)
        .collect();
    // Closed on purpose: not to be restored, and nothing waits for it any more.
    cancelled.extend(super::follow::forget_closed(state, &pane, CANCEL_REASON).await?);
    cancelled.sort_unstable();
    let finished_first = deliveries_done(state, &id.to_string()).await?;
    let ended = if pane.dead || pane.status == Status::Exited {
        Ended::Exited
    } else {
        ask(state, &handle, id, &close, delay).await?;
        let in_shell = shells.contains(&pane.command.to_string());
        let deadline = tokio::time::Instant::now() + timeout;
        await_exit(state, &handle, &mut watch, id, in_shell, &shells, deadline).await?
    };
    if ended != Ended::Gone {
        kill(state, &handle, id).await?;
    }
    let how = match ended {
        Ended::Gone | Ended::Exited => CloseHow::Exited,
        Ended::Running => CloseHow::Killed,
    };
    let (mut removed_worktree, mut worktree_error) = (None, None);
    if let Some(record) = worktree {
        match super::worktrees::remove(state, &record.name, body.force).await {
            Ok(record) => removed_worktree = Some(record.name),
            Err(error) => worktree_error = Some(error.to_string()),
        }
    }
    tracing::info!(pane = %id, ?how, cancelled = cancelled.len(), ?removed_worktree, "closed on request");
    state.bus.publish(EventKind::Closed {
        pane: id,
        how,
        cancelled: cancelled.clone(),
    });
    Ok(Closed {
        pane: id.to_string(),
        how,
        provider: pane.provider,
        text: close.text,
        keys: close.keys,
        fallback,
        cancelled,
        finished_first,
        removed_worktree,
        worktree_error,
    })
}

/// Waits until no message is being typed into `pane` (none can start now: its pending ones
/// were cancelled), at most [`DELIVERY_WAIT`]; the ids of those it waited for.
async fn deliveries_done(state: &Context, pane: &str) -> Result<Vec<i64>, Error> {
    let deadline = tokio::time::Instant::now() + DELIVERY_WAIT;
    let mut waited = Vec::new();
    loop {
        let receiver = pane.to_string();
        let typing: Vec<i64> = state
            .inbox
            .call(move |store| store.list(Some(&receiver), Some(crate::inbox::State::Delivering)))
            .await?
            .into_iter()
            .map(|m| m.id)
            .collect();
        for id in &typing {
            if !waited.contains(id) {
                tracing::info!(%pane, message = id, "a message is being typed into the agent: closing after it");
                waited.push(*id);
            }
        }
        if typing.is_empty() {
            return Ok(waited);
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(%pane, ?typing, "a delivery did not finish in time: closing anyway");
            return Ok(waited);
        }
        tokio::select! {
            () = state.shutdown.cancelled() => {
                return Err(Error::Unavailable("the daemon is stopping".into()));
            }
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Types the close text and presses the close keys. A pane that is gone by then is no error
/// (the wait sees it gone); a connection that failed is.
async fn ask(
    state: &Context,
    handle: &ConnectionHandle,
    pane: PaneId,
    close: &Close,
    delay: Duration,
) -> Result<(), Error> {
    if let Some(text) = &close.text {
        let command = commands::send_literal(pane, text.as_bytes())
            .map_err(|e| Error::BadRequest(e.to_string()))?;
        sent(state, handle.run(Line::new(command)).await, pane).await?;
        if !close.keys.is_empty() {
            tokio::time::sleep(delay).await;
        }
    }
    if let Some(line) = Line::keys(pane, &close.keys) {
        sent(state, handle.run(line).await, pane).await?;
    }
    Ok(())
}

/// A refused `send-keys` (the pane closed meanwhile) is logged and let be; so is a connection
/// that closed with the pane's session (the agent exited at the close text, and its pane was
/// the session's last); a connection failed otherwise is an error.
async fn sent<T>(state: &Context, result: Result<T, RunError>, pane: PaneId) -> Result<(), Error> {
    match result {
        Ok(_) => Ok(()),
        Err(error @ RunError::Connection(_)) => match probe_apart(state, pane).await? {
            Probe::Gone => Ok(()),
            Probe::Dead | Probe::Running(_) => Err(Error::Unavailable(error.to_string())),
        },
        Err(error) => {
            tracing::info!(%pane, %error, "the close keys were not taken");
            Ok(())
        }
    }
}

/// Waits until the pane's program exited or `deadline` passed: the pane closed, it died, its
/// status became `exited`, or (for a program started from a shell) the shell is its
/// foreground command again. The bus is read for the first three and the pane asked every
/// [`POLL`] for all of them.
async fn await_exit(
    state: &Context,
    handle: &ConnectionHandle,
    watch: &mut PaneWatch,
    pane: PaneId,
    in_shell: bool,
    shells: &[String],
    deadline: tokio::time::Instant,
) -> Result<Ended, Error> {
    let stopping = || Error::Unavailable("the daemon is stopping".into());
    loop {
        match probe(state, handle, pane).await? {
            Probe::Gone => return Ok(Ended::Gone),
            Probe::Dead => return Ok(Ended::Exited),
            Probe::Running(command) if !in_shell && shells.contains(&command) => {
                return Ok(Ended::Exited);
            }
            Probe::Running(_) => {}
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(Ended::Running);
        }
        let tick = (now + POLL).min(deadline);
        loop {
            let seen = tokio::select! {
                () = state.shutdown.cancelled() => return Err(stopping()),
                seen = watch.next_until(Some(tick)) => seen,
            };
            match seen {
                None => break,
                Some(Seen::Gone) => return Ok(Ended::Gone),
                Some(Seen::Status {
                    status: Status::Exited,
                    ..
                }) => return Ok(Ended::Exited),
                Some(Seen::Closed) => return Err(stopping()),
                Some(Seen::Status { .. } | Seen::Stale | Seen::Other(_)) => {}
            }
        }
    }
}

/// What [`probe`] asks tmux: the pane's id first, as tmux answers a target it cannot find
/// with nothing (control mode) or with the formats of no pane (`display-message -p`).
const PROCESS: &str = "#{pane_id}:#{pane_dead}:#{pane_current_command}";

/// Reads tmux's answer to [`PROCESS`] about `pane`.
fn read_probe(pane: PaneId, text: &str) -> Probe {
    let mut parts = text.trim_end_matches(['\r', '\n']).splitn(3, ':');
    let (id, dead, command) = (parts.next(), parts.next(), parts.next());
    if id.and_then(|id| id.parse::<PaneId>().ok()) != Some(pane) {
        return Probe::Gone;
    }
    match dead {
        Some("1") => Probe::Dead,
        _ => Probe::Running(command.unwrap_or_default().to_string()),
    }
}

/// Asks tmux whether the pane is there, dead, and what its foreground command is.
async fn probe(state: &Context, handle: &ConnectionHandle, pane: PaneId) -> Result<Probe, Error> {
    let line = Line::new(commands::display_print(
        Format::new(PROCESS),
        Some(Target::Pane(pane)),
    ));
    match handle.run(line).await {
        Ok(replies) => Ok(read_probe(
            pane,
            &replies
                .first()
                .map(|r| String::from_utf8_lossy(&r.joined_body()).into_owned())
                .unwrap_or_default(),
        )),
        Err(RunError::Connection(_)) => probe_apart(state, pane).await,
        // tmux refuses a target it cannot find: the pane closed.
        Err(_) => Ok(Probe::Gone),
    }
}

/// [`probe`] through a `tmux` process of its own, when the session's control connection has
/// closed: it closes with the session when the agent's pane was the session's last, and then
/// the pane is gone; a server that answers with the pane still there means the connection is
/// only reconnecting.
async fn probe_apart(state: &Context, pane: PaneId) -> Result<Probe, Error> {
    let target = pane.to_string();
    match state
        .address
        .run(&["display-message", "-p", "-t", &target, PROCESS])
        .await
    {
        Ok(lines) => Ok(read_probe(
            pane,
            &lines
                .first()
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
                .unwrap_or_default(),
        )),
        // No such pane, or no server at all.
        Err(crate::address::AddressError::Failed { .. }) => Ok(Probe::Gone),
        Err(error) => Err(Error::Unavailable(error.to_string())),
    }
}

/// Closes the pane (`kill-pane -t %N`); one that closed meanwhile is no error.
async fn kill(state: &Context, handle: &ConnectionHandle, pane: PaneId) -> Result<(), Error> {
    let kill = Command::new("kill-pane").target("-t", Target::Pane(pane));
    match handle.run(Line::new(kill)).await {
        Ok(_) => Ok(()),
        Err(error @ RunError::Connection(_)) => match probe_apart(state, pane).await? {
            Probe::Gone => Ok(()),
            Probe::Dead | Probe::Running(_) => Err(Error::Unavailable(error.to_string())),
        },
        Err(error) => match probe(state, handle, pane).await? {
            Probe::Gone => Ok(()),
            Probe::Dead | Probe::Running(_) => Err(Error::Failed(format!(
                "{pane} could not be closed: {error}"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_answered_for_no_pane_or_another_means_gone() {
        let pane = PaneId(4);
        assert!(matches!(read_probe(pane, "%4:1:claude\n"), Probe::Dead));
        assert!(matches!(read_probe(pane, "%4:0:a:b"), Probe::Running(c) if c == "a:b"));
        // tmux's answers about a pane it no longer has.
        for gone in ["", "::", "\n", "%5:0:sh"] {
            assert!(matches!(read_probe(pane, gone), Probe::Gone), "{gone:?}");
        }
    }
}
