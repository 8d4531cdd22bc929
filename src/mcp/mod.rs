//! `panectl mcp`: a Model Context Protocol server over stdio, so that agents can see and drive
//! each other.
//!
//! The server does not touch tmux. Every tool is one request to the running daemon's local API
//! (through [`ApiClient`]), so it sees the same panes, statuses and inbox as the CLI. The caller's
//! own pane (`$TMUX_PANE`, when the agent runs inside tmux) is the sender of its messages and the
//! default pane that assignments answer to.
//!
//! | tool | API request |
//! |---|---|
//! | `list_agents` | `GET /v1/panes`, the panes with a recognised agent |
//! | `agent_status` | `GET /v1/panes/{pane}` |
//! | `send_message` | `POST /v1/panes/{pane}/messages` |
//! | `read_screen` | `GET /v1/panes/{pane}/screen` |
//! | `last_response` | `GET /v1/panes/{pane}/last-response` |
//! | `launch_agent` | `POST /v1/agents` |
//! | `handoff` | `POST /v1/handoff` |
//! | `assign` | `POST /v1/assign` |
//! | `list_decisions` | `GET /v1/decisions` |
//! | `answer_decision` | `POST /v1/panes/{pane}/decision` |
//! | `close_agent` | `POST /v1/panes/{pane}/close` |
//! | `list_worktrees` | `GET /v1/worktrees` |
//! | `restore_agents` | `POST /v1/restore` |
//!
//! A failed request (the daemon's error answer, or no daemon at all) is a tool error carrying
//! the daemon's message, never a protocol error. Stdout carries the protocol and nothing else.

pub mod lines;
mod params;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::Serialize;

use crate::api::client::{ApiClient, ClientError};
use crate::api::routes::Route;
use crate::api::wire::{
    AnswerBody, AnswerOutcome, Assigned, CloseBody, Closed, HandoffAnswer, Launched, Message,
    PaneDecision, RestoreBody, Restored, WorktreeListing,
};
pub use params::{
    AnswerDecisionParams, AssignParams, CloseAgentParams, HandoffParams, LaunchParams, PaneParams,
    RestoreParams, SendMessageParams, assign_body, handoff_body, handoff_text, launch_body,
    list_agents_text, send_body,
};

/// Why the MCP server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The MCP handshake with the client failed.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The task serving the connection failed.
    #[error("the MCP server failed: {0}")]
    Serve(String),
}

/// What a tool answers: text, or the text of a tool error.
type ToolResult = Result<String, String>;

/// The MCP server: tools over one daemon's API.
#[derive(Debug, Clone)]
pub struct PanectlMcp {
    client: ApiClient,
    caller: Option<String>,
    tool_router: ToolRouter<PanectlMcp>,
}

/// A daemon error as a tool error, saying which call failed.
fn failed(what: &str, error: ClientError) -> String {
    match error {
        // No `{"error": ...}` body: the daemon has no such route.
        ClientError::Status { status, message } if message == format!("{status}: ") => format!(
            "{what}: the daemon does not offer this request ({status}); it may be older than \
             this panectl, so restart it"
        ),
        ClientError::Status { message, .. } if message.starts_with("no pane named") => {
            format!("{what}: {message} (list_agents shows the agents and their panes)")
        }
        other => format!("{what}: {other}"),
    }
}

/// An answer of the daemon as pretty JSON, its keys sorted as they have always been (it goes
/// through `serde_json::Value`, whose objects are sorted maps).
fn pretty(value: &impl Serialize) -> String {
    let value = serde_json::to_value(value).unwrap_or_default();
    serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())
}

fn body_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tool_router]
impl PanectlMcp {
    /// A server that talks to the daemon through `client`; `caller` is the pane the server's
    /// client runs in (`$TMUX_PANE`), if any.
    pub fn new(client: ApiClient, caller: Option<String>) -> PanectlMcp {
        PanectlMcp {
            client,
            caller: caller.filter(|pane| !pane.is_empty()),
            tool_router: Self::tool_router(),
        }
    }

    /// The session of the caller's pane, if the daemon knows the pane.
    async fn caller_session(&self) -> Option<String> {
        let pane = self.caller.as_deref()?;
        let found = self.client.pane(pane).await.ok()?;
        Some(found.session_id.to_string())
    }

    /// Who messages come from: the caller's pane, else `mcp`.
    fn sender(&self) -> String {
        self.caller.clone().unwrap_or_else(|| "mcp".to_string())
    }

