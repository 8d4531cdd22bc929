//! `panectl restore` after the tmux server died: the agents panectl launched come back by
//! name, each in its session (made again when it is gone), in launch order; an agent that runs
//! is left alone, so a second restore starts nothing. (The fake agent has no conversation to
//! resume: it starts fresh and says so; Claude Code's resume is tested in `restore_claude`.)

use std::time::Duration;

use serde_json::Value;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

/// `panectl restore ARGS --json`.
fn restore(setup: &Setup, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["restore", "--json"];
    all.extend_from_slice(args);
    let text = setup.server.panectl_ok(&all);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn outcome<'a>(done: &'a [Value], key: &str) -> &'a Value {
    done.iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {done:#?}"))
}

#[test]
fn launched_agents_come_back_by_name_in_their_sessions_once() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let home_session = setup.server.panes()[0]["session"]
        .as_str()
        .unwrap()
        .to_string();
    // Windows: home 1 (closed below), home 2 ra; other 0 (closed below), other 1 rb.
    let launch = |name: &str, session: &str, extra: &[&str]| {
        let mut args = vec!["launch", "fake_agent", "--name", name, "--session", session];
        args.extend_from_slice(extra);
        setup.server.panectl_ok(&args);
    };
    launch("gone1", &home_session, &[]);
    launch("ra", &home_session, &["--", "first"]);
    launch("gone2", "other", &["--new-session"]);
    launch("rb", "other", &["--env", "LAUNCH_VAR=kept"]);
    for closed in ["gone1", "gone2"] {
        setup.server.panectl_ok(&["close", closed]);
    }
    // Both run: nothing to do; the closed ones are forgotten.
    let done = restore(&setup, &["--dry-run"]);
    assert_eq!(outcome(&done, "ra")["outcome"], "running", "{done:#?}");
    assert_eq!(outcome(&done, "rb")["outcome"], "running", "{done:#?}");
    assert_eq!(done.len(), 2, "{done:#?}");

    // tmux dies, and starts again with a session of its own.
    setup.server.tmux(&["kill-server"]);
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(30),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    // tmux starts again with the home session (one window, 0) made by hand.
    setup.server.start_again(&home_session, 100, 30);
    setup.server.wait_for_panes(1);
    let planned = restore(&setup, &["--dry-run"]);
    assert_eq!(
        outcome(&planned, "ra")["outcome"],
        "would_start_fresh",
        "{planned:#?}"
    );
    assert_eq!(setup.server.panes().len(), 1, "a dry run started something");

    // Restored: each agent by its name, in its session (`other` made again), as launched, in
    // its window's place: ra at 2 though 1 is free, rb at 1 in the session it made again.
    let done = restore(&setup, &[]);
    for key in ["ra", "rb"] {
        assert_eq!(outcome(&done, key)["outcome"], "started_fresh", "{done:#?}");
    }
    let panes = setup.server.panes();
    let pane_of = |name: &str| {
        panes
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no agent {name} in {panes:#?}"))
            .clone()
    };
    let ra = pane_of("ra");
    let rb = pane_of("rb");
    assert_eq!(ra["session"], home_session.as_str(), "{ra:#}");
    assert_eq!(rb["session"], "other", "{rb:#}");
    assert_eq!(ra["window_index"], 2, "{ra:#}");
    assert_eq!(rb["window_index"], 1, "{rb:#}");
    assert_eq!(ra["provider"], "fake_agent");
    let ra_pane = ra["pane"].as_str().unwrap();
    let rb_pane = rb["pane"].as_str().unwrap();
    assert_eq!(outcome(&done, "ra")["pane"], ra_pane);
    assert!(setup.server.daemon_screen(ra_pane).contains("args=first"));
    assert!(setup.server.daemon_screen(rb_pane).contains("var=kept"));

    // Again: both run, nothing starts twice.
    let again = restore(&setup, &[]);
    for key in ["ra", "rb"] {
        assert_eq!(outcome(&again, key)["outcome"], "running", "{again:#?}");
    }
    assert_eq!(setup.server.panes().len(), panes.len());
    // In words, too.
    let text = setup.server.panectl_ok(&["restore", "--dry-run"]);
    assert!(
        text.contains(&format!(
            "ra (fake_agent, session {home_session}): runs in {ra_pane}"
        )),
        "{text}"
    );
}

