//! `panectl mcp` as an MCP client sees it: the real binary, started by rmcp's client over
//! stdio, against a real tmux server, a real daemon and the fake agent
//! (`scripts/programs/fake_agent.py`).

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

/// The messages the fake agents received, as text.
fn received(setup: &Setup) -> Vec<String> {
    setup
        .bodies()
        .into_iter()
        .map(|b| String::from_utf8(b).expect("UTF-8"))
        .collect()
}

pub(crate) type Client = RunningService<RoleClient, ()>;

/// Calls a tool; its text and whether it is a tool error.
pub(crate) fn call(
    runtime: &tokio::runtime::Runtime,
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> (String, bool) {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool).with_arguments(arguments);
    let result: CallToolResult = runtime
        .block_on(tokio::time::timeout(
            Duration::from_secs(90),
            client.call_tool(params),
        ))
        .unwrap_or_else(|_| panic!("{tool}: no answer"))
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (text, result.is_error == Some(true))
}

/// Calls a tool that must succeed; its text.
pub(crate) fn call_ok(
    runtime: &tokio::runtime::Runtime,
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> String {
    let (text, error) = call(runtime, client, tool, arguments);
    assert!(!error, "{tool} failed: {text}");
    text
}

/// A runtime and an MCP client of `panectl mcp` run "in" `pane` (`TMUX_PANE`) of `server`.
pub(crate) fn connect(
    server: &crate::support::TmuxServer,
    pane: &str,
) -> (tokio::runtime::Runtime, Client) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut command = server.panectl();
    command.arg("mcp").env("TMUX_PANE", pane);
    let client = {
        // rmcp's client ends its child from a task when dropped: that needs the runtime.
        let _context = runtime.enter();
        runtime.block_on(async {
            let transport = TokioChildProcess::new(tokio::process::Command::from(command))
                .expect("start panectl mcp");
            tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
                .await
                .expect("no handshake within 20 s")
                .expect("the MCP handshake")
        })
    };
    (runtime, client)
}

