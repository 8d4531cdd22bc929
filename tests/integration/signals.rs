//! The agents' own signals as a second status channel, in a real daemon: hooks through
//! `panectl hook` and the API (a hook saying "waiting" while the screen shows work, a stale
//! hook after the program restarted, a daemon that is not there), and Codex's OSC 7501 reports
//! split across `%output` chunks, with garbage around them.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use crate::support::{EventReader, TmuxServer, daemon_test_lock};

/// The daemon's row of `%0`.
pub fn pane(server: &TmuxServer) -> serde_json::Value {
    server
        .panes()
        .into_iter()
        .find(|p| p["pane"] == "%0")
        .unwrap_or_default()
}

fn pane_pid(server: &TmuxServer) -> u32 {
    server
        .tmux(&["display-message", "-p", "-t", "%0", "#{pane_pid}"])
        .trim()
        .parse()
        .expect("pane pid")
}

/// Runs `panectl hook` as Claude Code would: the hook's JSON on stdin, `TMUX_PANE` and
/// `CLAUDE_PID` in the environment. Returns (exit success, stdout, stderr).
fn run_hook(
    server: &TmuxServer,
    json: &str,
    pid: u32,
    socket: Option<&str>,
) -> (bool, String, String) {
    let mut command = server.panectl();
    command.arg("hook");
    if let Some(socket) = socket {
        command.args(["--socket", socket]);
    }
    let mut child = command
        .env("TMUX_PANE", "%0")
        .env("CLAUDE_PID", pid.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run panectl hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Types a command line into the shell of `%0` that runs `panectl hook` with `json` on stdin,
/// the way an agent runs its hooks: as a process under the pane's program. `before` and
/// `after` are shell commands around it.
fn hook_in_pane(server: &TmuxServer, json: &str, before: &str, after: &str) {
    let file = server
        .dir()
        .join(format!("hook-{}.json", std::process::id()));
    std::fs::write(&file, json).expect("write the hook's JSON");
    let socket = server.health()["api_socket"]
        .as_str()
        .expect("api_socket")
        .to_string();
    let line = format!(
        "{before}{} hook --socket {socket} < {}{after}",
        env!("CARGO_BIN_EXE_panectl"),
        file.display()
    );
    server.tmux(&["send-keys", "-t", "%0", "-l", &line]);
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
}

/// A rules directory whose `shell.toml` is the built-in shell provider with a `[signals.hooks]`
/// table: hooks are a provider's data, and a shell pane running `panectl hook` stands in for
/// an agent whose hooks say these things.
fn shell_with_hooks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("rules dir");
    let rules = format!(
        "{}\n[signals.hooks]\nUserPromptSubmit = \"processing\"\nPermissionRequest = \"waiting_user_answer\"\n\"Notification:permission_prompt\" = \"waiting_user_answer\"\nStop = \"completed\"\n",
        include_str!("../../src/status/providers/shell.toml")
    );
    std::fs::write(dir.path().join("shell.toml"), rules).expect("write shell.toml");
    dir
}

fn start_daemon_with_shell_hooks(
    server: &TmuxServer,
) -> (crate::support::Daemon, tempfile::TempDir) {
    let rules = shell_with_hooks();
    let dir = rules.path().to_string_lossy().into_owned();
    (server.start_daemon(&["--rules-dir", &dir]), rules)
}

#[test]
fn a_waiting_hook_beats_the_screens_processing_until_the_screen_changes() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let (_daemon, _rules) = start_daemon_with_shell_hooks(&server);
    server.wait_for_panes(1);
    server.wait_for("the shell to be idle", Duration::from_secs(5), || {
        let pane = pane(&server);
        pane["provider"] == "shell" && pane["status"] == "idle"
    });
    let events = EventReader::start(&server);
    // The pane works, then its program's hook says it waits for the user while the screen
    // still shows it working.
    hook_in_pane(
        &server,
        r#"{"session_id":"s1","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}"#,
        "sleep 1; ",
        "; sleep 4",
    );
    events.expect("processing from the screen", |e| {
        e["type"] == "status" && e["status"] == "processing" && e["source"] == "screen"
    });
    let event = events.expect("waiting from the hook", |e| {
        e["type"] == "status" && e["status"] == "waiting_user_answer"
    });
    assert_eq!(event["source"], "hook");
    assert_eq!(event["previous"], "processing");
    assert_eq!(event["rule"], "hook Notification(permission_prompt)");
    let summary = pane(&server);
    assert_eq!(summary["status"], "waiting_user_answer");
    assert_eq!(summary["status_source"], "hook");
    let explained: serde_json::Value =
        serde_json::from_str(&server.panectl_ok(&["explain", "%0", "--json"])).unwrap();
    assert_eq!(explained["source"], "hook");
    assert_eq!(explained["screen_status"], "processing");
    assert_eq!(explained["signal"]["status"], "waiting_user_answer");
    let text = server.panectl_ok(&["explain", "%0"]);
    assert!(
        text.contains("source hook") && text.contains("screen says processing"),
        "{text}"
    );
    // The screen changing after the hook is newer evidence: the command ends, it wins.
    let event = events.expect_within("completed from the screen", Duration::from_secs(10), |e| {
        e["type"] == "status" && e["status"] == "completed"
    });
    assert_eq!(event["source"], "screen");
    assert_eq!(event["previous"], "waiting_user_answer");
}

