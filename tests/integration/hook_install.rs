//! `panectl hook install` / `uninstall` against the real CLIs' own configuration files: the
//! hook is merged into what the user has, a Claude Code, Gemini CLI or Codex the user starts
//! themselves (not through `panectl launch`) then reports to the daemon through it, and the
//! uninstall gives the files back as they were.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::agent_clis::{ClaudeHome, binary};
use crate::fake_model::FakeModel;
use crate::restore_codex::{CodexHome, restore};
use crate::support::{EventReader, TmuxServer, daemon_test_lock};

/// Runs `panectl hook ACTION PROVIDER` with `home` as `$HOME`; its stdout.
fn hook_config(server: &TmuxServer, home: &Path, action: &str, provider: &str) -> String {
    let output = server
        .panectl()
        .args(["hook", action, provider])
        .env("HOME", home)
        .output()
        .expect("run panectl hook");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The user settings of [`GeminiHome`]: an API key sign-in, no update check.
const GEMINI_SETTINGS: &str = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": false}}"#;

/// A home whose `~/.gemini` signs in with an API key and trusts `work`.
pub struct GeminiHome {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl GeminiHome {
    pub fn new() -> GeminiHome {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let gemini_dir = home.path().join(".gemini");
        std::fs::create_dir_all(&gemini_dir).unwrap();
        std::fs::write(gemini_dir.join("settings.json"), GEMINI_SETTINGS).unwrap();
        let trusted = serde_json::json!({ work.path().to_string_lossy(): "TRUST_FOLDER" });
        std::fs::write(gemini_dir.join("trustedFolders.json"), trusted.to_string()).unwrap();
        GeminiHome { home, work }
    }

    /// The command line that starts Gemini CLI in this home against the model at `url`. With
    /// `CI` unset: Gemini CLI runs without its interface when it is set (as CI sets it, and the
    /// tests' tmux server passes it on).
    pub fn command(&self, url: &str) -> String {
        format!(
            "env -u CI HOME='{}' GEMINI_API_KEY=panectl-test GOOGLE_GEMINI_BASE_URL='{url}' '{}'",
            self.home.path().display(),
            binary("gemini").display()
        )
    }
}

/// Types `text` into `%0` as a person does, then Enter.
pub fn send_line(server: &TmuxServer, text: &str) {
    server.tmux(&["send-keys", "-t", "%0", "-l", text]);
    std::thread::sleep(Duration::from_millis(300));
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
}

/// Waits until `%0` shows `text`; a program that ended or never shows it fails the test with the
/// pane's screen (the pane stays when its program ends: `remain-on-exit`).
pub fn wait_for_screen(server: &TmuxServer, what: &str, text: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let screen = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
        if screen.contains(text) {
            return;
        }
        let dead = server.tmux(&[
            "display-message",
            "-p",
            "-t",
            "%0",
            "#{pane_dead} #{pane_dead_status}",
        ]);
        if dead.starts_with('1') || std::time::Instant::now() >= deadline {
            panic!("{what}: not shown (pane dead, status: {dead:?}); the pane shows:\n{screen}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Starts `command` in `%0` (in `dir`), the pane kept when it ends. The guard ends the
/// command's processes by pid when dropped: Gemini CLI runs itself again as a child node
/// process, which can outlive the tmux server.
pub fn respawn(server: &TmuxServer, dir: &str, command: &str) -> ProcessTree {
    server.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "-c", dir, command]);
    let pid = server.tmux(&["display-message", "-p", "-t", "%0", "#{pane_pid}"]);
    ProcessTree(pid.trim().parse().unwrap_or(0))
}

/// A process and its descendants, sent SIGKILL on drop (by pid, read from `/proc`).
pub struct ProcessTree(pub i32);

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.0 <= 0 {
            return;
        }
        let mut tree = vec![self.0];
        let mut index = 0;
        while index < tree.len() {
            let parent = tree[index];
            for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
                // `pid (comm) state ppid ...`: the fields after the last ')'.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<i32>().ok());
                if ppid == Some(parent) && !tree.contains(&pid) {
                    tree.push(pid);
                }
            }
            index += 1;
        }
        for pid in tree {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Waits for a status of `%0` that a hook decided.
fn hook_status(events: &EventReader, provider: &str) -> Value {
    events.expect_within("a status from a hook", Duration::from_secs(90), |e| {
        e["type"] == "status"
            && e["pane"] == "%0"
            && e["provider"] == provider
            && e["source"] == "hook"
    })
}

#[test]
fn claude_code_started_by_hand_reports_through_the_installed_hooks() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let settings = claude.home().join(".claude/settings.json");
    let before = json_file(&settings);
    let server = TmuxServer::start(120, 40);
    // A second pane keeps the session (and tmux 3.3a) alive whatever happens to the first.
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let said = hook_config(&server, claude.home(), "install", "claude_code");
    assert!(said.contains("added to"), "{said}");
    let installed = json_file(&settings);
    // The user's settings stay, first; the hook runs this panectl (not on PATH here).
    assert_eq!(installed["permissions"], before["permissions"]);
    let command = installed["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.ends_with("/panectl hook"), "{command}");
    let again = hook_config(&server, claude.home(), "install", "claude_code");
    assert!(again.contains("nothing to do"), "{again}");

    let events = EventReader::start(&server);
    claude.respawn_in(&server, "%0", &model.url());
    events.expect_within("idle", Duration::from_secs(60), |e| {
        e["type"] == "status" && e["pane"] == "%0" && e["status"] == "idle"
    });
    send_line(&server, "slow:1500 reply:Hooked by hand.");
    let hooked = hook_status(&events, "claude_code");
    assert!(
        hooked["rule"].as_str().unwrap().starts_with("hook "),
        "{hooked}"
    );
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "sh"]);
    hook_config(&server, claude.home(), "uninstall", "claude_code");
    assert_eq!(json_file(&settings), before);
}

#[test]
fn gemini_cli_started_by_hand_reports_through_the_installed_hooks() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let gemini = GeminiHome::new();
    let (home, work) = (&gemini.home, &gemini.work);
    let settings = home.path().join(".gemini/settings.json");
    let user = GEMINI_SETTINGS;
    let server = TmuxServer::start(120, 40);
    // A second pane keeps the session (and tmux 3.3a) alive whatever happens to the first.
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    hook_config(&server, home.path(), "install", "gemini_cli");
    let installed = json_file(&settings);
    assert_eq!(
        installed["security"]["auth"]["selectedType"],
        "gemini-api-key"
    );
    assert!(installed["hooks"]["AfterAgent"].is_array(), "{installed}");

    let events = EventReader::start(&server);
    let command = gemini.command(&model.url());
    let work_text = work.path().to_string_lossy().into_owned();
    let _gemini = respawn(&server, &work_text, &command);
    wait_for_screen(&server, "Gemini CLI's prompt", "Type your message");
    send_line(&server, "reply:Hooked by hand.");
    let hooked = hook_status(&events, "gemini_cli");
    assert!(
        hooked["rule"].as_str().unwrap().starts_with("hook "),
        "{hooked}"
    );
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "sh"]);
    hook_config(&server, home.path(), "uninstall", "gemini_cli");
    assert_eq!(
        json_file(&settings),
        serde_json::from_str::<Value>(user).unwrap()
    );
}

