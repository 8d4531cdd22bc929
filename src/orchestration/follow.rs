//! Messages follow an agent by its name across panes (see [`crate::inbox::held`]): one sent by
//! name while the agent is down waits for it, its next launch under that name takes what waits,
//! and closing it on purpose forgets it (`restore` does not bring it back) and cancels what
//! waits for it.

use super::{Context, Error};
use crate::ids::PaneId;
use crate::inbox::{Message, NewMessage};
use crate::tmux::{ConnectionHandle, PaneSummary};

/// Whether `name` could be an agent's name, rather than a pane id or a `session:window.pane`
/// target (those mean a pane, not an agent).
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(':') && name.parse::<PaneId>().is_err()
}

/// Queues `new` held for the agent `name` when no pane has that name but `restore` knows the
/// agent; `None` when it does not (the caller answers "not found").
pub async fn queue_for_absent(
    state: &Context,
    name: &str,
    mut new: NewMessage,
) -> Result<Option<Message>, Error> {
    if !plain_name(name) {
        return Ok(None);
    }
    let owned = name.to_string();
    if !state
        .inbox
        .call(move |store| store.knows_agent(&owned))
        .await?
    {
        return Ok(None);
    }
    new.to_agent = Some(name.to_string());
    new.pane = String::new();
    new.agent = String::new();
    let message = state
        .inbox
        .call(move |store| store.enqueue_held(new))
        .await?;
    tracing::info!(
        id = message.id,
        agent = name,
        "a message waits for its agent to come back"
    );
    Ok(Some(message))
}

/// Gives the agent just launched as `name` in `pane` the messages that wait for it: held ones,
/// and those still pending for a pane it left when no other live pane has the name. Their ids.
pub async fn release_to_launched(
    state: &Context,
    handle: &ConnectionHandle,
    pane: PaneId,
    name: &str,
) -> Result<Vec<i64>, Error> {
    let owned = name.to_string();
    if !state
        .inbox
        .call(move |store| store.waits_for_agent(&owned))
        .await?
    {
        return Ok(Vec::new());
    }
    let agent = crate::inbox::delivery::agent_identity(handle, pane)
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))?;
    let others = state
        .all_panes()
        .await
        .into_iter()
        .any(|p| p.pane != pane && !p.dead && p.name.as_deref() == Some(name));
    let (owned, pane_text) = (name.to_string(), pane.to_string());
    let moved = state
        .inbox
        .call(move |store| store.release_to_agent(&owned, &pane_text, &agent, !others))
        .await?;
    if !moved.is_empty() {
        tracing::info!(%pane, agent = name, ?moved, "messages that waited for the agent are its again");
        state.inbox.wake();
    }
    Ok(moved)
}

/// Forgets the agent closed in `pane` (restore will not bring it back) and cancels the messages
/// held for it with `reason`; the ids cancelled.
pub async fn forget_closed(
    state: &Context,
    pane: &PaneSummary,
    reason: &'static str,
) -> Result<Vec<i64>, Error> {
    let (pane_text, name) = (pane.pane.to_string(), pane.name.clone());
    let cancelled = state
        .inbox
        .call(move |store| {
            if let Some(record) = store.agent_in_pane(&pane_text)? {
                store.delete_agent(&record.key)?;
            }
            let mut cancelled = Vec::new();
            if let Some(name) = name {
                if let Some(record) = store
                    .agents()?
                    .into_iter()
                    .find(|r| r.name.as_deref() == Some(name.as_str()))
                {
                    store.delete_agent(&record.key)?;
                }
                cancelled = store.cancel_held(&name, reason)?;
            }
            Ok(cancelled.into_iter().map(|m| m.id).collect())
        })
        .await?;
    Ok(cancelled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_words_name_agents() {
        assert!(plain_name("worker"));
        assert!(plain_name("w-1.2"));
        for target in ["%3", "main:0", "s:w.1", ""] {
            assert!(!plain_name(target), "{target}");
        }
    }
}
