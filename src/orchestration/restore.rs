//! Agents brought back after tmux or the machine restarted: every launch is recorded (what it
//! asked for, its session and window, its pane; values taken from the caller's environment
//! left out, their names kept), the CLI's own conversation id is noted from its hooks (Claude
//! Code's `session_id`), and [`restore`] relaunches each recorded agent that no longer runs,
//! in launch order, in its session (made again if it is gone), resuming its conversation with
//! the provider's `[launch] resume_args` where it has an id and the CLI can, else fresh.
//!
//! An agent counts as running when a live pane has its name (`@panectl_name`, or its window's
//! name and its provider), or, unnamed, its last pane with its provider: so running `restore`
//! again, or after a crash in the middle of one, starts no agent twice.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::launch::launch_agent;
use super::launch_plan::{CallerEnv, LaunchBody};
use super::{Context, Error};
use crate::inbox::AgentRecord;
use crate::session::PaneSummary;

/// The body of `POST /v1/restore`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreBody {
    /// Say what would be done, and do nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// The values of the variables the agents' launches took from their caller's environment
    /// (`from_env` in the dry run's answer), from the environment of whoever restores.
    #[serde(default)]
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    pub caller_env: CallerEnv,
    /// How long each agent may take to be ready, in seconds (default 60).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
}

/// What became of a recorded agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreOutcome {
    /// It runs: nothing done.
    Running,
    /// (Dry run) it would be started again, resuming its conversation.
    WouldResume,
    /// (Dry run) it would be started again, fresh.
    WouldStartFresh,
    /// Started again, resuming its conversation.
    Resumed,
    /// Started again fresh: no conversation id was recorded, its CLI cannot resume one, or it
    /// refused to (`error` says why; a CLI started on an id panectl chose starts under it again).
    StartedFresh,
    /// It could not be started (`error` says why).
    Failed,
}

/// One recorded agent and what restore did with it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Restored {
    /// Its key (its name, else its first pane).
    pub key: String,
    /// Its name.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Its provider.
    pub provider: String,
    /// Its session.
    pub session: String,
    /// Its conversation id, when one was recorded (an agent started fresh does not resume it:
    /// its CLI cannot).
    #[schema(required = true)]
    pub conversation: Option<String>,
    /// What became of it.
    pub outcome: RestoreOutcome,
    /// Its pane: the running one, or the new one.
    #[schema(required = true)]
    pub pane: Option<String>,
    /// The variables its launch takes from the caller's environment.
    pub from_env: Vec<String>,
    /// Why it failed; for one started fresh, why its conversation was not resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether a live pane is the recorded agent.
fn runs_in<'a>(record: &AgentRecord, panes: &'a [PaneSummary]) -> Option<&'a PaneSummary> {
    panes
        .iter()
        .filter(|p| !p.dead)
        .find(|p| match &record.name {
            Some(name) => {
                p.name.as_deref() == Some(name.as_str())
                    || (p.window.to_string() == *name
                        && p.provider.as_deref() == Some(record.provider.as_str()))
            }
            None => {
                p.pane.to_string() == record.pane
                    && p.provider.as_deref() == Some(record.provider.as_str())
            }
        })
}

