//! The routes of the orchestration workflows (launch, input, keys, wait, handoff, assign,
//! assignments): each reads its request, calls [`crate::orchestration`] and writes the answer;
//! what the workflow refuses becomes a status code through `From`.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::body::Json;
use super::error::ApiError;
use super::state::ApiState;
use crate::orchestration::handoff::{self, AssignmentQuery, HandoffBody};
use crate::orchestration::input::{self, InputBody, KeysBody, WaitBody};
use crate::orchestration::launch::{self, LaunchBody};
use crate::orchestration::shell_guard::{CLIENT_HEADER, MCP_CLIENT};

/// Whether a request comes from `panectl mcp` (whose callers cannot allow typing into shells).
pub(crate) fn from_mcp(headers: &HeaderMap) -> bool {
    headers
        .get(CLIENT_HEADER)
        .is_some_and(|v| v.as_bytes() == MCP_CLIENT.as_bytes())
}

/// `POST /v1/agents`: see [`launch`].
pub(crate) async fn launch(
    State(state): State<ApiState>,
    Json(body): Json<LaunchBody>,
) -> Result<Response, ApiError> {
    let launched = launch::launch_agent(&state.ctx, &body).await?;
    Ok((StatusCode::CREATED, axum::Json(launched)).into_response())
}

/// `POST /v1/panes/{pane}/input`: see [`input::input`].
pub(crate) async fn input(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    Json(body): Json<InputBody>,
) -> Result<Response, ApiError> {
    input::input(&state.ctx, &name, &body, from_mcp(&headers)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /v1/panes/{pane}/keys`: see [`input::keys`].
pub(crate) async fn keys(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    Json(body): Json<KeysBody>,
) -> Result<Response, ApiError> {
    input::keys(&state.ctx, &name, &body).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /v1/panes/{pane}/wait`: see [`input::wait`].
pub(crate) async fn wait(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    Json(body): Json<WaitBody>,
) -> Result<Response, ApiError> {
    let answer = input::wait(&state.ctx, &name, &body).await?;
    Ok(axum::Json(answer).into_response())
}

/// `POST /v1/handoff`: see [`handoff::handoff`].
pub(crate) async fn handoff(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Json(body): Json<HandoffBody>,
) -> Result<Response, ApiError> {
    let answer = handoff::handoff(&state.ctx, &body, from_mcp(&headers)).await?;
    Ok(axum::Json(answer).into_response())
}

/// `POST /v1/assign`: see [`handoff::assign`].
pub(crate) async fn assign(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Json(body): Json<HandoffBody>,
) -> Result<Response, ApiError> {
    let answer = handoff::assign(&state.ctx, &body, from_mcp(&headers)).await?;
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// `GET /v1/assignments`.
pub(crate) async fn assignments(
    State(state): State<ApiState>,
    Query(query): Query<AssignmentQuery>,
) -> Result<Response, ApiError> {
    let all = handoff::list(&state.ctx, &query).await?;
    Ok(axum::Json(all).into_response())
}

/// `GET /v1/assignments/{id}`.
pub(crate) async fn assignment(
    State(state): State<ApiState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let found = handoff::one(&state.ctx, id).await?;
    Ok(axum::Json(found).into_response())
}
