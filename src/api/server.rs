//! The local API: HTTP/1.1 and JSON over a Unix socket that only the daemon's user can use.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/health` | daemon, server and counter summary (JSON) |
//! | `GET /v1/panes` | every pane (JSON list) |
//! | `GET /v1/panes/{pane}` | one pane (JSON) |
//! | `GET /v1/panes/{pane}/screen[?format=ansi]` | the mirrored screen (text, or ANSI) |
//! | `GET /v1/panes/{pane}/output[?from=SEQ&limit=N]` | recent output bytes, headers say which |
//! | `GET /v1/panes/{pane}/explain` | which status rule fired and why the others did not (JSON) |
//! | `GET /v1/panes/{pane}/last-response` | the agent's last answer, without TUI chrome (text) |
//! | `POST /v1/panes/{pane}/provider` | `{"provider": "codex"}` assigns a provider, `null` unassigns |
//! | `POST /v1/panes/{pane}/hook` | an agent's hook event (from `panectl hook`): a status signal |
//! | `POST /v1/sessions/{session}/transport` | the same for every pane of a session (`$N` or its name), and its new panes |
//! | `POST /v1/panes/{pane}/transport` | `{"transport": "pipe"}` moves the pane's output to `pipe-pane`, `"control"` back |
//! | `GET /v1/providers` | the provider rules in force |
//! | `GET /v1/events` | Server-Sent Events: every change, numbered |
//!
//! and the orchestration routes (messages, input, keys, wait, agents, handoff, assign); the
//! whole list is [`routes`], described in `docs/API.md` and served as OpenAPI at
//! `GET /v1/openapi.json`. `{pane}` is any name [`names::resolve`] accepts, percent-encoded.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::stream::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::names;
use crate::daemon::supervisor::ServerStatus;
use crate::events::{DaemonEvent, EventBus};
use crate::ids::PaneId;
use crate::mirror::PaneCounters;
use crate::tmux::Connections;
use crate::tmux::{ConnectionHandle, PaneSummary, ServerAddress};

/// How long a request naming a pane the daemon does not know waits for the sessions' first
/// sync (at start, or while a session attaches) before it is answered with 404.
pub const SYNC_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What the handlers share.
#[derive(Clone)]
pub struct ApiState {
    /// The inbox.
    pub inbox: crate::inbox::InboxHandle,
    /// The live connections.
    pub connections: watch::Receiver<Connections>,
    /// The supervisor's status.
    pub status: watch::Receiver<ServerStatus>,
    /// The event bus.
    pub bus: EventBus,
    /// The tmux server.
    pub address: ServerAddress,
    /// The API's Unix socket.
    pub api_socket: String,
    /// When the daemon started.
    pub started: Instant,
    /// Fires at shutdown; ends event streams so the server can stop.
    pub shutdown: CancellationToken,
    /// The provider rules in force and the errors of the last reload.
    pub rules: crate::daemon::rules::RulesState,
    /// The daemon's log file, if it logs to one.
    pub log_file: Option<String>,
    /// The daemon's command line.
    pub command_line: Vec<String>,
    /// Whether MCP clients may send text to panes without a recognised agent.
    pub mcp_allow_shell: bool,
    /// The completed agents an attached client has seen.
    pub seen: watch::Receiver<std::collections::BTreeSet<PaneId>>,
    /// The daemon's task tracker: work that outlives a request (following an assignment) runs
    /// on it, so that shutdown waits for it.
    pub tasks: tokio_util::task::TaskTracker,
}

/// A Unix listener that only hands out connections from the daemon's own user.
pub struct PeerCheckedListener {
    listener: UnixListener,
    uid: u32,
    refused_log: super::listen::RateLimitedLog,
}

impl PeerCheckedListener {
    /// Binds the socket (replacing a stale file) with mode 0600.
    pub fn bind(path: &Path) -> io::Result<PeerCheckedListener> {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(PeerCheckedListener {
            listener,
            uid: nix::unistd::getuid().as_raw(),
            refused_log: super::listen::RateLimitedLog::new(super::listen::LOG_EVERY),
        })
    }
}

impl super::listen::Accept for PeerCheckedListener {
    type Io = UnixStream;