/// Hooks are believed only from the pane's agent (issue 31, item 2): a hook posted from
/// anywhere else does nothing, whatever `pid` its body claims, and one from a program that
/// ended (the pane was respawned) neither.
#[test]
fn a_hook_applies_only_from_the_panes_agent_whatever_its_body_says() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let (_daemon, _rules) = start_daemon_with_shell_hooks(&server);
    server.wait_for_panes(1);
    server.wait_for("the shell to be idle", Duration::from_secs(5), || {
        pane(&server)["status"] == "idle"
    });
    let old = pane_pid(&server);
    let forged = |event: &str, pid: u32| {
        server.api_post(
            "/v1/panes/%250/hook",
            &serde_json::json!({"event": event, "pid": pid}),
        )
    };
    // From the test, not from the pane: refused though the body names the pane's process.
    let answer = forged("UserPromptSubmit", old);
    assert_eq!(answer["applied"], false, "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("is not the pane's agent"),
        "{answer}"
    );
    assert_eq!(answer["status_source"], "screen");
    assert_eq!(pane(&server)["status"], "idle");
    // Unknown fields are refused, as the API says.
    let (status, refused) = server.api_post_status(
        "/v1/panes/%250/hook",
        &serde_json::json!({"event": "Stop", "trust_me": true}),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("trust_me"), "{refused}");
    // From a process under the pane's program: it applies.
    hook_in_pane(
        &server,
        r#"{"hook_event_name":"PermissionRequest"}"#,
        "",
        "",
    );
    server.wait_for("the hook's status", Duration::from_secs(10), || {
        let pane = pane(&server);
        pane["status_source"] == "hook" && pane["status"] == "waiting_user_answer"
    });
    // The program is replaced: the signal goes with it; the old program's hooks are stale.
    server.tmux(&["respawn-pane", "-k", "-t", "%0", "sh"]);
    server.wait_for("the new program", Duration::from_secs(5), || {
        pane_pid(&server) != old && pane(&server)["pid"] != old
    });
    server.wait_for("the screen's status again", Duration::from_secs(5), || {
        pane(&server)["status_source"] == "screen"
    });
    let answer = forged("Stop", pane_pid(&server));
    assert_eq!(answer["applied"], false, "{answer}");
    assert_eq!(answer["status_source"], "screen");
}

#[test]
fn panectl_hook_never_fails_the_agent() {
    let server = TmuxServer::start(80, 24);
    // No daemon: one line on stderr, exit code 0, nothing on stdout.
    let (ok, stdout, stderr) = run_hook(&server, r#"{"hook_event_name":"Stop"}"#, 1, None);
    assert!(ok, "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("panectl hook: "), "{stderr}");
    // A socket nobody answers on in time, garbage input, bad arguments: still 0.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("silent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let started = std::time::Instant::now();
    let (ok, _, stderr) = run_hook(
        &server,
        r#"{"hook_event_name":"Stop"}"#,
        1,
        Some(path.to_str().unwrap()),
    );
    assert!(ok && started.elapsed() < Duration::from_secs(5), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (ok, _, stderr) = run_hook(&server, "\u{1}not json", 1, None);
    assert!(ok && stderr.lines().count() == 1, "{stderr}");
    let output = server
        .panectl()
        .args(["hook", "--no-such-flag"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr).lines().count(), 1);
}

#[test]
fn codex_osc_reports_split_across_output_chunks_set_the_status() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.panectl_ok(&["set-provider", "%0", "codex"]);
    let events = EventReader::start(&server);
    // Each piece is its own write, well apart, so each is its own `%output` line; garbage
    // (an overlong payload, a cut-off sequence, bytes that are not UTF-8) around them.
    let script = r#"
import os, sys, time
def w(b):
    os.write(1, b); time.sleep(0.15)
# Past the daemon's notice of the respawn (its pane poll runs once a second).
time.sleep(2.5)
w(b"\x1b]7501;state=" + b"x" * 5000 + b"\x1b\\")
w(b"\x1b]7501;state=work\x1b[31mred\x1b[0m\x1b]7501;\xff\xfe\x07")
w(b"plain text \x1b]75")
w(b"01;state=wor")
w(b"king:app=co")
w(b"dex\x1b")
w(b"\\ after\r\n")
time.sleep(1.5)
w(b"\x1b]7501;state=blocked:app=codex:kind=permission\x07")
time.sleep(30)
"#;
    let file = server.dir().join("osc.py");
    std::fs::write(&file, script).unwrap();
    server.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        "%0",
        &format!("python3 {}", file.display()),
    ]);
    let event = events.expect("processing from the OSC report", |e| {
        e["type"] == "status" && e["status"] == "processing" && e["source"] == "osc"
    });
    assert_eq!(event["rule"], "osc 7501 state=working");
    assert_eq!(event["provider"], "codex");
    let event = events.expect("waiting from the OSC report", |e| {
        e["type"] == "status" && e["status"] == "waiting_user_answer"
    });
    assert_eq!(event["source"], "osc");
    assert_eq!(event["rule"], "osc 7501 state=blocked kind=permission");
    // capture-pane never sees them; the daemon's screen shows the text around them.
    let capture = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert!(capture.contains("plain text  after"), "{capture}");
    assert!(!capture.contains("7501"), "{capture}");
    let health = server.health();
    assert_eq!(health["parse_errors"], 0);
}
