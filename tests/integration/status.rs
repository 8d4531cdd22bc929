//! Status rules in the daemon without agent CLIs: a shell pane's status, assigning a provider
//! (kept across daemon restarts), reloading rule files (and keeping the old rules when a file
//! is broken), and the offline `detect` and `explain` commands.

use std::time::Duration;

use crate::support::{TmuxServer, daemon_test_lock};

fn pane_field(server: &TmuxServer, field: &str) -> String {
    // Empty until the daemon has listed the pane (just after a restart, for one).
    let panes = server.panes();
    panes
        .first()
        .and_then(|pane| pane[field].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_shell_pane_is_idle_then_processing_then_completed() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.wait_for("the shell to be idle", Duration::from_secs(5), || {
        pane_field(&server, "provider") == "shell" && pane_field(&server, "status") == "idle"
    });
    server.tmux(&["send-keys", "-t", "%0", "sleep 2", "Enter"]);
    server.wait_for("processing", Duration::from_secs(5), || {
        pane_field(&server, "status") == "processing"
    });
    server.wait_for("completed", Duration::from_secs(8), || {
        pane_field(&server, "status") == "completed"
    });
    let options = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        "%0",
        "#{@panectl_status} #{@panectl_provider}",
    ]);
    assert_eq!(options.trim(), "completed shell");
    // A shell is not an agent: the summary counts agents only.
    assert_eq!(
        server
            .tmux(&["display-message", "-p", "[#{@panectl_summary}]"])
            .trim(),
        "[]"
    );
}

#[test]
fn an_assigned_provider_is_kept_in_the_pane_across_restarts() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let answer = server.panectl_ok(&["set-provider", "%0", "codex"]);
    assert!(answer.contains("provider codex (assigned)"), "{answer}");
    let option = server.tmux(&[
        "show-options",
        "-p",
        "-v",
        "-t",
        "%0",
        "@panectl_provider_override",
    ]);
    assert_eq!(option.trim(), "codex");
    drop(daemon);
    let _daemon = server.start_daemon(&[]);
    server.wait_for("the assignment to survive", Duration::from_secs(5), || {
        pane_field(&server, "provider") == "codex"
            && pane_field(&server, "provider_source") == "assigned"
    });
    let unknown = server
        .panectl()
        .args(["set-provider", "%0", "nosuchcli"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(said.contains("unknown provider \"nosuchcli\" ("), "{said}");
    assert!(
        said.contains("claude_code") && said.contains("codex"),
        "{said}"
    );
    server.panectl_ok(&["set-provider", "%0", "auto"]);
    server.wait_for("the shell again", Duration::from_secs(5), || {
        pane_field(&server, "provider") == "shell"
    });
}

#[test]
fn rule_files_reload_and_a_broken_one_keeps_the_rules_in_force() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let rules = tempfile::tempdir().unwrap();
    let rules_dir = rules.path().to_string_lossy().into_owned();
    let daemon = server.start_daemon(&["--rules-dir", &rules_dir]);
    server.wait_for_panes(1);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; echo PANECTL-QUE''STION",
        "Enter",
    ]);
    std::thread::sleep(Duration::from_millis(300));
    assert_ne!(pane_field(&server, "status"), "waiting_user_answer");

    let question = r#"id = "shell"
[detect]
commands = ["sh", "bash", "dash"]

