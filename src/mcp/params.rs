//! The tools' parameters (with the JSON schemas clients see), the request bodies built from
//! them, and the texts made of the daemon's answers. Pure functions, so the contract with the
//! API is tested without a daemon.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::api::wire::{HandoffAnswer, HandoffBody, LaunchBody, PaneSummary, SendBody};
use crate::status::providers::SHELL;

/// A pane.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PaneParams {
    /// The pane: its id `%N` (as list_agents shows), `session:window.pane`, or a unique window
    /// name.
    pub pane: String,
}

/// What `answer_decision` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AnswerDecisionParams {
    /// The pane whose dialog to answer.
    pub pane: String,
    /// The fingerprint of the dialog, from list_decisions: when another dialog is on the
    /// screen nothing is pressed and the new dialog is returned.
    pub decision: String,
    /// The option's number, as list_decisions shows it.
    #[serde(default)]
    pub option: Option<usize>,
    /// Or the option's label (any case), or the start of exactly one option's label.
    #[serde(default)]
    pub label: Option<String>,
}

/// What `close_agent` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CloseAgentParams {
    /// The agent's pane: `%N`, `session:window.pane`, a unique window name or the agent's name.
    pub pane: String,
    /// How long the agent has to exit by itself before its pane is killed, in seconds
    /// (default 10).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Remove the git worktree it was launched in once it closed (its branch stays); refused,
    /// with nothing closed, when the worktree has uncommitted or unpushed work, unless force.
    #[serde(default)]
    pub remove_worktree: bool,
    /// With remove_worktree: remove it even with uncommitted or unpushed work.
    #[serde(default)]
    pub force: bool,
}

/// What `send_message` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SendMessageParams {
    /// The receiving pane: `%N`, `session:window.pane` or a unique window name.
    pub pane: String,
    /// The message, typed into the agent as one prompt.
    pub text: String,
    /// Give up if it cannot be delivered within this many seconds (default: never).
    #[serde(default)]
    pub ttl_seconds: Option<f64>,
}

/// What `launch_agent` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LaunchParams {
    /// The provider to start, e.g. `claude_code`, `codex`, `gemini_cli` (it needs a
    /// `[launch]` command in its rules). May be left out with `profile`.
    #[serde(default)]
    pub provider: String,
    /// Launch as the user's launch profile of this name says (`panectl profiles` lists them):
    /// its provider, arguments, model, system prompt, first message, worktree; what is given
    /// here wins. A profile with arguments or environment needs the daemon's --mcp-allow-args.
    #[serde(default)]
    pub profile: Option<String>,
    /// A name for the agent: the window's name (1-64 letters, digits, `_`, `-`, `.`).
    #[serde(default)]
    pub name: Option<String>,
    /// The tmux session to open the window in (default: your own pane's session, else the
    /// first session).
    #[serde(default)]
    pub session: Option<String>,
    /// The working directory, an absolute path (default: tmux's).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables for the agent.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// Command-line arguments for the agent CLI.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// How long to wait until it is ready, in seconds (default 60).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Start it in a pane split off this agent (its name) or pane (`%N`), to its right,
    /// instead of in a window of its own (`session` is then that pane's).
    #[serde(default)]
    pub split: Option<String>,
    /// With `split`: below it instead.
    #[serde(default)]
    pub split_below: bool,
}

/// What `restore_agents` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RestoreParams {
    /// Only say what would be done.
    #[serde(default)]
    pub dry_run: bool,
}

/// What `handoff` is given; `assign` takes the same and where the answer goes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct HandoffParams {
    /// The agent to give the task to: a pane (`%N`). Give this or `provider`, not both.
    #[serde(default)]
    pub pane: Option<String>,
    /// Start a new agent of this provider (e.g. `claude_code`) for the task instead. Give this
    /// or `pane`, not both.
    #[serde(default)]
    pub provider: Option<String>,
    /// The task, sent to the agent as one message.
    pub message: String,
    /// Give up on the task after this many seconds.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Close the agent's pane once it has answered.
    #[serde(default)]
    pub teardown: bool,
}