/// `POST /v1/restore`: starts again every recorded agent that does not run (see the module).
pub async fn restore(state: &Context, body: &RestoreBody) -> Result<Vec<Restored>, Error> {
    // What runs is known only once every session is read: before that, a running agent would
    // look gone, and be started twice.
    if !state.synced() && !state.wait_synced(super::SYNC_WAIT).await {
        return Err(Error::Unavailable(
            "the daemon is still reading tmux's sessions: try again".into(),
        ));
    }
    // New sessions and windows are made through a session's control connection: a server
    // that has none yet (tmux starting) is asked again later.
    if !body.dry_run && state.handles().is_empty() {
        return Err(Error::Unavailable(
            "no tmux session is mirrored yet: restore works through one; try again".into(),
        ));
    }
    let records = state.inbox.call(|store| store.agents()).await?;
    let panes = state.all_panes().await;
    let mut sessions: BTreeSet<String> = panes.iter().map(|p| p.session.to_string()).collect();
    let mut done = Vec::new();
    for record in records {
        let mut report = Restored {
            key: record.key.clone(),
            name: record.name.clone(),
            provider: record.provider.clone(),
            session: record.session.clone(),
            conversation: record.conversation.clone(),
            outcome: RestoreOutcome::Running,
            pane: None,
            from_env: record.from_env.clone(),
            error: None,
        };
        if let Some(running) = runs_in(&record, &panes) {
            report.pane = Some(running.pane.to_string());
            done.push(report);
            continue;
        }
        let now = state.all_panes().await;
        let (launch, resumed) = match relaunch_body(state, &record, body, (&sessions, &now), true) {
            Ok(planned) => planned,
            Err(error) => {
                report.outcome = RestoreOutcome::Failed;
                report.error = Some(error.to_string());
                done.push(report);
                continue;
            }
        };
        if body.dry_run {
            report.outcome = if resumed {
                RestoreOutcome::WouldResume
            } else {
                RestoreOutcome::WouldStartFresh
            };
            done.push(report);
            continue;
        }
        let mut launched = launch_agent(state, &launch, false).await;
        let mut resumed = resumed;
        // A CLI that starts on an id panectl chose refuses to resume a conversation in which
        // nothing was said yet (Gemini CLI saves none): it starts again under the same id.
        if resumed
            && let Err(error) = &launched
            && session_ids(state, &record.provider)
            && runs_in(&record, &state.all_panes().await).is_none()
        {
            tracing::info!(agent = %record.key, %error, "the conversation cannot be resumed; starting it again under its id");
            report.error = Some(format!("not resumed: {error}"));
            resumed = false;
            launched = match relaunch_body(state, &record, body, (&sessions, &now), false) {
                Ok((fresh, _)) => launch_agent(state, &fresh, false).await,
                Err(error) => Err(error),
            };
        }
        match launched {
            Ok(launched) => {
                sessions.insert(record.session.clone());
                let (key, pane, now) = (
                    record.key.clone(),
                    launched.pane.clone(),
                    crate::inbox::now_ms(),
                );
                state
                    .inbox
                    .call(move |store| store.set_agent_pane(&key, &pane, now))
                    .await?;
                tracing::info!(agent = %record.key, pane = %launched.pane, resumed, "restored an agent");
                report.pane = Some(launched.pane);
                report.outcome = if resumed {
                    RestoreOutcome::Resumed
                } else {
                    RestoreOutcome::StartedFresh
                };
            }
            Err(error) => {
                report.outcome = RestoreOutcome::Failed;
                report.error = Some(match report.error.take() {
                    Some(first) => format!("{first}; then {error}"),
                    None => error.to_string(),
                });
            }
        }
        done.push(report);
    }
    Ok(done)
}

/// Whether the provider's CLI starts on a conversation id panectl chooses
/// (`[launch] session_args`).
fn session_ids(state: &Context, provider: &str) -> bool {
    state
        .providers
        .borrow()
        .get(provider)
        .and_then(|p| p.launch.as_ref())
        .is_some_and(|launch| !launch.session_args.is_empty())
}

/// The launch that brings `record` back, and whether it resumes its conversation (when
/// `resume` allows). A CLI that starts on an id panectl chooses and is not resumed starts
/// again under the recorded id.
fn relaunch_body(
    state: &Context,
    record: &AgentRecord,
    body: &RestoreBody,
    (sessions, panes): (&BTreeSet<String>, &[PaneSummary]),
    resume: bool,
) -> Result<(LaunchBody, bool), Error> {
    let mut launch: LaunchBody = serde_json::from_str(&record.launch)
        .map_err(|e| Error::BadRequest(format!("its recorded launch cannot be read: {e}")))?;
    launch.provider = record.provider.clone();
    launch.name = record.name.clone();
    launch.restoring = true;
    launch.window_index = record.window_index;
    launch.no_wait = false;
    launch.timeout_seconds = body.timeout_seconds.or(launch.timeout_seconds);
    // Split off an agent that runs (restored before it, in launch order): split off it again;
    // else in a window of its own.
    if let Some(target) = launch.split.take()
        && panes
            .iter()
            .any(|p| !p.dead && p.name.as_deref() == Some(target.as_str()))
    {
        launch.split = Some(target);
        launch.session = None;
        launch.new_session = false;
        launch.window_index = None;
    } else if sessions.contains(&record.session) {
        launch.session = Some(record.session.clone());
        launch.new_session = false;
    } else if !record.session.is_empty() {
        launch.session = Some(record.session.clone());
        launch.new_session = true;
    } else {
        launch.session = None;
        launch.new_session = false;
    }
    let mut missing = Vec::new();
    for name in &record.from_env {
        match body.caller_env.0.get(name) {
            Some(value) => {
                launch.caller_env.0.insert(name.clone(), value.clone());
            }
            None => missing.push(name.as_str()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::BadRequest(format!(
            "its launch takes {} from the caller's environment, which is not set",
            missing.join(", ")
        )));
    }
    let spec = state
        .providers
        .borrow()
        .get(&record.provider)
        .and_then(|p| p.launch.clone());
    let conversation = record.conversation.as_deref().zip(spec.as_ref());
    let resume = conversation
        .filter(|_| resume)
        .and_then(|(conversation, spec)| spec.resume(conversation));
    let resumed = resume.is_some();
    if !resumed && let Some(session) = conversation.and_then(|(id, spec)| spec.session(id)) {
        launch.args.extend(session);
    }
    if let Some(resume) = resume {
        launch.args.extend(resume);
        // The conversation has them already: no first message, nor a system prompt sent as
        // one (a flag's is passed again, as the CLI expects it on every start).
        launch.first_message = None;
        if spec
            .as_ref()
            .is_some_and(|s| s.system_prompt_flag.is_none())
        {
            launch.system_prompt = None;
        }
    }
    Ok((launch, resumed))
}
