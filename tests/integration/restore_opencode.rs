//! Real OpenCode agents (against the fake model server's Chat Completions) brought back after
//! the tmux server died. OpenCode has no hooks to say its session id: the daemon learns it at
//! the end of a turn from OpenCode's own `session list --format json` (the session of the
//! agent's directory just updated, not another agent's), and `panectl restore` starts the agent
//! again with `opencode --session ID`, so the fake model's next request carries the earlier
//! turn. Two agents share one directory: each gets its own session.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::binary;
use crate::fake_model::FakeModel;
use crate::restore_codex::restore;
use crate::support::{TmuxServer, daemon_test_lock};

/// A home whose configuration points OpenCode at `model_url`, and a work directory.
struct Home {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Home {
    fn new(model_url: &str) -> Home {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let config = home.path().join(".config/opencode");
        std::fs::create_dir_all(&config).expect("mkdir the configuration directory");
        let settings = serde_json::json!({
            "autoupdate": false,
            "share": "disabled",
            "model": "fake/gpt-fake",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": format!("{model_url}/v1"), "apiKey": "sk-panectl-test"},
                "models": {"gpt-fake": {"name": "GPT Fake"}},
            }},
        });
        std::fs::write(config.join("opencode.json"), settings.to_string()).expect("config");
        Home { home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// `KEY=VALUE` settings for `panectl launch opencode`: offline, in this home.
    fn launch_env(&self) -> Vec<String> {
        let bin = binary("opencode");
        let dir = bin.parent().expect("bin dir").display().to_string();
        let path = std::env::var("PATH").unwrap_or_default();
        vec![
            format!("HOME={}", self.home.path().display()),
            "OPENCODE_DISABLE_AUTOUPDATE=1".into(),
            "OPENCODE_DISABLE_MODELS_FETCH=1".into(),
            "OPENCODE_DISABLE_LSP_DOWNLOAD=1".into(),
            "npm_config_offline=true".into(),
            format!("PATH={dir}:{path}"),
        ]
    }
}

fn agent<'a>(done: &'a [Value], key: &str) -> &'a Value {
    done.iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {done:#?}"))
}

/// The conversation recorded for `key`, once there is one.
fn learned(server: &TmuxServer, key: &str) -> String {
    let mut conversation = String::new();
    server.wait_for(
        &format!("{key}'s session id"),
        Duration::from_secs(60),
        || {
            conversation = agent(&restore(server, &["--dry-run"]), key)["conversation"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            !conversation.is_empty()
        },
    );
    conversation
}

#[test]
fn opencode_agents_resume_their_own_sessions_after_tmux_died() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let home = Home::new(&model.url());
    let mut server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = home.work().to_string_lossy().into_owned();
    let env = home.launch_env();
    for name in ["oc1", "oc2"] {
        let mut args = vec![
            "launch",
            "opencode",
            "--name",
            name,
            "--cwd",
            &work,
            "--timeout",
            "90",
        ];
        for pair in &env {
            args.extend(["--env", pair.as_str()]);
        }
        server.panectl_ok(&args);
    }
    // One after the other, so that each turn's end is its own.
    server.panectl_ok(&["send", "oc1", "reply:remember oc1-one"]);
    let first = learned(&server, "oc1");
    server.panectl_ok(&["send", "oc2", "reply:remember oc2-one"]);
    let second = learned(&server, "oc2");
    assert_ne!(first, second, "both agents took one session");
    assert!(first.starts_with("ses_"), "{first}");

    server.tmux(&["kill-server"]);
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again("fresh", 120, 40);
    server.wait_for_panes(1);
    let done = restore(&server, &["--timeout", "90s"]);
    for (key, session) in [("oc1", &first), ("oc2", &second)] {
        assert_eq!(agent(&done, key)["outcome"], "resumed", "{done:#?}");
        assert_eq!(agent(&done, key)["conversation"], session.as_str());
    }
    for (key, earlier, other) in [
        ("oc1", "remember oc1-one", "remember oc2-one"),
        ("oc2", "remember oc2-one", "remember oc1-one"),
    ] {
        let prompt = format!("reply:{key} is back");
        server.panectl_ok(&["send", key, &prompt]);
        server.wait_for(
            &format!("{key}'s next request"),
            Duration::from_secs(60),
            || model.log().iter().any(|r| r.prompt == prompt),
        );
        let log = model.log();
        let request = log.iter().find(|r| r.prompt == prompt).unwrap();
        assert!(
            request.conversation.contains(earlier),
            "{key} did not resume its session: {}",
            request.conversation
        );
        assert!(
            !request.conversation.contains(other),
            "{key} resumed the other agent's session: {}",
            request.conversation
        );
    }
}