    async fn accept(&mut self) -> io::Result<Option<UnixStream>> {
        let (stream, _) = self.listener.accept().await?;
        let refused = match stream.peer_cred() {
            Ok(cred) if cred.uid() == self.uid => return Ok(Some(stream)),
            Ok(cred) => format!("uid {}", cred.uid()),
            Err(error) => format!("unknown (cannot check: {error})"),
        };
        if let Some(held_back) = self.refused_log.allow(Instant::now()) {
            tracing::warn!(
                peer = refused,
                held_back,
                "refused an API connection from another user"
            );
        }
        Ok(None)
    }
}

/// Serves the API on the Unix socket within `limits` until `cancel` fires.
pub async fn serve(
    listener: PeerCheckedListener,
    state: ApiState,
    limits: super::listen::Limits,
    cancel: CancellationToken,
) {
    super::listen::serve(listener, router(state), limits, "unix", cancel).await;
}

/// One route of the API: the router and the OpenAPI document's check are made from the same
/// list, so neither can drift from the other.
pub(crate) struct Route {
    /// The HTTP method (lowercase, as in OpenAPI).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the OpenAPI check"))]
    pub method: &'static str,
    /// The path template.
    pub path: &'static str,
    /// The handler.
    pub handler: axum::routing::MethodRouter<ApiState>,
}

/// Every route.
pub(crate) fn routes() -> Vec<Route> {
    use axum::routing::post;
    let get_route = |path, handler| Route {
        method: "get",
        path,
        handler,
    };
    let post_route = |path, handler| Route {
        method: "post",
        path,
        handler,
    };
    vec![
        get_route("/v1/health", get(health)),
        get_route("/v1/openapi.json", get(openapi)),
        get_route("/v1/panes", get(list_panes)),
        get_route("/v1/panes/{pane}", get(one_pane)),
        get_route("/v1/panes/{pane}/screen", get(screen)),
        get_route("/v1/panes/{pane}/output", get(output)),
        get_route("/v1/panes/{pane}/explain", get(explain)),
        get_route("/v1/panes/{pane}/last-response", get(last_response)),
        post_route("/v1/panes/{pane}/provider", post(set_provider)),
        post_route("/v1/panes/{pane}/hook", post(hook)),
        post_route("/v1/panes/{pane}/transport", post(set_transport)),
        post_route(
            "/v1/sessions/{session}/transport",
            post(set_session_transport),
        ),
        get_route("/v1/providers", get(providers)),
        post_route("/v1/panes/{pane}/messages", post(send_message)),
        post_route("/v1/panes/{pane}/input", post(super::orchestrate::input)),
        post_route("/v1/panes/{pane}/keys", post(super::orchestrate::keys)),
        post_route("/v1/panes/{pane}/wait", post(super::orchestrate::wait)),
        post_route("/v1/agents", post(super::launch::launch)),
        post_route("/v1/handoff", post(super::handoff::handoff)),
        post_route("/v1/assign", post(super::handoff::assign)),
        get_route("/v1/assignments", get(super::handoff::list)),
        get_route("/v1/assignments/{id}", get(super::handoff::one)),
        get_route("/v1/messages", get(list_messages)),
        get_route("/v1/messages/{id}", get(one_message)),
        post_route("/v1/messages/{id}/cancel", post(cancel_message)),
        get_route("/v1/events", get(events)),
    ]
}

/// The routes.
pub fn router(state: ApiState) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |router, route| {
            router.route(route.path, route.handler)
        })
        // A 1 MiB message sent as `body_hex` is 2 MiB of JSON.
        .layer(axum::extract::DefaultBodyLimit::max(4 << 20))
        .layer(axum::middleware::map_response(json_rejections))
        .with_state(state)
}

/// Gives the errors axum answers by itself (a body that is not the JSON a route takes, a bad
/// path or query value, a body too large) the same `{"error": ...}` form as the routes' own.
async fn json_rejections(response: Response) -> Response {
    let status = response.status();
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain"));
    if !status.is_client_error() || !plain {
        return response;
    }
    let text = match axum::body::to_bytes(response.into_body(), 64 * 1024).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => status
            .canonical_reason()
            .unwrap_or("bad request")
            .to_string(),
    };
    ApiError(status, text).into_response()
}