/// What `assign` is given.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AssignParams {
    /// The task and the agent it goes to, as `handoff` takes them.
    #[serde(flatten)]
    pub task: HandoffParams,
    /// The pane the answer is sent to, as a message (default: your own pane).
    #[serde(default)]
    pub reply_to: Option<String>,
}

/// The fields of a pane that `list_agents` shows, in order.
const AGENT_FIELDS: [&str; 10] = [
    "pane",
    "name",
    "provider",
    "status",
    "status_seconds",
    "session",
    "window",
    "command",
    "title",
    "dead",
];

/// The text of `list_agents`: the panes (a `GET /v1/panes` answer) that run a recognised agent
/// (a plain shell is not one), each with the fields that matter to an orchestrator, as a JSON
/// list, one agent per line.
pub fn list_agents_text(panes: &[PaneSummary]) -> String {
    let agents: Vec<String> = panes
        .iter()
        .filter(|pane| {
            pane.provider
                .as_deref()
                .is_some_and(|provider| provider != SHELL)
        })
        .map(|pane| {
            // The pane as the daemon sent it, picked field by field: written by hand to keep
            // the fields in this order, whatever map serde_json uses.
            let pane = serde_json::to_value(pane).unwrap_or_default();
            let fields: Vec<String> = AGENT_FIELDS
                .iter()
                .filter_map(|key| {
                    pane.get(*key)
                        .filter(|v| !v.is_null() && *v != "")
                        .map(|v| format!("{}:{v}", Value::from(*key)))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    if agents.is_empty() {
        return "[]".to_string();
    }
    format!("[\n{}\n]", agents.join(",\n"))
}

/// The body of `POST /v1/panes/{pane}/messages`.
pub fn send_body(params: &SendMessageParams, from: &str) -> SendBody {
    SendBody {
        body: Some(params.text.clone()),
        from: Some(from.to_string()),
        ttl_seconds: params.ttl_seconds,
        ..SendBody::default()
    }
}

/// The body of `POST /v1/agents`.
pub fn launch_body(params: &LaunchParams) -> LaunchBody {
    LaunchBody {
        provider: params.provider.clone(),
        session: params.session.clone(),
        name: params.name.clone(),
        cwd: params.cwd.clone(),
        env: params.env.clone().unwrap_or_default(),
        args: params.args.clone().unwrap_or_default(),
        timeout_seconds: params.timeout_seconds,
        split: params.split.clone(),
        split_below: params.split_below,
        ..LaunchBody::default()
    }
}

/// `pane` and `launch` of a handoff or assignment: exactly one of an existing pane and a
/// provider to launch.
fn target(
    pane: Option<&str>,
    provider: Option<&str>,
) -> Result<(Option<String>, Option<LaunchBody>), String> {
    let pane = pane.filter(|p| !p.trim().is_empty());
    let provider = provider.filter(|p| !p.trim().is_empty());
    match (pane, provider) {
        (Some(pane), None) => Ok((Some(pane.to_string()), None)),
        (None, Some(provider)) => Ok((
            None,
            Some(LaunchBody {
                provider: provider.to_string(),
                ..LaunchBody::default()
            }),
        )),
        (Some(_), Some(_)) => Err(
            "give either pane (an existing agent) or provider (launch a new one), not both"
                .to_string(),
        ),
        (None, None) => Err(
            "give pane (an existing agent, see list_agents) or provider (launch a new one)"
                .to_string(),
        ),
    }
}

/// The body of `POST /v1/handoff`, or why the parameters are refused.
pub fn handoff_body(params: &HandoffParams, from: &str) -> Result<HandoffBody, String> {
    let (pane, launch) = target(params.pane.as_deref(), params.provider.as_deref())?;
    Ok(HandoffBody {
        pane,
        launch,
        message: params.message.clone(),
        from: Some(from.to_string()),
        timeout_seconds: params.timeout_seconds,
        teardown: params.teardown,
        ..HandoffBody::default()
    })
}

/// The body of `POST /v1/assign`, or why the parameters are refused. `caller` is the pane the
/// server runs in: the answer goes there unless `reply_to` says otherwise.
pub fn assign_body(
    params: &AssignParams,
    from: &str,
    caller: Option<&str>,
) -> Result<HandoffBody, String> {
    let task = handoff_body(&params.task, from)?;
    let reply_to = params
        .reply_to
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .or(caller)
        .ok_or_else(|| {
            "give reply_to: the pane the answer is sent to (this server runs outside tmux, so \
             it has no pane of its own)"
                .to_string()
        })?;
    Ok(HandoffBody {
        reply_to: Some(reply_to.to_string()),
        ..task
    })
}

/// The text of `handoff`: a line saying who answered and how, then the answer verbatim.
pub fn handoff_text(answer: &HandoffAnswer) -> String {
    let mut head = format!(
        "{} {} after {:.1} s (message {})",
        answer.pane, answer.status, answer.waited_seconds, answer.message_id,
    );
    if answer.torn_down {
        head.push_str(", pane closed");
    }
    format!("{head}\n\n{}", answer.answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A body as the JSON sent.
    fn sent(body: &impl serde::Serialize) -> Value {
        serde_json::to_value(body).expect("a body serializes")
    }

    /// What a launch body without options adds to its provider.
    const PLAIN_LAUNCH: [(&str, bool); 4] = [
        ("new_session", false),
        ("no_wait", false),
        ("accept_startup_prompts", false),
        ("no_hooks", false),
    ];

    fn plain_launch(mut fields: Value) -> Value {
        for (key, value) in PLAIN_LAUNCH {
            fields[key] = json!(value);
        }
        fields
    }

    fn handoff(pane: Option<&str>, provider: Option<&str>) -> HandoffParams {
        HandoffParams {
            pane: pane.map(str::to_string),
            provider: provider.map(str::to_string),
            message: "review it".into(),
            timeout_seconds: None,
            teardown: false,
        }
    }

    #[test]
    fn handoff_bodies_follow_the_api_contract() {
        let body = handoff_body(&handoff(Some("%3"), None), "%1").unwrap();
        assert_eq!(
            sent(&body),
            json!({"pane": "%3", "message": "review it", "from": "%1", "teardown": false})
        );
        let mut launch = handoff(None, Some("codex"));
        launch.timeout_seconds = Some(30.0);
        launch.teardown = true;
        let body = handoff_body(&launch, "mcp").unwrap();
        assert_eq!(
            sent(&body),
            json!({"launch": plain_launch(json!({"provider": "codex"})), "message": "review it",
                   "from": "mcp", "timeout_seconds": 30.0, "teardown": true})
        );
        // What the server reads it as.
        let read: HandoffBody = serde_json::from_value(sent(&body)).unwrap();
        assert_eq!(read.launch.map(|l| l.provider).as_deref(), Some("codex"));
    }

    #[test]
    fn a_handoff_needs_exactly_one_target() {
        let neither = handoff_body(&handoff(None, Some(" ")), "mcp").unwrap_err();
        assert!(neither.contains("give pane"), "{neither}");
        let both = handoff_body(&handoff(Some("%3"), Some("codex")), "mcp").unwrap_err();
        assert!(both.contains("not both"), "{both}");
    }

    #[test]
    fn assignments_answer_to_the_callers_pane_unless_told() {
        let mut params = AssignParams {
            task: handoff(Some("%3"), None),
            reply_to: None,
        };
        let body = assign_body(&params, "%1", Some("%1")).unwrap();
        assert_eq!(
            sent(&body),
            json!({"pane": "%3", "message": "review it", "from": "%1", "reply_to": "%1",
                   "teardown": false})
        );
        let outside = assign_body(&params, "mcp", None).unwrap_err();
        assert!(outside.contains("reply_to"), "{outside}");
        let from_json: AssignParams = serde_json::from_value(json!({
            "pane": "%3", "message": "review it", "reply_to": "%7", "teardown": true
        }))
        .unwrap();
        assert_eq!(from_json.task.pane.as_deref(), Some("%3"));
        assert!(from_json.task.teardown);
        assert_eq!(from_json.reply_to.as_deref(), Some("%7"));
        let schema = serde_json::to_value(schemars::schema_for!(AssignParams)).unwrap();
        for field in [
            "pane",
            "provider",
            "message",
            "timeout_seconds",
            "teardown",
            "reply_to",
        ] {
            assert!(schema["properties"][field].is_object(), "{field}: {schema}");
        }
        params.reply_to = Some("%7".into());
        assert_eq!(
            assign_body(&params, "mcp", None)
                .unwrap()
                .reply_to
                .as_deref(),
            Some("%7")
        );
    }

    #[test]
    fn launch_and_send_bodies_name_the_api_fields() {
        let params = LaunchParams {
            provider: "claude_code".into(),
            profile: None,
            name: Some("worker".into()),
            session: None,
            cwd: Some("/tmp".into()),
            env: Some(BTreeMap::from([("A".into(), "b".into())])),
            args: None,
            timeout_seconds: Some(5.0),
            split: Some("boss".into()),
            split_below: true,
        };
        assert_eq!(
            sent(&launch_body(&params)),
            plain_launch(
                json!({"provider": "claude_code", "name": "worker", "cwd": "/tmp",
                   "env": {"A": "b"}, "timeout_seconds": 5.0, "split": "boss",
                   "split_below": true})
            )
        );
        let send = SendMessageParams {
            pane: "%2".into(),
            text: "hi".into(),
            ttl_seconds: None,
        };
        assert_eq!(
            sent(&send_body(&send, "mcp")),
            json!({"body": "hi", "from": "mcp"})
        );
    }

    /// A pane as the daemon sends it.
    fn pane(id: &str, provider: Option<&str>, status: &str, command: &str) -> PaneSummary {
        serde_json::from_value(json!({
            "pane": id, "session_id": "$0", "session": "main", "window_id": "@1",
            "window_index": 0, "window": "w", "index": 0, "title": "", "command": command,
            "pid": 1, "width": 80, "height": 24, "dead": false, "in_mode": false,
            "active": true, "alternate_screen": false, "sync": "live", "transport": "control",
            "output_seq": 0,
            "counters": {"bytes": 1, "chunks": 1, "resyncs": 0, "pauses": 0, "divergences": 0},
            "provider": provider, "provider_source": null, "status": status,
            "status_rule": null, "status_source": "screen", "status_settled": true,
            "status_seconds": 1.5, "seen": false
        }))
        .expect("a pane")
    }

    #[test]
    fn agents_are_the_panes_with_a_provider() {
        let panes = [
            pane("%0", None, "unknown", "top"),
            pane("%2", Some("shell"), "idle", "sh"),
            pane("%1", Some("codex"), "idle", "node"),
        ];
        assert_eq!(
            list_agents_text(&panes),
            "[\n{\"pane\":\"%1\",\"provider\":\"codex\",\"status\":\"idle\",\
             \"status_seconds\":1.5,\"session\":\"main\",\"window\":\"w\",\"command\":\"node\",\
             \"dead\":false}\n]"
        );
        assert_eq!(list_agents_text(&[]), "[]");
    }

    #[test]
    fn handoff_answers_are_given_verbatim() {
        let answer: HandoffAnswer = serde_json::from_value(json!({"pane": "%3",
            "message_id": 12, "status": "completed", "answer": "line one\n  line two",
            "waited_seconds": 1.2, "torn_down": false}))
        .unwrap();
        assert_eq!(
            handoff_text(&answer),
            "%3 completed after 1.2 s (message 12)\n\nline one\n  line two"
        );
    }
}
