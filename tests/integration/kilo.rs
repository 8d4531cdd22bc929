//! A real Kilo CLI (npm `@kilocode/cli`, a fork of OpenCode, against the fake model server's
//! OpenAI Chat Completions) under the daemon: recognised as `kilo` from its processes, read with
//! OpenCode's rules through a turn that a queued message starts and a permission dialog, and
//! closed with its own `/exit`.

use std::path::Path;
use std::time::Duration;

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::answer_claude::touch;
use crate::fake_model::FakeModel;
use crate::hook_install::send_line;
use crate::support::daemon_test_lock;

/// A home whose configuration makes Kilo CLI talk to an OpenAI-compatible server and ask
/// before commands run, and a work directory.
struct KiloHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl KiloHome {
    fn new(model_url: &str) -> KiloHome {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let config = home.path().join(".config/kilo");
        std::fs::create_dir_all(&config).expect("mkdir .config/kilo");
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
        std::fs::write(config.join("kilo.json"), settings.to_string()).expect("kilo.json");
        KiloHome { home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// The shell command that runs Kilo CLI offline (no update, no model list, no npm).
    fn command(&self) -> String {
        format!(
            "exec env HOME='{}' KILO_DISABLE_AUTOUPDATE=1 KILO_DISABLE_MODELS_FETCH=1 \
             KILO_DISABLE_LSP_DOWNLOAD=1 npm_config_offline=true '{}'",
            self.home.path().display(),
            binary("kilo").display()
        )
    }
}

#[test]
fn kilo_clis_statuses_dialog_and_close_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let kilo = KiloHome::new(&model.url());
    let work = kilo.work().to_string_lossy().into_owned();
    // Recognised as `kilo` by its processes (not as OpenCode, whose rules read it).
    let agent = AgentSession::start("kilo", &work, &kilo.command());
    let server = &agent.server;

    agent.queued_turn("slow:2000 reply:Kilo answered the queued message.");

    // Its permission dialog waits for the user (OpenCode's rules read it); Enter allows once.
    // (Its buttons on one row are not read as a decision's options yet: `decisions` lists
    // menus and letter prompts.)
    let allowed = kilo.work().join("allowed");
    send_line(server, &touch(&allowed));
    agent.wait_status(&["waiting_user_answer"]);
    let shown = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert!(shown.contains("Permission required"), "{shown}");
    assert!(!allowed.exists());
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
    server.wait_for(
        "the allowed command to run",
        Duration::from_secs(60),
        || allowed.exists(),
    );
    agent.wait_status(&["completed"]);

    // `close` asks it to leave its own way.
    agent.close_with("/exit");
}
