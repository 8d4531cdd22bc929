//! A real Qwen Code (npm `@qwen-code/qwen-code`, against the fake model server's OpenAI Chat
//! Completions) under the daemon: recognised from its processes, its statuses through a turn
//! that a queued message starts, its answer read back with `last`, its tool dialog answered
//! through `panectl answer`, and closed with its own `/quit`.

use std::path::Path;

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::fake_model::FakeModel;
use crate::support::daemon_test_lock;

/// A home whose settings make Qwen Code talk to an OpenAI-compatible server and ask before
/// tools run, and a work directory.
struct QwenHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl QwenHome {
    fn new() -> QwenHome {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        std::fs::create_dir_all(home.path().join(".qwen")).expect("mkdir .qwen");
        let settings = serde_json::json!({
            "general": {"enableAutoUpdate": false},
            "tools": {"approvalMode": "default"},
            "ui": {"enableUserFeedback": false},
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": "gpt-fake"},
        });
        std::fs::write(
            home.path().join(".qwen/settings.json"),
            settings.to_string(),
        )
        .expect("settings");
        QwenHome { home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// The shell command that runs Qwen Code against `model_url` (`CI` unset: like Gemini CLI,
    /// it would not start an interactive session under CI).
    fn command(&self, model_url: &str) -> String {
        format!(
            "exec env -u CI HOME='{}' OPENAI_API_KEY=sk-panectl-test OPENAI_BASE_URL='{model_url}/v1' \
             OPENAI_MODEL=gpt-fake '{}'",
            self.home.path().display(),
            binary("qwen").display()
        )
    }
}

#[test]
fn qwen_codes_statuses_answer_dialog_and_close_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let qwen = QwenHome::new();
    let work = qwen.work().to_string_lossy().into_owned();
    let agent = AgentSession::start("qwen_code", &work, &qwen.command(&model.url()));
    let server = &agent.server;

    agent.queued_turn("slow:2000 reply:Qwen answered the queued message.");
    assert_eq!(
        server.panectl_ok(&["last", "%0"]).trim(),
        "Qwen answered the queued message."
    );

    // Its tool dialog is a decision; `--yes` picks "Yes, allow once" and the command runs.
    let waiting = agent.allow_with_answer(&qwen.work().join("allowed"), "Yes, allow once");
    assert!(
        waiting["decision"]["question"]
            .as_str()
            .is_some_and(|q| q.contains("Allow execution of") && !q.contains('█')),
        "{waiting:#}"
    );

    // `close` asks it to leave its own way.
    agent.close_with("/quit");
}
