//! Real Gemini CLI agents (against the fake model server) brought back after the tmux server
//! died: `panectl launch gemini_cli` starts each on a session id of panectl's choosing
//! (`--session-id`), so the conversation is known without hooks; `panectl restore` starts an
//! agent that said something again with `gemini --resume ID`, so the fake model's next request
//! carries the earlier turn, and one in which nothing was said (Gemini CLI saves no such session
//! and refuses to resume it) fresh under the same id.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::binary;
use crate::fake_model::FakeModel;
use crate::hook_install::{GeminiHome, ProcessTree};
use crate::restore_codex::restore;
use crate::support::{TmuxServer, daemon_test_lock};

/// `KEY=VALUE` settings that make `panectl launch gemini_cli` start Gemini CLI in `gemini`'s
/// home against `url` (`CI` emptied: Gemini CLI runs without its interface when it is `true`).
fn launch_env(gemini: &GeminiHome, url: &str) -> Vec<String> {
    let bin = binary("gemini");
    let dir = bin.parent().expect("bin dir").display().to_string();
    let path = std::env::var("PATH").unwrap_or_default();
    vec![
        format!("HOME={}", gemini.home.path().display()),
        "GEMINI_API_KEY=panectl-test".into(),
        format!("GOOGLE_GEMINI_BASE_URL={url}"),
        "CI=".into(),
        format!("PATH={dir}:{path}"),
    ]
}

fn agent<'a>(done: &'a [Value], key: &str) -> &'a Value {
    done.iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {done:#?}"))
}

/// Whether a session file of Gemini CLI under `home` holds `text`.
fn saved(home: &Path, text: &str) -> bool {
    let mut dirs = vec![home.join(".gemini/tmp")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(text)) {
                return true;
            }
        }
    }
    false
}

/// The process of the pane the agent named `name` runs in (its tree is ended by pid).
fn agent_tree(server: &TmuxServer, name: &str) -> ProcessTree {
    let panes: Value = serde_json::from_slice(
        &server
            .panectl()
            .args(["ls", "--json"])
            .output()
            .expect("ls")
            .stdout,
    )
    .expect("ls json");
    let pid = panes
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .and_then(|p| p["pid"].as_i64())
        .unwrap_or_else(|| panic!("no pane named {name}: {panes:#}"));
    ProcessTree(pid as i32)
}

#[test]
fn gemini_agents_resume_their_sessions_after_tmux_died_or_start_again_under_their_id() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let gemini = GeminiHome::new();
    let mut server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = gemini.work.path().to_string_lossy().into_owned();
    let env = launch_env(&gemini, &model.url());
    let launch = |name: &str| {
        let mut args = vec![
            "launch",
            "gemini_cli",
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
        agent_tree(&server, name)
    };
    let delta_tree = launch("delta");
    // The session id is known from the launch: Gemini CLI was started on it.
    let planned = restore(&server, &["--dry-run"]);
    let session = agent(&planned, "delta")["conversation"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id recorded: {planned:#?}"))
        .to_string();
    assert_eq!(session.len(), 36, "{session}");
    server.panectl_ok(&["send", "delta", "reply:remember delta-one"]);
    server.wait_for("delta's turn saved", Duration::from_secs(90), || {
        saved(gemini.home.path(), "remember delta-one")
    });
    let epsilon_tree = launch("epsilon");
    let quiet = agent(&restore(&server, &["--dry-run"]), "epsilon")["conversation"]
        .as_str()
        .expect("epsilon's session id")
        .to_string();
    assert_ne!(quiet, session);

    drop((delta_tree, epsilon_tree));
    server.tmux(&["kill-server"]);
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again("fresh", 120, 40);
    server.wait_for_panes(1);
    let done = restore(&server, &["--timeout", "90s"]);
    let _delta = agent_tree(&server, "delta");
    let _epsilon = agent_tree(&server, "epsilon");
    let delta = agent(&done, "delta");
    assert_eq!(delta["outcome"], "resumed", "{done:#?}");
    assert_eq!(delta["conversation"], session.as_str());
    // Nothing was said to epsilon: Gemini CLI would not resume its session; it starts again
    // under the same id, and says why.
    let epsilon = agent(&done, "epsilon");
    assert_eq!(epsilon["outcome"], "started_fresh", "{done:#?}");
    assert_eq!(epsilon["conversation"], quiet.as_str());
    assert!(
        epsilon["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("not resumed"),
        "{epsilon}"
    );
    let prompt = "reply:delta is back";
    server.panectl_ok(&["send", "delta", prompt]);
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while !model.log().iter().any(|r| r.prompt == prompt) {
        if std::time::Instant::now() > deadline {
            let screen = server.panectl().args(["screen", "delta"]).output();
            let inbox = server.panectl().args(["inbox", "--json"]).output();
            let text = |o: std::io::Result<std::process::Output>| {
                o.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default()
            };
            eprintln!("delta's screen:\n{}\ninbox:\n{}", text(screen), text(inbox));
            server.wait_for("delta's next request", Duration::ZERO, || false);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = model.log();
    let request = log.iter().find(|r| r.prompt == prompt).unwrap();
    assert!(
        request.conversation.contains("remember delta-one"),
        "gemini did not resume its session: {}",
        request.conversation
    );
    // Both run: a second restore starts neither again.
    let again = restore(&server, &[]);
    for key in ["delta", "epsilon"] {
        assert_eq!(agent(&again, key)["outcome"], "running", "{again:#?}");
    }
}