/// Calls a tool that must fail with a tool error (not a protocol error); its text.
fn call_err(
    runtime: &tokio::runtime::Runtime,
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> String {
    let (text, error) = call(runtime, client, tool, arguments);
    assert!(error, "{tool} should have failed: {text}");
    text
}

#[test]
fn mcp_tools_drive_the_daemon() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let mut daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(15));
    let server = &setup.server;
    // Something to read on the shell's screen.
    server.tmux(&["send-keys", "-t", "%1", "echo MCP-SCREEN-$((6*7))", "Enter"]);
    server.wait_for("the echo", Duration::from_secs(10), || {
        server.daemon_screen("%1").contains("\nMCP-SCREEN-42")
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // rmcp's client ends its child from a task when dropped (a failed assertion): that needs
    // the runtime's context.
    let _context = runtime.enter();
    // The MCP server runs "in" the shell pane %1: that is who its messages come from.
    let mut command = server.panectl();
    command.arg("mcp").env("TMUX_PANE", "%1");
    let (client, pid) = runtime.block_on(async {
        let transport = TokioChildProcess::new(tokio::process::Command::from(command))
            .expect("start panectl mcp");
        let pid = transport.id().expect("its pid");
        let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
            .await
            .expect("no handshake within 20 s")
            .expect("the MCP handshake");
        (client, pid)
    });
    let info = client.peer_info().expect("the server's initialize answer");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("panectl")
    );
    assert!(
        info.instructions
            .as_ref()
            .is_some_and(|i| i.contains("list_agents"))
    );
    assert!(info.capabilities.tools.is_some());

    // tools/list: the eleven tools, each described and with an object schema.
    let tools = runtime
        .block_on(client.list_all_tools())
        .expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "agent_status",
            "answer_decision",
            "assign",
            "close_agent",
            "handoff",
            "last_response",
            "launch_agent",
            "list_agents",
            "list_decisions",
            "list_worktrees",
            "read_screen",
            "restore_agents",
            "send_message"
        ]
    );
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{tool:?}"
        );
        assert!(
            tool.description.as_ref().is_some_and(|d| d.len() > 40),
            "{tool:?}"
        );
    }
    let handoff = tools.iter().find(|t| t.name == "handoff").unwrap();
    let properties = &handoff.input_schema["properties"];
    for field in ["pane", "provider", "message", "timeout_seconds", "teardown"] {
        assert!(properties.get(field).is_some(), "handoff lacks {field}");
    }
    assert_eq!(handoff.input_schema["required"], json!(["message"]));

    // list_agents: the fake agent, not the shell.
    let agents: Value = serde_json::from_str(&call_ok(&runtime, &client, "list_agents", json!({})))
        .expect("a JSON list");
    let agents = agents.as_array().expect("a list");
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["pane"], "%0");
    assert_eq!(agents[0]["provider"], "fake_agent");
    assert_eq!(agents[0]["status"], "idle");

    // No agent waits: no decisions, and an answer presses nothing.
    let decisions = call_ok(&runtime, &client, "list_decisions", json!({}));
    assert_eq!(
        serde_json::from_str::<Value>(&decisions).unwrap(),
        json!([])
    );
    let answer: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "answer_decision",
        json!({"pane": "%0", "decision": "0123456789abcdef", "option": 1}),
    ))
    .expect("JSON");
    assert_eq!(answer["outcome"], "gone");

    // agent_status: the whole pane.
    let status: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "agent_status",
        json!({"pane": "%0"}),
    ))
    .expect("JSON");
    assert_eq!(status["pane"], "%0");
    assert_eq!(status["provider"], "fake_agent");
    assert_eq!(status["status"], "idle");

    // read_screen: what is on the screens.
    let shell = call_ok(&runtime, &client, "read_screen", json!({"pane": "%1"}));
    assert!(shell.contains("\nMCP-SCREEN-42"), "{shell}");
    let agent = call_ok(&runtime, &client, "read_screen", json!({"pane": "%0"}));
    assert!(agent.starts_with("FAKE AGENT v1\nfake>"), "{agent}");

    // send_message: queued, delivered to the agent, sent by the caller's pane.
    let sent = call_ok(
        &runtime,
        &client,
        "send_message",
        json!({"pane": "%0", "text": "hello from mcp", "ttl_seconds": 60}),
    );
    assert!(
        sent.starts_with("message ") && sent.contains(" to %0: "),
        "{sent}"
    );
    server.wait_for("the delivery", Duration::from_secs(15), || {
        received(&setup) == ["hello from mcp"]
    });
    let inbox: Vec<Value> = server
        .panectl_ok(&["inbox", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("inbox line"))
        .collect();
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    assert_eq!(inbox[0]["sender"], "%1");
    assert_eq!(inbox[0]["body"], "hello from mcp");
    assert!(
        sent.contains(&format!("message {} ", inbox[0]["id"])),
        "{sent}"
    );

    // last_response: the answer to it, cut out by the provider's rule.
    setup.wait_status(&["completed"], Duration::from_secs(15));
    let last = call_ok(&runtime, &client, "last_response", json!({"pane": "%0"}));
    assert_eq!(last, "pcm morf olleh");

    // launch_agent: a second fake agent in a new window, ready when the call returns.
    let launched: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "launch_agent",
        json!({"provider": "fake_agent", "name": "mcp-worker", "timeout_seconds": 30}),
    ))
    .expect("JSON");
    let worker = launched["pane"].as_str().expect("a pane id").to_string();
    assert_eq!(launched["status"], "idle", "{launched}");
    assert_eq!(
        server
            .tmux(&["display-message", "-p", "-t", &worker, "#{window_name}"])
            .trim(),
        "mcp-worker"
    );
    let agents: Value =
        serde_json::from_str(&call_ok(&runtime, &client, "list_agents", json!({}))).unwrap();
    assert!(
        agents
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["pane"] == worker.as_str() && a["window"] == "mcp-worker"),
        "{agents}"
    );

    // handoff: the worker's answer comes back as the tool's result.
    let answer = call_ok(
        &runtime,
        &client,
        "handoff",
        json!({"pane": worker, "message": "mcp handoff", "timeout_seconds": 30}),
    );
    assert!(answer.ends_with("ffodnah pcm"), "{answer}");
    // assign: returns at once; the answer arrives later as a message in reply_to's inbox.
    let assigned = call_ok(
        &runtime,
        &client,
        "assign",
        json!({"pane": worker, "message": "assigned work", "reply_to": "%0"}),
    );
    assert!(assigned.contains(&worker), "{assigned}");
    let callback = format!("[panectl] Answer from {worker} to assignment 1:\nkrow dengissa");
    server.wait_for(
        "the assignment's answer to reach %0",
        Duration::from_secs(20),
        || received(&setup).contains(&callback),
    );

    // Errors are tool errors with the daemon's message, not protocol failures.
    let unknown = call_err(&runtime, &client, "agent_status", json!({"pane": "%99"}));
    assert!(
        unknown.contains("no pane named \"%99\"") && unknown.contains("list_agents"),
        "{unknown}"
    );
    let unknown = call_err(&runtime, &client, "read_screen", json!({"pane": "nosuch"}));
    assert!(unknown.contains("no pane named \"nosuch\""), "{unknown}");
    let refused = call_err(
        &runtime,
        &client,
        "launch_agent",
        json!({"provider": "nosuch"}),
    );
    assert!(refused.contains("unknown provider"), "{refused}");
    // handoff and assign check their arguments before asking the daemon...
    let neither = call_err(&runtime, &client, "handoff", json!({"message": "x"}));
    assert!(neither.contains("give pane"), "{neither}");
    let both = call_err(
        &runtime,
        &client,
        "assign",
        json!({"pane": "%0", "provider": "fake_agent", "message": "x"}),
    );
    assert!(both.contains("not both"), "{both}");
    // ...and turn the daemon's refusal into a tool error.
    let missing = call_err(
        &runtime,
        &client,
        "handoff",
        json!({"pane": "%99", "message": "x", "timeout_seconds": 1}),
    );
    assert!(missing.starts_with("handoff: "), "{missing}");
    let missing = call_err(
        &runtime,
        &client,
        "assign",
        json!({"pane": "%99", "message": "x"}),
    );
    assert!(missing.starts_with("assign: "), "{missing}");
    // Nothing more reached the agents.
    assert_eq!(
        received(&setup),
        [
            "hello from mcp",
            "mcp handoff",
            "assigned work",
            callback.as_str()
        ]
    );

    // Without a daemon every call says how to start one, and the server keeps serving.
    assert!(
        daemon.stop(Duration::from_secs(10)),
        "the daemon did not stop"
    );
    let gone = call_err(&runtime, &client, "list_agents", json!({}));
    assert!(
        gone.contains("no panectl daemon is running") && gone.contains("daemon --detach"),
        "{gone}"
    );

    // Closing the connection ends the server process.
    runtime
        .block_on(tokio::time::timeout(
            Duration::from_secs(10),
            client.cancel(),
        ))
        .expect("the client closes within 10 s")
        .expect("the client closes");
    let pid = nix::unistd::Pid::from_raw(pid as i32);
    server.wait_for("panectl mcp to exit", Duration::from_secs(5), || {
        nix::sys::signal::kill(pid, None).is_err()
    });
}

