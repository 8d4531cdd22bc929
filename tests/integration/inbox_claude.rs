//! The inbox with a real Claude Code and the fake model server: messages are delivered as
//! turns (pasted, submitted, answered), and a message whose turn asks for a tool permission at
//! once leaves the dialog open: no submit key of the delivery answers it (a known orchestrator's
//! double Enter approves exactly such dialogs).

use std::time::Duration;

use crate::agent_clis::ClaudeHome;
use crate::fake_model::FakeModel;
use crate::support::{TmuxServer, daemon_test_lock};

fn message(server: &TmuxServer, id: &str) -> serde_json::Value {
    server
        .panectl_ok(&["inbox", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("inbox line"))
        .find(|m| m["id"].as_i64().map(|n| n.to_string()).as_deref() == Some(id))
        .expect("the message")
}

fn status(server: &TmuxServer) -> String {
    server.panectl_ok(&["status", "%0"]).trim().to_string()
}

#[test]
fn claude_code_gets_messages_as_turns_and_its_permission_dialog_stays_open() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let server = TmuxServer::start(120, 40);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    claude.respawn_in(&server, "%0", &model.url());
    server.wait_for("Claude Code to be idle", Duration::from_secs(60), || {
        let panes = server.panes();
        panes
            .iter()
            .any(|p| p["pane"] == "%0" && p["provider"] == "claude_code" && p["status"] == "idle")
    });

    // Two messages queued at once: the second waits for the first turn to end.
    let first = server.panectl_ok(&["send", "%0", "slow:1500 reply:First answer."]);
    let second = server.panectl_ok(&["send", "%0", "reply:Second answer."]);
    let (first, second) = (first.trim(), second.trim());
    server.wait_for("the first turn", Duration::from_secs(30), || {
        message(&server, first)["state"] == "delivered"
    });
    let waiting = message(&server, second);
    assert_eq!(
        waiting["state"],
        "pending",
        "{waiting}\n{}\n{}",
        message(&server, first),
        daemon
            .log_text()
            .lines()
            .filter(|l| l.contains("status") || l.contains("delivery"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    server.wait_for("the second turn", Duration::from_secs(30), || {
        message(&server, second)["state"] == "delivered"
            && server.daemon_screen("%0").contains("Second answer.")
            && status(&server) == "completed"
    });
    let screen = server.daemon_screen("%0");
    assert!(screen.contains("First answer."), "{screen}");
    assert_eq!(message(&server, first)["attempts"], 1);
    assert_eq!(message(&server, second)["attempts"], 1);

    // A tool permission asked at once: delivered, and the dialog stays open.
    let file = claude.work().join("approved-by-mistake");
    let ask = server.panectl_ok(&["send", "%0", &format!("tool:touch {}", file.display())]);
    let ask = ask.trim();
    server.wait_for("the permission dialog", Duration::from_secs(30), || {
        status(&server) == "waiting_user_answer"
    });
    server.wait_for("the delivery to end", Duration::from_secs(15), || {
        message(&server, ask)["state"] != "delivering"
    });
    assert_eq!(message(&server, ask)["state"], "delivered");
    let after = server.panectl_ok(&["send", "%0", "reply:After the dialog."]);
    // Longer than a confirmation timeout plus a retry.
    std::thread::sleep(Duration::from_secs(8));
    assert!(!file.exists(), "a key of the delivery approved the tool");
    assert_eq!(status(&server), "waiting_user_answer");
    assert_eq!(message(&server, after.trim())["state"], "pending");
    let screen = server.daemon_screen("%0");
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
}