#[test]
fn codex_started_by_hand_tells_its_thread_through_the_installed_notify() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let codex = CodexHome::new(&model.url());
    let config = codex.home().join(".codex/config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let server = TmuxServer::start(120, 40);
    // A second pane keeps the session (and tmux 3.3a) alive whatever happens to the first.
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    hook_config(&server, codex.home(), "install", "codex");
    let installed = std::fs::read_to_string(&config).unwrap();
    let parsed: toml::Table = toml::from_str(&installed).unwrap();
    let notify = parsed["notify"].as_array().unwrap();
    assert!(
        notify[0].as_str().unwrap().ends_with("/panectl"),
        "{installed}"
    );
    assert_eq!(notify[1].as_str(), Some("hook"));
    // The user's tables are still there.
    assert!(parsed["model_providers"]["fake"].is_table(), "{installed}");

    let command = format!(
        "env HOME='{}' FAKE_KEY=panectl-test '{}' --no-daemon",
        codex.home().display(),
        binary("codex").display()
    );
    let work = codex.work().to_string_lossy().into_owned();
    let _codex = respawn(&server, &work, &command);
    wait_for_screen(&server, "Codex's prompt", "for shortcuts");
    send_line(&server, "reply:Hooked by hand.");
    // Its notify told the daemon the thread: restore would resume it.
    server.wait_for("the thread id", Duration::from_secs(90), || {
        restore(&server, &["--dry-run"]).iter().any(|r| {
            r["provider"] == "codex" && r["conversation"].as_str().is_some_and(|c| !c.is_empty())
        })
    });
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "sh"]);
    // Codex writes to its configuration too (its `[tui]` notes): the uninstall takes the
    // `notify` line out of the file as it is now, and nothing else.
    let lived_in = std::fs::read_to_string(&config).unwrap();
    let notify_line = lived_in
        .lines()
        .find(|l| l.starts_with("notify = "))
        .unwrap_or_else(|| panic!("no notify in\n{lived_in}"))
        .to_string();
    hook_config(&server, codex.home(), "uninstall", "codex");
    let after = std::fs::read_to_string(&config).unwrap();
    assert_eq!(after, lived_in.replacen(&format!("{notify_line}\n"), "", 1));
    assert!(after.starts_with(&before), "{after}");
}
