//! The fake model's directives (`reply:`, `tool:`, `ask:`, `write:`, `plan:`, ...; see
//! `fake_model.rs`): what a prompt asks of it, and the tool call that does it with the tools the
//! CLI offers.

use serde_json::{Value, json};

use super::last_user;

/// What the prompt asks of the fake model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// Answer with text, after a delay.
    Reply { text: String, delay_ms: u64 },
    /// Ask to run a shell command.
    Tool { command: String },
    /// Fail with an HTTP status.
    Fail { status: u16 },
    /// Ask the user a question with choices.
    Ask {
        question: String,
        options: Vec<String>,
    },
    /// Write a file.
    Write { path: String, text: String },
    /// Fetch a web page.
    Fetch { url: String },
    /// Present a plan for approval (Claude Code in plan mode: `ExitPlanMode`).
    Plan { plan: String },
}

/// What Claude Code writes between an interrupted prompt and the next one it sends with it.
const INTERRUPTED: &str = "[Request interrupted by user]";

/// Reads the behaviour from a prompt. A request that carries a tool result and no new prompt
/// continues the turn after the tool ran.
pub fn behaviour(prompt: &str, after_tool: bool) -> Behaviour {
    // Claude Code sends a prompt queued behind an interrupted turn in one message with the
    // interrupted prompt: only what follows the interrupt counts.
    let prompt = match prompt.rfind(INTERRUPTED) {
        Some(at) => &prompt[at + INTERRUPTED.len()..],
        None => prompt,
    };
    let directive = |key: &str| {
        prompt.find(key).map(|at| {
            let rest = &prompt[at + key.len()..];
            let end = match key {
                // Text and commands run to the end of their line.
                "reply:" | "tool:" | "ask:" | "write:" | "plan:" => {
                    rest.find('\n').unwrap_or(rest.len())
                }
                _ => rest.find(char::is_whitespace).unwrap_or(rest.len()),
            };
            rest[..end].trim().to_string()
        })
    };
    if let Some(status) = directive("fail:").map(|s| s.parse().unwrap_or(500)) {
        return Behaviour::Fail { status };
    }
    if let Some(command) = directive("tool:") {
        return Behaviour::Tool { command };
    }
    if !after_tool {
        if let Some(ask) = directive("ask:") {
            let mut parts = ask.split('|').map(str::to_string);
            let (question, options) = (parts.next().unwrap_or_default(), parts.collect());
            return Behaviour::Ask { question, options };
        }
        if let Some(write) = directive("write:") {
            let (path, text) = write.split_once('|').unwrap_or((&write, "written"));
            let (path, text) = (path.to_string(), text.to_string());
            return Behaviour::Write { path, text };
        }
        if let Some(url) = directive("fetch:") {
            return Behaviour::Fetch { url };
        }
        if let Some(plan) = directive("plan:") {
            return Behaviour::Plan { plan };
        }
    }
    let delay_ms = directive("slow:")
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(0);
    let mut text = directive("reply:")
        .unwrap_or_else(|| if after_tool { "tool finished" } else { "ok" }.to_string());
    if let Some(count) = directive("lines:").and_then(|n| n.parse::<usize>().ok()) {
        let long: String = (1..=count.min(2000))
            .map(|n| format!("Line {n} of a long answer.\n\n"))
            .collect();
        text = long + &text;
    }
    Behaviour::Reply { text, delay_ms }
}

