//! One exit-code table for every command (docs/commands.md, "Exit codes"): 0 done, 1 not
//! reached, 2 usage or refused, 3 unreachable. Each row, from the real binary against a real
//! tmux server and daemon.

use std::time::Duration;

use crate::support::{TmuxServer, daemon_test_lock};

fn code(server: &TmuxServer, args: &[&str]) -> (Option<i32>, String) {
    let output = server.panectl().args(args).output().expect("run panectl");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_kind_of_outcome_has_its_code() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // 3: no daemon runs for the server (and 1 from `daemon status`, which only reports).
    let (no_daemon, said) = code(&server, &["ls"]);
    assert_eq!(no_daemon, Some(3), "{said}");
    assert!(said.contains("no panectl daemon"), "{said}");
    assert_eq!(code(&server, &["daemon", "status"]).0, Some(1));

    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    // 0: done.
    assert_eq!(code(&server, &["status", "%0"]).0, Some(0));
    assert_eq!(code(&server, &["health"]).0, Some(0));
    // 1: not found, timed out.
    let (unknown, said) = code(&server, &["status", "%99"]);
    assert_eq!(unknown, Some(1), "{said}");
    assert_eq!(code(&server, &["inbox", "cancel", "999999"]).0, Some(1));
    let (timed_out, said) = code(
        &server,
        &["wait", "%0", "--until", "processing", "--timeout", "300ms"],
    );
    assert_eq!(timed_out, Some(1), "{said}");
    // 2: usage, bad values, refused by the daemon.
    assert_eq!(code(&server, &["status", "--bogus"]).0, Some(2));
    let (bad_duration, said) = code(
        &server,
        &["wait", "%0", "--until", "idle", "--timeout", "5 parsecs"],
    );
    assert_eq!(bad_duration, Some(2), "{said}");
    assert!(said.contains("unknown unit"), "{said}");
    let (shell, said) = code(&server, &["send", "%0", "echo refused"]);
    assert_eq!(shell, Some(2), "{said}");
    assert!(said.contains("--allow-shell"), "{said}");
    let (status, said) = code(&server, &["wait", "%0", "--until", "sleepy"]);
    assert_eq!(status, Some(2), "{said}");
    // clap refuses it before the daemon is asked, listing the words there are.
    assert!(
        said.contains("invalid value 'sleepy' for '--until"),
        "{said}"
    );
    assert!(
        said.contains("idle, processing, completed, waiting_user_answer, error, unknown, exited"),
        "{said}"
    );
    assert!(!said.contains("panectl: panectl:"), "{said}");
    // Nothing was typed into the shell by the refused send.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!server.tmux_screen("%0").contains("refused"));
}

/// `--json` on the commands that print data: one JSON document each.
#[test]
fn data_commands_print_json_when_asked() {
    let _guard = daemon_test_lock();
    let setup = crate::inbox::Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(15));
    let server = &setup.server;
    let json = |args: &[&str]| -> serde_json::Value {
        let text = server.panectl_ok(args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
    };
    let status = json(&["status", "%0", "--json"]);
    assert_eq!(status["pane"], "%0", "{status}");
    assert_eq!(status["status"], "idle", "{status}");
    assert_eq!(status["provider"], "fake_agent", "{status}");
    let providers = json(&["providers", "--json"]);
    assert!(
        providers
            .as_array()
            .is_some_and(|all| all.iter().any(|p| p["id"] == "claude_code")),
        "{providers}"
    );
    let sent = json(&["send", "%0", "--json", "hello in JSON"]);
    assert_eq!(sent["pane"], "%0", "{sent}");
    assert!(sent["id"].as_i64().is_some(), "{sent}");
    setup.wait_state(
        sent["id"].as_i64().expect("id"),
        "delivered",
        Duration::from_secs(20),
    );
    let launched = json(&["launch", "fake_agent", "--name", "in-json", "--json"]);
    assert_eq!(launched["provider"], "fake_agent", "{launched}");
    assert_eq!(launched["name"], "in-json", "{launched}");
    assert!(
        launched["pane"]
            .as_str()
            .is_some_and(|p| p.starts_with('%')),
        "{launched}"
    );
    let pane = launched["pane"].as_str().expect("pane").to_string();
    let waited = json(&[
        "wait",
        &pane,
        "--until",
        "idle",
        "--timeout",
        "20s",
        "--json",
    ]);
    assert_eq!(
        (&waited["reached"], &waited["status"]),
        (&serde_json::json!(true), &serde_json::json!("idle")),
        "{waited}"
    );
    // Not reached: the answer still, with exit code 1.
    let missed = server
        .panectl()
        .args([
            "wait",
            &pane,
            "--until",
            "error",
            "--timeout",
            "200ms",
            "--json",
        ])
        .output()
        .expect("run panectl");
    assert_eq!(missed.status.code(), Some(1), "{missed:?}");
    let missed: serde_json::Value = serde_json::from_slice(&missed.stdout).expect("JSON");
    assert_eq!(missed["reached"], false, "{missed}");
    let set = json(&["set-provider", &pane, "fake_agent", "--json"]);
    assert_eq!(
        (&set["pane"], &set["provider"]),
        (&serde_json::json!(pane), &serde_json::json!("fake_agent")),
        "{set}"
    );
    let transport = json(&["transport", &pane, "--json"]);
    assert_eq!(transport["transport"], "control", "{transport}");
    let last = json(&["last", "%0", "--json"]);
    assert_eq!(last["pane"], "%0", "{last}");
    assert!(
        last["answer"]
            .as_str()
            .is_some_and(|a| a.contains("NOSJ ni olleh")),
        "{last}"
    );
    // A message held by a dialog, cancelled: the message itself.
    server.panectl_ok(&["send", &pane, "ASK hold on"]);
    crate::board::wait_pane_status(server, &pane, "waiting_user_answer");
    let held = json(&["send", &pane, "--json", "held"]);
    let id = held["id"].as_i64().expect("id").to_string();
    let cancelled = json(&["inbox", "cancel", &id, "--json"]);
    assert_eq!(cancelled["state"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["body"], "held", "{cancelled}");
    // `--json` and `--notify` say different things about where the outcome goes.
    let both = server
        .panectl()
        .args(["send", "%0", "--json", "--notify", "x"])
        .output()
        .expect("run panectl");
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

#[test]
fn a_mistyped_server_name_is_told_so_and_not_to_start_a_daemon_there() {
    let server = TmuxServer::start(80, 24);
    let typo = format!("{}x", server.socket_name());
    // As the harness runs panectl, with the mistyped name instead of the server's.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_panectl"))
        .args(["-L", &typo, "ls"])
        .env_remove("TMUX")
        .env("TMUX_TMPDIR", server.dir())
        .env("XDG_RUNTIME_DIR", server.dir().join("run"))
        .env("XDG_STATE_HOME", server.dir().join("state"))
        .output()
        .expect("run panectl");
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{said}");
    assert!(said.contains("no tmux server is running there"), "{said}");
    assert!(!said.contains("daemon --detach"), "{said}");
    // The server that does run is named as a choice.
    assert!(
        said.contains(&format!("-L {}", server.socket_name())),
        "{said}"
    );
    // The right name, with no daemon yet: the way to start one.
    let (code, said) = code(&server, &["ls"]);
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("start one with: panectl"), "{said}");
}
