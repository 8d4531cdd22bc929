//! The routes that read and set one pane or all of them: the list, the mirrored screen, recent
//! output, the status explanation, the last answer, the provider, hooks, the transport, and
//! the provider rules in force.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::state::ApiState;
use crate::ids::PaneId;
use crate::orchestration::SYNC_WAIT;
use crate::tmux::PaneSummary;

pub(crate) async fn list_panes(State(state): State<ApiState>) -> axum::Json<Vec<PaneSummary>> {
    axum::Json(state.ctx.all_panes().await)
}

pub(crate) async fn one_pane(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<axum::Json<PaneSummary>, ApiError> {
    let (pane, _) = state.ctx.find(&name).await?;
    Ok(axum::Json(pane))
}

/// Query of the screen route.
#[derive(Debug, Deserialize)]
pub(crate) struct ScreenQuery {
    format: Option<String>,
}

fn header_value(value: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&value.to_string()).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

pub(crate) async fn screen(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    Query(query): Query<ScreenQuery>,
) -> Result<Response, ApiError> {
    let ansi = match query.format.as_deref() {
        None | Some("text") => false,
        Some("ansi") => true,
        Some(other) => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                format!("unknown format {other:?}: use text or ansi"),
            ));
        }
    };
    let (pane, handle) = state.ctx.find(&name).await?;
    let dump = handle
        .screen(pane.pane, ansi)
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("pane {} is gone", pane.pane)))?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    let extra = [
        ("x-panectl-pane", pane.pane.to_string()),
        ("x-panectl-size", format!("{}x{}", dump.width, dump.height)),
        (
            "x-panectl-cursor",
            format!("{},{}", dump.cursor.0, dump.cursor.1),
        ),
        (
            "x-panectl-alternate-screen",
            dump.alternate_screen.to_string(),
        ),
        ("x-panectl-output-seq", dump.output_seq.to_string()),
        (
            "x-panectl-sync",
            serde_json::to_string(&dump.sync)
                .unwrap_or_default()
                .trim_matches('"')
                .to_string(),
        ),
    ];
    for (name, value) in extra {
        headers.insert(HeaderName::from_static(name), header_value(value));
    }
    Ok((headers, dump.content).into_response())
}

/// Query of the output route.
#[derive(Debug, Deserialize)]
pub(crate) struct OutputQuery {
    from: Option<u64>,
    limit: Option<usize>,
}

pub(crate) async fn output(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    Query(query): Query<OutputQuery>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    let limit = query.limit.unwrap_or(1 << 20).min(16 << 20);
    let read = handle
        .output(pane.pane, query.from, limit)
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("pane {} is gone", pane.pane)))?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        HeaderName::from_static("x-panectl-from"),
        header_value(read.from),
    );
    headers.insert(
        HeaderName::from_static("x-panectl-next"),
        header_value(read.next),
    );
    if let Some(missed) = &read.missed {
        headers.insert(
            HeaderName::from_static("x-panectl-missed"),
            header_value(format!("{}-{}", missed.start, missed.end)),
        );
    }
    if !read.gaps.is_empty() {
        headers.insert(
            HeaderName::from_static("x-panectl-gaps"),
            header_value(serde_json::to_string(&read.gaps).unwrap_or_default()),
        );
    }
    Ok((headers, read.data).into_response())
}

pub(crate) async fn explain(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    let explanation = handle
        .explain(pane.pane)
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("pane {} is gone", pane.pane)))?;
    Ok(axum::Json(explanation).into_response())
}

pub(crate) async fn last_response(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    if pane.provider.is_none() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("pane {} runs no agent panectl recognises", pane.pane),
        ));
    }
    let answer = handle.last_response(pane.pane).await?.ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            format!("no answer found in pane {}", pane.pane),
        )
    })?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Ok((headers, answer).into_response())
}

/// Body of `POST /v1/panes/{pane}/provider`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderBody {
    /// The provider to assign; `null` goes back to recognising it.
    pub provider: Option<String>,
}

