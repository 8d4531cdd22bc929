//! Handing work to another agent: `POST /v1/handoff` delivers a task through the inbox, waits
//! for the worker's turn to finish and answers with the worker's last answer; `POST
//! /v1/assign` returns at once and queues that answer, when it comes, for the assigning pane
//! (the callback loop orchestrators otherwise build by hand). Assignments are kept in the inbox
//! database and followed again after a daemon restart.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use super::first_reply_line;
use super::launch::{LaunchBody, launch_agent};
use super::shell_guard::ShellPermission;
use super::turn::{TurnEnd, follow};
use super::{Context, Error};
use crate::control::command::{Command, Line, Target};
use crate::ids::PaneId;
use crate::inbox::{Assignment, AssignmentState, NewAssignment, NewMessage};
use crate::status::Status;
use crate::status::signal::StatusSource;

/// The body of `POST /v1/handoff` and `POST /v1/assign`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffBody {
    /// The worker's pane (any pane name). Give exactly one of `pane` and `launch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// Launch the worker first, as `POST /v1/agents` does (`no_wait` is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchBody>,
    /// The task.
    pub message: String,
    /// The sender: a pane or a label (handoff default `api`; assign default: the `reply_to`
    /// pane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Give up after this many seconds (positive; values over 30 days are lowered to 30
    /// days). Handoff default 600; assign default: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0)]
    pub timeout_seconds: Option<f64>,
    /// Close the worker's pane once its answer is read.
    #[serde(default)]
    pub teardown: bool,
    /// Assign only (required there, refused by handoff): the pane whose inbox gets the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Send even to a worker (and, for assign, a `reply_to` pane) that runs no recognised
    /// agent: a plain shell runs the text as commands. Ignored for MCP clients: the daemon's
    /// `--mcp-allow-shell` decides.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_shell: bool,
}

/// The answer of `POST /v1/handoff`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HandoffAnswer {
    /// The worker's pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// The task message.
    pub message_id: i64,
    /// The worker's status when its turn ended (`idle` or `completed`).
    #[schema(value_type = Status)]
    pub status: String,
    /// The worker's last answer.
    pub answer: String,
    /// Seconds from the request to the answer.
    pub waited_seconds: f64,
    /// Whether the worker's pane was closed.
    pub torn_down: bool,
}

/// The answer of `POST /v1/assign`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Assigned {
    /// The assignment id (`GET /v1/assignments/{id}`).
    pub assignment: i64,
    /// The worker's pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// The task message.
    pub message_id: i64,
    /// The pane (`%N`) the answer will be queued for.
    #[schema(value_type = PaneId)]
    pub reply_to: String,
}

/// Default time a handoff waits for the worker.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(600);

fn timeout_of(seconds: Option<f64>) -> Result<Option<Duration>, Error> {
    seconds
        .map(|s| {
            crate::orchestration::limits::seconds(
                "timeout_seconds",
                s,
                crate::orchestration::limits::Zero::Refused,
                crate::orchestration::limits::MAX_WAIT_SECONDS,
            )
        })
        .transpose()
}

/// The worker: the named pane, or one launched now.
async fn worker(state: &Context, body: &HandoffBody, mcp: bool) -> Result<PaneId, Error> {
    match (&body.pane, &body.launch) {
        (Some(name), None) => Ok(state.find(name).await?.0.pane),
        (None, Some(launch)) => {
            if launch.no_wait {
                return Err(Error::bad_request(
                    "a launched worker must be waited for: no_wait is not allowed here",
                ));
            }
            let launched = launch_agent(state, launch, mcp).await?;
            launched
                .pane
                .parse()
                .map_err(|_| Error::Failed("the launch named no pane".into()))
        }
        _ => Err(Error::bad_request("give exactly one of pane and launch")),
    }
}

/// Queues `text` for `pane` from `from`, if `permission` lets it go there. `by_name`: a worker
/// with a name gets the task by its name, so the task follows the agent to a new pane (held
/// while it is down, its again when restored); `handoff`, which waits in the request, follows
/// the pane alone.
async fn task_message(
    state: &Context,
    pane: PaneId,
    text: &str,
    from: &str,
    permission: ShellPermission,
    by_name: bool,
) -> Result<NewMessage, Error> {
    let (summary, handle) = state.find(&pane.to_string()).await?;
    permission.check(&summary)?;
    let agent = crate::inbox::delivery::agent_identity(&handle, pane)
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))?;
    Ok(NewMessage {
        pane: pane.to_string(),
        agent,
        sender: from.to_string(),
        to_agent: summary.name.clone().filter(|_| by_name),
        body: text.as_bytes().to_vec(),
        now: crate::inbox::now_ms(),
        ttl_ms: None,
    })
}