#[test]
fn mcp_clients_cannot_type_into_a_shell_unless_the_daemon_allows_it() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let mut daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(15));
    let server = &setup.server;
    server.wait_for("%1 to be a shell", Duration::from_secs(10), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%1" && p["provider"] == "shell")
    });
    let (runtime, client) = connect(server, "%0");
    let _context = runtime.enter();
    let refused = call_err(
        &runtime,
        &client,
        "send_message",
        json!({"pane": "%1", "text": "echo REFUSED-$((6*7))"}),
    );
    assert!(
        refused.contains("%1 runs a plain shell (provider shell)")
            && refused.contains("--mcp-allow-shell"),
        "{refused}"
    );
    let refused = call_err(
        &runtime,
        &client,
        "handoff",
        json!({"pane": "%1", "message": "echo REFUSED", "timeout_seconds": 5}),
    );
    assert!(refused.contains("--mcp-allow-shell"), "{refused}");
    assert_eq!(server.panectl_ok(&["inbox", "--json"]), "");
    // Nor launch an agent with arguments or environment of its own (issue 31, item 6).
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    for arguments in [
        json!({"provider": "fake_agent", "args": ["--dangerously-skip-permissions"]}),
        json!({"provider": "fake_agent", "env": {"LD_PRELOAD": "/tmp/evil.so"}}),
    ] {
        let refused = call_err(&runtime, &client, "launch_agent", arguments);
        assert!(
            refused.contains("MCP clients may not choose") && refused.contains("--mcp-allow-args"),
            "{refused}"
        );
    }
    assert_eq!(windows(), before, "a refused launch made a window");

    // A daemon started with --mcp-allow-shell and --mcp-allow-args lets them through.
    assert!(daemon.stop(Duration::from_secs(10)));
    let _daemon = setup.daemon_with(2, &["--mcp-allow-shell", "--mcp-allow-args"]);
    let launched = call_ok(
        &runtime,
        &client,
        "launch_agent",
        json!({"provider": "fake_agent", "env": {"PANECTL_TEST_ENV": "1"}, "timeout_seconds": 30}),
    );
    assert!(launched.contains("\"pane\""), "{launched}");
    call_ok(
        &runtime,
        &client,
        "send_message",
        json!({"pane": "%1", "text": "echo ALLOWED-$((6*7))"}),
    );
    server.wait_for("the command to run", Duration::from_secs(15), || {
        server.tmux_screen("%1").contains("\nALLOWED-42")
    });
    assert!(!server.tmux_screen("%1").contains("REFUSED"));
    runtime
        .block_on(tokio::time::timeout(
            Duration::from_secs(10),
            client.cancel(),
        ))
        .expect("the client closes within 10 s")
        .expect("the client closes");
}
