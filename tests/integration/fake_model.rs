//! A fake model server on 127.0.0.1 that real agent CLIs (Claude Code, Codex, Gemini CLI) talk to
//! instead of their vendors' APIs, so tests and recordings drive them through real turns offline.
//!
//! It is stateless and scripted by the prompt: the last user message of a request says what to
//! do, so side requests (titles, token counts, classifiers) get harmless answers and the test
//! decides what the conversation turn does:
//!
//! | prompt contains | answer |
//! |---|---|
//! | `reply:TEXT` | the text `TEXT` |
//! | `slow:MS reply:TEXT` | waits `MS` ms before the first token, then `TEXT` |
//! | `lines:N reply:TEXT` | `N` numbered lines (an answer longer than the screen), then `TEXT` |
//! | `tool:COMMAND` | asks to run the shell command `COMMAND` (a permission dialog in the CLI) |
//! | `fail:STATUS` | HTTP `STATUS` (500 and 429 make the CLIs retry) |
//! | `ask:QUESTION\|OPTION1\|OPTION2` | calls the CLI's ask-the-user tool (`AskUserQuestion`, `ask_user`, `request_user_input`, `question`) |
//! | `write:PATH\|TEXT` | calls the CLI's file-writing tool (`Write`, `write_file`, `apply_patch`, `write`; for Aider an edit block) |
//! | `plan:TEXT` | presents TEXT as a plan for approval (Claude Code in plan mode: `ExitPlanMode`) |
//! | `fetch:URL` | calls the CLI's web-fetch tool (`WebFetch`, `web_fetch`, `webfetch`) |
//! | `compactslow:MS` | answered at once; a later request whose own prompt has no directive (a `/compact` summary) waits `MS` ms |
//!
//! After a tool ran, the request carries its result and the answer is `tool finished`.
//!
//! Protocols: Anthropic Messages (`POST /v1/messages`), OpenAI Responses (`POST /v1/responses`),
//! OpenAI Chat Completions (`POST /v1/chat/completions`; with no tools offered, the command comes
//! in a fenced `bash` block, which Aider offers to run), Gemini (`POST /v1beta/models/{model}:
//! streamGenerateContent`, `:generateContent`, `:countTokens`, `GET /v1beta/models`).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::{
    Router,
    body::Body,
    extract::{Path, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde_json::{Value, json};

#[path = "fake_model_directives.rs"]
mod directives;
pub use directives::{Behaviour, behaviour};
use directives::{offered_tools, resolve};

/// One request the server received, for debugging a test.
#[derive(Debug, Clone)]
pub struct Logged {
    /// The path.
    pub path: String,
    /// The last user text it carried.
    pub prompt: String,
    /// The conversation it carried (the JSON of its Anthropic messages, Responses input items
    /// or Gemini contents; else empty): a resumed CLI's next request carries its earlier turns.
    #[allow(dead_code)] // read by the restore tests, not by the examples
    pub conversation: String,
    /// When it arrived, in milliseconds since the Unix epoch.
    #[allow(dead_code)] // read by the signal tests, not by the examples
    pub at_ms: u64,
}

/// A number unique to each answer (CLIs identify messages, tool calls and responses by id, and
/// Claude Code merges turns that share one).
fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Default)]
struct Shared {
    log: Arc<Mutex<Vec<Logged>>>,
}

