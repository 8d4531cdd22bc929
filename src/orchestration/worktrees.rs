//! The worktrees launches made, as `panectl worktrees` and `GET /v1/worktrees` show them (the
//! record, what git says of it now, and whether its agent still runs), and removing one
//! (`DELETE /v1/worktrees/{name}`): refused while its agent runs, or when git would lose work,
//! unless forced; the branch always stays.

use serde::{Deserialize, Serialize};

use super::worktree::{self, WorktreeState};
use super::{Context, Error};
use crate::inbox::WorktreeRecord;
use crate::status::Status;

/// A recorded worktree and how it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorktreeListing {
    /// What the launch recorded.
    #[serde(flatten)]
    pub record: WorktreeRecord,
    /// What git says of it now.
    #[serde(flatten)]
    pub state: WorktreeState,
    /// The status of the agent in its pane, when that pane is still there.
    #[schema(required = true)]
    pub agent_status: Option<Status>,
}

/// Every recorded worktree with its state now (git asked off the async threads).
pub async fn list(context: &Context) -> Result<Vec<WorktreeListing>, Error> {
    let records = context.inbox.call(|store| store.worktrees()).await?;
    let panes = context.all_panes().await;
    let states = tokio::task::spawn_blocking({
        let records = records.clone();
        move || records.iter().map(worktree::state).collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Error::Internal(format!("the worktree task failed: {e}")))?;
    Ok(records
        .into_iter()
        .zip(states)
        .map(|(record, state)| {
            let agent_status = record.pane.as_deref().and_then(|pane| {
                panes
                    .iter()
                    .find(|p| p.pane.to_string() == pane && !p.dead)
                    .map(|p| p.status)
            });
            WorktreeListing {
                record,
                state,
                agent_status,
            }
        })
        .collect())
}

/// The worktree the agent in `pane` was launched in (by its pane, else its name), checked
/// (unless `force`) to be removable without losing work: what `close` with `remove_worktree`
/// removes once the agent closed.
pub async fn of_agent(
    context: &Context,
    pane: &crate::session::PaneSummary,
    force: bool,
) -> Result<WorktreeRecord, Error> {
    let (id, name) = (pane.pane.to_string(), pane.name.clone());
    let record = context
        .inbox
        .call(move |store| {
            let all = store.worktrees()?;
            let by_pane = all.iter().find(|w| w.pane.as_deref() == Some(id.as_str()));
            let by_name = || {
                all.iter()
                    .find(|w| name.is_some() && w.agent_name.as_deref() == name.as_deref())
            };
            Ok(by_pane.or_else(by_name).cloned())
        })
        .await?
        .ok_or_else(|| {
            Error::bad_request(format!(
                "no worktree is recorded for the agent in {}: it was not launched in one",
                pane.pane
            ))
        })?;
    if !force {
        let checked = record.clone();
        tokio::task::spawn_blocking(move || worktree::check_removable(&checked))
            .await
            .map_err(|e| Error::Internal(format!("the worktree task failed: {e}")))??;
    }
    Ok(record)
}

/// Removes the worktree `name` ([`worktree::remove`]) and forgets it. Refused while the agent
/// launched in it still runs (close it first), and, unless `force`, when it has uncommitted
/// changes or commits that are on no remote and not on its base.
pub async fn remove(context: &Context, name: &str, force: bool) -> Result<WorktreeRecord, Error> {
    let record = context
        .inbox
        .call({
            let name = name.to_string();
            move |store| store.worktree(&name)
        })
        .await?
        .ok_or_else(|| Error::NotFound(format!("no worktree named {name:?} is recorded")))?;
    if let Some(pane) = &record.pane {
        let running = context
            .all_panes()
            .await
            .into_iter()
            .any(|p| p.pane.to_string() == *pane && !p.dead);
        if running {
            return Err(Error::Conflict(format!(
                "the agent in worktree {name} still runs in {pane}: close it first"
            )));
        }
    }
    let owned = record.clone();
    tokio::task::spawn_blocking(move || worktree::remove(&owned, force))
        .await
        .map_err(|e| Error::Internal(format!("the worktree task failed: {e}")))??;
    context
        .inbox
        .call({
            let name = name.to_string();
            move |store| store.delete_worktree(&name)
        })
        .await?;
    tracing::info!(worktree = %record.name, branch = %record.branch, force, "removed a worktree");
    Ok(record)
}