/// `panectl send NAME TEXT`: the message's id, and what it printed on stderr.
fn send_to(setup: &Setup, name: &str, text: &str) -> (i64, String) {
    let output = setup
        .server
        .panectl()
        .args(["send", name, text])
        .output()
        .expect("run panectl send");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "send failed: {stderr}");
    let id = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {output:?}"));
    (id, stderr)
}

#[test]
fn messages_for_an_agent_wait_while_it_is_down_and_arrive_once_when_it_is_restored() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    setup.server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--name",
        "mail",
        "--new-session",
        "--session",
        "post",
    ]);
    // A dialog holds the agent: the next message stays pending.
    let (asked, _) = send_to(&setup, "mail", "ASK first");
    setup.wait_state(asked, "delivered", Duration::from_secs(15));
    let (before, _) = send_to(&setup, "mail", "queued before the crash");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(setup.message(before)["state"], "pending");
    assert_eq!(setup.message(before)["to_agent"], "mail");

    setup.server.tmux(&["kill-server"]);
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(30),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    setup.server.start_again("fresh", 100, 30);
    setup.server.wait_for_panes(1);
    // Its pane is gone: the message waits for the agent rather than failing.
    let held = setup.wait_state(before, "held", Duration::from_secs(20));
    assert!(
        held["reason"].as_str().unwrap().contains("\"mail\""),
        "{held}"
    );
    // Sent while it is down: held at once, and said so.
    let (down, said) = send_to(&setup, "mail", "sent while it was down");
    assert_eq!(setup.message(down)["state"], "held");
    assert!(said.contains("agent mail is not running"), "{said}");
    let listed = setup.server.panectl_ok(&["inbox", "--state", "held"]);
    assert_eq!(listed.lines().count(), 3, "a header and two: {listed}");
    // A name nobody knows is still not found.
    let unknown = setup
        .server
        .panectl()
        .args(["send", "nobody", "hello"])
        .output()
        .expect("run panectl");
    assert!(!unknown.status.success());

    let done = restore(&setup, &[]);
    assert_eq!(
        outcome(&done, "mail")["outcome"],
        "started_fresh",
        "{done:#?}"
    );
    let pane = outcome(&done, "mail")["pane"].as_str().unwrap().to_string();
    for id in [before, down] {
        let delivered = setup.wait_state(id, "delivered", Duration::from_secs(20));
        assert_eq!(delivered["pane"], pane.as_str(), "{delivered}");
        assert_eq!(delivered["attempts"], 1, "{delivered}");
    }
    // Once each, in the order they were sent; a second restore changes nothing.
    let again = restore(&setup, &[]);
    assert_eq!(outcome(&again, "mail")["outcome"], "running", "{again:#?}");
    std::thread::sleep(Duration::from_secs(1));
    let bodies: Vec<Vec<u8>> = setup.bodies();
    let count = |text: &[u8]| bodies.iter().filter(|b| b.as_slice() == text).count();
    assert_eq!(count(b"queued before the crash"), 1, "{bodies:?}");
    assert_eq!(count(b"sent while it was down"), 1, "{bodies:?}");
    let position = |text: &[u8]| bodies.iter().position(|b| b.as_slice() == text);
    assert!(position(b"queued before the crash") < position(b"sent while it was down"));

    // Closed on purpose: not restored, and nothing waits for it any more.
    setup
        .server
        .panectl_ok(&["close", "mail", "--timeout", "2s"]);
    let after = restore(&setup, &["--dry-run"]);
    assert!(
        after.iter().all(|r| r["key"] != "mail"),
        "a closed agent would come back: {after:#?}"
    );
    let refused = setup
        .server
        .panectl()
        .args(["send", "mail", "too late"])
        .output()
        .expect("run panectl");
    assert!(!refused.status.success(), "{refused:?}");
}

