//! Conversation ids of CLIs that have no hooks to say them but can list their conversations
//! (a provider's `[launch] conversation_list`: OpenCode's and Kilo CLI's `session list --format
//! json`). When a recorded agent of such a provider ends a turn and no conversation is known
//! for it yet, the daemon runs the list in the agent's directory, with its launch's literal
//! environment, and takes the conversation of that directory updated at that moment, not
//! already another agent's: so `restore` can resume it (`--session ID`).
//!
//! Two agents of one CLI in one directory that end turns within [`AMBIGUOUS`] of each other
//! cannot be told apart: the id is then learned at a later turn.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use tracing::{debug, info, warn};

use super::Context;
use crate::control::command::{Format, Line, Target, commands};
use crate::events::EventKind;
use crate::ids::PaneId;

/// How long the list may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How recently the conversation must have been updated at the end of the turn, in ms.
const RECENT_MS: i64 = 60_000;

/// Two conversations updated closer together than this (ms) cannot be told apart.
const AMBIGUOUS: i64 = 2_000;

/// The pane's directory, as tmux says (its foreground program's).
const CURRENT_PATH: Format = Format::new("#{pane_current_path}");

/// One conversation as the CLI lists it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Listed {
    /// Its id (what `resume_args` takes).
    pub id: String,
    /// The directory it was held in.
    #[serde(default)]
    pub directory: String,
    /// When it last changed (ms since the epoch).
    #[serde(default)]
    pub updated: i64,
}

/// The conversation of `directory` that ended a turn at `now`: updated within [`RECENT_MS`],
/// no other agent's (`claimed`), and clearly the latest; `None` when none or several are.
pub fn pick(
    listed: &[Listed],
    directory: &Path,
    claimed: &BTreeSet<String>,
    now: i64,
) -> Option<String> {
    let mut fresh: Vec<&Listed> = listed
        .iter()
        .filter(|c| Path::new(&c.directory) == directory && !claimed.contains(&c.id))
        .filter(|c| now - c.updated <= RECENT_MS)
        .collect();
    fresh.sort_by_key(|c| std::cmp::Reverse(c.updated));
    match fresh.as_slice() {
        [] => None,
        [only] => Some(only.id.clone()),
        [first, second, ..] => {
            (first.updated - second.updated > AMBIGUOUS).then(|| first.id.clone())
        }
    }
}

/// Runs until shutdown, learning conversations at the end of turns. Subscribes at once.
pub fn follow(context: Context) -> impl std::future::Future<Output = ()> {
    let events = context.bus.subscribe();
    async move {
        let mut events = events;
        loop {
            tokio::select! {
                () = context.shutdown.cancelled() => return,
                event = events.recv() => match event {
                    Ok(event) => {
                        if let EventKind::Status { pane, status, previous, provider: Some(provider), .. } = &event.kind
                            && status.is_ready()
                            && previous.phase().is_in_turn()
                            && lists_conversations(&context, provider)
                        {
                            let (context, pane, provider) = (context.clone(), *pane, provider.clone());
                            context.tasks.clone().spawn(async move { learn(&context, pane, &provider).await });
                        }
                    }
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                },
            }
        }
    }
}

/// Whether the provider's CLI lists its conversations.
fn lists_conversations(context: &Context, provider: &str) -> bool {
    context
        .providers
        .borrow()
        .get(provider)
        .and_then(|p| p.launch.as_ref())
        .is_some_and(|launch| !launch.conversation_list.is_empty())
}