    /// List the CLI coding agents (Claude Code, Codex, Gemini CLI, ...) running in tmux panes,
    /// as a JSON list: pane id, provider, status (idle, processing, completed,
    /// waiting_user_answer, error, exited, ...), session, window, command and title. Plain
    /// shells are left out. Use the pane id with the other tools.
    #[tool]
    async fn list_agents(&self) -> ToolResult {
        let panes = self
            .client
            .panes()
            .await
            .map_err(|e| failed("list_agents", e))?;
        Ok(list_agents_text(&panes))
    }

    /// Show one pane's full state as JSON: its agent (provider), status and the rule behind it,
    /// how long the status has lasted, size, command and whether its program exited.
    #[tool]
    async fn agent_status(&self, Parameters(params): Parameters<PaneParams>) -> ToolResult {
        let pane = self
            .client
            .pane(&params.pane)
            .await
            .map_err(|e| failed("agent_status", e))?;
        Ok(pretty(&pane))
    }

    /// List the dialogs agents wait on (permission prompts, questions, menus) as JSON: for
    /// each pane, the question, the options (number, label, which is pointed at) and the
    /// dialog's fingerprint. Answer one with answer_decision.
    #[tool]
    async fn list_decisions(&self) -> ToolResult {
        let found: Vec<PaneDecision> = self
            .client
            .get_json(&Route::Decisions {}.path())
            .await
            .map_err(|e| failed("list_decisions", e))?;
        Ok(pretty(&found))
    }

    /// Answer the dialog an agent waits on by picking one of its options (option number or
    /// label, from list_decisions), only while that dialog (its fingerprint) is on the screen.
    /// Returns the outcome as JSON: answered, unconfirmed, gone (no dialog any more: nothing
    /// pressed) or changed (another dialog: nothing pressed, the new one included).
    #[tool]
    async fn answer_decision(
        &self,
        Parameters(params): Parameters<AnswerDecisionParams>,
    ) -> ToolResult {
        let body = AnswerBody {
            option: params.option,
            label: params.label.clone(),
            yes: false,
            no: false,
            decision: Some(params.decision.clone()),
        };
        let outcome: AnswerOutcome = self
            .client
            .post_json(&Route::PaneDecision { pane: &params.pane }.path(), &body)
            .await
            .map_err(|e| failed("answer_decision", e))?;
        Ok(pretty(&outcome))
    }

    /// Queue a message for the agent in a pane. It is typed into the agent when the agent is
    /// ready (idle or completed), in order and exactly once, even if that is later; this call
    /// returns at once with the message id and state (pending, delivered, ...). The sender is
    /// your own pane. A pane that runs no recognised agent (a plain shell, which would run the
    /// text as commands) is refused, unless the daemon was started with --mcp-allow-shell.
    #[tool]
    async fn send_message(&self, Parameters(params): Parameters<SendMessageParams>) -> ToolResult {
        let body = send_body(&params, &self.sender());
        let message: Message = self
            .client
            .post_json(&Route::PaneMessages { pane: &params.pane }.path(), &body)
            .await
            .map_err(|e| failed("send_message", e))?;
        Ok(format!(
            "message {} to {}: {}",
            message.id, message.pane, message.state
        ))
    }

    /// Read the text currently on a pane's screen (what a person looking at the terminal
    /// sees), to check what an agent is doing or asking.
    #[tool]
    async fn read_screen(&self, Parameters(params): Parameters<PaneParams>) -> ToolResult {
        let answer = self
            .client
            .get(&Route::PaneScreen { pane: &params.pane }.path())
            .await
            .map_err(|e| failed("read_screen", e))?;
        Ok(body_text(&answer.body))
    }

    /// Read the last answer of the agent in a pane, cut out of its scrollback without the
    /// terminal UI around it.
    #[tool]
    async fn last_response(&self, Parameters(params): Parameters<PaneParams>) -> ToolResult {
        let answer = self
            .client
            .get(&Route::PaneLastResponse { pane: &params.pane }.path())
            .await
            .map_err(|e| failed("last_response", e))?;
        Ok(body_text(&answer.body))
    }

