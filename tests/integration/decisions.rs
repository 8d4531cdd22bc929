//! Decisions in a live pane: a program in a shell pane draws a dialog (a question, a pointed
//! menu that moves with the arrow keys), the daemon reads it as a decision with `explain`, and
//! the keys the decision names for an option pick that option in the real program.

use std::time::Duration;

use crate::support::{TmuxServer, daemon_test_lock};

/// A dialog drawn the way agent CLIs draw them: the pointer moves with Up/Down, Enter picks.
const DIALOG: &str = r#"
import os, sys, termios, tty
options = ["Yes", "Yes, and don't ask again for this command", "No"]
at = 0
def draw():
    sys.stdout.write("\x1b[H\x1b[2J Run `rm -rf build`?\r\n Do you want to proceed?\r\n")
    for i, label in enumerate(options):
        sys.stdout.write(" %s %d. %s\r\n" % ("\u276f" if i == at else " ", i + 1, label))
    sys.stdout.write("\r\n Esc to cancel")
    sys.stdout.flush()
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setraw(fd)
draw()
buffer = b""
while True:
    buffer += os.read(fd, 16)
    while buffer:
        if buffer.startswith(b"\x1b[B"):
            at = min(at + 1, len(options) - 1); buffer = buffer[3:]; draw()
        elif buffer.startswith(b"\x1b[A"):
            at = max(at - 1, 0); buffer = buffer[3:]; draw()
        elif buffer[:1] == b"\r":
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            sys.stdout.write("\x1b[H\x1b[2Jchose %d\r\n" % (at + 1)); sys.stdout.flush()
            os._exit(0)
        elif buffer.startswith(b"\x1b") and len(buffer) < 3:
            break
        else:
            buffer = buffer[1:]
"#;

/// Runs `script` (a dialog) with python3 in the shell of `%0`, typed as a person would.
fn run_dialog(server: &TmuxServer, script: &str) {
    let file = server.dir().join("dialog.py");
    std::fs::write(&file, script).expect("write the dialog");
    let command = format!("python3 {}", file.display());
    server.tmux(&["send-keys", "-t", "%0", "-l", &command]);
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
}

fn explain(server: &TmuxServer) -> serde_json::Value {
    serde_json::from_str(&server.panectl_ok(&["explain", "%0", "--json"])).expect("explain JSON")
}

#[test]
fn a_dialog_in_a_pane_is_a_decision_whose_keys_pick_the_option() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    run_dialog(&server, DIALOG);
    let mut decision = serde_json::Value::Null;
    server.wait_for("a decision", Duration::from_secs(10), || {
        decision = explain(&server)["decision"].clone();
        !decision.is_null()
    });
    assert_eq!(
        decision["question"],
        "Run `rm -rf build`?\nDo you want to proceed?"
    );
    let labels: Vec<&str> = decision["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["Yes", "Yes, and don't ask again for this command", "No"]
    );
    assert_eq!(decision["options"][0]["pointed"], true);
    let fingerprint = decision["fingerprint"].as_str().unwrap().to_string();
    // Move the pointer by hand: the same decision, other keys.
    server.tmux(&["send-keys", "-t", "%0", "Down"]);
    server.wait_for("the pointer on 2", Duration::from_secs(5), || {
        explain(&server)["decision"]["options"][1]["pointed"] == true
    });
    let moved = explain(&server)["decision"].clone();
    assert_eq!(moved["fingerprint"], fingerprint.as_str());
    let keys: Vec<String> = moved["options"][2]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, ["Down", "Enter"]);
    // People see it too.
    let text = server.panectl_ok(&["explain", "%0"]);
    assert!(
        text.contains(&format!("decision {fingerprint}")) && text.contains("> 2. Yes, and don't"),
        "{text}"
    );
    // The list of waiting dialogs has it.
    let listed: serde_json::Value =
        serde_json::from_str(&server.panectl_ok(&["decisions", "--json"])).unwrap();
    assert_eq!(listed[0]["pane"], "%0");
    assert_eq!(listed[0]["decision"]["fingerprint"], fingerprint.as_str());
    // A fingerprint of another dialog: nothing is pressed.
    let other = server
        .panectl()
        .args([
            "answer",
            "%0",
            "--no",
            "--decision",
            "0000000000000000",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1));
    let other: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(other["outcome"], "changed");
    assert_eq!(other["decision"]["fingerprint"], fingerprint.as_str());
    // Two answers race for the dialog: one picks its option, the other finds it gone.
    let spawn = |choice: &str| {
        server
            .panectl()
            .args(["answer", "%0", choice, "--decision", &fingerprint, "--json"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn("--no");
    let second = spawn("--yes");
    let outcomes: Vec<serde_json::Value> = [first, second]
        .into_iter()
        .map(|child| serde_json::from_slice(&child.wait_with_output().unwrap().stdout).unwrap())
        .collect();
    let answered: Vec<&serde_json::Value> = outcomes
        .iter()
        .filter(|o| o["outcome"] == "answered")
        .collect();
    let gone: Vec<&serde_json::Value> =
        outcomes.iter().filter(|o| o["outcome"] == "gone").collect();
    assert_eq!((answered.len(), gone.len()), (1, 1), "{outcomes:?}");
    let picked = answered[0]["option"].as_u64().unwrap();
    let screen = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert!(screen.contains(&format!("chose {picked}")), "{screen}");
    assert!(gone[0].get("keys").is_none(), "{:?}", gone[0]);
    assert!(explain(&server)["decision"].is_null());
}

#[test]
fn answer_without_a_dialog_or_with_a_missing_option_presses_nothing() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let gone = server
        .panectl()
        .args(["answer", "%0", "--yes"])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&gone.stdout).contains("no dialog in %0"),
        "{gone:?}"
    );
    run_dialog(&server, &DIALOG.replace("\"No\"]", "\"Later\"]"));
    server.wait_for("a decision", Duration::from_secs(10), || {
        !explain(&server)["decision"].is_null()
    });
    let refused = server
        .panectl()
        .args(["answer", "%0", "--no"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("no option no in this dialog; its options are: 1. Yes; 2. Yes, and don't ask again for this command; 3. Later"),
        "{said}"
    );
    assert!(!explain(&server)["decision"].is_null(), "still there");
}