pub(crate) use super::error::ApiError;

/// The OpenAPI document of this API.
pub const OPENAPI: &str = include_str!("openapi.json");

async fn openapi() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI,
    )
        .into_response()
}

impl ApiState {
    pub(crate) fn handles(&self) -> Connections {
        self.connections.borrow().clone()
    }

    /// Every pane of every session; a pane in windows linked to several sessions once.
    pub(crate) async fn all_panes(&self) -> Vec<PaneSummary> {
        let handles = self.handles();
        let replies =
            futures::future::join_all(handles.values().map(ConnectionHandle::panes)).await;
        let mut panes: BTreeMap<PaneId, PaneSummary> = BTreeMap::new();
        let seen = self.seen.borrow().clone();
        for mut pane in replies.into_iter().flatten().flatten() {
            pane.seen =
                pane.status == crate::status::Status::Completed && seen.contains(&pane.pane);
            panes.entry(pane.pane).or_insert(pane);
        }
        panes.into_values().collect()
    }

    /// Whether every session's panes are known: the daemon has finished starting and every
    /// connection has had its first sync. Until then a pane that exists may be missing.
    pub(crate) fn synced(&self) -> bool {
        !self.status.borrow().starting && self.handles().values().all(ConnectionHandle::is_synced)
    }

    /// Waits until [`ApiState::synced`], for `bound` at most; returns whether it is.
    pub(crate) async fn wait_synced(&self, bound: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        let mut status = self.status.clone();
        let mut connections = self.connections.clone();
        loop {
            status.borrow_and_update();
            connections.borrow_and_update();
            if self.synced() {
                return true;
            }
            let pending = self.handles().values().find(|h| !h.is_synced()).cloned();
            let first_sync = async {
                match pending {
                    Some(handle) => handle.first_sync().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return self.synced(),
                changed = status.changed() => if changed.is_err() { return self.synced() },
                changed = connections.changed() => if changed.is_err() { return self.synced() },
                () = first_sync => {}
            }
        }
    }

    /// The pane a name means and its connection. A name no pane has while sessions are still
    /// having their first sync (the daemon starting, a session attaching) waits for that, up
    /// to [`SYNC_WAIT`], before it is answered with 404.
    pub(crate) async fn find(
        &self,
        name: &str,
    ) -> Result<(PaneSummary, ConnectionHandle), ApiError> {
        match self.find_now(name).await {
            Err(ApiError(StatusCode::NOT_FOUND, _)) if !self.synced() => {
                self.wait_synced(SYNC_WAIT).await;
                self.find_now(name).await
            }
            found => found,
        }
    }

    async fn find_now(&self, name: &str) -> Result<(PaneSummary, ConnectionHandle), ApiError> {
        let panes = self.all_panes().await;
        let id = names::resolve(name, &panes)?;
        let pane = panes
            .into_iter()
            .find(|p| p.pane == id)
            .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no pane named {name:?}")))?;
        let handle = self
            .handles()
            .get(&pane.session_id)
            .cloned()
            .ok_or_else(|| {
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the pane's session is reconnecting".into(),
                )
            })?;
        Ok((pane, handle))
    }
}

