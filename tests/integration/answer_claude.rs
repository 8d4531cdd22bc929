//! `panectl answer` on a real Claude Code (against the fake model server): its Bash permission
//! dialog is read into question and options, `--no` and `--yes` pick the options labelled so
//! (which Claude Code takes only as arrows and Enter; it ignores `y` and `n`), and an answer
//! naming a dialog that is no longer on the screen presses nothing. Which option took effect is
//! what the tool did: the file its command makes exists only after a yes.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::ClaudeHome;
use crate::fake_model::FakeModel;
use crate::support::{Daemon, TmuxServer, daemon_test_lock};

/// Waits until `%0` shows a dialog the daemon reads; returns it as `panectl decisions` does.
/// Fails with the pane's screen and the decisions listed when none comes.
pub fn wait_for_decision(server: &TmuxServer, command: &str) -> Value {
    wait_for_decision_unless(server, command, || false).expect("a dialog")
}

/// [`wait_for_decision`], or `None` as soon as `done` holds with no such dialog listed.
pub fn wait_for_decision_unless(
    server: &TmuxServer,
    command: &str,
    done: impl Fn() -> bool,
) -> Option<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let listed: Value =
            serde_json::from_str(&server.panectl_ok(&["decisions", "--json"])).unwrap();
        let found = listed.as_array().into_iter().flatten().find(|d| {
            d["pane"] == "%0"
                && d["decision"]["question"]
                    .as_str()
                    .is_some_and(|q| q.contains(command))
        });
        if let Some(found) = found {
            return Some(found.clone());
        }
        if done() {
            return None;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no dialog for {command}; decisions: {listed:#}\nthe pane shows:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", "%0"])
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `panectl answer %0 ARGS --json`: the outcome and the exit code.
pub fn answer(server: &TmuxServer, args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["answer", "%0", "--json"];
    all.extend_from_slice(args);
    let output = server
        .panectl()
        .args(&all)
        .output()
        .expect("panectl answer");
    let outcome = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no outcome: {}", String::from_utf8_lossy(&output.stderr)));
    (outcome, output.status.code())
}

/// The fake model's directive to ask for a command that makes `file`.
pub fn touch(file: &Path) -> String {
    format!("tool:touch {}", file.display())
}

/// A server of 120x40 with the daemon and, in `%0`, Claude Code (with `args` added to its
/// command line) against `model`, idle at its prompt. A second pane keeps the session alive
/// whatever happens to the first.
fn claude_session(model: &FakeModel, claude: &ClaudeHome, args: &str) -> (TmuxServer, Daemon) {
    let server = TmuxServer::start(120, 40);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let work = claude.work().to_string_lossy().into_owned();
    let command = format!("{} {args}", claude.command(&model.url()));
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "-c", &work, &command]);
    wait_ready(&server, "Claude Code idle");
    (server, daemon)
}

/// Waits until `%0`'s Claude Code is ready: `idle` or `completed`.
fn wait_ready(server: &TmuxServer, what: &str) {
    server.wait_for(what, Duration::from_secs(60), || {
        server.panes().iter().any(|p| {
            p["pane"] == "%0"
                && p["provider"] == "claude_code"
                && matches!(p["status"].as_str(), Some("idle" | "completed"))
        })
    });
}

#[test]
fn answer_picks_the_option_asked_for_on_claude_codes_permission_dialog() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let (server, _daemon) = claude_session(&model, &claude, "");

    // --no: the option labelled No, so the command never runs.
    let refused = claude.work().join("refused");
    server.panectl_ok(&["send", "%0", &touch(&refused)]);
    let waiting = wait_for_decision(&server, "refused");
    let decision = &waiting["decision"];
    let labels: Vec<&str> = decision["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.first(), Some(&"Yes"), "{decision:#}");
    assert!(labels.iter().any(|l| l.starts_with("No")), "{decision:#}");
    assert_eq!(waiting["provider"], "claude_code");
    let fingerprint = decision["fingerprint"].as_str().unwrap().to_string();
    let (outcome, code) = answer(&server, &["--no", "--decision", &fingerprint]);
    let screen = || server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}\n{}", screen());
    assert!(
        outcome["label"].as_str().unwrap().starts_with("No"),
        "{outcome:#}"
    );
    assert_eq!(code, Some(0));
    server.wait_for("Claude Code ready again", Duration::from_secs(30), || {
        matches!(
            server.panes()[0]["status"].as_str(),
            Some("idle" | "completed")
        )
    });
    assert!(!refused.exists(), "the refused command ran");

    // A dialog that is not the one named: nothing pressed, and the new one is in the answer.
    let allowed = claude.work().join("allowed");
    server.panectl_ok(&["send", "%0", &touch(&allowed)]);
    let waiting = wait_for_decision(&server, "allowed");
    let (outcome, code) = answer(&server, &["--yes", "--decision", &fingerprint]);
    assert_eq!(outcome["outcome"], "changed", "{outcome:#}");
    assert_eq!(outcome["decision"], waiting["decision"], "{outcome:#}");
    assert_eq!(code, Some(1));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!allowed.exists(), "a key reached the other dialog");
    assert_eq!(server.panes()[0]["status"], "waiting_user_answer");

    // --yes on the dialog shown: the command runs.
    let current = waiting["decision"]["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(&server, &["--yes", "--decision", current]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
    assert_eq!(outcome["label"], "Yes");
    assert_eq!(code, Some(0));
    server.wait_for(
        "the allowed command to run",
        Duration::from_secs(30),
        || allowed.exists(),
    );
    // Answered: the same answer again finds no dialog and presses nothing.
    let (outcome, _) = answer(&server, &["--yes", "--decision", current]);
    assert_eq!(outcome["outcome"], "gone", "{outcome:#}");
    // The turns went through the fake model.
    assert!(
        model
            .log()
            .iter()
            .any(|r| r.path == "/v1/messages" && r.prompt.starts_with("tool:touch")),
        "{:?}",
        model.log()
    );
}

