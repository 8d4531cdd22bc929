//! The inbox routes: queue a message for a pane, list messages, read and cancel one.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorBody};
use super::params::{MessagePath, PanePath};
use super::responses::{InboxFailed, PaneNotFound, UnreadableQuery};
use super::state::ApiState;
use crate::ids::PaneId;
use crate::inbox::Message;

/// The body of `POST /v1/panes/{pane}/messages`: the text as a string (`body`) or, for bytes
/// that are not UTF-8, as hex (`body_hex`). Give exactly one of `body` and `body_hex`.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendBody {
    /// The text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The text as hex digits, for bytes that are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^([0-9a-fA-F]{2})*$")]
    pub body_hex: Option<String>,
    /// The sender: a pane or a label (default `api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Seconds before the message expires if still undelivered (positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0)]
    pub ttl_seconds: Option<f64>,
    /// Queue it even for a pane that runs no recognised agent (a plain shell runs the text as
    /// commands). Ignored for MCP clients: the daemon's `--mcp-allow-shell` decides.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_shell: bool,
}

/// Reads hex digits into bytes.
pub fn from_hex(hex: &str) -> Option<Vec<u8>> {
    // Hex digits only: `u8::from_str_radix` alone would take a sign (`+f`).
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Queue a message for the agent in the pane
///
/// The inbox delivers messages to each pane in order, one at a time, only while its agent is
/// ready (`idle` or `completed`): pasted, then submitted. A message is addressed to the program
/// in the pane when it was queued (`agent`, `pid:N`): a pane reused by another program does not
/// get it.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/messages",
    operation_id = "send_message",
    tag = "inbox",
    params(PanePath),
    request_body = SendBody,
    responses(
        (
            status = 201,
            description = "The queued message: `pending`, or `held` when the pane is the name \
                           of an agent that is down and `restore` knows (it waits for the agent \
                           to come back).",
            body = Message
        ),
        (
            status = 400,
            description = "Neither or both of `body` and `body_hex`; `body_hex` not hex; \
                           `ttl_seconds` not positive; the body refused (empty, over 1 MiB, a NUL \
                           byte, or `ESC [201~`).",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = super::responses::PaneRefused),
        (status = 500, response = InboxFailed),
        (
            status = 503,
            description = "The pane's session is reconnecting, or tmux did not say which process \
                           runs in the pane.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn send_message(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    headers: HeaderMap,
    super::body::Json(request): super::body::Json<SendBody>,
) -> Result<Response, ApiError> {
    let permission = crate::orchestration::shell_guard::ShellPermission::of(
        state.ctx.mcp_allow_shell,
        super::workflows::from_mcp(&headers),
        request.allow_shell,
    );
    let body = match (request.body, request.body_hex) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(hex)) => from_hex(&hex).ok_or_else(|| {
            ApiError(
                StatusCode::BAD_REQUEST,
                "body_hex must be an even number of hex digits (0-9, a-f, A-F)".into(),
            )
        })?,
        _ => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "give exactly one of body and body_hex".into(),
            ));
        }
    };
    let ttl_ms = match request.ttl_seconds {
        Some(s) => {
            let ttl = crate::orchestration::limits::seconds(
                "ttl_seconds",
                s,
                crate::orchestration::limits::Zero::Refused,
                crate::orchestration::limits::MAX_TTL_SECONDS,
            )?;
            Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
        }
        None => None,
    };
    let sender = request.from.unwrap_or_else(|| "api".into());
    let (pane, handle) = match state.ctx.find(&name).await {
        Ok(found) => found,
        Err(error @ crate::orchestration::Error::NotFound(_)) => {
            // An agent that is down but known by name: the message waits for it.
            let new = crate::inbox::NewMessage {
                pane: String::new(),
                agent: String::new(),
                sender,
                to_agent: None,
                body,
                now: crate::inbox::now_ms(),
                ttl_ms,
            };
            return match crate::orchestration::follow::queue_for_absent(&state.ctx, &name, new)
                .await?
            {
                Some(held) => Ok((StatusCode::CREATED, axum::Json(held)).into_response()),
                None => Err(error.into()),
            };
        }
        Err(error) => return Err(error.into()),
    };
    permission.check(&pane)?;
    let agent = crate::inbox::delivery::agent_identity(&handle, pane.pane)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    let message = state
        .ctx
        .inbox
        .enqueue(crate::inbox::NewMessage {
            pane: pane.pane.to_string(),
            agent,
            sender,
            to_agent: pane.name.clone(),
            body,
            now: crate::inbox::now_ms(),
            ttl_ms,
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(message)).into_response())
}

