//! The routes of the orchestration workflows (launch, input, keys, wait, handoff, assign,
//! assignments): each reads its request, calls [`crate::orchestration`] and writes the answer;
//! what the workflow refuses becomes a status code through `From`.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::body::Json;
use super::error::{ApiError, ErrorBody};
use super::params::{AssignmentPath, PanePath};
use super::responses::{
    InboxFailed, PaneAmbiguous, PaneNotFound, PaneRefused, PaneUnavailable, UnreadableBody,
    UnreadableQuery,
};
use super::state::ApiState;
use crate::inbox::Assignment;
use crate::orchestration::answer::{self, AnswerBody, AnswerOutcome, PaneDecision};
use crate::orchestration::close::{self, CloseBody, Closed};
use crate::orchestration::handoff::{self, Assigned, AssignmentQuery, HandoffAnswer, HandoffBody};
use crate::orchestration::input::{self, InputBody, KeysBody, WaitAnswer, WaitBody};
use crate::orchestration::launch::{self, LaunchBody, Launched};
use crate::orchestration::restore::{self, RestoreBody, Restored};
use crate::orchestration::shell_guard::{CLIENT_HEADER, MCP_CLIENT};

/// Whether a request comes from `panectl mcp` (whose callers cannot allow typing into shells).
pub(crate) fn from_mcp(headers: &HeaderMap) -> bool {
    headers
        .get(CLIENT_HEADER)
        .is_some_and(|v| v.as_bytes() == MCP_CLIENT.as_bytes())
}