/// Closes the worker's pane.
async fn tear_down(state: &Context, pane: PaneId) -> Result<(), Error> {
    let (_, handle) = state.find(&pane.to_string()).await?;
    let kill = Command::new("kill-pane").target("-t", Target::Pane(pane));
    first_reply_line(&handle, Line::new(kill)).await.map(|_| ())
}

/// How long the screen may take to show an answer after the agent's own signal (a hook, an OSC
/// report) said the turn ended.
const SCREEN_CATCH_UP: Duration = Duration::from_secs(5);

/// The worker's last answer. The answer is read from the screen, so when the agent's own
/// signal ended the turn (Claude Code's `Stop` hook comes before the final frame), it is read
/// once the screen agrees the turn is over: before that the screen shows no answer yet, or the
/// previous one.
async fn last_answer(state: &Context, pane: PaneId) -> Result<Option<String>, Error> {
    let (_, handle) = state.find(&pane.to_string()).await?;
    let deadline = tokio::time::Instant::now() + SCREEN_CATCH_UP;
    while tokio::time::Instant::now() < deadline {
        match handle.explain(pane).await {
            Ok(Some(explained))
                if explained.source != StatusSource::Screen
                    && !explained.screen_status.is_ready() =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            _ => break,
        }
    }
    handle
        .last_response(pane)
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))
}

/// Cancels the task if it is still queued (a timed-out handoff must not reach the worker
/// later); says what became of it.
async fn withdraw(state: &Context, message_id: i64) -> &'static str {
    match state
        .inbox
        .call(move |store| store.cancel(message_id))
        .await
    {
        Ok(_) => "the task was never delivered and is cancelled",
        Err(_) => "the task was delivered; the worker may still be on it",
    }
}

/// `POST /v1/handoff`.
pub async fn handoff(
    state: &Context,
    body: &HandoffBody,
    mcp: bool,
) -> Result<HandoffAnswer, Error> {
    let permission = ShellPermission::of(state.mcp_allow_shell, mcp, body.allow_shell);
    if body.reply_to.is_some() {
        return Err(Error::bad_request(
            "reply_to belongs to assign; a handoff answers the caller",
        ));
    }
    let started = std::time::Instant::now();
    let timeout = timeout_of(body.timeout_seconds)?.unwrap_or(HANDOFF_TIMEOUT);
    let deadline = tokio::time::Instant::now() + timeout;
    let pane = worker(state, body, mcp).await?;
    let new = task_message(
        state,
        pane,
        &body.message,
        body.from.as_deref().unwrap_or("api"),
        permission,
        false,
    )
    .await?;
    // Subscribe before queueing, so that nothing the delivery does is missed.
    let events = state.bus.subscribe();
    let message = state.inbox.enqueue(new).await.map_err(Error::from)?;
    let (end, pane) = follow(
        state,
        events,
        message.id,
        pane,
        false,
        Some(deadline),
        || {},
        |_| {},
    )
    .await?;
    let (status, answer) = read_answer(state, pane, message.id, end)
        .await
        .map_err(|failure| {
            if failure.timed_out {
                Error::TimedOut(failure.reason)
            } else {
                Error::Failed(failure.reason)
            }
        })?;
    let torn_down = if body.teardown {
        tear_down(state, pane).await?;
        true
    } else {
        false
    };
    Ok(HandoffAnswer {
        pane: pane.to_string(),
        message_id: message.id,
        status: status.to_string(),
        answer,
        waited_seconds: started.elapsed().as_secs_f64(),
        torn_down,
    })
}

/// `POST /v1/assign`.
pub async fn assign(state: &Context, body: &HandoffBody, mcp: bool) -> Result<Assigned, Error> {
    let permission = ShellPermission::of(state.mcp_allow_shell, mcp, body.allow_shell);
    let reply_name = body.reply_to.as_deref().ok_or_else(|| {
        Error::bad_request("reply_to is required: the pane whose inbox gets the answer")
    })?;
    let timeout = timeout_of(body.timeout_seconds)?;
    let (reply_pane, reply_handle) = state.find(reply_name).await?;
    permission.check(&reply_pane)?;
    let reply_agent = crate::inbox::delivery::agent_identity(&reply_handle, reply_pane.pane)
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))?;
    let pane = worker(state, body, mcp).await?;
    if pane == reply_pane.pane {
        return Err(Error::bad_request("a pane cannot assign work to itself"));
    }
    let from = body
        .from
        .clone()
        .unwrap_or_else(|| reply_pane.pane.to_string());
    let task = task_message(state, pane, &body.message, &from, permission, true).await?;
    let deadline_at = timeout.map(|t| task.now + t.as_millis() as i64);
    let new = NewAssignment {
        task,
        reply_to: reply_pane.pane.to_string(),
        reply_agent,
        reply_name: reply_pane.name.clone(),
        deadline_at,
        teardown: body.teardown,
    };
    let events = state.bus.subscribe();
    let (assignment, message) = state
        .inbox
        .call(move |store| store.assign(new))
        .await
        .map_err(Error::from)?;
    state.inbox.wake();
    info!(id = assignment.id, worker = %pane, reply_to = %assignment.reply_to, "assigned");
    let answer = Assigned {
        assignment: assignment.id,
        pane: pane.to_string(),
        message_id: message.id,
        reply_to: assignment.reply_to.clone(),
    };
    state.tasks.spawn(finish(state.clone(), events, assignment));
    Ok(answer)
}