[[rules]]
id = "shell.question"
status = "waiting_user_answer"
priority = 90
contains = ["PANECTL-QUESTION"]
seen_on = "test"
"#;
    std::fs::write(rules.path().join("shell.toml"), question).unwrap();
    server.wait_for("the new rule to apply", Duration::from_secs(8), || {
        pane_field(&server, "status") == "waiting_user_answer"
            && pane_field(&server, "status_rule") == "shell.question"
    });

    std::fs::write(
        rules.path().join("broken.toml"),
        "id = \"broken\"\n[[rules]]\nid = \"b\"\nstatus = \"maybe\"\n",
    )
    .unwrap();
    server.wait_for("the error to be reported", Duration::from_secs(8), || {
        let health = server.health();
        health["rules_errors"].as_array().is_some_and(|errors| {
            errors
                .iter()
                .any(|e| e.as_str().unwrap_or_default().contains("broken.toml:4: "))
        })
    });
    // The rules in force stay.
    assert_eq!(pane_field(&server, "status_rule"), "shell.question");

    // SIGHUP reloads at once.
    std::fs::remove_file(rules.path().join("broken.toml")).unwrap();
    std::fs::write(
        rules.path().join("shell.toml"),
        question.replace("PANECTL-QUESTION", "SOMETHING-ELSE"),
    )
    .unwrap();
    let pid = nix::unistd::Pid::from_raw(daemon.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    server.wait_for("the reload", Duration::from_secs(5), || {
        server.health()["rules_errors"]
            .as_array()
            .is_some_and(Vec::is_empty)
            && pane_field(&server, "status_rule") != "shell.question"
    });
}

#[test]
fn detect_and_explain_classify_capture_files() {
    let dir = tempfile::tempdir().unwrap();
    let working = dir.path().join("working.txt");
    std::fs::write(
        &working,
        " ▐▛███▛█   Claude Code v2.1.332\n❯ hi\n✢ Metamorphosing…\n────────────────\n❯ \n────────────────\n  ⏸ manual mode on · esc to interrupt\n",
    )
    .unwrap();
    let ansi = dir.path().join("answered.ansi");
    std::fs::write(
        &ansi,
        "\x1b[1mClaude Code v2.1.332\x1b[0m\n❯ hi\n\x1b[37m●\x1b[39m hello\n────────────────\n❯ \n────────────────\n  ? for shortcuts\n",
    )
    .unwrap();
    let output = TmuxServer::start(20, 5)
        .panectl()
        .args(["detect", "--json"])
        .arg(&working)
        .arg(&ansi)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "processing");
    assert_eq!(lines[0]["provider"], "claude_code");
    assert_eq!(lines[0]["rule"], "claude_code.working");
    assert_eq!(lines[1]["status"], "completed");
    assert_eq!(lines[1]["rule"], "claude_code.answered");

    let explained = std::process::Command::new(env!("CARGO_BIN_EXE_panectl"))
        .arg("explain")
        .arg(&working)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        text.contains("processing (provider claude_code, rule claude_code.working)"),
        "{text}"
    );
    assert!(text.contains("claude_code.permission"), "{text}");
    assert!(text.contains("is not in"), "{text}");
}

#[test]
fn a_cli_with_no_rule_file_set_to_generic_gets_its_statuses() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // A CLI no one wrote rules for: a prompt, a spinner line while it works, its answer drawn
    // over the spinner (as CLIs redraw it in place).
    let script = "printf 'mycli 0.1\\n\\n> '; read -r task; \
                  printf '✻ Thinking… (esc to interrupt)\\n'; sleep 2; \
                  printf '\\033[1A\\033[2KDone: %s\\n\\n> ' \"$task\"; read -r again";
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "sh", "-c", script]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let answer = server.panectl_ok(&["set-provider", "%0", "generic"]);
    assert!(answer.contains("provider generic (assigned)"), "{answer}");
    server.wait_for("idle", Duration::from_secs(8), || {
        pane_field(&server, "status") == "idle"
    });
    server.tmux(&["send-keys", "-t", "%0", "-l", "go"]);
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
    server.wait_for("processing", Duration::from_secs(8), || {
        pane_field(&server, "status") == "processing"
            && pane_field(&server, "status_rule") == "generic.working"
    });
    server.wait_for("completed", Duration::from_secs(8), || {
        pane_field(&server, "status") == "completed"
    });
    // An agent: counted in the summary.
    server.wait_for("the summary", Duration::from_secs(5), || {
        server
            .tmux(&["display-message", "-p", "#{@panectl_summary}"])
            .contains("completed:1")
    });
}