/// Learns the conversation of the recorded agent in `pane` if none is known (see the module).
async fn learn(context: &Context, pane: PaneId, provider: &str) {
    let pane_text = pane.to_string();
    let record = match context
        .inbox
        .call(move |store| store.agent_in_pane(&pane_text))
        .await
    {
        Ok(Some(record)) if record.conversation.is_none() && record.provider == provider => record,
        Ok(_) => return,
        Err(error) => {
            warn!(%pane, %error, "cannot read the agent's record");
            return;
        }
    };
    let Some(command) = context
        .providers
        .borrow()
        .get(provider)
        .and_then(|p| p.launch.as_ref())
        .and_then(|launch| {
            let program = launch.command.first()?.clone();
            Some((program, launch.conversation_list.clone()))
        })
    else {
        return;
    };
    let Ok((_, handle)) = context.find(&pane.to_string()).await else {
        return;
    };
    let line = Line::new(commands::display_print(
        CURRENT_PATH,
        Some(Target::Pane(pane)),
    ));
    let directory = match super::first_reply_line(&handle, line).await {
        Ok(directory) if directory.starts_with('/') => directory,
        _ => return,
    };
    let env: std::collections::BTreeMap<String, String> =
        serde_json::from_str::<serde_json::Value>(&record.launch)
            .ok()
            .and_then(|launch| serde_json::from_value(launch["env"].clone()).ok())
            .unwrap_or_default();
    let listed = match list(&command.0, &command.1, &directory, &env).await {
        Ok(listed) => listed,
        Err(error) => {
            warn!(%pane, %error, "cannot list the agent's conversations");
            return;
        }
    };
    let claimed: BTreeSet<String> = match context.inbox.call(|store| store.agents()).await {
        Ok(agents) => agents.into_iter().filter_map(|a| a.conversation).collect(),
        Err(_) => return,
    };
    let directory = std::fs::canonicalize(&directory).unwrap_or_else(|_| directory.into());
    let listed: Vec<Listed> = listed
        .into_iter()
        .map(|mut c| {
            if let Ok(canonical) = std::fs::canonicalize(&c.directory) {
                c.directory = canonical.display().to_string();
            }
            c
        })
        .collect();
    let Some(conversation) = pick(&listed, &directory, &claimed, crate::inbox::now_ms()) else {
        debug!(%pane, "no single conversation to learn at this turn's end");
        return;
    };
    let (pane_text, id, now) = (
        pane.to_string(),
        conversation.clone(),
        crate::inbox::now_ms(),
    );
    match context
        .inbox
        .call(move |store| store.set_agent_conversation(&pane_text, &id, now))
        .await
    {
        Ok(_) => {
            info!(%pane, %conversation, "learned the agent's conversation from its CLI's list")
        }
        Err(error) => warn!(%pane, %error, "cannot record the agent's conversation"),
    }
}

/// Runs `program args` in `directory` with `env` added, and reads its JSON list.
async fn list(
    program: &str,
    args: &[String],
    directory: &str,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<Listed>, String> {
    let run = tokio::process::Command::new(program)
        .args(args)
        .current_dir(directory)
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(LIST_TIMEOUT, run)
        .await
        .map_err(|_| format!("{program} did not list its conversations within {LIST_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{program} exited with {}", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text)
        .map_err(|e| format!("{program}'s list is not the JSON expected: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: &str, directory: &str, updated: i64) -> Listed {
        Listed {
            id: id.into(),
            directory: directory.into(),
            updated,
        }
    }

    #[test]
    fn the_conversation_is_the_one_of_its_directory_just_updated_and_no_one_elses() {
        let now = 1_000_000;
        let all = [
            listed("old", "/w", now - 120_000),
            listed("mine", "/w", now - 500),
            listed("elsewhere", "/x", now - 100),
        ];
        let none = BTreeSet::new();
        assert_eq!(pick(&all, Path::new("/w"), &none, now), Some("mine".into()));
        // Another agent's already: not this one's.
        let claimed = BTreeSet::from(["mine".to_string()]);
        assert_eq!(pick(&all, Path::new("/w"), &claimed, now), None);
        // Nothing recent in the directory.
        assert_eq!(pick(&all, Path::new("/y"), &none, now), None);
        // Two updated at the same moment cannot be told apart; one clearly later can.
        let two = [listed("a", "/w", now - 100), listed("b", "/w", now - 900)];
        assert_eq!(pick(&two, Path::new("/w"), &none, now), None);
        let apart = [listed("a", "/w", now - 100), listed("b", "/w", now - 9_000)];
        assert_eq!(pick(&apart, Path::new("/w"), &none, now), Some("a".into()));
    }

    #[test]
    fn opencodes_list_is_read() {
        let text = r#"[{"id":"ses_1","title":"New session","updated":1796642011284,
            "created":1796642010350,"projectId":"global","directory":"/tmp/ocw"}]"#;
        let listed: Vec<Listed> = serde_json::from_str(text).unwrap();
        assert_eq!(listed, [listed_one()]);
    }

    fn listed_one() -> Listed {
        listed("ses_1", "/tmp/ocw", 1796642011284)
    }
}