/// The health report.
#[derive(Debug, Serialize, Deserialize)]
pub struct Health {
    /// `ok`; `starting` until the panes of every session found at start are known (requests
    /// that name a pane wait for that, a few seconds at most); `degraded` while the tmux server
    /// is unreachable, the user's provider rules have errors or the inbox database is damaged
    /// (`reasons` says which).
    pub status: String,
    /// Why the status is not `ok`, one sentence each (empty when `ok`).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The daemon's process id.
    #[serde(default)]
    pub pid: u32,
    /// The daemon's version.
    pub version: String,
    /// The daemon's log file (`None`: it logs to its stderr).
    #[serde(default)]
    pub log_file: Option<String>,
    /// The command line the daemon was started with.
    #[serde(default)]
    pub command_line: Vec<String>,
    /// The tmux server's socket.
    pub tmux_socket: String,
    /// The API's Unix socket.
    #[serde(default)]
    pub api_socket: String,
    /// tmux's version.
    pub tmux_version: String,
    /// Whether the tmux server answers.
    pub server_alive: bool,
    /// Seconds since the daemon started.
    pub uptime_seconds: u64,
    /// Sessions with a control connection (started, possibly still attaching).
    pub sessions: usize,
    /// Sessions whose control client has attached and answers.
    #[serde(default)]
    pub attached: usize,
    /// Panes mirrored.
    pub panes: usize,
    /// Control connections restarted after ending unexpectedly.
    pub reconnects: u64,
    /// Control clients of a previous daemon ended at start.
    pub leftover_clients_ended: usize,
    /// Lines from tmux the decoder could not read.
    pub parse_errors: u64,
    /// Commands that tmux did not answer in time.
    pub timeouts: u64,
    /// Commands sent over control connections.
    pub commands: u64,
    /// Pane output, summed.
    pub output_bytes: u64,
    /// Screens rebuilt from tmux, for any reason.
    pub resyncs: u64,
    /// Times tmux paused a pane.
    pub pauses: u64,
    /// Times the watchdog found a screen different from tmux's.
    pub divergences: u64,
    /// Panes whose output comes through the pipe transport.
    #[serde(default)]
    pub pipe_panes: usize,
    /// Pane output that came through pipes since each session was attached, also of pipes since
    /// stopped (in cross-check mode, the bytes compared).
    #[serde(default)]
    pub pipe_bytes: u64,
    /// Cross-check mode: bytes found equal in both transports.
    #[serde(default)]
    pub cross_check_matched: u64,
    /// Cross-check mode: differences reported (each also a `cross_check` event).
    #[serde(default)]
    pub cross_check_findings: u64,
    /// Id of the last event published.
    pub last_event: u64,
    /// Processes (tmux clients and one-shot commands) the daemon has started since it began.
    pub processes_started: u64,
    /// Agent panes by status.
    pub statuses: BTreeMap<String, usize>,
    /// Errors of the user's provider rule files (the rules in force are the last good ones).
    pub rules_errors: Vec<String>,
    /// The inbox database: `ok`, or `damaged: WHAT SQLITE SAID` once a query found it damaged
    /// (deliveries then stop; `reasons` says what to do).
    #[serde(default)]
    pub inbox: String,
}

