//! A real Codex agent (against the fake model server) brought back after the tmux server died:
//! `panectl launch codex` sets Codex's `notify` to panectl's hook, whose notifications carry the
//! thread id of the conversation (not of the thread Codex names the task in, which it does not
//! save); `panectl restore` starts it again with `codex resume ID`, so the fake model's next
//! request carries the earlier turn.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::binary;
use crate::fake_model::FakeModel;
use crate::support::{TmuxServer, daemon_test_lock};

/// A home whose `~/.codex/config.toml` points Codex at the fake model and trusts `work`.
pub struct CodexHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl CodexHome {
    pub fn new(model_url: &str) -> CodexHome {
        let home = tempfile::Builder::new()
            .prefix("panectl-codex-home-")
            .tempdir()
            .expect("home");
        let work = tempfile::Builder::new()
            .prefix("panectl-codex-work-")
            .tempdir()
            .expect("work");
        std::fs::create_dir_all(home.path().join(".codex")).expect("mkdir .codex");
        let config = format!(
            "model = \"gpt-5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\n\
             sandbox_mode = \"read-only\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{model_url}/v1\"\nenv_key = \"FAKE_KEY\"\nwire_api = \"responses\"\n\n\
             [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            work.path().display()
        );
        std::fs::write(home.path().join(".codex/config.toml"), config).expect("config.toml");
        CodexHome { home, work }
    }

    pub fn work(&self) -> &Path {
        self.work.path()
    }

    /// Its home directory (`.codex/config.toml` is the user's configuration).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// `KEY=VALUE` settings for `panectl launch codex`.
    pub fn launch_env(&self) -> Vec<String> {
        let bin = binary("codex");
        let dir = bin.parent().expect("bin dir").display().to_string();
        let path = std::env::var("PATH").unwrap_or_default();
        vec![
            format!("HOME={}", self.home.path().display()),
            "FAKE_KEY=panectl-test".into(),
            format!("PATH={dir}:{path}"),
        ]
    }
}

/// Every file name under `dir`.
fn walk(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            names.extend(walk(&path));
        } else {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names
}

pub fn restore(server: &TmuxServer, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["restore", "--json"];
    all.extend_from_slice(args);
    let output = server.panectl().args(&all).output().expect("restore");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn gamma(done: &[Value]) -> &Value {
    done.iter()
        .find(|r| r["key"] == "gamma")
        .unwrap_or_else(|| panic!("no gamma in {done:#?}"))
}

#[test]
fn a_codex_agent_resumes_its_thread_after_tmux_died() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let codex = CodexHome::new(&model.url());
    let mut server = TmuxServer::start(120, 40);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let work = codex.work().to_string_lossy().into_owned();
    let mut args = vec![
        "launch",
        "codex",
        "--name",
        "gamma",
        "--cwd",
        &work,
        "--timeout",
        "90",
    ];
    let env = codex.launch_env();
    for pair in &env {
        args.extend(["--env", pair.as_str()]);
    }
    args.extend(["--", "--no-daemon"]);
    server.panectl_ok(&args);
    server.panectl_ok(&["send", "gamma", "reply:remember gamma-one"]);
    // Its notify hook said which thread it is.
    let mut thread = String::new();
    server.wait_for("the thread id", Duration::from_secs(90), || {
        thread = gamma(&restore(&server, &["--dry-run"]))["conversation"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        !thread.is_empty()
    });
    // Codex 0.171 then names the task in a thread of its own, which it also notifies of and
    // never saves: that id must not replace the conversation's.
    server.wait_for("the task-title thread", Duration::from_secs(30), || {
        model
            .log()
            .iter()
            .any(|r| r.prompt.starts_with("Generate a concise"))
    });
    std::thread::sleep(Duration::from_secs(2));
    let planned = restore(&server, &["--dry-run"]);
    assert_eq!(gamma(&planned)["conversation"], thread.as_str());
    let saved = walk(&codex.home.path().join(".codex/sessions"));
    assert!(
        saved
            .iter()
            .any(|f| f.ends_with(&format!("-{thread}.jsonl"))),
        "{thread} is not a thread Codex saved: {saved:?}"
    );

    server.tmux(&["kill-server"]);
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again("fresh", 120, 40);
    server.wait_for_panes(1);
    let done = restore(&server, &["--timeout", "90s"]);
    assert_eq!(gamma(&done)["outcome"], "resumed", "{done:#?}");
    assert_eq!(gamma(&done)["conversation"], thread.as_str());
    let prompt = "reply:gamma is back";
    server.panectl_ok(&["send", "gamma", prompt]);
    server.wait_for("gamma's next request", Duration::from_secs(60), || {
        model.log().iter().any(|r| r.prompt == prompt)
    });
    let log = model.log();
    let request = log.iter().find(|r| r.prompt == prompt).unwrap();
    assert!(
        request.conversation.contains("remember gamma-one"),
        "codex did not resume its thread: {}",
        request.conversation
    );
}