/// A running fake model server, stopped on drop.
pub struct FakeModel {
    address: SocketAddr,
    shared: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeModel {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start() -> FakeModel {
        let shared = Shared::default();
        let (address_sender, address_receiver) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let _ = address_sender.send(listener.local_addr().expect("address"));
                let _ = axum::serve(listener, router(state))
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let address = address_receiver.recv().expect("fake model server address");
        FakeModel {
            address,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Requests received so far.
    pub fn log(&self) -> Vec<Logged> {
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn router(state: Shared) -> Router {
    Router::new()
        .route("/v1/messages", post(anthropic))
        .route("/v1/messages/count_tokens", post(anthropic_count))
        .route("/v1/responses", post(openai))
        .route("/v1/chat/completions", post(openai_chat))
        .route("/chat/completions", post(openai_chat))
        .route("/v1/models", get(openai_models))
        .route("/v1beta/models", get(gemini_models))
        .route("/v1beta/models/{call}", post(gemini))
        .fallback(fallback)
        .with_state(state)
}

async fn fallback(uri: axum::http::Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("fake model server: no route for {uri}"),
    )
        .into_response()
}

/// Streams Server-Sent Events. With `delay_ms`, waits that long after the first event, which
/// keeps the CLI in its working state before any token arrives.
fn sse(events: Vec<(Option<&'static str>, Value)>, delay_ms: u64) -> Response {
    let chunks = events
        .into_iter()
        .map(|(name, data)| {
            let mut chunk = String::new();
            if let Some(name) = name {
                chunk.push_str(&format!("event: {name}\n"));
            }
            chunk.push_str(&format!("data: {data}\n\n"));
            chunk
        })
        .collect();
    sse_chunks(chunks, delay_ms)
}

/// Streams ready-made Server-Sent Event chunks, waiting `delay_ms` after the first one.
fn sse_chunks(chunks: Vec<String>, delay_ms: u64) -> Response {
    let stream = futures::stream::unfold(
        (chunks.into_iter(), 0usize),
        move |(mut chunks, sent)| async move {
            let chunk = chunks.next()?;
            if sent == 1 && delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            }
            Some((Ok::<_, std::convert::Infallible>(chunk), (chunks, sent + 1)))
        },
    );
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

fn fail(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    // The error types the Anthropic API names (other CLIs read the status and the message).
    let kind = match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    (
        status,
        axum::Json(json!({"type": "error", "error": {"type": kind, "message": "fake failure"}})),
    )
        .into_response()
}

/// The text of the last user turn of an Anthropic or OpenAI style message list, and whether it
/// is a tool result.
fn last_user(messages: &[Value]) -> (String, bool) {
    let Some(message) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return (String::new(), false);
    };
    match &message["content"] {
        Value::String(text) => (text.clone(), false),
        Value::Array(parts) => {
            let tool = parts.iter().any(|p| p["type"] == "tool_result");
            // Reminders the CLI adds may quote earlier prompts; only what the user typed counts.
            let text = parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .filter(|t| !t.trim_start().starts_with("<system-reminder>"))
                .collect::<Vec<_>>()
                .join("\n");
            (text, tool)
        }
        _ => (String::new(), false),
    }
}

/// With `FAKE_MODEL_DUMP=FILE`, appends each request's body to FILE, one JSON document a line
/// (to see what a CLI sends: its tools and their schemas).
fn dump(request: &Value) {
    if let Some(dump) = std::env::var_os("FAKE_MODEL_DUMP") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dump)
        {
            let _ = writeln!(file, "{request}");
        }
    }
}

fn record(state: &Shared, path: &str, prompt: &str, conversation: &str) {
    if let Ok(mut log) = state.log.lock() {
        log.push(Logged {
            path: path.into(),
            prompt: prompt.chars().take(300).collect(),
            conversation: conversation.into(),
            at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        });
    }
}

async fn anthropic_count() -> axum::Json<Value> {
    axum::Json(json!({"input_tokens": 12}))
}

async fn anthropic(
    State(state): State<Shared>,
    axum::Json(request): axum::Json<Value>,
) -> Response {
    dump(&request);
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let (prompt, after_tool) = last_user(&messages);
    record(
        &state,
        "/v1/messages",
        &prompt,
        &Value::Array(messages.clone()).to_string(),
    );
    let model = request["model"]
        .as_str()
        .unwrap_or("claude-fake")
        .to_string();
    let number = next_id();
    let (message_id, tool_id) = (format!("msg_fake_{number}"), format!("toolu_fake_{number}"));
    let (behaviour, call, extra_delay) = resolve(&request, &prompt, after_tool);
    let (content, stop_reason, delay) = match &behaviour {
        Behaviour::Fail { status } => return fail(*status),
        Behaviour::Reply { text, delay_ms } => (
            json!({"type": "text", "text": text}),
            "end_turn",
            *delay_ms + extra_delay,
        ),
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. } => {
            let (name, input) = call.clone().unwrap_or_default();
            (
                json!({"type": "tool_use", "id": tool_id, "name": name, "input": input}),
                "tool_use",
                0,
            )
        }
        Behaviour::Tool { command } => (
            json!({"type": "tool_use", "id": tool_id, "name": "Bash",
                   "input": {"command": command, "description": "Run the command the test asked for"}}),
            "tool_use",
            0,
        ),
    };
    let usage = json!({"input_tokens": 12, "output_tokens": 6, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    if request["stream"] != true {
        return axum::Json(json!({
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [content], "stop_reason": stop_reason, "stop_sequence": null, "usage": usage,
        }))
        .into_response();
    }
    let (start_block, delta) = match content["type"] == "tool_use" {
        true => (
            json!({"type": "tool_use", "id": content["id"], "name": content["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": content["input"].to_string()}),
        ),
        false => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": content["text"]}),
        ),
    };
    let mut events = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant",
               "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    )];
    events.push((
        Some("content_block_start"),
        json!({"type": "content_block_start", "index": 0, "content_block": start_block}),
    ));
    events.push((
        Some("content_block_delta"),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
    ));
    events.push((
        Some("content_block_stop"),
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        Some("message_delta"),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 6}}),
    ));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(events, delay)
}