/// Whether the fake model was sent a tool result that says `chosen` and not `other`: which
/// option of Claude Code's AskUserQuestion took effect.
fn answered_with(model: &FakeModel, chosen: &str, other: &str) -> bool {
    model.log().iter().any(|request| {
        let Ok(messages) = serde_json::from_str::<Value>(&request.conversation) else {
            return false;
        };
        let results = messages.as_array().into_iter().flatten().flat_map(|m| {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["type"] == "tool_result")
                .map(|c| c["content"].to_string())
        });
        results
            .into_iter()
            .any(|text| text.contains(chosen) && !text.contains(other))
    })
}

#[test]
fn answer_picks_claude_codes_question_option_by_label_and_allows_a_file_write() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let (server, _daemon) = claude_session(&model, &claude, "");

    // AskUserQuestion: its options as shown (a description under each), picked by label.
    server.panectl_ok(&[
        "send",
        "%0",
        "ask:Which colour should the banner use?|Crimson|Teal",
    ]);
    let waiting = wait_for_decision(&server, "Which colour");
    let decision = &waiting["decision"];
    let labels: Vec<&str> = (decision["options"].as_array().unwrap().iter())
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels[..2], ["Crimson", "Teal"], "{decision:#}");
    assert_eq!(
        decision["options"][1]["detail"], "Choose Teal",
        "{decision:#}"
    );
    let fingerprint = decision["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(&server, &["--label", "teal", "--decision", fingerprint]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
    assert_eq!(outcome["label"], "Teal", "{outcome:#}");
    assert_eq!(code, Some(0));
    // The CLI's next request to the model carries the option picked.
    server.wait_for(
        "the answer Teal sent to the model",
        Duration::from_secs(30),
        || answered_with(&model, "Teal", "Crimson"),
    );
    wait_ready(&server, "Claude Code ready after the question");

    // A file write: the dialog shows the file and its contents; --yes writes it.
    let notes = claude.work().join("notes.txt");
    server.panectl_ok(&[
        "send",
        "%0",
        &format!("write:{}|hello from panectl", notes.display()),
    ]);
    let waiting = wait_for_decision(&server, "notes.txt");
    let question = waiting["decision"]["question"].as_str().unwrap();
    assert!(question.contains("hello from panectl"), "{waiting:#}");
    assert!(!notes.exists());
    let fingerprint = waiting["decision"]["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(&server, &["--yes", "--decision", fingerprint]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
    assert_eq!(outcome["label"], "Yes", "{outcome:#}");
    assert_eq!(code, Some(0));
    server.wait_for("the file written", Duration::from_secs(30), || {
        std::fs::read_to_string(&notes).is_ok_and(|text| text.contains("hello from panectl"))
    });
}

#[test]
fn answer_refuses_claude_codes_plan_by_option() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    // In plan mode, where the model presents a plan (`ExitPlanMode`) for approval.
    let (server, _daemon) = claude_session(&model, &claude, "--permission-mode plan");
    let screen = || server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    // The plan's dialog ("Exit plan mode?"): `--no` keeps planning.
    server.panectl_ok(&["send", "%0", "plan:Rename the banner colour to teal."]);
    let waiting = wait_for_decision(&server, "Exit plan mode?");
    let decision = &waiting["decision"];
    let labels: Vec<&str> = (decision["options"].as_array().unwrap().iter())
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.len() >= 2 && labels[0].starts_with("Yes"),
        "{decision:#}"
    );
    assert!(labels.contains(&"No"), "{decision:#}");
    let fingerprint = decision["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(&server, &["--no", "--decision", fingerprint]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
    assert_eq!(outcome["label"], "No", "{outcome:#}");
    assert_eq!(code, Some(0));
    wait_ready(&server, "Claude Code ready after the refused plan");
    let shown = screen();
    assert!(
        shown.contains("Rejected Claude's plan") && shown.contains("plan mode on"),
        "{shown}"
    );
}
