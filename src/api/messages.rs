//! The inbox routes: queue a message for a pane, list messages, read and cancel one.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::state::ApiState;
use crate::ids::PaneId;

/// The body of `POST /v1/panes/{pane}/messages`: the text as a string (`body`) or, for bytes
/// that are not UTF-8, as hex (`body_hex`).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendBody {
    /// The text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The text as hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_hex: Option<String>,
    /// The sender: a pane or a label (default `api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Seconds before an undelivered message expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<f64>,
    /// Queue it even for a pane that runs no recognised agent (a plain shell runs the text as
    /// commands); see [`crate::orchestration::shell_guard`].
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

pub(crate) async fn send_message(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
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
    let (pane, handle) = state.ctx.find(&name).await?;
    permission.check(&pane)?;
    let agent = crate::inbox::delivery::agent_identity(&handle, pane.pane)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let message = state
        .ctx
        .inbox
        .enqueue(crate::inbox::NewMessage {
            pane: pane.pane.to_string(),
            agent,
            sender: request.from.unwrap_or_else(|| "api".into()),
            body,
            now: crate::inbox::now_ms(),
            ttl_ms,
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(message)).into_response())
}

/// The query of `GET /v1/messages`.
#[derive(Debug, Default, Deserialize)]
pub struct MessageQuery {
    /// Only this pane's messages (any pane name).
    pub pane: Option<String>,
    /// Only messages in this state.
    pub state: Option<String>,
}

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

pub(crate) async fn one_message(
    State(state): State<ApiState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let message = state.ctx.inbox.call(move |store| store.get(id)).await?;
    Ok(axum::Json(message).into_response())
}

pub(crate) async fn cancel_message(
    State(state): State<ApiState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let message = state.ctx.inbox.call(move |store| store.cancel(id)).await?;
    Ok(axum::Json(message).into_response())
}
