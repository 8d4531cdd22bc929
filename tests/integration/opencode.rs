//! A real OpenCode (npm `opencode-ai`) and a real Kilo CLI (npm `@kilocode/cli`, its fork), each
//! against the fake model server's OpenAI Chat Completions, under the daemon: recognised from
//! their processes (Kilo CLI as `kilo`, read with OpenCode's rules), their statuses through a
//! turn that a queued message starts, their permission dialog (buttons side by side, the
//! selected one told only by its colour) answered through `panectl answer` by option, with
//! the confirmation "Allow always" asks for (`Confirm   Cancel`), and closed with their own
//! `/exit`. Which option took effect is what the command did: the file
//! it makes exists only after an allow.

use std::path::Path;
use std::time::Duration;

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::answer_claude::{answer, wait_for_decision_unless};
use crate::fake_model::FakeModel;
use crate::support::daemon_test_lock;

/// A home whose configuration makes the CLI (`opencode` or `kilo`) talk to an
/// OpenAI-compatible server and ask before commands run, and a work directory.
struct OpenCodeHome {
    cli: &'static str,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl OpenCodeHome {
    fn new(cli: &'static str, model_url: &str) -> OpenCodeHome {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let config = home.path().join(".config").join(cli);
        std::fs::create_dir_all(&config).expect("mkdir the configuration directory");
        let settings = serde_json::json!({
            "autoupdate": false,
            "share": "disabled",
            "model": "fake/gpt-fake",
            "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": format!("{model_url}/v1"), "apiKey": "sk-panectl-test"},
                "models": {"gpt-fake": {"name": "GPT Fake"}},
            }},
        });
        // Kilo CLI reads the same configuration from its own file.
        std::fs::write(config.join(format!("{cli}.json")), settings.to_string())
            .expect("the configuration");
        OpenCodeHome { cli, home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// The shell command that runs the CLI offline (no update, no model list, no npm).
    fn command(&self) -> String {
        format!(
            "exec env HOME='{}' OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
             OPENCODE_DISABLE_LSP_DOWNLOAD=1 KILO_DISABLE_AUTOUPDATE=1 \
             KILO_DISABLE_MODELS_FETCH=1 KILO_DISABLE_LSP_DOWNLOAD=1 npm_config_offline=true '{}'",
            self.home.path().display(),
            binary(self.cli).display()
        )
    }
}

/// The steps both CLIs are checked through, `cli` recognised as `provider`.
fn a_real_session_answered_by_option(cli: &'static str, provider: &'static str) {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let home = OpenCodeHome::new(cli, &model.url());
    let work = home.work().to_string_lossy().into_owned();
    let agent = AgentSession::start(provider, &work, &home.command());
    let server = &agent.server;

    agent.queued_turn("slow:2000 reply:It answered the queued message.");

    // The permission dialog is a decision: buttons side by side, "Allow once" selected.
    // `--no` picks "Reject" (Right, Right, then Enter once the screen shows it selected), and
    // the command does not run.
    let refused = home.work().join("refused");
    let waiting = agent.answer_dialog(&refused, &["--no"], "Reject");
    let options = &waiting["decision"]["options"];
    let labels: Vec<&str> = (options.as_array().unwrap().iter())
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["Allow once", "Allow always", "Reject"],
        "{waiting:#}"
    );
    assert_eq!(options[0]["pointed"], true, "{waiting:#}");
    assert_eq!(
        options[2]["keys"],
        serde_json::json!(["Right", "Right", "Enter"])
    );
    assert!(
        waiting["decision"]["question"]
            .as_str()
            .is_some_and(|q| q.contains("Permission required") && q.contains("refused")),
        "{waiting:#}"
    );
    if cli == "kilo" {
        // Kilo CLI then asks what to do instead: a text field (no options, no decision), that
        // Enter sends empty.
        agent.wait_status(&["waiting_user_answer"]);
        server.wait_for("Kilo CLI's feedback field", Duration::from_secs(30), || {
            server
                .tmux(&["capture-pane", "-p", "-t", "%0"])
                .contains("Reject permission")
        });
        server.panectl_ok(&["key", "%0", "Enter"]);
    }
    agent.wait_status(&["completed", "error", "idle"]);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!refused.exists(), "a rejected command ran");

    // `--option 2` picks "Allow always" (Right, Enter); the CLI asks to confirm the pattern it
    // will allow, another decision (`Confirm   Cancel`), which `--yes` confirms; the command runs.
    let allowed = home.work().join("allowed");
    let first = agent.answer_dialog(&allowed, &["--option", "2"], "Allow always");
    match confirmation_or_run(server, &allowed, cli) {
        Some(confirm) => {
            assert_ne!(
                confirm["decision"]["fingerprint"], first["decision"]["fingerprint"],
                "{confirm:#}"
            );
            assert!(
                confirm["decision"]["question"]
                    .as_str()
                    .is_some_and(|q| q.contains("touch *")),
                "{confirm:#}"
            );
            let fingerprint = confirm["decision"]["fingerprint"].as_str().unwrap();
            let (outcome, code) = answer(server, &["--yes", "--decision", fingerprint]);
            assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
            assert_eq!(outcome["label"], "Confirm", "{outcome:#}");
            assert_eq!(code, Some(0));
        }
        None => eprintln!("{cli} ran the command without showing its confirmation"),
    }
    server.wait_for(
        "the allowed command to run",
        Duration::from_secs(60),
        || allowed.exists(),
    );
    agent.wait_status(&["completed"]);

    // `close` asks it to leave its own way.
    agent.close_with("/exit");
}

/// After "Allow always": the confirmation CLI asks for ("Always allow … touch *"), or `None` when
/// the command ran without it. Only Kilo CLI may skip it: on a loaded machine Kilo CLI 7.7.7 now
/// and then takes the Enter that picked "Allow always" as the confirmation's too (seen 2 of about
/// 12 runs: the command ran and no confirmation was read, while the answer's outcome named the
/// keys Right and Enter once each). OpenCode has always shown it, so there its absence fails.
fn confirmation_or_run(
    server: &crate::support::TmuxServer,
    allowed: &Path,
    cli: &str,
) -> Option<serde_json::Value> {
    let confirm = wait_for_decision_unless(server, "Always allow", || allowed.exists());
    assert!(
        confirm.is_some() || cli == "kilo",
        "{cli} ran the command without its confirmation; the pane shows:\n{}",
        server.tmux(&["capture-pane", "-p", "-t", "%0"])
    );
    confirm
}

#[test]
fn opencodes_statuses_permission_answered_by_option_and_close_follow_a_real_session() {
    a_real_session_answered_by_option("opencode", "opencode");
}

#[test]
fn kilo_clis_statuses_permission_answered_by_option_and_close_follow_a_real_session() {
    // Recognised as `kilo` by its processes (not as OpenCode, whose rules read it).
    a_real_session_answered_by_option("kilo", "kilo");
}
