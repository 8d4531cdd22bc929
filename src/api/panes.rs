//! The routes that read and set one pane or all of them: the list, the mirrored screen, recent
//! output, the status explanation, the last answer, the provider, hooks, the transport, and
//! the provider rules in force.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorBody};
use super::params::{PanePath, SessionPath};
use super::responses::{PaneAmbiguous, PaneNotFound, PaneUnavailable, UnreadableBody};
use super::state::ApiState;
use crate::ids::PaneId;
use crate::orchestration::SYNC_WAIT;
use crate::tmux::PaneSummary;

/// Every mirrored pane
#[utoipa::path(
    get,
    path = "/v1/panes",
    operation_id = "list_panes",
    tag = "panes",
    responses((
        status = 200,
        description = "Every pane of every session, ordered by pane id; a pane of a window \
                       linked into several sessions appears once.",
        body = Vec<PaneSummary>
    ))
)]
pub(crate) async fn list_panes(State(state): State<ApiState>) -> axum::Json<Vec<PaneSummary>> {
    axum::Json(state.ctx.all_panes().await)
}

/// One pane
#[utoipa::path(
    get,
    path = "/v1/panes/{pane}",
    operation_id = "get_pane",
    tag = "panes",
    params(PanePath),
    responses(
        (status = 200, description = "The pane.", body = PaneSummary),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn one_pane(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
) -> Result<axum::Json<PaneSummary>, ApiError> {
    let (pane, _) = state.ctx.find(&name).await?;
    Ok(axum::Json(pane))
}

/// Query of the screen route.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ScreenQuery {
    /// `text` (default) or `ansi`.
    #[param(schema_with = screen_format_schema)]
    format: Option<String>,
}

/// The schema of [`ScreenQuery::format`] (a string, so that an unknown word gets the route's
/// own error).
fn screen_format_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["text", "ansi"]))
        .default(Some(serde_json::json!("text")))
        .build()
}

fn header_value(value: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&value.to_string()).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