async fn health(State(state): State<ApiState>) -> axum::Json<Health> {
    let handles = state.handles();
    let stats = futures::future::join_all(handles.values().map(ConnectionHandle::stats)).await;
    let status = state.status.borrow().clone();
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for pane in state.all_panes().await {
        // Agents only: a plain shell is not one (as in `@panectl_summary`).
        if pane
            .provider
            .as_deref()
            .is_some_and(|p| p != crate::status::providers::SHELL)
        {
            *statuses.entry(pane.status.to_string()).or_default() += 1;
        }
    }
    let rules_errors = state.rules.errors.borrow().clone();
    let mut totals = PaneCounters::default();
    let (mut parse_errors, mut timeouts, mut commands, mut panes) = (0, 0, 0, 0);
    let (mut pipe_panes, mut pipe_bytes) = (0, 0);
    let (mut cross_check_matched, mut cross_check_findings) = (0, 0);
    let mut tmux_version = String::new();
    let mut attached = 0;
    for stat in stats.into_iter().flatten() {
        if stat.attached {
            attached += 1;
        }
        totals.bytes += stat.totals.bytes;
        totals.resyncs += stat.totals.resyncs;
        totals.pauses += stat.totals.pauses;
        totals.divergences += stat.totals.divergences;
        parse_errors += stat.parse_errors;
        timeouts += stat.timeouts;
        commands += stat.commands;
        panes += stat.panes;
        pipe_panes += stat.pipe_panes;
        pipe_bytes += stat.pipe_bytes;
        cross_check_matched += stat.cross_check_matched;
        cross_check_findings += stat.cross_check_findings;
        if tmux_version.is_empty() {
            tmux_version = stat.tmux_version;
        }
    }
    let mut reasons = Vec::new();
    if !status.server_alive {
        reasons.push(format!(
            "the tmux server at {} does not answer; the daemon waits for it",
            state.address
        ));
    }
    let starting = status.starting;
    if starting {
        let synced = handles.values().filter(|h| h.is_synced()).count();
        reasons.push(format!(
            "the daemon is starting: the panes of {synced} of {} session(s) are known",
            handles.len()
        ));
    }
    if !rules_errors.is_empty() {
        reasons.push(format!(
            "{} error(s) in the provider rule files (the last good rules stay in force): {}",
            rules_errors.len(),
            rules_errors.join("; ")
        ));
    }
    let inbox = match state.inbox.damage() {
        Some(damage) => {
            reasons.push(format!(
                "the inbox database is damaged ({damage}); deliveries have stopped. Stop the \
                 daemon, move the database aside or restore a backup, and start it again"
            ));
            format!("damaged: {damage}")
        }
        None => "ok".into(),
    };
    axum::Json(Health {
        inbox,
        status: if starting {
            "starting"
        } else if reasons.is_empty() {
            "ok"
        } else {
            "degraded"
        }
        .into(),
        reasons,
        pid: std::process::id(),
        log_file: state.log_file.clone(),
        command_line: state.command_line.clone(),
        attached,
        version: env!("CARGO_PKG_VERSION").into(),
        tmux_socket: state.address.to_string(),
        api_socket: state.api_socket.clone(),
        tmux_version,
        server_alive: status.server_alive,
        uptime_seconds: state.started.elapsed().as_secs(),
        sessions: status.sessions,
        panes,
        reconnects: status.reconnects,
        leftover_clients_ended: status.leftover_clients_ended,
        parse_errors,
        timeouts,
        commands,
        output_bytes: totals.bytes,
        resyncs: totals.resyncs,
        pauses: totals.pauses,
        divergences: totals.divergences,
        pipe_panes,
        pipe_bytes,
        cross_check_matched,
        cross_check_findings,
        last_event: state.bus.last_id(),
        processes_started: crate::address::processes_started(),
        statuses,
        rules_errors,
    })
}

async fn list_panes(State(state): State<ApiState>) -> axum::Json<Vec<PaneSummary>> {
    axum::Json(state.all_panes().await)
}