/// Follows every unfinished assignment again (at daemon start).
pub async fn resume(state: Context) {
    let working = match state
        .inbox
        .call(|store| store.assignments(Some(AssignmentState::Working)))
        .await
    {
        Ok(working) => working,
        Err(error) => {
            warn!(%error, "cannot read the assignments");
            return;
        }
    };
    for assignment in working {
        info!(id = assignment.id, worker = %assignment.worker, "following an assignment again");
        let events = state.bus.subscribe();
        state.tasks.spawn(finish(state.clone(), events, assignment));
    }
}

/// Waits for the worker's turn and queues its answer (or why there is none) for the assigner.
async fn finish(
    state: Context,
    events: tokio::sync::broadcast::Receiver<std::sync::Arc<crate::events::DaemonEvent>>,
    assignment: Assignment,
) {
    let id = assignment.id;
    let mut worker = assignment.worker.clone();
    let (body, reason) = match assignment.worker.parse::<PaneId>() {
        Err(_) => (
            format!("[panectl] Assignment {id} failed: {worker} is not a pane."),
            Some("the worker is not a pane".to_string()),
        ),
        Ok(pane) => {
            let deadline = assignment.deadline_at.map(|at| {
                let left = (at - crate::inbox::now_ms()).max(0) as u64;
                tokio::time::Instant::now() + Duration::from_millis(left)
            });
            let inbox = state.inbox.clone();
            let tasks = state.tasks.clone();
            let on_busy = move || {
                let inbox = inbox.clone();
                tasks.spawn(async move {
                    if let Err(error) = inbox.call(move |store| store.assignment_busy(id)).await {
                        warn!(%error, id, "cannot record that the worker is busy");
                    }
                });
            };
            let (inbox, tasks) = (state.inbox.clone(), state.tasks.clone());
            let on_moved = move |pane: PaneId| {
                let inbox = inbox.clone();
                tasks.spawn(async move {
                    let pane = pane.to_string();
                    if let Err(error) = inbox
                        .call(move |store| store.set_assignment_worker(id, &pane))
                        .await
                    {
                        warn!(%error, id, "cannot record the worker's new pane");
                    }
                });
            };
            let (end, pane) = match follow(
                &state,
                events,
                assignment.message_id,
                pane,
                assignment.busy_seen,
                deadline,
                on_busy,
                on_moved,
            )
            .await
            {
                Ok(end) => end,
                // The daemon is stopping: the next start follows it again.
                Err(_) => return,
            };
            worker = pane.to_string();
            outcome(&state, &assignment, pane, end).await
        }
    };
    follow_the_assigner(&state, &assignment).await;
    let reply = crate::inbox::assignments::reply_body(&body);
    let now = crate::inbox::now_ms();
    let reason_now = reason.clone();
    match state
        .inbox
        .call(move |store| store.finish_assignment(id, reply, reason_now.as_deref(), now))
        .await
    {
        Ok((done, reply)) => {
            state.inbox.wake();
            info!(
                id,
                state = done.state.as_str(),
                reply = reply.id,
                "assignment finished"
            );
            if done.state == AssignmentState::Answered
                && assignment.teardown
                && let Ok(pane) = worker.parse::<PaneId>()
                && let Err(error) = tear_down(&state, pane).await
            {
                warn!(id, %error, "cannot close the worker's pane");
            }
        }
        Err(error) => warn!(%error, id, "cannot finish the assignment"),
    }
}