#[test]
fn a_dialog_opens_and_closes_as_events_answered_through_panectl() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let events = crate::support::EventReader::start(&server);
    run_dialog(&server, DIALOG);
    let opened = events.expect("decision", |e| e["type"] == "decision");
    assert_eq!(opened["pane"], "%0");
    assert_eq!(opened["decision"]["options"][2]["label"], "No");
    let fingerprint = opened["decision"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    // Answered through panectl: the close says so, with the option and who answered.
    server.panectl_ok(&["answer", "%0", "--no", "--decision", &fingerprint]);
    let closed = events.expect("decision_closed", |e| e["type"] == "decision_closed");
    assert_eq!(closed["fingerprint"], fingerprint.as_str());
    assert_eq!(closed["how"], "answered", "{closed}");
    assert_eq!(closed["option"], 3);
    assert_eq!(closed["by"], "request");
}

#[test]
fn an_auto_answer_rule_answers_only_its_dialog_and_says_so() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let rules = server.dir().join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("auto_answer.toml"),
        "[[auto_answer]]\nname = \"builds\"\nprovider = \"shell\"\nquestion = 'rm -rf build'\noption = \"No\"\n",
    )
    .unwrap();
    let daemon = server.start_daemon(&["--rules-dir", rules.to_str().unwrap()]);
    server.wait_for_panes(1);
    let events = crate::support::EventReader::start(&server);
    run_dialog(&server, DIALOG);
    // A full suite's load once kept it from closing within 10 s: the daemon's log says why.
    let closed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        events.expect_within("decision_closed", Duration::from_secs(30), |e| {
            e["type"] == "decision_closed"
        })
    }))
    .unwrap_or_else(|failure| {
        eprintln!(
            "the pane shows:\n{}\nthe daemon logged:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", "%0"]),
            daemon.log_text()
        );
        std::panic::resume_unwind(failure)
    });
    assert_eq!(closed["how"], "answered", "{closed}");
    assert_eq!(closed["by"], "auto_answer builds");
    assert_eq!(closed["label"], "No");
    server.wait_for("the No picked", Duration::from_secs(10), || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("chose 3")
    });
}

#[test]
fn a_second_dialog_in_the_same_pane_opens_again_and_a_key_pressed_in_the_pane_closes_it_as_answered_elsewhere()
 {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let events = crate::support::EventReader::start(&server);
    run_dialog(&server, DIALOG);
    let first = events.expect("decision", |e| e["type"] == "decision");
    let fingerprint = first["decision"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    server.panectl_ok(&["answer", "%0", "--option", "3", "--decision", &fingerprint]);
    events.expect("decision_closed", |e| {
        e["type"] == "decision_closed" && e["how"] == "answered"
    });
    server.wait_for("the first answer", Duration::from_secs(10), || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("chose 3")
    });
    // The same program again: the same dialog is a new decision.
    run_dialog(&server, DIALOG);
    let second = events.expect("a second decision", |e| {
        e["type"] == "decision" && e["id"] != first["id"]
    });
    assert_eq!(second["decision"]["fingerprint"], fingerprint.as_str());
    // A person picks in the pane itself: closed, answered elsewhere.
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
    let closed = events.expect("answered elsewhere", |e| {
        e["type"] == "decision_closed" && e["how"] == "answered_elsewhere"
    });
    assert_eq!(closed["fingerprint"], fingerprint.as_str());
    assert!(closed["by"].is_null(), "{closed}");
}