    /// Start a new agent CLI (a provider such as claude_code or codex) in a new tmux window
    /// (after the last window of your own session, unless a session is given), wait until it
    /// is ready for input, and return its pane id and status as JSON. A command that fails at
    /// once (not installed) is an error showing its last lines. Send it work with
    /// send_message, handoff or assign.
    #[tool]
    async fn launch_agent(&self, Parameters(params): Parameters<LaunchParams>) -> ToolResult {
        let mut body = launch_body(&params);
        if let Some(name) = params.profile.as_deref().filter(|p| !p.is_empty()) {
            let profile = crate::orchestration::profile::find(None, name)
                .map_err(|e| format!("launch_agent: {e}"))?;
            let from_env = crate::orchestration::profile::caller_env(&profile)
                .map_err(|e| format!("launch_agent: {e}"))?;
            body = crate::orchestration::launch_plan::merge(&profile, body, from_env);
        }
        if body.provider.is_empty() {
            return Err("launch_agent: give a provider or a profile".into());
        }
        if body.session.is_none()
            && body.split.is_none()
            && let Some(session) = self.caller_session().await
        {
            body.session = Some(session);
        }
        let launched: Launched = self
            .client
            .post_json(&Route::Agents {}.path(), &body)
            .await
            .map_err(|e| failed("launch_agent", e))?;
        Ok(pretty(&launched))
    }

    /// Close an agent you no longer need: its messages still queued are cancelled, it is asked
    /// to exit its own way (/exit or /quit for the agent CLIs, exit for a shell; Ctrl-C then
    /// Ctrl-D for anything else), and its pane is closed, killed if it has not exited within
    /// timeout_seconds (default 10); with remove_worktree, the git worktree it was launched in
    /// is removed after (its branch stays). Returns JSON: the pane, how (exited or killed), what
    /// was sent, the cancelled message ids and what became of the worktree.
    #[tool]
    async fn close_agent(&self, Parameters(params): Parameters<CloseAgentParams>) -> ToolResult {
        let body = CloseBody {
            timeout_seconds: params.timeout_seconds,
            remove_worktree: params.remove_worktree,
            force: params.force,
        };
        let closed: Closed = self
            .client
            .post_json(&Route::PaneClose { pane: &params.pane }.path(), &body)
            .await
            .map_err(|e| failed("close_agent", e))?;
        Ok(pretty(&closed))
    }

    /// The git worktrees agents were launched in (launch_agent with a profile that asks for
    /// one): each with its branch, its agent and that agent's status, and whether it is
    /// clean, dirty or missing, and how many commits it is ahead of and behind its base.
    #[tool]
    async fn list_worktrees(&self) -> ToolResult {
        let listed: Vec<WorktreeListing> = self
            .client
            .get_json(&Route::Worktrees {}.path())
            .await
            .map_err(|e| failed("list_worktrees", e))?;
        Ok(pretty(&listed))
    }

    /// Start again the agents panectl launched that no longer run (after tmux or the machine
    /// restarted), each in its session and under its name, resuming its conversation where
    /// the CLI can (Claude Code); agents that run are left alone. With dry_run, only say what
    /// would be done. Returns JSON: each agent and its outcome.
    #[tool]
    async fn restore_agents(&self, Parameters(params): Parameters<RestoreParams>) -> ToolResult {
        let path = Route::Restore {}.path();
        // First what would be done: the names of the variables to take from this environment,
        // as `panectl restore` takes them from its own.
        let dry_run = RestoreBody {
            dry_run: true,
            ..RestoreBody::default()
        };
        let planned: Vec<Restored> = self
            .client
            .post_json(&path, &dry_run)
            .await
            .map_err(|e| failed("restore_agents", e))?;
        if params.dry_run {
            return Ok(pretty(&planned));
        }
        let mut values = std::collections::BTreeMap::new();
        for name in planned.iter().flat_map(|r| &r.from_env) {
            if let Ok(value) = std::env::var(name) {
                values.insert(name.clone(), value);
            }
        }
        let body = RestoreBody {
            caller_env: crate::orchestration::launch_plan::CallerEnv(values),
            ..RestoreBody::default()
        };
        let done: Vec<Restored> = self
            .client
            .post_json(&path, &body)
            .await
            .map_err(|e| failed("restore_agents", e))?;
        Ok(pretty(&done))
    }

