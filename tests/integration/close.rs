//! `panectl close`, `POST /v1/panes/{pane}/close` and the MCP tool `close_agent` against real
//! tmux and the fake agent (`scripts/programs/fake_agent.py`, whose rules' `[close]` table
//! presses Ctrl-C, which ends it): an agent asked to exit exits, a program that ignores the
//! keys is killed at the timeout, the messages still pending for the pane are cancelled, and
//! a `closed` event says how it ended.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inbox::Setup;
use crate::support::{EventReader, TmuxServer, daemon_test_lock};

/// Whether tmux still has the pane.
fn pane_exists(server: &TmuxServer, pane: &str) -> bool {
    server
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .any(|line| line == pane)
}

/// Waits until the daemon lists `pane`.
fn wait_listed(server: &TmuxServer, pane: &str) {
    server.wait_for(
        &format!("the daemon to list {pane}"),
        Duration::from_secs(10),
        || server.panes().iter().any(|p| p["pane"] == pane),
    );
}

/// `panectl close ARGS --json`, which must succeed.
fn close_json(server: &TmuxServer, args: &[&str]) -> Value {
    let mut all = vec!["close"];
    all.extend_from_slice(args);
    all.push("--json");
    serde_json::from_str(&server.panectl_ok(&all)).expect("close --json prints JSON")
}

#[test]
fn close_waits_for_a_busy_agent_to_exit_and_cancels_its_pending_messages() {
    let _guard = daemon_test_lock();
    // Each turn of the fake agent takes 3 s, during which it reads nothing.
    let setup = Setup::start(3.0);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let events = EventReader::start(server);
    let first = setup.send("first task");
    setup.wait_state(first, "delivered", Duration::from_secs(10));
    // Busy: the second waits in the inbox.
    let second = setup.send("second task");
    assert_eq!(setup.message(second)["state"], "pending");

    let closed = close_json(server, &["%0"]);
    // Its Ctrl-C was read once the turn was over: it exited by itself.
    assert_eq!(closed["pane"], "%0", "{closed}");
    assert_eq!(closed["how"], "exited", "{closed}");
    assert_eq!(closed["provider"], "fake_agent", "{closed}");
    assert_eq!(closed["keys"], json!(["C-c"]), "{closed}");
    assert_eq!(closed["text"], Value::Null, "{closed}");
    assert_eq!(closed["fallback"], false, "{closed}");
    assert_eq!(closed["cancelled"], json!([second]), "{closed}");
    assert!(!pane_exists(server, "%0"));

    let event = events.expect("closed", |e| e["type"] == "closed");
    assert_eq!(event["pane"], "%0", "{event}");
    assert_eq!(event["how"], "exited", "{event}");
    assert_eq!(event["cancelled"], json!([second]), "{event}");
    events.expect("the second message cancelled", |e| {
        e["type"] == "message" && e["message_id"] == second && e["state"] == "cancelled"
    });
    let cancelled = setup.message(second);
    assert_eq!(cancelled["state"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["reason"], "agent closed", "{cancelled}");
    // The first was taken; the second never reached the agent.
    assert_eq!(setup.message(first)["state"], "delivered");
    assert_eq!(setup.bodies(), [b"first task".to_vec()]);
}

#[test]
fn close_lets_a_message_being_typed_finish_before_its_keys() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.5);
    // Three seconds between a message's text and its Enter: the message is being typed
    // (`delivering`) when the close comes.
    let dir = setup.rules_dir().display().to_string();
    let _daemon = setup
        .server
        .start_daemon(&["--rules-dir", &dir, "--submit-delay", "3s"]);
    setup.server.wait_for_panes(2);
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let typed = setup.send("typed as the close came");
    setup.wait_state(typed, "delivering", Duration::from_secs(10));

    let started = Instant::now();
    let closed = close_json(server, &["%0"]);
    // Its Enter came first, then the close's Ctrl-C: the message went whole, and once.
    assert_eq!(closed["finished_first"], json!([typed]), "{closed}");
    assert_eq!(closed["cancelled"], json!([]), "{closed}");
    assert_eq!(closed["how"], "exited", "{closed}");
    assert!(started.elapsed() < Duration::from_secs(10), "{closed}");
    assert_eq!(setup.message(typed)["state"], "delivered");
    assert_eq!(setup.bodies(), [b"typed as the close came".to_vec()]);
    assert!(!pane_exists(server, "%0"));
}

