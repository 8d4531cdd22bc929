//! Two real Claude Code agents (against the fake model server) brought back after the tmux
//! server died: `panectl restore` starts each in its session, resuming its own conversation
//! (the id its hooks reported), so the fake model's next request from each carries that
//! agent's earlier turn and not the other's.

use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::ClaudeHome;
use crate::fake_model::FakeModel;
use crate::support::{TmuxServer, daemon_test_lock};

/// `panectl restore ARGS --json`.
fn restore(server: &TmuxServer, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["restore", "--json"];
    all.extend_from_slice(args);
    let output = server
        .panectl()
        .args(&all)
        .output()
        .expect("panectl restore");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn find<'a>(done: &'a [Value], key: &str) -> &'a Value {
    done.iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {done:#?}"))
}

/// Waits until the agent `name` has finished a turn.
fn wait_completed(server: &TmuxServer, name: &str) {
    server.wait_for(
        &format!("{name} to complete its turn"),
        Duration::from_secs(90),
        || {
            server
                .panes()
                .iter()
                .any(|p| p["name"] == name && p["status"] == "completed")
        },
    );
}

#[test]
fn two_claude_code_agents_resume_their_own_conversations_after_tmux_died() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let mut server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = claude.work().to_string_lossy().into_owned();
    let env = claude.launch_env(&model.url());
    let names = ["alpha", "beta"];
    for name in names {
        let mut args = vec![
            "launch",
            "claude_code",
            "--name",
            name,
            "--cwd",
            &work,
            "--timeout",
            "90",
        ];
        for pair in &env {
            args.extend(["--env", pair.as_str()]);
        }
        server.panectl_ok(&args);
    }
    for name in names {
        server.panectl_ok(&["send", name, &format!("reply:remember {name}-one")]);
    }
    for name in names {
        wait_completed(&server, name);
    }
    // Their hooks said which conversation each is.
    let mut conversations = Vec::new();
    server.wait_for("both conversation ids", Duration::from_secs(20), || {
        let planned = restore(&server, &["--dry-run"]);
        conversations = names
            .iter()
            .map(|n| {
                find(&planned, n)["conversation"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        conversations.iter().all(|c| !c.is_empty())
    });
    assert_ne!(conversations[0], conversations[1]);

    // tmux dies and starts again; restore resumes both.
    server.tmux(&["kill-server"]);
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again("fresh", 120, 40);
    server.wait_for_panes(1);
    let done = restore(&server, &["--timeout", "90s"]);
    for (name, conversation) in names.iter().zip(&conversations) {
        let restored = find(&done, name);
        assert_eq!(restored["outcome"], "resumed", "{done:#?}");
        assert_eq!(restored["conversation"], conversation.as_str(), "{done:#?}");
    }
    // Each one's next request carries its own earlier turn, not the other's.
    for (name, other) in [("alpha", "beta"), ("beta", "alpha")] {
        let prompt = format!("reply:{name} is back");
        server.panectl_ok(&["send", name, &prompt]);
        server.wait_for(
            &format!("{name}'s next request"),
            Duration::from_secs(60),
            || model.log().iter().any(|r| r.prompt == prompt),
        );
        let log = model.log();
        let request = log.iter().find(|r| r.prompt == prompt).unwrap();
        assert!(
            request
                .conversation
                .contains(&format!("remember {name}-one")),
            "{name} did not resume its conversation: {}",
            request.conversation
        );
        assert!(
            !request
                .conversation
                .contains(&format!("remember {other}-one")),
            "{name} carries {other}'s conversation"
        );
    }
}