/// Start an agent CLI in a new window or session
///
/// Runs the provider's `[launch]` command in a new window (`new-window -d`, after the last
/// window of `session` or of the first session) or, with `new_session`, in a new detached
/// session named `session` (200x50). Records the provider and the name as the pane options
/// `@panectl_provider_override` and `@panectl_name`, and waits until the agent is ready. Names
/// go to tmux as plain words; `cwd`, `env` and `args` go into the shell command single-quoted,
/// so nothing in them is expanded.
#[utoipa::path(
    post,
    path = "/v1/agents",
    operation_id = "launch_agent",
    tag = "orchestration",
    request_body = LaunchBody,
    responses(
        (
            status = 201,
            description = "The agent's pane; with `no_wait`, at once (status `unknown`), else \
                           once it is ready (`idle` or `completed`).",
            body = Launched
        ),
        (
            status = 400,
            description = "Unknown provider, a provider without a `[launch]` command, a name \
                           that is not a plain word (1-64 ASCII letters, digits, `_`, `-`, `.`, \
                           not starting with `-` or `.`), a `cwd` that is not an absolute path to \
                           a directory, an invalid environment variable name, `new_session` \
                           without `session`, or an unknown `session`.",
            body = ErrorBody
        ),
        (
            status = 404,
            description = "The new pane was not found when its start-up dialog was looked at.",
            body = ErrorBody
        ),
        (
            status = 409,
            description = "The agent shows a start-up dialog: without `accept_startup_prompts`, \
                           or one its rules declare no answer for, or one still shown after 3 \
                           answers.",
            body = ErrorBody
        ),
        (status = 410, description = "The new pane closed before it was ready.", body = ErrorBody),
        (
            status = 502,
            description = "tmux refused a command, or did not say which pane it made.",
            body = ErrorBody
        ),
        (
            status = 422,
            description = "The command failed at once: not installed, or it exited \
                           (`launch failed: the command exited with status N: <its last lines>`; \
                           its window is closed).",
            body = ErrorBody
        ),
        (
            status = 503,
            description = "No tmux session is mirrored, the session is reconnecting, or the \
                           daemon is stopping.",
            body = ErrorBody
        ),
        (
            status = 504,
            description = "The agent started but was not ready within `timeout_seconds`.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn launch(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Json(body): Json<LaunchBody>,
) -> Result<Response, ApiError> {
    let launched = launch::launch_agent(&state.ctx, &body, from_mcp(&headers)).await?;
    Ok((StatusCode::CREATED, axum::Json(launched)).into_response())
}

/// Type text into the pane
///
/// Types `text` literally (`send-keys -l`: key names and tmux formats mean nothing), then
/// presses Enter unless `enter` is false, and confirms the submit as the inbox does: the turn
/// began (the status left `idle`/`completed`) or the text left the input. An Enter the agent
/// did not take (one still starting) while the text sits in its input is pressed once more.
/// Unlike a message, it is sent at once, whatever the agent is doing.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/input",
    operation_id = "send_input",
    tag = "orchestration",
    params(PanePath),
    request_body = InputBody,
    responses(
        (
            status = 200,
            description = "Sent, and submitted unless `enter` was false.",
            body = crate::orchestration::input::InputAnswer
        ),
        (
            status = 400,
            description = "Empty `text` with `enter: false`, or text tmux cannot carry (a NUL \
                           byte).",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneRefused),
        (
            status = 502,
            description = "tmux refused or skipped the command, or the text still sits in the \
                           input after two Enters (not submitted).",
            body = ErrorBody
        ),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn input(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    headers: HeaderMap,
    Json(body): Json<InputBody>,
) -> Result<Response, ApiError> {
    let answer = input::input(&state.ctx, &name, &body, from_mcp(&headers)).await?;
    Ok(axum::Json(answer).into_response())
}

/// Press keys in the pane
///
/// Presses tmux keys by name, in order. Accepted: a single printable ASCII character,
/// `F1`..`F20`, or one of `Enter`, `Escape`, `Tab`, `BTab`, `BSpace`, `Space`, `Up`, `Down`,
/// `Left`, `Right`, `Home`, `End`, `PageUp`, `PageDown`, `PPage`, `NPage`, `IC`, `DC`,
/// `Insert`, `Delete`; each with any `C-`, `M-`, `S-` prefixes. Every key is checked before
/// any is sent.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/keys",
    operation_id = "send_keys",
    tag = "orchestration",
    params(PanePath),
    request_body = KeysBody,
    responses(
        (status = 204, description = "Sent."),
        (
            status = 400,
            description = "No keys, or a word that is not a key name (the error names it).",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 502, description = "tmux refused or skipped the command.", body = ErrorBody),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn keys(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    Json(body): Json<KeysBody>,
) -> Result<Response, ApiError> {
    input::keys(&state.ctx, &name, &body).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Wait until the pane's status is one of a set
///
/// A long poll on the event stream (no polling): answers at once if the status already
/// matches, else when it changes to one of `until`, or when `timeout_seconds` passes.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/wait",
    operation_id = "wait_for_status",
    tag = "orchestration",
    params(PanePath),
    request_body = WaitBody,
    responses(
        (
            status = 200,
            description = "The wait ended: `reached` says whether a wanted status was reached \
                           (false: the timeout passed).",
            body = WaitAnswer
        ),
        (
            status = 400,
            description = "`until` empty or holding an unknown status, or `timeout_seconds` \
                           negative.",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 410, description = "The pane closed while waiting.", body = ErrorBody),
        (
            status = 503,
            description = "The pane's session is reconnecting, or the daemon is stopping.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn wait(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    Json(body): Json<WaitBody>,
) -> Result<Response, ApiError> {
    let answer = input::wait(&state.ctx, &name, &body).await?;
    Ok(axum::Json(answer).into_response())
}

/// Give a worker a task and wait for its answer
///
/// The worker is `pane`, or an agent started first from `launch` (as `POST /v1/agents`, waited
/// for; `no_wait` is refused). The task is queued in the worker's inbox as a message. The
/// worker's turn is over when the message was delivered and the worker is ready (`idle` or
/// `completed`) after it was seen busy (`processing` or `waiting_user_answer`), or ready for
/// 3 s after delivery without being seen busy (a turn too short to see). `error`, `exited`, or
/// a pane gone end the turn without an answer. The request waits for all of this and answers with the worker's
/// last answer; with `teardown`, the worker's pane is closed after the answer was read.
#[utoipa::path(
    post,
    path = "/v1/handoff",
    operation_id = "handoff",
    tag = "orchestration",
    request_body = HandoffBody,
    responses(
        (status = 200, description = "The worker's answer.", body = HandoffAnswer),
        (
            status = 400,
            description = "Neither or both of `pane` and `launch`; `reply_to` given; \
                           `timeout_seconds` not positive; `launch.no_wait`; an empty or refused \
                           message; or a launch error (see `POST /v1/agents`).",
            body = ErrorBody
        ),
        (status = 404, description = "No pane has that name.", body = ErrorBody),
        (
            status = 409,
            description = "The pane name is ambiguous, the worker runs no recognised agent and \
                           `allow_shell` is not given, or the launched agent shows a start-up \
                           dialog.",
            body = ErrorBody
        ),
        (
            status = 410,
            description = "The launched worker's pane closed before it was ready.",
            body = ErrorBody
        ),
        (status = 500, response = InboxFailed),
        (
            status = 502,
            description = "The worker stopped on an error, exited, or its pane closed before it \
                           answered; the task was not delivered (failed, uncertain, expired, \
                           cancelled); no answer could be read from its screen; or tmux refused a \
                           command.",
            body = ErrorBody
        ),
        (
            status = 503,
            description = "A session is reconnecting, tmux did not answer, or the daemon is \
                           stopping.",
            body = ErrorBody
        ),
        (
            status = 504,
            description = "The worker did not finish within `timeout_seconds` (default 600), or a \
                           launched worker was not ready in time. A task still queued is \
                           cancelled; the error says whether it was delivered.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn handoff(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Json(body): Json<HandoffBody>,
) -> Result<Response, ApiError> {
    let answer = handoff::handoff(&state.ctx, &body, from_mcp(&headers)).await?;
    Ok(axum::Json(answer).into_response())
}

/// Give a worker a task; its answer comes back as a message
///
/// The worker is `pane`, or an agent started first from `launch` (as `POST /v1/agents`, waited
/// for; `no_wait` is refused). The task is queued in the worker's inbox as a message. The
/// worker's turn is over when the message was delivered and the worker is ready (`idle` or
/// `completed`) after it was seen busy (`processing` or `waiting_user_answer`), or ready for
/// 3 s after delivery without being seen busy (a turn too short to see). `error`, `exited`, or
/// a pane gone end the turn without an answer. The request answers at once; when the turn ends, the daemon
/// queues a message in the inbox of `reply_to`, from the worker's pane: `[panectl] Answer from
/// %N to assignment ID:\n<answer>`, or `[panectl] Assignment ID to %N failed: <reason>.` With
/// `timeout_seconds`, an assignment whose worker has not finished by then fails (a task still
/// queued is cancelled). With `teardown`, the worker's pane is closed once it answered.
/// Assignments are kept in the inbox database and followed again after a daemon restart; each
/// is answered exactly once.
#[utoipa::path(
    post,
    path = "/v1/assign",
    operation_id = "assign",
    tag = "orchestration",
    request_body = HandoffBody,
    responses(
        (status = 201, description = "The assignment was made and the task queued.", body = Assigned),
        (
            status = 400,
            description = "`reply_to` missing; neither or both of `pane` and `launch`; the worker \
                           is the `reply_to` pane; `timeout_seconds` not positive; \
                           `launch.no_wait`; an empty or refused message; or a launch error (see \
                           `POST /v1/agents`).",
            body = ErrorBody
        ),
        (
            status = 404,
            description = "No pane has that name (`pane` or `reply_to`).",
            body = ErrorBody
        ),
        (
            status = 409,
            description = "A pane name is ambiguous, the worker or the `reply_to` pane runs no \
                           recognised agent and `allow_shell` is not given, or the launched agent \
                           shows a start-up dialog.",
            body = ErrorBody
        ),
        (
            status = 410,
            description = "The launched worker's pane closed before it was ready.",
            body = ErrorBody
        ),
        (status = 500, response = InboxFailed),
        (
            status = 502,
            description = "tmux refused a command while launching the worker.",
            body = ErrorBody
        ),
        (
            status = 503,
            description = "A session is reconnecting, or tmux did not say which process runs in \
                           a pane.",
            body = ErrorBody
        ),
        (status = 504, description = "A launched worker was not ready in time.", body = ErrorBody),
    )
)]
pub(crate) async fn assign(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Json(body): Json<HandoffBody>,
) -> Result<Response, ApiError> {
    let answer = handoff::assign(&state.ctx, &body, from_mcp(&headers)).await?;
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// Assignments, oldest first
#[utoipa::path(
    get,
    path = "/v1/assignments",
    operation_id = "list_assignments",
    tag = "orchestration",
    params(AssignmentQuery),
    responses(
        (status = 200, description = "The assignments.", body = Vec<Assignment>),
        (status = 400, description = "Unknown state.", body = ErrorBody),
        (status = 500, response = InboxFailed),
    )
)]
pub(crate) async fn assignments(
    State(state): State<ApiState>,
    Query(query): Query<AssignmentQuery>,
) -> Result<Response, ApiError> {
    let all = handoff::list(&state.ctx, &query).await?;
    Ok(axum::Json(all).into_response())
}

/// One assignment
#[utoipa::path(
    get,
    path = "/v1/assignments/{id}",
    operation_id = "get_assignment",
    tag = "orchestration",
    params(AssignmentPath),
    responses(
        (status = 200, description = "The assignment.", body = Assignment),
        (status = 400, response = UnreadableQuery),
        (status = 404, description = "No assignment has that id.", body = ErrorBody),
        (status = 500, response = InboxFailed),
    )
)]
pub(crate) async fn assignment(
    State(state): State<ApiState>,
    UrlPath(AssignmentPath { id }): UrlPath<AssignmentPath>,
) -> Result<Response, ApiError> {
    let found = handoff::one(&state.ctx, id).await?;
    Ok(axum::Json(found).into_response())
}

/// Answer the dialog on the pane's screen
///
/// Picks one option (`option`, `label`, `yes` or `no`) of the dialog the pane shows, pressing
/// the keys that pick it there (the pointer moved to it, then Enter; a letter prompt's letter),
/// only if the dialog on the screen is the one `decision` names (its fingerprint from
/// `explain` or `GET /v1/decisions`), and waits up to five seconds for it to leave the screen.
/// Answers are taken one at a time: of two racing for one dialog the second finds it `gone`.
/// `--yes`/`--no` pick the dialog's own affirmative or negative option by its label.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/decision",
    operation_id = "answer_decision",
    tag = "orchestration",
    params(PanePath),
    request_body = AnswerBody,
    responses(
        (
            status = 200,
            description = "What came of it: `answered` (the dialog left the screen), \
                           `unconfirmed` (pressed, the dialog is still there), `gone` (no \
                           dialog: nothing pressed), `changed` (another dialog than the one \
                           named: nothing pressed, the new one in `decision`).",
            body = AnswerOutcome
        ),
        (
            status = 400,
            description = "No choice or more than one, or an option the dialog does not have \
                           (the error lists its options).",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 410, description = "The pane closed.", body = ErrorBody),
        (status = 502, description = "tmux refused or skipped the keys.", body = ErrorBody),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn answer_decision(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    Json(body): Json<AnswerBody>,
) -> Result<Response, ApiError> {
    let outcome = answer::answer(&state.ctx, &name, &body).await?;
    Ok(axum::Json(outcome).into_response())
}

/// Close an agent: ask it to exit, then close its pane
///
/// Cancels the messages still pending for the pane (reason `agent closed`), then asks the
/// program to exit its own way: the text and keys of its provider's `[close]` table (`/exit`
/// and Enter for Claude Code, `exit` and Enter for a shell), or `C-c` then `C-d` when there is
/// none (no provider recognised, or a provider without one: `fallback` says so). It waits up
/// to `timeout_seconds` (default 10) for the program to exit (its pane closes or dies, its
/// status becomes `exited`, or the shell it ran from is in the foreground again), then closes
/// what is left of the pane with `kill-pane`. A pane that runs no agent is closed too: it is
/// what was asked. A `closed` event says how it ended (`exited` or `killed`).
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/close",
    operation_id = "close_agent",
    tag = "orchestration",
    params(PanePath),
    request_body = CloseBody,
    responses(
        (
            status = 200,
            description = "The pane is closed: `how` says whether its program exited by itself \
                           (`exited`) or was killed at the timeout (`killed`); `cancelled` lists \
                           the messages cancelled; with `remove_worktree`, `removed_worktree` or \
                           `worktree_error` says what became of its worktree.",
            body = Closed
        ),
        (
            status = 400,
            description = "`timeout_seconds` negative or over 3600; `force` without \
                           `remove_worktree`; `remove_worktree` for an agent launched in no \
                           worktree.",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (
            status = 409,
            description = "The pane name is ambiguous; or (`remove_worktree` without `force`) \
                           the worktree has uncommitted changes or unpushed commits: nothing \
                           was closed.",
            body = ErrorBody
        ),
        (status = 500, response = InboxFailed),
        (status = 502, description = "tmux refused to close the pane.", body = ErrorBody),
        (
            status = 503,
            description = "The pane's session is reconnecting, or the daemon is stopping.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn close(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    Json(body): Json<CloseBody>,
) -> Result<Response, ApiError> {
    let closed = close::close(&state.ctx, &name, &body).await?;
    Ok(axum::Json(closed).into_response())
}

/// List the dialogs agents wait on
///
/// Every pane whose status is `waiting_user_answer` and whose screen shows a dialog panectl
/// reads: its question, options (with the keys that pick each) and fingerprint.
#[utoipa::path(
    get,
    path = "/v1/decisions",
    operation_id = "list_decisions",
    tag = "orchestration",
    responses((status = 200, description = "The waiting dialogs.", body = Vec<PaneDecision>))
)]
pub(crate) async fn decisions(State(state): State<ApiState>) -> Response {
    axum::Json(answer::decisions(&state.ctx).await).into_response()
}

/// Start again the agents that no longer run
///
/// Every agent panectl launched (and every one it learned of through its hooks) that no live
/// pane runs is started again, in launch order, in its session (made again when it is gone),
/// with what its launch asked for; a CLI whose conversation id is known (Claude Code's hooks'
/// `session_id`) and that can resume one (`[launch] resume_args`) resumes it, others start
/// fresh and are marked so. An agent that runs is left alone, so a second restore starts
/// nothing. With `dry_run`, says what it would do. The variables launches took from their
/// caller's environment are not recorded: give them in `caller_env` (the dry run lists them).
#[utoipa::path(
    post,
    path = "/v1/restore",
    operation_id = "restore_agents",
    tag = "orchestration",
    request_body = RestoreBody,
    responses(
        (
            status = 200,
            description = "Each recorded agent, in launch order, and what became of it.",
            body = Vec<Restored>
        ),
        (status = 400, response = UnreadableBody),
        (status = 500, response = InboxFailed),
        (
            status = 503,
            description = "The daemon is still reading tmux's sessions, or (not a dry run) no \
                           session is mirrored yet to work through: try again.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn restore(
    State(state): State<ApiState>,
    Json(body): Json<RestoreBody>,
) -> Result<Response, ApiError> {
    let done = restore::restore(&state.ctx, &body).await?;
    Ok(axum::Json(done).into_response())
}
