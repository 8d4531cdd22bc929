//! Orchestration with real Claude Code workers and the fake model server: panectl launches
//! them (one in a folder Claude Code has not been told to trust, whose dialog panectl answers
//! only when asked), a handoff returns exactly the fake model's answer, and an assignment's
//! answer arrives in the assigning Claude Code as a new turn.

use std::time::Duration;

use crate::agent_clis::ClaudeHome;
use crate::fake_model::FakeModel;
use crate::support::{TmuxServer, daemon_test_lock};

#[test]
fn claude_code_workers_take_handoffs_and_assignments() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = claude.work().to_string_lossy().into_owned();
    let launch = |name: &str, cwd: &str, extra: &[&str]| {
        let mut args = vec!["launch", "claude_code", "--name", name, "--cwd", cwd];
        let env = claude.launch_env(&model.url());
        for pair in &env {
            args.extend(["--env", pair.as_str()]);
        }
        args.extend(extra);
        args.extend(["--timeout", "90"]);
        server
            .panectl()
            .args(&args)
            .output()
            .expect("run panectl launch")
    };

    // The first worker, in the trusted folder: straight to idle.
    let first = launch("first", &work, &[]);
    assert!(first.status.success(), "{first:?}");
    let first = String::from_utf8_lossy(&first.stdout).trim().to_string();
    assert_eq!(server.panectl_ok(&["status", &first]).trim(), "idle");

    // A handoff returns exactly the model's answer.
    let answer = server.panectl_ok(&[
        "handoff",
        "first",
        "reply:The fake model says hello.",
        "--timeout",
        "60",
    ]);
    assert_eq!(answer, "The fake model says hello.\n");

    // The second worker, in a folder Claude Code asks about: refused without the opt-in,
    // accepted with it.
    let untrusted = tempfile::Builder::new()
        .prefix("panectl-claude-untrusted-")
        .tempdir()
        .expect("dir");
    let untrusted = untrusted.path().to_string_lossy().into_owned();
    let refused = launch("second", &untrusted, &[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("claude_code.trust_folder"), "{stderr}");
    let refused_pane = stderr
        .split_whitespace()
        .find(|w| w.starts_with('%'))
        .expect("the pane in the message")
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .to_string();
    server.tmux(&["kill-pane", "-t", &refused_pane]);
    let second = launch("third", &untrusted, &["--accept-startup-prompts"]);
    assert!(second.status.success(), "{second:?}");
    let second = String::from_utf8_lossy(&second.stdout).trim().to_string();
    assert_eq!(server.panectl_ok(&["status", &second]).trim(), "idle");

    // The first worker assigns work to the second; the answer comes back to it as a turn.
    let id = server.panectl_ok(&[
        "assign",
        &second,
        "reply:Second worker answer.",
        "--reply-to",
        &first,
    ]);
    let id = id.trim();
    let expected =
        format!("[panectl] Answer from {second} to assignment {id}:\nSecond worker answer.");
    server.wait_for(
        "the answer to reach the first worker's model",
        Duration::from_secs(60),
        || model.log().iter().any(|l| l.prompt.contains(&expected)),
    );
    let assignments = server.panectl_ok(&["assignments", "--json"]);
    let done: serde_json::Value =
        serde_json::from_str(assignments.lines().next().expect("one")).expect("json");
    assert_eq!(done["state"], "answered", "{done}");
    assert_eq!(done["reply_to"], first.as_str());
    server.wait_for(
        "the first worker's turn to end",
        Duration::from_secs(30),
        || server.panectl_ok(&["status", &first]).trim() == "completed",
    );
}

/// An orchestrator that types the moment `launch` returns (issue 31, item 9): the launch says
/// ready only once Claude Code takes input, and `input` confirms its Enter started the turn
/// (pressing it once more if the text still sat in the input box), so the model gets the
/// prompt every time.
#[test]
fn input_the_moment_launch_returns_starts_the_turn() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = claude.work().to_string_lossy().into_owned();
    for round in 0..2 {
        let name = format!("quick{round}");
        let mut args = vec![
            "launch".to_string(),
            "claude_code".into(),
            "--name".into(),
            name.clone(),
            "--cwd".into(),
            work.clone(),
            "--timeout".into(),
            "90".into(),
        ];
        for pair in claude.launch_env(&model.url()) {
            args.extend(["--env".to_string(), pair]);
        }
        let launched = server
            .panectl()
            .args(&args)
            .output()
            .expect("run panectl launch");
        assert!(launched.status.success(), "{launched:?}");
        let pane = String::from_utf8_lossy(&launched.stdout).trim().to_string();
        let prompt = format!("reply:Answer {round} at once.");
        let typed = server
            .panectl()
            .args(["input", &pane, &prompt])
            .output()
            .expect("run panectl input");
        assert!(typed.status.success(), "{typed:?}");
        server.wait_for(
            "the prompt to reach the model",
            Duration::from_secs(30),
            || {
                model
                    .log()
                    .iter()
                    .any(|l| l.prompt.contains(&format!("Answer {round} at once.")))
            },
        );
        server.wait_for("the turn to end", Duration::from_secs(30), || {
            server.panectl_ok(&["status", &pane]).trim() == "completed"
        });
    }
}
