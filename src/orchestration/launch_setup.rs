//! The work around a launch that is not tmux: the git worktree it starts in (made with
//! [`super::worktree`], recorded in the inbox database with the agent's name and pane) and the
//! messages queued for it once it runs (a system prompt its CLI takes no flag for, the
//! profile's first message).

use super::launch_plan::LaunchBody;
use super::worktree::{self, WorktreeError};
use super::{Context, Error};
use crate::ids::PaneId;
use crate::inbox::WorktreeRecord;
use crate::tmux::ConnectionHandle;

impl From<WorktreeError> for Error {
    fn from(error: WorktreeError) -> Self {
        let text = error.to_string();
        match error {
            WorktreeError::NotARepo(_) | WorktreeError::Invalid(_) => Error::BadRequest(text),
            WorktreeError::Exists(_) | WorktreeError::Refused(_) => Error::Conflict(text),
            WorktreeError::Git { .. } => Error::Failed(text),
        }
    }
}

/// Makes the worktree `name` from the repository of the launch's `cwd` and records it (with
/// the agent's name, no pane yet). Refused for a server on another host: git runs here.
pub async fn create_for_launch(
    state: &Context,
    body: &LaunchBody,
    name: &str,
) -> Result<WorktreeRecord, Error> {
    if !state.address.is_local() {
        return Err(Error::bad_request(
            "worktrees are made by git on the daemon's machine: not for a server on another host",
        ));
    }
    let cwd = body
        .cwd
        .clone()
        .ok_or_else(|| Error::bad_request("a worktree needs cwd"))?;
    if state
        .inbox
        .call({
            let name = name.to_string();
            move |store| store.worktree(&name)
        })
        .await?
        .is_some()
    {
        return Err(Error::Conflict(format!(
            "a worktree named {name:?} is recorded already (panectl worktrees)"
        )));
    }
    let settings = state.worktrees.clone();
    let base = body.base.clone();
    let owned = name.to_string();
    let mut record = tokio::task::spawn_blocking(move || {
        worktree::create(
            &settings,
            std::path::Path::new(&cwd),
            &owned,
            base.as_deref(),
        )
    })
    .await
    .map_err(|e| Error::Internal(format!("the worktree task failed: {e}")))??;
    record.agent_name = body.name.clone();
    let stored = record.clone();
    state
        .inbox
        .call(move |store| store.add_worktree(&stored))
        .await?;
    tracing::info!(worktree = %record.name, branch = %record.branch, "made a worktree for a launch");
    Ok(record)
}

/// Records the pane of the agent launched in a worktree.
pub async fn note_pane(
    state: &Context,
    mut record: WorktreeRecord,
    pane: PaneId,
) -> Result<WorktreeRecord, Error> {
    let name = record.name.clone();
    let pane_text = pane.to_string();
    state
        .inbox
        .call(move |store| store.set_worktree_pane(&name, &pane_text))
        .await?;
    record.pane = Some(pane.to_string());
    Ok(record)
}

/// Queues `messages` for the new agent in `pane` (named `name`: they follow it), in order
/// (delivered once it is ready, as any message); their ids.
pub async fn queue_messages(
    state: &Context,
    handle: &ConnectionHandle,
    pane: PaneId,
    name: Option<&str>,
    messages: Vec<String>,
) -> Result<Vec<i64>, Error> {
    if messages.is_empty() {
        return Ok(Vec::new());
    }
    let agent = crate::inbox::delivery::agent_identity(handle, pane)
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))?;
    let mut ids = Vec::new();
    for body in messages {
        let message = state
            .inbox
            .enqueue(crate::inbox::NewMessage {
                pane: pane.to_string(),
                agent: agent.clone(),
                sender: "launch".into(),
                to_agent: name.map(str::to_string),
                body: body.into_bytes(),
                now: crate::inbox::now_ms(),
                ttl_ms: None,
            })
            .await?;
        ids.push(message.id);
    }
    Ok(ids)
}
