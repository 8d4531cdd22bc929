//! A real Pi (npm `@mariozechner/pi-coding-agent`, against the fake model server's OpenAI Chat
//! Completions) under the daemon: recognised from its processes, its statuses through a turn
//! that a queued message starts, a command it runs without asking, an error, its answer read
//! back with `last` (told from the prompts by their shading), and closed with its own `/quit`.

use std::path::Path;
use std::time::Duration;

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::fake_model::FakeModel;
use crate::hook_install::send_line;
use crate::support::daemon_test_lock;

/// A home whose settings make Pi talk to an OpenAI-compatible server, and a work directory.
struct PiHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl PiHome {
    fn new(model_url: &str) -> PiHome {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let agent = home.path().join(".pi/agent");
        std::fs::create_dir_all(&agent).expect("mkdir .pi/agent");
        let models = serde_json::json!({"providers": {"fake": {
            "baseUrl": format!("{model_url}/v1"),
            "api": "openai-completions",
            "apiKey": "sk-panectl-test",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "gpt-fake"}],
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).expect("models");
        let settings = serde_json::json!({
            "defaultProvider": "fake", "defaultModel": "gpt-fake", "enableInstallTelemetry": false,
        });
        std::fs::write(agent.join("settings.json"), settings.to_string()).expect("settings");
        PiHome { home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// The shell command that runs Pi offline (no update check, no downloads).
    fn command(&self) -> String {
        format!(
            "exec env HOME='{}' PI_OFFLINE=1 '{}'",
            self.home.path().display(),
            binary("pi").display()
        )
    }
}

#[test]
fn pis_statuses_last_answer_and_close_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let pi = PiHome::new(&model.url());
    let work = pi.work().to_string_lossy().into_owned();
    let agent = AgentSession::start("pi", &work, &pi.command());
    let server = &agent.server;

    // A queued message is delivered when it is ready; the turn runs and ends. The prompt and
    // the answer look alike as text; the answer is the unshaded one.
    agent.queued_turn("slow:2000 reply:Pi answered the queued message.");
    assert_eq!(
        server.panectl_ok(&["last", "%0"]).trim(),
        "Pi answered the queued message."
    );

    // A command the model asks for runs at once (Pi has no permission dialog): processing while
    // it runs, then the answer after it.
    let ran = pi.work().join("ran");
    send_line(
        server,
        &format!("tool:sleep 2 && touch '{}'", ran.display()),
    );
    agent.wait_status(&["processing"]);
    server.wait_for("the command to run", Duration::from_secs(60), || {
        ran.exists()
    });
    agent.wait_status(&["completed"]);
    assert_eq!(server.panectl_ok(&["last", "%0"]).trim(), "tool finished");
    let decisions = server.panectl_ok(&["decisions", "--json"]);
    assert!(!decisions.contains("\"%0\""), "{decisions}");

    // An error the model answers is the status until the next turn.
    send_line(server, "fail:400");
    agent.wait_status(&["error"]);

    // `close` asks it to leave its own way.
    agent.close_with("/quit");
}
