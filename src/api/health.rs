//! `GET /v1/health`: what the daemon, the tmux server and the counters say, in one answer.

use std::collections::BTreeMap;

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::state::ApiState;
use crate::session::ConnectionStats;
use crate::tmux::ConnectionHandle;

/// The health report: the daemon, the tmux server and the counters, in one answer. Every field
/// is always written (the defaults only let a client read an older daemon's answer).
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`; `starting` until the panes of every session found at start are known (requests
    /// that name a pane wait for that, a few seconds at most); `degraded` while the tmux server
    /// is unreachable, the user's provider rules have errors or the inbox database is damaged
    /// (`reasons` says which).
    #[schema(schema_with = status_schema)]
    pub status: String,
    /// Why the status is not `ok`, one sentence each (empty when `ok`).
    #[serde(default)]
    #[schema(required = true)]
    pub reasons: Vec<String>,
    /// The daemon's process id.
    #[serde(default)]
    #[schema(required = true)]
    pub pid: u32,
    /// The daemon's version.
    pub version: String,
    /// The daemon's log file (null: it logs to its stderr).
    #[serde(default)]
    #[schema(required = true)]
    pub log_file: Option<String>,
    /// The command line the daemon was started with.
    #[serde(default)]
    #[schema(required = true)]
    pub command_line: Vec<String>,
    /// The tmux server's socket path (not the API socket); `ssh:DEST:SOCKET` for a server on
    /// another host.
    pub tmux_socket: String,
    /// The host the server runs on: `local`, or `ssh:DEST`.
    #[serde(default)]
    #[schema(required = true)]
    pub host: String,
    /// The server's short name in views over many servers and in `SERVER/PANE` names
    /// (`local`, `work`, `devbox`, `devbox:work`).
    #[serde(default)]
    #[schema(required = true)]
    pub server: String,
    /// The ssh destination of a server on another host.
    #[serde(default)]
    #[schema(required = true)]
    pub ssh_destination: Option<String>,
    /// The server's socket as the daemon was given it: a path, or (on another host) a `-L`
    /// name.
    #[serde(default)]
    #[schema(required = true)]
    pub socket: String,
    /// Why the server's host cannot be used now (over ssh: unreachable, key refused, no tmux,
    /// no safe way to attach), as last seen.
    #[serde(default)]
    #[schema(required = true)]
    pub host_problem: Option<String>,
    /// The API's Unix socket.
    #[serde(default)]
    #[schema(required = true)]
    pub api_socket: String,
    /// tmux's version (empty while no session is connected).
    pub tmux_version: String,
    /// Whether the tmux server answers.
    pub server_alive: bool,
    /// Seconds since the daemon started.
    pub uptime_seconds: u64,
    /// Sessions with a control connection (started, possibly still attaching).
    pub sessions: usize,
    /// Sessions whose control client has attached and answers.
    #[serde(default)]
    #[schema(required = true)]
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
    /// Checks answered from an earlier point of a pane's output than the mirror had reached
    /// (tmux may write output it read after a command before the command's reply); the
    /// mirror had shown that screen, so they are no divergence.
    #[serde(default)]
    #[schema(required = true)]
    pub early_answers: u64,
    /// Panes whose output comes through the pipe transport.
    #[serde(default)]
    #[schema(required = true)]
    pub pipe_panes: usize,
    /// Pane output that came through pipes since each session was attached, also of pipes since
    /// stopped (in cross-check mode, the bytes compared).
    #[serde(default)]
    #[schema(required = true)]
    pub pipe_bytes: u64,
    /// Cross-check mode: bytes found equal in both transports.
    #[serde(default)]
    #[schema(required = true)]
    pub cross_check_matched: u64,
    /// Cross-check mode: differences reported (each also a `cross_check` event).
    #[serde(default)]
    #[schema(required = true)]
    pub cross_check_findings: u64,
    /// Id of the last event published (0: none yet).
    pub last_event: u64,
    /// Processes (tmux clients and one-shot commands) the daemon has started since it began.
    pub processes_started: u64,
    /// Notifications given up on (a webhook that failed every try or hung, a full queue);
    /// each is also in the log.
    #[serde(default)]
    #[schema(required = true)]
    pub notifications_dropped: u64,
    /// Agent panes (a provider other than `shell`) counted by status word.
    #[schema(value_type = BTreeMap<crate::status::Status, usize>)]
    pub statuses: BTreeMap<String, usize>,
    /// Errors of the user's provider rule files (the rules in force are the last good ones).
    pub rules_errors: Vec<String>,
    /// The inbox database: `ok`, or `damaged: WHAT SQLITE SAID` once a query found it damaged
    /// (deliveries then stop; `reasons` says what to do).
    #[serde(default)]
    #[schema(required = true)]
    pub inbox: String,
}

/// The schema of [`Health::status`]: one of three words (a string on the wire, so that a client
/// reads a word a newer daemon adds).
fn status_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["ok", "starting", "degraded"]))
        .description(Some(
            "`ok`; `starting` until the panes of every session found at start are known \
             (requests that name a pane wait for that, a few seconds at most); `degraded` while \
             the tmux server is unreachable, the user's provider rules have errors or the inbox \
             database is damaged (`reasons` says which).",
        ))
        .build()
}

/// Daemon, tmux server and counter summary
#[utoipa::path(
    get,
    path = "/v1/health",
    operation_id = "get_health",
    tag = "daemon",
    responses((status = 200, description = "The health report.", body = Health))
)]
pub(crate) async fn health(State(state): State<ApiState>) -> axum::Json<Health> {
    let handles = state.ctx.handles();
    let stats = futures::future::join_all(handles.values().map(ConnectionHandle::stats)).await;
    let status = state.ctx.status.borrow().clone();
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for pane in state.ctx.all_panes().await {
        // Agents only: a plain shell is not one (as in `@panectl_summary`).
        if pane
            .provider
            .as_deref()
            .is_some_and(|p| p != crate::status::providers::SHELL)
        {
            *statuses.entry(pane.status.to_string()).or_default() += 1;
        }
    }
    let rules_errors = state.rules_errors.borrow().clone();
    let mut all = ConnectionStats::default();
    let mut tmux_version = String::new();
    let mut attached = 0;
    for stat in stats.into_iter().flatten() {
        if stat.attached {
            attached += 1;
        }
        all.add_counts(&stat);
        if tmux_version.is_empty() {
            tmux_version = stat.tmux_version;
        }
    }
    let mut reasons = Vec::new();
    let host_problem = state.ctx.address.host().problem();
    if !status.server_alive {
        reasons.push(format!(
            "the tmux server at {} does not answer; the daemon waits for it",
            state.ctx.address
        ));
    }
    if let Some(problem) = &host_problem {
        reasons.push(format!(
            "host {}: {problem}",
            state.ctx.address.host().name()
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
    let inbox = match state.ctx.inbox.damage() {
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
        tmux_socket: state.ctx.address.to_string(),
        host: state.ctx.address.host().name().to_string(),
        server: state.ctx.address.label(),
        ssh_destination: state.ctx.address.ssh_destination().map(str::to_string),
        socket: state.ctx.address.socket().display().to_string(),
        host_problem,
        api_socket: state.ctx.api_socket.clone(),
        tmux_version,
        server_alive: status.server_alive,
        uptime_seconds: state.started.elapsed().as_secs(),
        sessions: status.sessions,
        panes: all.panes,
        reconnects: status.reconnects,
        leftover_clients_ended: status.leftover_clients_ended,
        parse_errors: all.parse_errors,
        timeouts: all.timeouts,
        commands: all.commands,
        output_bytes: all.totals.bytes,
        resyncs: all.totals.resyncs,
        pauses: all.totals.pauses,
        divergences: all.totals.divergences,
        early_answers: all.totals.early_answers,
        pipe_panes: all.pipe_panes,
        pipe_bytes: all.pipe_bytes,
        cross_check_matched: all.cross_check_matched,
        cross_check_findings: all.cross_check_findings,
        last_event: state.ctx.bus.last_id(),
        processes_started: crate::host::processes_started(),
        notifications_dropped: crate::events::notifications_dropped(),
        statuses,
        rules_errors,
    })
}
