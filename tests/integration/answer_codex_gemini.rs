//! `panectl answer` on a real Codex and a real Gemini CLI (against the fake model server), as
//! `answer_claude` does on Claude Code: each CLI's command approval is read into question and
//! options, `--no` and `--yes` pick the options labelled so by moving the pointer and pressing
//! Enter, and the same answer again finds no dialog. Which option took effect is what the tool
//! did: the file its command makes exists only after a yes.

use std::path::Path;
use std::time::Duration;

use crate::agent_clis::binary;
use crate::answer_claude::{answer, touch, wait_for_decision};
use crate::fake_model::FakeModel;
use crate::hook_install::{GeminiHome, respawn, send_line, wait_for_screen};
use crate::restore_codex::CodexHome;
use crate::support::{TmuxServer, daemon_test_lock};

/// A tmux server whose `%0` will run the CLI, a second pane keeping the session alive, and a
/// daemon following it.
fn server_with_daemon() -> (TmuxServer, crate::support::Daemon) {
    let server = TmuxServer::start(120, 40);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    (server, daemon)
}

/// Waits until the daemon reads `%0` as `provider`, ready for a prompt.
fn wait_ready(server: &TmuxServer, provider: &str) {
    server.wait_for(
        &format!("{provider} ready"),
        Duration::from_secs(90),
        || {
            server.panes().iter().any(|p| {
                p["pane"] == "%0"
                    && p["provider"] == provider
                    && matches!(p["status"].as_str(), Some("idle" | "completed"))
            })
        },
    );
}

/// Refuses one command and allows another through `panectl answer`, checking what each did.
fn refuse_then_allow(server: &TmuxServer, provider: &str, work: &Path, yes_label: &str) {
    let screen = || server.tmux(&["capture-pane", "-p", "-t", "%0"]);

    // --no: the option labelled No, so the command never runs.
    let refused = work.join("refused");
    send_line(server, &touch(&refused));
    let waiting = wait_for_decision(server, "refused");
    assert_eq!(waiting["provider"], provider, "{waiting:#}");
    let fingerprint = waiting["decision"]["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(server, &["--no", "--decision", fingerprint]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}\n{}", screen());
    assert!(
        outcome["label"].as_str().unwrap().starts_with("No"),
        "{outcome:#}"
    );
    assert_eq!(code, Some(0));
    wait_ready(server, provider);
    assert!(!refused.exists(), "the refused command ran");

    // --yes: the CLI's own affirmative option, and the command runs.
    let allowed = work.join("allowed");
    send_line(server, &touch(&allowed));
    let waiting = wait_for_decision(server, "allowed");
    let current = waiting["decision"]["fingerprint"].as_str().unwrap();
    let (outcome, code) = answer(server, &["--yes", "--decision", current]);
    assert_eq!(outcome["outcome"], "answered", "{outcome:#}\n{}", screen());
    assert_eq!(outcome["label"], yes_label, "{outcome:#}");
    assert_eq!(code, Some(0));
    server.wait_for(
        "the allowed command to run",
        Duration::from_secs(60),
        || allowed.exists(),
    );
    // Answered: the same answer again finds no dialog and presses nothing.
    let (outcome, code) = answer(server, &["--yes", "--decision", current]);
    assert_eq!(outcome["outcome"], "gone", "{outcome:#}");
    assert_eq!(code, Some(1));
}

#[test]
fn answer_picks_the_option_asked_for_on_codexs_command_approval() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let codex = CodexHome::new(&model.url());
    let (server, _daemon) = server_with_daemon();
    let command = format!(
        "env HOME='{}' FAKE_KEY=panectl-test '{}' --no-daemon",
        codex.home().display(),
        binary("codex").display()
    );
    let _codex = respawn(&server, &codex.work().to_string_lossy(), &command);
    wait_for_screen(&server, "Codex's prompt", "for shortcuts");
    wait_ready(&server, "codex");
    refuse_then_allow(&server, "codex", codex.work(), "Yes, proceed (y)");
    assert!(
        model
            .log()
            .iter()
            .any(|r| r.path.ends_with("/responses") && r.prompt.starts_with("tool:touch")),
        "{:?}",
        model.log()
    );
}

#[test]
fn answer_picks_the_option_asked_for_on_gemini_clis_tool_confirmation() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let gemini = GeminiHome::new();
    let work = &gemini.work;
    let (server, _daemon) = server_with_daemon();
    let command = gemini.command(&model.url());
    let _gemini = respawn(&server, &work.path().to_string_lossy(), &command);
    wait_for_screen(&server, "Gemini CLI's prompt", "Type your message");
    wait_ready(&server, "gemini_cli");
    refuse_then_allow(&server, "gemini_cli", work.path(), "Allow once");
    assert!(
        model
            .log()
            .iter()
            .any(|r| r.prompt.starts_with("tool:touch")),
        "{:?}",
        model.log()
    );
}