    /// Hand a task to another agent and wait for its answer: the message goes to an existing
    /// agent (pane) or to a new one started for it (provider), and this call returns the
    /// agent's answer once it has finished its turn. Blocks until then (or timeout_seconds).
    /// A pane that runs no recognised agent (a plain shell) is refused, unless the daemon was
    /// started with --mcp-allow-shell.
    #[tool]
    async fn handoff(&self, Parameters(params): Parameters<HandoffParams>) -> ToolResult {
        let body = handoff_body(&params, &self.sender())?;
        let answer: HandoffAnswer = self
            .client
            .post_json(&Route::Handoff {}.path(), &body)
            .await
            .map_err(|e| failed("handoff", e))?;
        Ok(handoff_text(&answer))
    }

    /// Give a task to another agent without waiting: the message goes to an existing agent
    /// (pane) or to a new one started for it (provider), and this call returns at once with the
    /// assignment id. When the worker finishes, its answer arrives later as a message typed into
    /// your own pane (reply_to, by default the pane this server runs in), so you can go on
    /// working meanwhile. The worker and reply_to must run recognised agents (a plain shell
    /// would run the text as commands), unless the daemon was started with --mcp-allow-shell.
    #[tool]
    async fn assign(&self, Parameters(params): Parameters<AssignParams>) -> ToolResult {
        let body = assign_body(&params, &self.sender(), self.caller.as_deref())?;
        let answer: Assigned = self
            .client
            .post_json(&Route::Assign {}.path(), &body)
            .await
            .map_err(|e| failed("assign", e))?;
        Ok(format!(
            "assignment {} sent to {} as message {}; the answer will arrive as a message in {}\n{}",
            answer.assignment,
            answer.pane,
            answer.message_id,
            answer.reply_to,
            serde_json::to_value(&answer).unwrap_or_default()
        ))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "panectl",
    instructions = "panectl: see and drive the CLI coding agents running in tmux panes. \
        list_agents shows them; agent_status, read_screen and last_response inspect one; \
        send_message queues a message; list_decisions shows the dialogs agents wait on and \
        answer_decision picks an option of one; launch_agent starts a new agent and close_agent closes \
        one; handoff waits for another agent's answer; assign returns at once and the answer arrives later as a \
        message in your own pane. Panes are named %N (or session:window.pane, or a unique \
        window name)."
)]
impl ServerHandler for PanectlMcp {}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub async fn serve_stdio(server: PanectlMcp) -> Result<(), McpError> {
    let (input, output) = rmcp::transport::stdio_pipes();
    serve_lines(server, input, output).await
}

/// Serves MCP on `input` and `output`, one JSON-RPC message per line, until `input` ends. A
/// line that is not JSON, or is longer than [`lines::MAX_LINE`], is answered with a JSON-RPC
/// parse error (rmcp alone would drop it silently).
pub async fn serve_lines<R, W>(server: PanectlMcp, input: R, output: W) -> Result<(), McpError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (to_server, server_input) = tokio::io::duplex(64 * 1024);
    let (server_output, from_server) = tokio::io::duplex(64 * 1024);
    let (answers, answered) = tokio::sync::mpsc::channel(16);
    let reader = tokio::spawn(lines::filter_input(input, to_server, answers));
    let writer = tokio::spawn(lines::merge_output(from_server, answered, output));
    let transport = rmcp::transport::async_rw::AsyncRwTransport::<rmcp::RoleServer, _, _>::new(
        server_input,
        server_output,
    )
    // The filter has bounded the lines already.
    .with_max_line_length(lines::MAX_LINE + 2);
    let served = async {
        let running = server
            .serve(transport)
            .await
            .map_err(|e| McpError::Handshake(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        tracing::debug!(?reason, "the MCP connection ended");
        Ok(())
    }
    .await;
    reader.abort();
    // Everything answered is written before the end.
    let _ = writer.await;
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_errors_become_tool_errors_that_say_what_to_do() {
        let not_found = ClientError::Status {
            status: hyper::StatusCode::NOT_FOUND,
            message: "no pane named \"%9\"".into(),
        };
        assert_eq!(
            failed("read_screen", not_found),
            "read_screen: no pane named \"%9\" (list_agents shows the agents and their panes)"
        );
        let no_route = ClientError::Status {
            status: hyper::StatusCode::NOT_FOUND,
            message: "404 Not Found: ".into(),
        };
        assert!(failed("handoff", no_route).contains("does not offer this request"));
        let no_daemon = ClientError::NoDaemon {
            server: "/tmp/tmux-0/default".into(),
            start: "start one with: panectl daemon --detach".into(),
        };
        assert!(
            failed("list_agents", no_daemon).ends_with("start one with: panectl daemon --detach")
        );
    }
}