async fn openai_models() -> axum::Json<Value> {
    axum::Json(
        json!({"object": "list", "data": [{"id": "gpt-5", "object": "model", "owned_by": "fake"}]}),
    )
}

/// The last user text of a Responses API request (`input` is a string or a list of items).
fn openai_prompt(request: &Value) -> (String, bool) {
    match &request["input"] {
        Value::String(text) => (text.clone(), false),
        Value::Array(items) => {
            // The tool's output is the newest item: the turn goes on after the tool ran.
            if items.last().is_some_and(|i| {
                i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output"
            }) {
                return (String::new(), true);
            }
            let text = items
                .iter()
                .rev()
                .find(|i| i["role"] == "user")
                .map(|i| match &i["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                })
                .unwrap_or_default();
            (text, false)
        }
        _ => (String::new(), false),
    }
}

async fn openai(State(state): State<Shared>, axum::Json(request): axum::Json<Value>) -> Response {
    dump(&request);
    let (prompt, after_tool) = openai_prompt(&request);
    record(
        &state,
        "/v1/responses",
        &prompt,
        &request["input"].to_string(),
    );
    let (behaviour, call, extra_delay) = resolve(&request, &prompt, after_tool);
    // `apply_patch` may be a freeform ("custom") tool, called with the patch as its input.
    let custom = |name: &str| {
        request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["name"] == name && t["type"] == "custom")
    };
    let number = next_id();
    let (message_id, call_id, response_id) = (
        format!("msg_fake_{number}"),
        format!("call_fake_{number}"),
        format!("resp_fake_{number}"),
    );
    let (item, delay) = match &behaviour {
        Behaviour::Fail { status } => return fail(*status),
        Behaviour::Reply { text, delay_ms } => (
            json!({"id": message_id, "type": "message", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}),
            *delay_ms + extra_delay,
        ),
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. } => {
            let (name, arguments) = call.clone().unwrap_or_default();
            let item = if custom(&name) {
                json!({"id": format!("ctc_fake_{number}"), "type": "custom_tool_call", "status": "completed",
                       "call_id": call_id, "name": name,
                       "input": arguments["input"].as_str().unwrap_or_default()})
            } else {
                json!({"id": format!("fc_fake_{number}"), "type": "function_call", "status": "completed",
                       "call_id": call_id, "name": name, "arguments": arguments.to_string()})
            };
            (item, 0)
        }
        Behaviour::Tool { command } => (
            json!({"id": format!("fc_fake_{number}"), "type": "function_call", "status": "completed", "call_id": call_id,
                   "name": "exec_command",
                   "arguments": json!({"cmd": command, "sandbox_permissions": "require_escalated",
                                       "justification": "The test asked for this command"}).to_string()}),
            0,
        ),
    };
    let response = |status: &str, output: Value| {
        json!({"id": response_id, "object": "response", "created_at": 1, "status": status, "model": "gpt-5",
               "output": output,
               "usage": {"input_tokens": 12, "output_tokens": 6, "total_tokens": 18,
                         "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})
    };
    let mut events = vec![(
        Some("response.created"),
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    )];
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    if added["type"] == "message" {
        added["content"] = json!([]);
    }
    events.push((
        Some("response.output_item.added"),
        json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
    ));
    if item["type"] == "message" {
        events.push((
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "item_id": message_id, "output_index": 0, "content_index": 0,
                   "delta": item["content"][0]["text"]}),
        ));
    }
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push((
        Some("response.completed"),
        json!({"type": "response.completed", "response": response("completed", json!([item]))}),
    ));
    sse(events, delay)
}

/// The last user text of a Chat Completions request, and whether a tool result follows it.
fn openai_chat_prompt(request: &Value) -> (String, bool) {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    if messages.last().is_some_and(|m| m["role"] == "tool") {
        return (String::new(), true);
    }
    last_user(&messages)
}

/// The name of the shell tool a Chat Completions request offers, if any.
fn openai_chat_shell_tool(request: &Value) -> Option<String> {
    let tools = request["tools"].as_array()?;
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    ["bash", "shell", "run_shell_command", "exec_command"]
        .iter()
        .find(|wanted| names.contains(wanted))
        .map(|name| name.to_string())
}

async fn openai_chat(
    State(state): State<Shared>,
    axum::Json(request): axum::Json<Value>,
) -> Response {
    dump(&request);
    let (prompt, after_tool) = openai_chat_prompt(&request);
    record(
        &state,
        "/v1/chat/completions",
        &prompt,
        &request["messages"].to_string(),
    );
    let model = request["model"].as_str().unwrap_or("gpt-fake").to_string();
    // Without tools (Aider), a file is written with an edit block in the answer.
    let wanted = behaviour(&prompt, after_tool);
    let aider_edit = match &wanted {
        Behaviour::Write { path, text } if offered_tools(&request).is_empty() => Some(format!(
            "I will create it.\n\n{path}\n```\n<<<<<<< SEARCH\n=======\n{text}\n>>>>>>> REPLACE\n```\n"
        )),
        _ => None,
    };
    let (behaviour, call, extra_delay) = resolve(&request, &prompt, after_tool);
    // A side request (a session title, a summary) must not run the test's tool a second time.
    let side =
        request["tools"].as_array().is_none_or(|t| t.is_empty()) && request["stream"] != true;
    let (message, delay) = match &behaviour {
        Behaviour::Fail { status } => return fail(*status),
        _ if aider_edit.is_some() => (json!({"role": "assistant", "content": aider_edit}), 0),
        Behaviour::Reply { text, delay_ms } => (
            json!({"role": "assistant", "content": text}),
            *delay_ms + extra_delay,
        ),
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. }
            if side =>
        {
            (json!({"role": "assistant", "content": "ok"}), 0)
        }
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. } => {
            let (name, arguments) = call.clone().unwrap_or_default();
            (
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_fake_{}", next_id()), "type": "function",
                       "function": {"name": name, "arguments": arguments.to_string()}}]}),
                0,
            )
        }
        Behaviour::Tool { .. } if side => (json!({"role": "assistant", "content": "ok"}), 0),
        Behaviour::Tool { command } => match openai_chat_shell_tool(&request) {
            Some(name) => {
                let arguments = json!({"command": command, "description": "Run the command the test asked for"});
                (
                    json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_fake_1", "type": "function",
                           "function": {"name": name, "arguments": arguments.to_string()}}]}),
                    0,
                )
            }
            // Without tools (Aider), a fenced shell block is how a model asks to run a command.
            None => (
                json!({"role": "assistant", "content": format!("Run this:\n\n```bash\n{command}\n```\n")}),
                0,
            ),
        },
    };
    let finish_reason = if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    };
    let usage = json!({"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18});
    if request["stream"] != true {
        return axum::Json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}], "usage": usage,
        }))
        .into_response();
    }
    let chunk = |delta: Value, finish: Value| {
        let mut chunk = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model,
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if !finish.is_null() {
            chunk["usage"] = usage.clone();
        }
        format!("data: {chunk}\n\n")
    };
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    match message["tool_calls"].as_array() {
        Some(calls) => {
            let mut call = calls[0].clone();
            call["index"] = json!(0);
            chunks.push(chunk(json!({"tool_calls": [call]}), Value::Null));
        }
        None => chunks.push(chunk(json!({"content": message["content"]}), Value::Null)),
    }
    chunks.push(chunk(json!({}), json!(finish_reason)));
    chunks.push("data: [DONE]\n\n".to_string());
    sse_chunks(chunks, delay)
}