#[test]
fn close_by_name_kills_what_ignores_the_keys_and_refuses_a_missing_pane() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let events = EventReader::start(server);

    // A launched agent, closed by its name (`@panectl_name`).
    let worker = server
        .panectl_ok(&["launch", "fake_agent", "--name", "worker"])
        .trim()
        .to_string();
    let said = server.panectl_ok(&["close", "worker"]);
    assert_eq!(
        said.trim(),
        format!("closed {worker}: sent C-c; it exited"),
        "{said}"
    );
    assert!(!pane_exists(server, &worker));
    let event = events.expect("the worker closed", |e| {
        e["type"] == "closed" && e["pane"] == worker.as_str()
    });
    assert_eq!(event["how"], "exited", "{event}");
    assert_eq!(event["cancelled"], json!([]), "{event}");

    // A program that is no agent and ignores Ctrl-C (and reads no input): killed at the timeout.
    // `python3` may be a wrapper script of that name that execs the interpreter (pyenv's
    // shim): tmux can name the pane's program before the wrapper's exec and the daemon read
    // its processes after, which it must notice.
    let stubborn = server
        .tmux(&[
            "split-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "%1",
            "exec python3 -c \"import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); \
             print('stubborn', flush=True)\nwhile True: time.sleep(1)\"",
        ])
        .trim()
        .to_string();
    wait_listed(server, &stubborn);
    server.wait_for(
        "the program to ignore SIGINT",
        Duration::from_secs(10),
        || server.daemon_screen(&stubborn).contains("stubborn"),
    );
    // tmux starts it through `sh -c`, which then execs it: the daemon must not keep it for the
    // shell, even though it prints nothing more.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server
        .panes()
        .iter()
        .any(|p| p["pane"] == stubborn.as_str() && p["provider"].is_null())
    {
        assert!(
            Instant::now() < deadline,
            "{stubborn} still has a provider: {}\nthe daemon's detection:\n{}",
            server
                .panes()
                .into_iter()
                .find(|p| p["pane"] == stubborn.as_str())
                .unwrap_or_default(),
            daemon
                .log_text()
                .lines()
                .filter(|l| l.contains(&format!("pane={stubborn}")) && l.contains("provider"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = Instant::now();
    let closed = close_json(server, &[&stubborn, "--timeout", "1s"]);
    assert!(started.elapsed() >= Duration::from_secs(1), "{closed}");
    assert_eq!(closed["how"], "killed", "{closed}");
    assert_eq!(closed["provider"], Value::Null, "{closed}");
    assert_eq!(closed["fallback"], true, "{closed}");
    assert_eq!(closed["keys"], json!(["C-c", "C-d"]), "{closed}");
    assert!(!pane_exists(server, &stubborn));
    let event = events.expect("the program killed", |e| {
        e["type"] == "closed" && e["pane"] == stubborn.as_str()
    });
    assert_eq!(event["how"], "killed", "{event}");

    // A plain shell: `exit` and Enter.
    let shell = close_json(server, &["%1"]);
    assert_eq!(
        (&shell["how"], &shell["provider"], &shell["text"]),
        (&json!("exited"), &json!("shell"), &json!("exit")),
        "{shell}"
    );
    assert!(!pane_exists(server, "%1"));

    // A pane that does not exist: "not reached" (1) and a 404 with a clear error.
    let missing = server
        .panectl()
        .args(["close", "%999"])
        .output()
        .expect("run panectl");
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("no pane named \"%999\""), "{stderr}");
    let (status, answer) = server.api_post_status("/v1/panes/nowhere/close", &json!({}));
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("nowhere"))
    );
    let (status, answer) =
        server.api_post_status("/v1/panes/%250/close", &json!({"timeout_seconds": -1}));
    assert_eq!(status, 400, "{answer}");
    // The fake agent in %0 was left alone.
    assert!(pane_exists(server, "%0"));
}

#[cfg(feature = "mcp")]
#[test]
fn close_agent_is_an_mcp_tool() {
    use rmcp::ServiceExt;
    use rmcp::transport::TokioChildProcess;

    use crate::mcp::{call, call_ok};

    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let helper = server
        .panectl_ok(&["launch", "fake_agent", "--name", "helper"])
        .trim()
        .to_string();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _context = runtime.enter();
    let mut command = server.panectl();
    command.arg("mcp").env("TMUX_PANE", "%0");
    let client = runtime.block_on(async {
        let transport = TokioChildProcess::new(tokio::process::Command::from(command))
            .expect("start panectl mcp");
        tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
            .await
            .expect("no handshake within 20 s")
            .expect("the MCP handshake")
    });
    let tools = runtime
        .block_on(client.list_all_tools())
        .expect("tools/list");
    let tool = tools
        .iter()
        .find(|t| t.name == "close_agent")
        .expect("a close_agent tool");
    assert_eq!(tool.input_schema["required"], json!(["pane"]));

    let closed: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "close_agent",
        json!({"pane": "helper", "timeout_seconds": 5}),
    ))
    .expect("JSON");
    assert_eq!(closed["pane"], helper.as_str(), "{closed}");
    assert_eq!(closed["how"], "exited", "{closed}");
    assert!(!pane_exists(server, &helper));

    let (text, error) = call(&runtime, &client, "close_agent", json!({"pane": "%999"}));
    assert!(error, "{text}");
    assert!(
        text.starts_with("close_agent: no pane named \"%999\""),
        "{text}"
    );
    runtime
        .block_on(tokio::time::timeout(
            Duration::from_secs(10),
            client.cancel(),
        ))
        .expect("the client closes within 10 s")
        .expect("the client closes");
}