async fn one_pane(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<axum::Json<PaneSummary>, ApiError> {
    let (pane, _) = state.find(&name).await?;
    Ok(axum::Json(pane))
}

/// Query of the screen route.
#[derive(Debug, Deserialize)]
struct ScreenQuery {
    format: Option<String>,
}

fn header_value(value: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&value.to_string()).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

async fn screen(
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
    let (pane, handle) = state.find(&name).await?;
    let dump = handle
        .screen(pane.pane, ansi)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
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
struct OutputQuery {
    from: Option<u64>,
    limit: Option<usize>,
}

async fn output(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    Query(query): Query<OutputQuery>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.find(&name).await?;
    let limit = query.limit.unwrap_or(1 << 20).min(16 << 20);
    let read = handle
        .output(pane.pane, query.from, limit)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
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

async fn explain(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.find(&name).await?;
    let explanation = handle
        .explain(pane.pane)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("pane {} is gone", pane.pane)))?;
    Ok(axum::Json(explanation).into_response())
}

async fn last_response(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.find(&name).await?;
    if pane.provider.is_none() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("pane {} runs no agent panectl recognises", pane.pane),
        ));
    }
    let answer = handle
        .last_response(pane.pane)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .ok_or_else(|| {
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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderBody {
    provider: Option<String>,
}

async fn set_provider(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<ProviderBody>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.find(&name).await?;
    handle
        .set_provider(pane.pane, body.provider)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    let (pane, _) = state.find(&pane.pane.to_string()).await?;
    Ok(axum::Json(pane).into_response())
}

/// `POST /v1/panes/{pane}/hook`: a hook event of the agent in the pane (`panectl hook` sends
/// it). Answers whether it decided the status, and the status now.
async fn hook(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(report): super::body::Json<crate::status::signal::HookReport>,
) -> Result<Response, ApiError> {
    // Hooks come from `$TMUX_PANE`, a pane id: asked of each connection directly, without
    // listing every pane first (a hook waits for this answer).
    let pane = match name.parse::<PaneId>() {
        Ok(pane) => pane,
        Err(_) => state.find(&name).await?.0.pane,
    };
    for wait in [false, true] {
        if wait && (state.synced() || !state.wait_synced(SYNC_WAIT).await) {
            break;
        }
        for handle in state.handles().values() {
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

/// Body of `POST /v1/panes/{pane}/transport`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TransportBody {
    transport: crate::pipe::Transport,
}

async fn set_transport(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<TransportBody>,
) -> Result<Response, ApiError> {
    let (pane, handle) = state.find(&name).await?;
    handle
        .set_transport(pane.pane, body.transport)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e))?;
    let (pane, _) = state.find(&pane.pane.to_string()).await?;
    Ok(axum::Json(pane).into_response())
}

/// Answer of `POST /v1/sessions/{session}/transport`.
#[derive(Debug, Serialize)]
struct SessionTransportAnswer {
    session: crate::ids::SessionId,
    transport: crate::pipe::Transport,
    /// The session's panes after the change.
    panes: Vec<PaneSummary>,
    /// Panes that could not move, with why.
    failed: Vec<FailedPane>,
}

#[derive(Debug, Serialize)]
struct FailedPane {
    pane: PaneId,
    error: String,
}

async fn set_session_transport(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    super::body::Json(body): super::body::Json<TransportBody>,
) -> Result<Response, ApiError> {
    let panes = state.all_panes().await;
    let session = panes
        .iter()
        .find(|p| p.session_id.to_string() == name || p.session.as_bytes() == name.as_bytes())
        .map(|p| p.session_id)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no session named {name:?}")))?;
    let handle = state.handles().get(&session).cloned().ok_or_else(|| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("session {session} is reconnecting"),
        )
    })?;
    let failed = handle
        .set_session_transport(body.transport)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .into_iter()
        .map(|(pane, error)| FailedPane { pane, error })
        .collect();
    let panes = handle
        .panes()
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
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

async fn providers(State(state): State<ApiState>) -> axum::Json<Vec<ProviderInfo>> {
    let set = state.rules.providers.borrow().clone();
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

fn sse_event(event: &DaemonEvent) -> SseEvent {
    let kind = serde_json::to_value(&event.kind)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "event".into());
    SseEvent::default()
        .id(event.id.to_string())
        .event(kind)
        .data(serde_json::to_string(event).unwrap_or_default())
}

fn event_stream(
    receiver: broadcast::Receiver<Arc<DaemonEvent>>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Result<SseEvent, std::convert::Infallible>> {
    futures::stream::unfold(
        (receiver, shutdown),
        |(mut receiver, shutdown)| async move {
            let next = tokio::select! {
                () = shutdown.cancelled() => return None,
                next = receiver.recv() => next,
            };
            let event = match next {
                Ok(event) => sse_event(&event),
                Err(broadcast::error::RecvError::Lagged(missed)) => SseEvent::default()
                    .event("lagged")
                    .data(serde_json::json!({ "type": "lagged", "missed": missed }).to_string()),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((Ok(event), (receiver, shutdown)))
        },
    )
}

async fn events(State(state): State<ApiState>) -> impl IntoResponse {
    // Subscribed before the last id is read: every event with a larger id follows.
    let receiver = state.bus.subscribe();
    let subscribed = SseEvent::default().event("subscribed").data(
        serde_json::json!({ "type": "subscribed", "last_event": state.bus.last_id() }).to_string(),
    );
    let stream = futures::stream::once(async move { Ok(subscribed) })
        .chain(event_stream(receiver, state.shutdown.clone()));
    Sse::new(stream).keep_alive(KeepAlive::default())
}

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
    /// commands); see [`super::shell_guard`].
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

pub(crate) fn inbox_error(error: crate::inbox::InboxError) -> ApiError {
    use crate::inbox::InboxError;
    let code = match &error {
        InboxError::Refused(_) => StatusCode::BAD_REQUEST,
        InboxError::NoSuchMessage(_) | InboxError::NoSuchAssignment(_) => StatusCode::NOT_FOUND,
        InboxError::NotPending { .. } | InboxError::AssignmentEnded { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError(code, error.to_string())
}

async fn send_message(
    State(state): State<ApiState>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    super::body::Json(request): super::body::Json<SendBody>,
) -> Result<Response, ApiError> {
    let permission = super::shell_guard::ShellPermission::of(
        state.mcp_allow_shell,
        &headers,
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
            let ttl = super::body::seconds(
                "ttl_seconds",
                s,
                super::body::Zero::Refused,
                super::body::MAX_TTL_SECONDS,
            )?;
            Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
        }
        None => None,
    };
    let (pane, handle) = state.find(&name).await?;
    permission.check(&pane)?;
    let agent = crate::inbox::delivery::agent_identity(&handle, pane.pane)
        .await
        .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let message = state
        .inbox
        .enqueue(crate::inbox::NewMessage {
            pane: pane.pane.to_string(),
            agent,
            sender: request.from.unwrap_or_else(|| "api".into()),
            body,
            now: crate::inbox::now_ms(),
            ttl_ms,
        })
        .await
        .map_err(inbox_error)?;
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

async fn list_messages(
    State(state): State<ApiState>,
    Query(query): Query<MessageQuery>,
) -> Result<Response, ApiError> {
    let wanted =
        match query.state.as_deref() {
            Some(word) => Some(crate::inbox::State::parse(word).ok_or_else(|| {
                ApiError(StatusCode::BAD_REQUEST, format!("unknown state {word:?}"))
            })?),
            None => None,
        };
    let pane = match query.pane {
        // A pane id is taken as it is: its messages outlive it.
        Some(name) if name.parse::<PaneId>().is_ok() => Some(name),
        Some(name) => Some(state.find(&name).await?.0.pane.to_string()),
        None => None,
    };
    let messages = state
        .inbox
        .call(move |store| store.list(pane.as_deref(), wanted))
        .await
        .map_err(inbox_error)?;
    Ok(axum::Json(messages).into_response())
}

async fn one_message(
    State(state): State<ApiState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let message = state
        .inbox
        .call(move |store| store.get(id))
        .await
        .map_err(inbox_error)?;
    Ok(axum::Json(message).into_response())
}

async fn cancel_message(
    State(state): State<ApiState>,
    UrlPath(id): UrlPath<i64>,
) -> Result<Response, ApiError> {
    let message = state
        .inbox
        .call(move |store| store.cancel(id))
        .await
        .map_err(inbox_error)?;
    Ok(axum::Json(message).into_response())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[tokio::test]
    async fn axum_rejections_are_json_errors_too() {
        let rejected = (StatusCode::UNPROCESSABLE_ENTITY, "missing field `text`").into_response();
        let answer = json_rejections(rejected).await;
        assert_eq!(answer.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let body = axum::body::to_bytes(answer.into_body(), 1024)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"], "missing field `text`");
        // The routes' own text answers pass untouched.
        let screen = (StatusCode::OK, "a screen").into_response();
        let body = axum::body::to_bytes(json_rejections(screen).await.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(&body[..], b"a screen");
    }

    #[test]
    fn the_openapi_document_lists_exactly_the_routes() {
        let document: serde_json::Value =
            serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
        assert!(
            document["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3."))
        );
        let mut documented = BTreeSet::new();
        let mut operation_ids = BTreeSet::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("path item") {
                if method == "parameters" {
                    continue;
                }
                documented.insert((method.clone(), path.clone()));
                let id = operation["operationId"].as_str().unwrap_or_default();
                assert!(
                    operation_ids.insert(id.to_string()) && !id.is_empty(),
                    "{method} {path}: operationId {id:?} missing or not unique"
                );
                assert!(
                    operation["responses"]
                        .as_object()
                        .is_some_and(|r| !r.is_empty()),
                    "{method} {path}: no responses"
                );
            }
        }
        let served: BTreeSet<(String, String)> = routes()
            .iter()
            .map(|r| (r.method.to_string(), r.path.to_string()))
            .collect();
        assert_eq!(routes().len(), served.len(), "a route is listed twice");
        let missing: Vec<_> = served.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&served).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "not documented: {missing:?}; documented but not served: {extra:?}"
        );
    }
}