async fn gemini_models() -> axum::Json<Value> {
    axum::Json(
        json!({"models": [{"name": "models/gemini-2.5-pro", "displayName": "Gemini 2.5 Pro",
                                   "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"]}]}),
    )
}

/// The last user text part of a Gemini request (after a cancelled tool call Gemini CLI sends
/// the old and the new prompt in one turn), and whether it carries a function response.
fn gemini_prompt(request: &Value) -> (String, bool) {
    let contents = request["contents"].as_array().cloned().unwrap_or_default();
    let Some(last) = contents.iter().rev().find(|c| c["role"] == "user") else {
        return (String::new(), false);
    };
    let parts = last["parts"].as_array().cloned().unwrap_or_default();
    let after_tool = parts.iter().any(|p| p.get("functionResponse").is_some());
    let text = parts
        .iter()
        .filter_map(|p| p["text"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_string();
    (text, after_tool)
}

async fn gemini(
    State(state): State<Shared>,
    Path(call): Path<String>,
    axum::Json(request): axum::Json<Value>,
) -> Response {
    dump(&request);
    let (prompt, after_tool) = gemini_prompt(&request);
    let path = format!("/v1beta/models/{call}");
    record(&state, &path, &prompt, &request["contents"].to_string());
    if call.ends_with(":countTokens") {
        return axum::Json(json!({"totalTokens": 12})).into_response();
    }
    let usage = json!({"promptTokenCount": 12, "candidatesTokenCount": 6, "totalTokenCount": 18});
    if call.ends_with(":generateContent") {
        // Side calls (the routing classifier wants JSON); answer plainly and validly.
        let text = if request.to_string().contains("\"reasoning\"")
            || request["generationConfig"]["responseMimeType"] == "application/json"
        {
            json!({"reasoning": "simple request", "model_choice": "flash"}).to_string()
        } else {
            "ok".to_string()
        };
        return axum::Json(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                                  "finishReason": "STOP", "index": 0}], "usageMetadata": usage}))
        .into_response();
    }
    let (behaviour, call, extra_delay) = resolve(&request, &prompt, after_tool);
    let (part, delay) = match &behaviour {
        Behaviour::Fail { status } => return fail(*status),
        Behaviour::Reply { text, delay_ms } => (json!({"text": text}), *delay_ms + extra_delay),
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. } => {
            let (name, args) = call.clone().unwrap_or_default();
            (json!({"functionCall": {"name": name, "args": args}}), 0)
        }
        Behaviour::Tool { command } => (
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": command, "description": "The test asked for this command"}}}),
            0,
        ),
    };
    let opening = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0}]});
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                       "usageMetadata": usage});
    sse(vec![(None, opening), (None, chunk)], delay)
}

#[test]
fn a_prompt_sent_after_an_interrupt_is_read_from_after_the_interrupt() {
    let prompt = "slow:60000 reply:Never.\n\n[Request interrupted by user]\n\nreply:Queued answer.";
    assert_eq!(
        behaviour(prompt, false),
        Behaviour::Reply {
            text: "Queued answer.".into(),
            delay_ms: 0
        }
    );
}

#[test]
fn a_lines_directive_answers_with_that_many_numbered_lines_before_the_reply() {
    let Behaviour::Reply { text, delay_ms } = behaviour("lines:3 reply:The end.", false) else {
        panic!("a lines: prompt is a reply");
    };
    assert_eq!(delay_ms, 0);
    assert_eq!(
        text,
        "Line 1 of a long answer.\n\nLine 2 of a long answer.\n\nLine 3 of a long answer.\n\nThe end."
    );
}