/// The query of `GET /v1/messages`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MessageQuery {
    /// Only this pane's messages. A pane id (`%N`) is taken as it is (its messages outlive the
    /// pane); any other name is resolved to a live pane.
    pub pane: Option<String>,
    /// Only messages in this state.
    #[param(value_type = Option<crate::message::State>)]
    pub state: Option<String>,
}

/// Inbox messages, oldest first
#[utoipa::path(
    get,
    path = "/v1/messages",
    operation_id = "list_messages",
    tag = "inbox",
    params(MessageQuery),
    responses(
        (status = 200, description = "The messages.", body = Vec<Message>),
        (status = 400, description = "Unknown state.", body = ErrorBody),
        (
            status = 404,
            description = "`pane` is a name (not a pane id) that matches no pane.",
            body = ErrorBody
        ),
        (status = 409, description = "`pane` is a name that matches several panes.", body = ErrorBody),
        (status = 500, response = InboxFailed),
        (status = 503, description = "The session of the pane named is reconnecting.", body = ErrorBody),
    )
)]
pub(crate) async fn list_messages(
    State(state): State<ApiState>,
    Query(query): Query<MessageQuery>,
) -> Result<Response, ApiError> {
    let wanted = match query.state.as_deref() {
        Some(word) => Some(crate::inbox::State::parse(word).ok_or_else(|| {
            ApiError(
                StatusCode::BAD_REQUEST,
                format!("unknown state {word:?} ({})", crate::inbox::State::words()),
            )
        })?),
        None => None,
    };
    let pane = match query.pane {
        // A pane id is taken as it is: its messages outlive it.
        Some(name) if name.parse::<PaneId>().is_ok() => Some(name),
        Some(name) => Some(state.ctx.find(&name).await?.0.pane.to_string()),
        None => None,
    };
    let messages = state
        .ctx
        .inbox
        .call(move |store| store.list(pane.as_deref(), wanted))
        .await?;
    Ok(axum::Json(messages).into_response())
}

/// One message
#[utoipa::path(
    get,
    path = "/v1/messages/{id}",
    operation_id = "get_message",
    tag = "inbox",
    params(MessagePath),
    responses(
        (status = 200, description = "The message.", body = Message),
        (status = 400, response = UnreadableQuery),
        (status = 404, description = "No message has that id.", body = ErrorBody),
        (status = 500, response = InboxFailed),
    )
)]
pub(crate) async fn one_message(
    State(state): State<ApiState>,
    UrlPath(MessagePath { id }): UrlPath<MessagePath>,
) -> Result<Response, ApiError> {
    let message = state.ctx.inbox.call(move |store| store.get(id)).await?;
    Ok(axum::Json(message).into_response())
}

/// Cancel a pending message
#[utoipa::path(
    post,
    path = "/v1/messages/{id}/cancel",
    operation_id = "cancel_message",
    tag = "inbox",
    params(MessagePath),
    responses(
        (status = 200, description = "The message, now `cancelled`.", body = Message),
        (status = 400, response = UnreadableQuery),
        (status = 404, description = "No message has that id.", body = ErrorBody),
        (
            status = 409,
            description = "The message is past `pending` (being delivered, delivered, failed, \
                           uncertain, expired or cancelled).",
            body = ErrorBody
        ),
        (status = 500, response = InboxFailed),
    )
)]
pub(crate) async fn cancel_message(
    State(state): State<ApiState>,
    UrlPath(MessagePath { id }): UrlPath<MessagePath>,
) -> Result<Response, ApiError> {
    let message = state.ctx.inbox.call(move |store| store.cancel(id)).await?;
    Ok(axum::Json(message).into_response())
}