/// The pane's mirrored screen
#[utoipa::path(
    get,
    path = "/v1/panes/{pane}/screen",
    operation_id = "get_screen",
    tag = "panes",
    params(PanePath, ScreenQuery),
    responses(
        (
            status = 200,
            description = "The visible screen. `format=text`: rows joined by newlines, trailing \
                           spaces and trailing blank rows removed. `format=ansi`: every row, with \
                           SGR escape sequences for colours and attributes.",
            content_type = "text/plain",
            body = String,
            headers(
                ("x-panectl-pane" = PaneId, description = "The pane id (`%N`)."),
                ("x-panectl-size" = String, description = "`WIDTHxHEIGHT` in cells."),
                ("x-panectl-cursor" = String, description = "Cursor `COLUMN,ROW`, 0-based."),
                ("x-panectl-alternate-screen" = bool, description = "`true` or `false`."),
                (
                    "x-panectl-output-seq" = u64,
                    description = "Sequence number of the next output byte: the screen \
                                   reflects every byte before it."
                ),
                (
                    "x-panectl-sync" = crate::mirror::SyncState,
                    description = "How far the screen can be trusted: `unseeded`, `live` or \
                                   `stale`."
                ),
            )
        ),
        (status = 400, description = "`format` is neither `text` nor `ansi`.", body = ErrorBody),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn screen(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
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
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct OutputQuery {
    /// Sequence number to start at (default: the oldest byte still held). A number past the
    /// end gives an empty body.
    from: Option<u64>,
    /// At most this many bytes (default 1 MiB; values above 16 MiB are lowered to 16 MiB).
    #[param(default = 1048576, maximum = 16777216)]
    limit: Option<usize>,
}

/// The pane's recent output bytes
#[utoipa::path(
    get,
    path = "/v1/panes/{pane}/output",
    operation_id = "get_output",
    tag = "panes",
    params(PanePath, OutputQuery),
    responses(
        (
            status = 200,
            description = "Raw output bytes from the pane's ring (`--ring-bytes`, default \
                           128 KiB). Every byte a pane prints has a sequence number; pass \
                           `x-panectl-next` as `from` to resume exactly where the last read ended.",
            content_type = "application/octet-stream",
            body = inline(super::responses::Binary),
            headers(
                ("x-panectl-from" = u64, description = "Sequence number of the first byte of the body."),
                ("x-panectl-next" = u64, description = "Sequence number to pass as `from` next time."),
                (
                    "x-panectl-missed" = String,
                    description = "`START-END` (end exclusive): bytes asked for that have already \
                                   left the ring. Absent when nothing was missed."
                ),
                (
                    "x-panectl-gaps" = String,
                    description = "A JSON array of `Gap` (`{\"seq\": N, \"reason\": GapReason}`): \
                                   holes in the stream itself (tmux discarded output while the \
                                   pane was paused, the connection was re-established, the \
                                   screen was reseeded, or the pane's pipe stalled), each just \
                                   before byte `seq`. Absent when there are none."
                ),
            )
        ),
        (status = 400, response = super::responses::UnreadableQuery),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn output(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
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

/// Why the pane has its status
#[utoipa::path(
    get,
    path = "/v1/panes/{pane}/explain",
    operation_id = "explain_pane",
    tag = "status",
    params(PanePath),
    responses(
        (
            status = 200,
            description = "The provider, the status, and every rule of the provider evaluated on \
                           the current screen, in the order they are tried.",
            body = crate::session::Explanation
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn explain(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    let explanation = handle
        .explain(pane.pane)
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("pane {} is gone", pane.pane)))?;
    Ok(axum::Json(explanation).into_response())
}

/// The agent's last answer
#[utoipa::path(
    get,
    path = "/v1/panes/{pane}/last-response",
    operation_id = "get_last_response",
    tag = "status",
    params(PanePath),
    responses(
        (
            status = 200,
            description = "The text of the agent's last answer, without the TUI around it (read \
                           from the pane's scrollback with `capture-pane`).",
            content_type = "text/plain",
            body = String
        ),
        (
            status = 404,
            description = "No such pane, the pane runs no agent panectl recognises, or no answer \
                           was found.",
            body = ErrorBody
        ),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn last_response(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
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
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderBody {
    /// A provider id (`GET /v1/providers`), or null (or absent) to let the daemon recognise the
    /// provider again.
    pub provider: Option<String>,
}

/// Assign the pane's provider, or go back to recognising it
///
/// `{"provider": "codex"}` assigns a provider; `{"provider": null}` (or `{}`) removes the
/// assignment so the provider is recognised from the pane's processes or banner again. The
/// choice is kept in the pane option `@panectl_provider_override`, which outlives the daemon.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/provider",
    operation_id = "set_provider",
    tag = "status",
    params(PanePath),
    request_body = ProviderBody,
    responses(
        (
            status = 200,
            description = "The pane, with its provider and status after the change.",
            body = PaneSummary
        ),
        (
            status = 400,
            description = "Unknown provider id (or the pane vanished meanwhile: `no such pane`), \
                           or a body that is not a `ProviderBody`.",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn set_provider(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
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

/// How many ancestors of a hook's sender are looked at for the pane's agent.
const SENDER_DEPTH: usize = 64;

/// A hook event of the agent in the pane: a status signal
///
/// What `panectl hook` sends (an agent CLI's hook command: it reads the hook's JSON on stdin).
/// The event is mapped to a status and weighed against the screen: the newest evidence wins
/// (see docs/API.md, Status sources). The sender is known from the Unix socket (`SO_PEERCRED`),
/// never from the body: a hook applies only when its sender is the pane's agent process or
/// runs under it (a hook of another pane, of a script, of a program that ended does not).
/// Answers 200 whether or not it applied, with why not; 403 on the TCP listener.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/hook",
    operation_id = "hook",
    tag = "status",
    params(PanePath),
    request_body = crate::status::signal::HookReport,
    responses(
        (
            status = 200,
            description = "What became of the hook, and the pane's status now.",
            body = crate::status::signal::HookAnswer
        ),
        (
            status = 400,
            description = "The body is not a hook report (no `event`).",
            body = ErrorBody
        ),
        (
            status = 403,
            description = "Not sent on the Unix socket: the sender cannot be known.",
            body = ErrorBody
        ),
        (
            status = 404,
            description = "No pane has that name, or it is not mirrored.",
            body = ErrorBody
        ),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn hook(
    State(state): State<ApiState>,
    peer: Option<axum::Extension<super::listen::Peer>>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    super::body::Json(report): super::body::Json<crate::status::signal::HookReport>,
) -> Result<Response, ApiError> {
    // Who sent it, as the kernel says: the hook's own `pid` is not taken for it.
    let Some(pid) = peer.and_then(|axum::Extension(peer)| peer.pid) else {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "hooks are taken only on the daemon's Unix socket, whose peer is known".into(),
        ));
    };
    let sender = crate::os::process::ancestry(pid, SENDER_DEPTH);
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
            if let Ok(Some(answer)) = handle.hook(pane, report.clone(), sender.clone()).await {
                if report.session_id.is_some()
                    && let Ok((summary, _)) = state.ctx.find(&pane.to_string()).await
                {
                    crate::orchestration::agent_records::note_conversation(
                        &state.ctx, &summary, &sender, &report,
                    )
                    .await;
                }
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
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportBody {
    /// The transport to move to.
    pub transport: crate::pipe::Transport,
}

/// Move the pane's output to another transport
///
/// `{"transport": "pipe"}` copies the pane's output with `pipe-pane -O` into a private FIFO and
/// turns its `%output` on the control client off; `{"transport": "control"}` turns it back.
/// Either way the pane is reseeded from `capture-pane` and a `transport` event follows. A pipe
/// that fails (its FIFO removed, or one that the watchdog cannot bring back) falls back to
/// `control` by itself, with a `transport` event that says why. `{"transport": "cross_check"}`
/// reads the pane through both: `%output` keeps feeding the mirror and the pipe's bytes are
/// compared with it byte by byte; every difference is a `cross_check` event and counted in
/// `GET /v1/health`.
#[utoipa::path(
    post,
    path = "/v1/panes/{pane}/transport",
    operation_id = "set_transport",
    tag = "panes",
    params(PanePath),
    request_body = TransportBody,
    responses(
        (
            status = 200,
            description = "The pane, with its transport after the change.",
            body = PaneSummary
        ),
        (
            status = 400,
            description = "The pipe could not be started (its FIFO could not be made), the pane \
                           vanished meanwhile, or a body that is not a `TransportBody`.",
            body = ErrorBody
        ),
        (status = 404, response = PaneNotFound),
        (status = 409, response = PaneAmbiguous),
        (status = 503, response = PaneUnavailable),
    )
)]
pub(crate) async fn set_transport(
    State(state): State<ApiState>,
    UrlPath(PanePath { pane: name }): UrlPath<PanePath>,
    super::body::Json(body): super::body::Json<TransportBody>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.ctx.find(&name).await?;
    handle
        .set_transport(pane.pane, body.transport)
        .await?
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    let (pane, _) = state.ctx.find(&pane.pane.to_string()).await?;
    Ok(axum::Json(pane).into_response())
}

/// Answer of `POST /v1/sessions/{session}/transport`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
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

/// A pane that stayed on its transport, in a `SessionTransportAnswer`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FailedPane {
    /// The pane.
    pub pane: PaneId,
    /// Why it did not move.
    pub error: String,
}

/// Move every pane of a session, and its new panes, to another transport
///
/// The same as `POST /v1/panes/{pane}/transport` for every pane of the session, and for the
/// panes it gets later (until the daemon restarts). `{session}` is `$N` (percent-encoded:
/// `%24N`) or the session's name. The answer lists the session's panes after the change and
/// those that could not move.
#[utoipa::path(
    post,
    path = "/v1/sessions/{session}/transport",
    operation_id = "set_session_transport",
    tag = "panes",
    params(SessionPath),
    request_body = TransportBody,
    responses(
        (
            status = 200,
            description = "The session's panes after the change, and the panes that could not \
                           move.",
            body = SessionTransportAnswer
        ),
        (status = 400, response = UnreadableBody),
        (status = 404, description = "No session has that id or name.", body = ErrorBody),
        (
            status = 503,
            description = "The session is reconnecting, or its control connection did not \
                           answer.",
            body = ErrorBody
        ),
    )
)]
pub(crate) async fn set_session_transport(
    State(state): State<ApiState>,
    UrlPath(SessionPath { session: name }): UrlPath<SessionPath>,
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
        .map(|(pane, error)| FailedPane {
            pane,
            error: error.to_string(),
        })
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
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProviderInfo {
    /// Its id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Where its rules come from: a file path, or `<builtin NAME>`.
    pub source: String,
    /// How many status rules it has.
    pub rules: usize,
}

/// The provider rules in force
#[utoipa::path(
    get,
    path = "/v1/providers",
    operation_id = "list_providers",
    tag = "status",
    responses((
        status = 200,
        description = "Every provider, built-in or from the user's rules directory.",
        body = Vec<ProviderInfo>
    ))
)]
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