#[test]
fn a_daemon_killed_during_a_restore_starts_no_agent_twice_when_run_again() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let names = ["k1", "k2", "k3"];
    for (index, name) in names.iter().enumerate() {
        let mut args = vec!["launch", "fake_agent", "--name", name, "--session", "crew"];
        if index == 0 {
            args.push("--new-session");
        }
        setup.server.panectl_ok(&args);
    }
    setup.server.tmux(&["kill-server"]);
    // How soon the daemon notices is not what this test is about: on a loaded machine (CI) it
    // once took more than 5 s.
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(30),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    setup.server.start_again("fresh", 100, 30);
    setup.server.wait_for_panes(1);
    let named = |setup: &Setup| -> Vec<String> {
        let listed = setup
            .server
            .tmux(&["list-panes", "-a", "-F", "#{@panectl_name}"]);
        let mut names: Vec<String> = listed
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        names.sort();
        names
    };
    // The restore is under way (one agent back, the others to come) when the daemon dies.
    let mut restoring = setup
        .server
        .panectl()
        .args(["restore", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run panectl restore");
    setup
        .server
        .wait_for("the first agent back", Duration::from_secs(20), || {
            !named(&setup).is_empty()
        });
    daemon.crash();
    let _ = restoring.wait();
    let before = named(&setup);
    assert!(
        before.len() < names.len(),
        "the restore had ended: {before:?}"
    );

    // Run again with a new daemon: each agent once.
    let _daemon = setup.server.start_daemon(&[
        "--rules-dir",
        &setup.rules_dir().display().to_string(),
        "--submit-delay",
        "150ms",
    ]);
    let done = restore(&setup, &[]);
    for name in names {
        let outcome = outcome(&done, name)["outcome"].clone();
        assert!(
            outcome == "running" || outcome == "started_fresh",
            "{name}: {done:#?}"
        );
    }
    for name in &before {
        assert_eq!(outcome(&done, name)["outcome"], "running", "{done:#?}");
    }
    assert_eq!(named(&setup), names, "an agent started twice or not at all");
    assert_eq!(restore(&setup, &["--dry-run"]).len(), names.len());
}

#[test]
fn an_assignment_to_a_named_worker_follows_it_across_a_restore_and_answers_once() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    for (name, session) in [("boss", "hq"), ("crew1", "crew")] {
        setup.server.panectl_ok(&[
            "launch",
            "fake_agent",
            "--name",
            name,
            "--new-session",
            "--session",
            session,
        ]);
    }
    // A dialog holds the worker: the task stays queued until tmux dies.
    let (asked, _) = send_to(&setup, "crew1", "ASK first");
    setup.wait_state(asked, "delivered", Duration::from_secs(15));
    let id = setup
        .server
        .panectl_ok(&["assign", "crew1", "task three", "--reply-to", "boss"])
        .trim()
        .to_string();
    let assignment = |setup: &Setup| -> Value {
        let listed = setup.server.panectl_ok(&["assignments", "--json"]);
        listed
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("an assignment line"))
            .find(|a| a["id"].as_i64().map(|n| n.to_string()).as_deref() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("no assignment {id}: {listed}"))
    };
    let task = assignment(&setup)["message_id"].as_i64().unwrap();
    let old_worker = assignment(&setup)["worker"].as_str().unwrap().to_string();
    assert_eq!(setup.message(task)["to_agent"], "crew1");

    setup.server.tmux(&["kill-server"]);
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(30),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    setup.server.start_again("fresh", 100, 30);
    setup.server.wait_for_panes(1);
    // The task waits for its worker, and the assignment for its answer.
    setup.wait_state(task, "held", Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(assignment(&setup)["state"], "working");

    let done = restore(&setup, &[]);
    let worker = outcome(&done, "crew1")["pane"]
        .as_str()
        .unwrap()
        .to_string();
    let boss = outcome(&done, "boss")["pane"].as_str().unwrap().to_string();
    assert_ne!(worker, boss);
    setup.wait_state(task, "delivered", Duration::from_secs(20));
    let mut answered = Value::Null;
    setup.server.wait_for(
        "the assignment to be answered",
        Duration::from_secs(30),
        || {
            answered = assignment(&setup);
            answered["state"] != "working"
        },
    );
    assert_eq!(answered["state"], "answered", "{answered}");
    // It followed the worker to its new pane (the old one may have the same id after tmux
    // started again), and the answer went to the restored assigner once.
    assert_eq!(
        answered["worker"],
        worker.as_str(),
        "was {old_worker}: {answered}"
    );
    let reply_id = answered["reply_id"].as_i64().unwrap();
    let reply = setup.wait_state(reply_id, "delivered", Duration::from_secs(20));
    assert_eq!(reply["pane"], boss.as_str(), "{reply}");
    let expected = format!("[panectl] Answer from {worker} to assignment {id}:\neerht ksat");
    std::thread::sleep(Duration::from_secs(1));
    let bodies = setup.bodies();
    assert_eq!(
        bodies
            .iter()
            .filter(|b| b.as_slice() == expected.as_bytes())
            .count(),
        1,
        "{bodies:?}"
    );
    assert_eq!(
        bodies
            .iter()
            .filter(|b| b.as_slice() == b"task three")
            .count(),
        1,
        "{bodies:?}"
    );
}