pub(crate) async fn set_provider(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<ProviderBody>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    handle
        .set_provider(pane.pane, body.provider)
        .await?
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    let (pane, _) = state.ctx.find(&pane.pane.to_string()).await?;
    Ok(axum::Json(pane).into_response())
}

/// `POST /v1/panes/{pane}/hook`: a hook event of the agent in the pane (`panectl hook` sends
/// it). Answers whether it decided the status, and the status now.
pub(crate) async fn hook(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(report): super::body::Json<crate::status::signal::HookReport>,
) -> Result<Response, ApiError> {
    // Hooks come from `$TMUX_PANE`, a pane id: asked of each connection directly, without
    // listing every pane first (a hook waits for this answer).
    let pane = match name.parse::<PaneId>() {
        Ok(pane) => pane,
        Err(_) => state.ctx.find(&name).await?.0.pane,
    };
    for wait in [false, true] {
        if wait && (state.ctx.synced() || !state.ctx.wait_synced(SYNC_WAIT).await) {
            break;
        }
        for handle in state.ctx.handles().values() {
            if let Ok(Some(answer)) = handle.hook(pane, report.clone()).await {
                return Ok(axum::Json(answer).into_response());
            }
        }
    }
    Err(ApiError(
        StatusCode::NOT_FOUND,
        format!("no pane {pane} is mirrored"),
    ))
}

/// Body of `POST /v1/panes/{pane}/transport` and `POST /v1/sessions/{session}/transport`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportBody {
    /// The transport to move to.
    pub transport: crate::pipe::Transport,
}

pub(crate) async fn set_transport(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<TransportBody>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    handle
        .set_transport(pane.pane, body.transport)
        .await?
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e))?;
    let (pane, _) = state.ctx.find(&pane.pane.to_string()).await?;
    Ok(axum::Json(pane).into_response())
}

/// Answer of `POST /v1/sessions/{session}/transport`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SessionTransportAnswer {
    /// The session.
    pub session: crate::ids::SessionId,
    /// The transport asked for.
    pub transport: crate::pipe::Transport,
    /// The session's panes after the change.
    pub panes: Vec<PaneSummary>,
    /// Panes that could not move, with why.
    pub failed: Vec<FailedPane>,
}

/// A pane that stayed on its transport, in [`SessionTransportAnswer`].
#[derive(Debug, Serialize, Deserialize)]
pub struct FailedPane {
    /// The pane.
    pub pane: PaneId,
    /// Why it did not move.
    pub error: String,
}

pub(crate) async fn set_session_transport(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<TransportBody>,
) -> Result<Response, ApiError> {
    let panes = state.ctx.all_panes().await;
    let session = panes
        .iter()
        .find(|p| p.session_id.to_string() == name || p.session.as_bytes() == name.as_bytes())
        .map(|p| p.session_id)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no session named {name:?}")))?;
    let handle = state.ctx.handles().get(&session).cloned().ok_or_else(|| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("session {session} is reconnecting"),
        )
    })?;
    let failed = handle
        .set_session_transport(body.transport)
        .await?
        .into_iter()
        .map(|(pane, error)| FailedPane { pane, error })
        .collect();
    let panes = handle.panes().await.map_err(ApiError::from)?;
    Ok(axum::Json(SessionTransportAnswer {
        session,
        transport: body.transport,
        panes,
        failed,
    })
    .into_response())
}

/// A provider in `GET /v1/providers`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Where its rules come from.
    pub source: String,
    /// How many rules it has.
    pub rules: usize,
}

pub(crate) async fn providers(State(state): State<ApiState>) -> axum::Json<Vec<ProviderInfo>> {
    let set = state.ctx.providers.borrow().clone();
    axum::Json(
        set.iter()
            .map(|p| ProviderInfo {
                id: p.id.to_string(),
                name: p.name.clone(),
                source: p.source.clone(),
                rules: p.rules.len(),
            })
            .collect(),
    )
}
