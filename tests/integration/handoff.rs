//! `handoff`, `assign` and start-up prompts against real tmux and the fake agent
//! (`scripts/programs/fake_agent.py`, which answers a message with its first line reversed).

use std::time::Duration;

use serde_json::Value;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

fn assignment(setup: &Setup, id: &str) -> Value {
    setup
        .server
        .panectl_ok(&["assignments", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("assignment line"))
        .find(|a| a["id"].as_i64().map(|n| n.to_string()).as_deref() == Some(id))
        .expect("the assignment")
}

fn pane_ids(setup: &Setup) -> Vec<String> {
    setup
        .server
        .panes()
        .iter()
        .map(|p| p["pane"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn handoff_answers_with_the_workers_reply_and_assign_calls_back() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.5);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    // The assigner: a second fake agent, launched.
    let boss = server.panectl_ok(&["launch", "fake_agent", "--name", "boss"]);
    let boss = boss.trim();
    // The agent's name finds it even after its window is renamed.
    server.tmux(&["rename-window", "-t", boss, "renamed"]);
    server.wait_for("the name to be known", Duration::from_secs(5), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == boss && p["name"] == "boss")
    });
    assert_eq!(server.panectl_ok(&["status", "boss"]).trim(), "idle");

    // Handoff: the worker's answer, exactly, on stdout.
    let answer = server.panectl_ok(&["handoff", "%0", "hello world ; #{pane_id}"]);
    assert_eq!(answer, "}di_enap{# ; dlrow olleh\n");
    assert_eq!(setup.bodies().last().unwrap(), b"hello world ; #{pane_id}");

    // A turn that never ends (a dialog) times out: exit code 1, and says why.
    let stuck = server
        .panectl()
        .args(["handoff", "%0", "ASK first", "--timeout", "2"])
        .output()
        .unwrap();
    assert_eq!(stuck.status.code(), Some(1), "{stuck:?}");
    let stderr = String::from_utf8_lossy(&stuck.stderr);
    assert!(
        stderr.contains("did not finish") && stderr.contains("waiting_user_answer"),
        "{stderr}"
    );
    server.panectl_ok(&["key", "%0", "y"]);
    setup.wait_status(&["idle", "completed"], Duration::from_secs(10));

    // Bad requests: exit code 2, clear words; a pane that does not exist: 1 (not found).
    for (args, words, code) in [
        (
            &["handoff", "%0"][..],
            "give the worker's pane and the message",
            2,
        ),
        (&["handoff", "%99", "x"][..], "%99", 1),
        (
            &["handoff", "--launch", "fake_agent", "%0", "x"][..],
            "only the message",
            2,
        ),
        (
            &["handoff", "%0", "x", "--name", "n"][..],
            "need --launch",
            2,
        ),
    ] {
        let output = server.panectl().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}: {output:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(words),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    // Assign returns at once; the answer is queued for the assigner and delivered to it.
    let id = server.panectl_ok(&["assign", "%0", "task two", "--reply-to", boss]);
    let id = id.trim();
    let mut done = Value::Null;
    server.wait_for(
        "the assignment to be answered",
        Duration::from_secs(20),
        || {
            done = assignment(&setup, id);
            done["state"] == "answered"
        },
    );
    let reply_id = done["reply_id"].as_i64().expect("reply id");
    let reply = setup.wait_state(reply_id, "delivered", Duration::from_secs(20));
    assert_eq!(reply["pane"], boss);
    assert_eq!(reply["sender"], "%0");
    let expected = format!("[panectl] Answer from %0 to assignment {id}:\nowt ksat");
    assert_eq!(reply["body"], expected.as_str());
    let answers = setup
        .bodies()
        .into_iter()
        .filter(|b| b.starts_with(b"[panectl] Answer"))
        .collect::<Vec<_>>();
    assert_eq!(answers, [expected.as_bytes()], "delivered once, byte-exact");

    // Assign without --reply-to outside tmux: refused before anything is queued.
    let orphan = server
        .panectl()
        .args(["assign", "%0", "x"])
        .output()
        .unwrap();
    assert!(!orphan.status.success());
    assert!(String::from_utf8_lossy(&orphan.stderr).contains("--reply-to"));

    // Handoff to a worker launched for it, torn down after.
    let before = pane_ids(&setup);
    let answer = server.panectl_ok(&[
        "handoff",
        "--launch",
        "fake_agent",
        "--name",
        "temp",
        "--teardown",
        "abc",
    ]);
    assert_eq!(answer, "cba\n");
    server.wait_for("the worker's pane to close", Duration::from_secs(5), || {
        pane_ids(&setup) == before
    });
    drop(daemon);
}

#[test]
fn an_assignment_survives_a_daemon_crash_and_answers_once() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(3.0);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let boss = server.panectl_ok(&["launch", "fake_agent", "--name", "boss"]);
    let boss = boss.trim().to_string();
    let id = server.panectl_ok(&["assign", "%0", "long job", "--reply-to", &boss]);
    let id = id.trim().to_string();
    let task = assignment(&setup, &id)["message_id"].as_i64().unwrap();
    // The worker is on it (3 s of work) when the daemon dies.
    setup.wait_state(task, "delivered", Duration::from_secs(10));
    setup.wait_status(&["processing"], Duration::from_secs(5));
    daemon.crash();
    let _daemon = setup.daemon_for(3);
    let mut done = Value::Null;
    server.wait_for(
        "the assignment to be answered",
        Duration::from_secs(30),
        || {
            done = assignment(&setup, &id);
            done["state"] == "answered"
        },
    );
    assert_eq!(done["busy_seen"], true, "{done}");
    let reply = setup.wait_state(
        done["reply_id"].as_i64().unwrap(),
        "delivered",
        Duration::from_secs(20),
    );
    assert_eq!(
        reply["body"],
        format!("[panectl] Answer from %0 to assignment {id}:\nboj gnol").as_str()
    );
    let to_boss = setup
        .messages()
        .into_iter()
        .filter(|m| m["pane"] == boss.as_str())
        .count();
    assert_eq!(to_boss, 1, "exactly one answer");
}

#[test]
fn startup_prompts_are_answered_only_when_asked() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    let server = &setup.server;

    // Not opted in: the launch ends at once with the dialog named, the pane left to the user.
    let refused = server
        .panectl()
        .args([
            "launch",
            "fake_agent",
            "--env",
            "FAKE_TRUST=1",
            "--timeout",
            "30",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("fake_agent.trust") && stderr.contains("--accept-startup-prompts"),
        "{stderr}"
    );
    assert!(!setup.received().iter().any(|e| e["trusted"] == true));

    // Opted in: answered with the rule's keys, then ready.
    let pane = server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--env",
        "FAKE_TRUST=1",
        "--accept-startup-prompts",
    ]);
    let pane = pane.trim();
    assert!(pane.starts_with('%'), "{pane}");
    assert_eq!(server.panectl_ok(&["status", pane]).trim(), "idle");
    let trusted = setup
        .received()
        .iter()
        .filter(|e| e["trusted"] == true)
        .count();
    assert_eq!(trusted, 1);
}