/// The tool call a behaviour that is no shell command asks for, given the names of the tools the
/// request offers: the tool's name and its arguments. `None` for a reply or a failure, or when
/// the CLI offers no such tool.
fn tool_call(behaviour: &Behaviour, offered: &[String]) -> Option<(String, Value)> {
    let pick = |wanted: &[&str]| {
        wanted
            .iter()
            .find(|w| offered.iter().any(|o| o == *w))
            .map(|w| w.to_string())
    };
    match behaviour {
        Behaviour::Ask { question, options } => {
            let name = pick(&[
                "AskUserQuestion",
                "ask_user",
                "request_user_input",
                "question",
            ])?;
            let choices: Vec<Value> = options
                .iter()
                .map(|o| json!({"label": o, "description": format!("Choose {o}")}))
                .collect();
            let mut entry = json!({"question": question, "header": "Choice", "options": choices});
            match name.as_str() {
                "AskUserQuestion" => entry["multiSelect"] = json!(false),
                "request_user_input" => entry["id"] = json!("choice"),
                "ask_user" => {
                    entry["type"] = json!("choice");
                    entry["multiSelect"] = json!(false);
                }
                _ => {}
            }
            Some((name, json!({"questions": [entry]})))
        }
        Behaviour::Write { path, text } => {
            let name = pick(&["Write", "write_file", "write", "apply_patch"])?;
            let arguments = match name.as_str() {
                "write" => json!({"filePath": path, "content": text}),
                // Codex calls the patch `input`, OpenCode `patchText`.
                "apply_patch" => {
                    json!({"input": apply_patch(path, text), "patchText": apply_patch(path, text)})
                }
                _ => json!({"file_path": path, "content": text}),
            };
            Some((name, arguments))
        }
        Behaviour::Plan { plan } => match pick(&["ExitPlanMode"]) {
            Some(name) => Some((name, json!({"plan": plan}))),
            // A deferred tool: loaded by name first.
            None => Some((
                pick(&["ToolSearch"])?,
                json!({"query": "select:ExitPlanMode", "max_results": 1}),
            )),
        },
        Behaviour::Fetch { url } => {
            let name = pick(&["WebFetch", "web_fetch", "webfetch"])?;
            let arguments = match name.as_str() {
                "WebFetch" => json!({"url": url, "prompt": "Summarize the page"}),
                "web_fetch" => json!({"prompt": format!("Summarize {url}")}),
                _ => json!({"url": url, "format": "markdown"}),
            };
            Some((name, arguments))
        }
        _ => None,
    }
}

/// A patch in Codex's `apply_patch` format that adds a file.
fn apply_patch(path: &str, text: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n")
}

/// With `compactslow:MS` earlier in the conversation, a request whose own prompt carries no
/// directive (the summary request of `/compact`) waits `MS` ms.
fn compact_delay(request: &Value, prompt: &str, behaviour: &Behaviour) -> u64 {
    let plain = matches!(behaviour, Behaviour::Reply { delay_ms: 0, .. })
        && !["reply:", "slow:", "compactslow:"]
            .iter()
            .any(|d| prompt.contains(d));
    if !plain {
        return 0;
    }
    let body = request.to_string();
    body.find("compactslow:")
        .map(|at| {
            body[at + "compactslow:".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(0)
}

/// Names of the tools a request offers, for any of the APIs.
pub(super) fn offered_tools(request: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        for name in [&tool["name"], &tool["function"]["name"]] {
            if let Some(name) = name.as_str() {
                names.push(name.to_string());
            }
        }
        for declaration in tool["functionDeclarations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(name) = declaration["name"].as_str() {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The name of the tool the last assistant message of an Anthropic request called.
fn last_tool_use(request: &Value) -> Option<String> {
    let messages = request["messages"].as_array()?;
    let last = messages.iter().rev().find(|m| m["role"] == "assistant")?;
    let content = last["content"].as_array()?;
    content
        .iter()
        .rev()
        .find(|c| c["type"] == "tool_use")
        .and_then(|c| c["name"].as_str())
        .map(str::to_string)
}

/// The behaviour a request asks for, the tool call it makes (other than a shell command) and
/// the extra delay of a `/compact` summary.
pub(super) fn resolve(
    request: &Value,
    prompt: &str,
    after_tool: bool,
) -> (Behaviour, Option<(String, Value)>, u64) {
    let mut wanted = behaviour(prompt, after_tool);
    // Claude Code offers `ExitPlanMode` only once `ToolSearch` loaded it: the plan follows.
    if after_tool && last_tool_use(request).as_deref() == Some("ToolSearch") {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let asked = (messages.iter().rev())
            .filter(|m| m["role"] == "user")
            .map(|m| last_user(std::slice::from_ref(m)).0)
            .find(|text| text.contains("plan:"));
        if let Some(plan) = asked.map(|text| behaviour(&text, false))
            && matches!(plan, Behaviour::Plan { .. })
        {
            wanted = plan;
        }
    }
    let offered = offered_tools(request);
    let call = tool_call(&wanted, &offered);
    let wanted = match wanted {
        Behaviour::Ask { .. }
        | Behaviour::Write { .. }
        | Behaviour::Fetch { .. }
        | Behaviour::Plan { .. }
            if call.is_none() =>
        {
            missing_tool(&wanted, &offered)
        }
        other => other,
    };
    let delay = compact_delay(request, prompt, &wanted);
    (wanted, call, delay)
}

/// A request body may ask for a tool the CLI lacks: that turns into a plain reply saying so,
/// and which tools it offers.
fn missing_tool(behaviour: &Behaviour, offered: &[String]) -> Behaviour {
    let text = format!(
        "fake model: no tool for {behaviour:?} (offered: {})",
        offered.join(", ")
    );
    Behaviour::Reply { text, delay_ms: 0 }
}