/// `NAME LEFT TOP ACTIVE` for each pane of session `session`'s window at `index`, by name.
fn placed(setup: &Setup, session: &str) -> Vec<(String, u32, u32, bool)> {
    let listed = setup.server.tmux(&[
        "list-panes",
        "-s",
        "-t",
        session,
        "-F",
        "#{@panectl_name} #{window_index} #{pane_left} #{pane_top} #{pane_active}",
    ]);
    let mut placed: Vec<(String, u32, u32, bool)> = listed
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields[1], "0", "a pane outside the first window: {listed}");
            (
                fields[0].to_string(),
                fields[2].parse().unwrap(),
                fields[3].parse().unwrap(),
                fields[4] == "1",
            )
        })
        .collect();
    placed.sort();
    placed
}

#[test]
fn agents_split_off_another_come_back_split_off_it() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    setup.server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--name",
        "lead",
        "--new-session",
        "--session",
        "team",
    ]);
    // Beside it (split by its name) and below it (split by its pane id).
    let lead = setup
        .server
        .tmux(&["display", "-p", "-t", "team:0", "#{pane_id}"]);
    setup
        .server
        .panectl_ok(&["launch", "fake_agent", "--name", "side", "--split", "lead"]);
    setup.server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--name",
        "under",
        "--split",
        lead.trim(),
        "--split-below",
    ]);
    let check = |setup: &Setup| {
        let panes = placed(setup, "team");
        let names: Vec<&str> = panes.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(names, ["lead", "side", "under"], "{panes:?}");
        let (lead, side, under) = (&panes[0], &panes[1], &panes[2]);
        assert!(
            side.1 > lead.1 && side.2 == lead.2,
            "side is not beside lead: {panes:?}"
        );
        assert!(
            under.2 > lead.2 && under.1 == lead.1,
            "under is not below lead: {panes:?}"
        );
        // The focus stays where it was: the splits did not take it.
        assert!(lead.3 && !side.3 && !under.3, "{panes:?}");
    };
    check(&setup);
    // The user's window keeps its own remain-on-exit: only the agents' panes had it, and
    // only while they started.
    let window = setup
        .server
        .tmux(&["show-options", "-w", "-t", "team:0", "remain-on-exit"]);
    assert_eq!(window.trim(), "", "{window}");

    setup.server.tmux(&["kill-server"]);
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(30),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    setup.server.start_again("fresh", 100, 30);
    setup.server.wait_for_panes(1);
    let done = restore(&setup, &[]);
    for key in ["lead", "side", "under"] {
        assert_eq!(outcome(&done, key)["outcome"], "started_fresh", "{done:#?}");
    }
    check(&setup);
    assert_eq!(restore(&setup, &[]).len(), 3);
}