/// Points the answer at the assigner's pane now when the assigner has a name and runs in
/// another pane than the one it assigned from (it was restored, or launched again): its old
/// pane may be gone, or run another program. An assigner that is down gets the answer held
/// for it by name (see [`crate::inbox::held`]).
async fn follow_the_assigner(state: &Context, assignment: &Assignment) {
    let Some(name) = assignment.reply_name.as_deref() else {
        return;
    };
    let Some(now) = state
        .all_panes()
        .await
        .into_iter()
        .find(|p| !p.dead && p.name.as_deref() == Some(name))
    else {
        return;
    };
    let Ok((_, handle)) = state.find(&now.pane.to_string()).await else {
        return;
    };
    let agent = match crate::inbox::delivery::agent_identity(&handle, now.pane).await {
        Ok(agent) => agent,
        Err(error) => {
            warn!(%error, id = assignment.id, "cannot tell who runs in the assigner's pane");
            return;
        }
    };
    if now.pane.to_string() == assignment.reply_to && agent == assignment.reply_agent {
        return;
    }
    let (id, pane) = (assignment.id, now.pane.to_string());
    info!(id, from = %assignment.reply_to, to = %pane, agent = name, "the answer follows its assigner to its pane now");
    if let Err(error) = state
        .inbox
        .call(move |store| store.set_assignment_reply_to(id, &pane, &agent))
        .await
    {
        warn!(%error, id, "cannot point the answer at the assigner's pane");
    }
}

/// The reply to queue for an ended turn, and the failure reason if it is not an answer.
async fn outcome(
    state: &Context,
    assignment: &Assignment,
    pane: PaneId,
    end: TurnEnd,
) -> (String, Option<String>) {
    let id = assignment.id;
    match read_answer(state, pane, assignment.message_id, end).await {
        Ok((_, answer)) => (
            format!("[panectl] Answer from {pane} to assignment {id}:\n{answer}"),
            None,
        ),
        Err(failure) => (
            format!(
                "[panectl] Assignment {id} to {pane} failed: {}.",
                failure.reason
            ),
            Some(failure.reason),
        ),
    }
}

/// Why a worker's turn gave no answer.
struct Failure {
    /// The deadline passed (the others are the worker's or the delivery's doing).
    timed_out: bool,
    /// What happened, in words.
    reason: String,
}

/// The worker's answer once its turn ended well, or why there is none (a task still queued at
/// the deadline is cancelled): what handoff and assign both make of an ended turn.
async fn read_answer(
    state: &Context,
    pane: PaneId,
    message_id: i64,
    end: TurnEnd,
) -> Result<(Status, String), Failure> {
    let failed = |reason: String| Failure {
        timed_out: false,
        reason,
    };
    match end {
        TurnEnd::Finished(status) if status.is_ready() => match last_answer(state, pane).await {
            Ok(Some(answer)) => Ok((status, answer)),
            Ok(None) => Err(failed(format!(
                "{pane} finished its turn, but no answer could be read from its screen"
            ))),
            Err(error) => Err(failed(format!(
                "{pane}'s answer could not be read: {error}"
            ))),
        },
        TurnEnd::Finished(Status::Error) => Err(failed(format!(
            "{pane} stopped on an error (see `panectl screen {pane}`)"
        ))),
        TurnEnd::Finished(_) | TurnEnd::PaneGone => Err(failed(format!(
            "{pane}'s agent exited or its pane closed before it answered"
        ))),
        TurnEnd::NotDelivered(state_now, reason) => Err(failed(format!(
            "message {message_id} to {pane} was not delivered: {state_now}{}",
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        ))),
        TurnEnd::TimedOut(_, status) => {
            let what = withdraw(state, message_id).await;
            Err(Failure {
                timed_out: true,
                reason: format!(
                    "{pane} did not finish in time (status {}); {what}",
                    status.map_or("unknown".to_string(), |s| s.to_string())
                ),
            })
        }
    }
}

/// The query of `GET /v1/assignments`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AssignmentQuery {
    /// Only assignments in this state (`working`, `answered`, `failed`).
    #[param(value_type = Option<AssignmentState>)]
    pub state: Option<String>,
}

/// `GET /v1/assignments`.
pub async fn list(state: &Context, query: &AssignmentQuery) -> Result<Vec<Assignment>, Error> {
    let wanted = match query.state.as_deref() {
        None => None,
        Some(word) => Some(AssignmentState::parse(word).ok_or_else(|| {
            Error::bad_request(format!(
                "unknown assignment state {word:?} ({})",
                AssignmentState::words()
            ))
        })?),
    };
    let all = state
        .inbox
        .call(move |store| store.assignments(wanted))
        .await
        .map_err(Error::from)?;
    Ok(all)
}

/// `GET /v1/assignments/{id}`.
pub async fn one(state: &Context, id: i64) -> Result<Assignment, Error> {
    let found = state
        .inbox
        .call(move |store| store.assignment(id))
        .await
        .map_err(Error::from)?;
    Ok(found)
}
