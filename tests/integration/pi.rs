//! A real Pi (npm `@mariozechner/pi-coding-agent`, against the fake model server's OpenAI Chat
//! Completions) under the daemon: recognised from its processes, its statuses through a turn
//! that a queued message starts, a command it runs without asking, an error, its answer read
//! back with `last` (told from the prompts by their shading), and closed with its own `/quit`.

use std::path::Path;
use std::time::Duration;

use crate::agent_clis::binary;
use crate::fake_model::FakeModel;
use crate::hook_install::{respawn, send_line};
use crate::signals::pane;
use crate::support::{TmuxServer, daemon_test_lock};

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

fn wait_status(server: &TmuxServer, wanted: &[&str]) {
    server.wait_for(&format!("Pi {wanted:?}"), Duration::from_secs(90), || {
        let pane = pane(server);
        pane["provider"] == "pi" && wanted.contains(&pane["status"].as_str().unwrap_or_default())
    });
}

#[test]
fn pis_statuses_last_answer_and_close_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let pi = PiHome::new(&model.url());
    let server = TmuxServer::start(120, 40);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let work = pi.work().to_string_lossy().into_owned();
    let _tree = respawn(&server, &work, &pi.command());

    // Recognised by its processes, and idle at its prompt.
    wait_status(&server, &["idle"]);
    assert_eq!(pane(&server)["provider_source"], "process");

    // A queued message is delivered when it is ready; the turn runs and ends.
    let id = server
        .panectl_ok(&[
            "send",
            "%0",
            "slow:2000 reply:Pi answered the queued message.",
        ])
        .trim()
        .to_string();
    wait_status(&server, &["processing"]);
    wait_status(&server, &["completed"]);
    let message = server.panectl_ok(&["inbox", "--json"]);
    assert!(
        message.contains(&id) && message.contains("delivered"),
        "{message}"
    );
    // The prompt and the answer look alike as text; the answer is the unshaded one.
    assert_eq!(
        server.panectl_ok(&["last", "%0"]).trim(),
        "Pi answered the queued message."
    );

    // A command the model asks for runs at once (Pi has no permission dialog): processing while
    // it runs, then the answer after it.
    let ran = pi.work().join("ran");
    send_line(
        &server,
        &format!("tool:sleep 2 && touch '{}'", ran.display()),
    );
    wait_status(&server, &["processing"]);
    server.wait_for("the command to run", Duration::from_secs(60), || {
        ran.exists()
    });
    wait_status(&server, &["completed"]);
    assert_eq!(server.panectl_ok(&["last", "%0"]).trim(), "tool finished");
    let decisions = server.panectl_ok(&["decisions", "--json"]);
    assert!(!decisions.contains("\"%0\""), "{decisions}");

    // An error the model answers is the status until the next turn.
    send_line(&server, "fail:400");
    wait_status(&server, &["error"]);

    // `close` asks it to leave its own way.
    let closed: serde_json::Value =
        serde_json::from_str(&server.panectl_ok(&["close", "%0", "--json", "--timeout", "20s"]))
            .expect("close --json");
    assert_eq!(closed["provider"], "pi", "{closed}");
    assert_eq!(closed["text"], "/quit", "{closed}");
    assert_eq!(closed["how"], "exited", "{closed}");
}
