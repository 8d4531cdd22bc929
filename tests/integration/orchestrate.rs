//! `panectl input`, `key` and `wait` against real tmux and the fake agent.

use std::process::Stdio;
use std::time::Duration;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

#[test]
fn input_keys_and_wait() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.5);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;

    // Already there: at once.
    let now = server
        .panectl()
        .args(["wait", "%0", "--until", "idle,completed"])
        .output()
        .unwrap();
    assert_eq!(now.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&now.stdout).trim(), "idle");
    // Not reached in time: 1.
    let late = server
        .panectl()
        .args(["wait", "%0", "--until", "completed", "--timeout", "0.5"])
        .output()
        .unwrap();
    assert_eq!(late.status.code(), Some(1), "{late:?}");
    assert!(String::from_utf8_lossy(&late.stderr).contains("timed out"));

    // A waiter started before the input sees the turn end.
    let waiter = server
        .panectl()
        .args(["wait", "%0", "--until", "completed", "--timeout", "20"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    server.panectl_ok(&["input", "%0", "do it #{pane_id} ; $HOME"]);
    let done = waiter.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "completed");

    // Text without Enter, then the key.
    server.panectl_ok(&["input", "%0", "typed, then submitted", "--no-enter"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(setup.bodies().len(), 1, "submitted too early");
    server.panectl_ok(&["key", "%0", "Enter"]);
    server.wait_for("the second input", Duration::from_secs(5), || {
        setup.bodies().len() == 2
    });
    assert_eq!(
        setup.bodies(),
        [&b"do it #{pane_id} ; $HOME"[..], b"typed, then submitted"]
    );

    // Key names are checked; errors are exit code 2 for wait.
    for bad in ["bad key", "#{pane_id}", "Enter;"] {
        let refused = server.panectl().args(["key", "%0", bad]).output().unwrap();
        assert!(!refused.status.success(), "{bad}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("is not a key name"),
            "{bad}: {refused:?}"
        );
    }
    for args in [
        &["wait", "%99", "--until", "idle"][..],
        &["wait", "%0", "--until", "sleepy"],
    ] {
        let error = server.panectl().args(args).output().unwrap();
        assert_eq!(error.status.code(), Some(2), "{args:?}: {error:?}");
    }
}

#[test]
fn launch_starts_an_agent_from_its_rules_and_waits_until_ready() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let work = tempfile::tempdir().unwrap();
    let work_dir = std::fs::canonicalize(work.path()).unwrap();
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();

    let pane = server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--name",
        "worker-1",
        "--cwd",
        &work_dir.display().to_string(),
        "--env",
        "LAUNCH_VAR=x y; $HOME",
        "--",
        "one",
        "two #{pane_id}",
    ]);
    let pane = pane.trim();
    assert!(pane.starts_with('%'), "{pane}");
    assert_eq!(windows(), before + 1);
    // It returns once the agent is ready.
    assert_eq!(server.panectl_ok(&["status", pane]).trim(), "idle");
    let screen = server.daemon_screen(pane);
    assert!(
        screen.contains(&format!(
            "cwd={} var=x y; $HOME args=one two #{{pane_id}}",
            work_dir.display()
        )),
        "{screen}"
    );
    let options = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{window_name} #{@panectl_name} #{@panectl_provider_override}",
    ]);
    assert_eq!(options.trim(), "worker-1 worker-1 fake_agent");
    // It is an inbox receiver like any other.
    let id = server.panectl_ok(&["send", pane, "hello worker"]);
    server.wait_for("the message", Duration::from_secs(10), || {
        setup.bodies().contains(&b"hello worker".to_vec())
    });
    assert!(!id.trim().is_empty());

    // A new session.
    let lead = server.panectl_ok(&["launch", "fake_agent", "--new-session", "--session", "team"]);
    assert!(lead.trim().starts_with('%'));
    assert!(
        server
            .tmux(&["list-sessions", "-F", "#{session_name}"])
            .lines()
            .any(|s| s == "team")
    );

    // Refusals create nothing.
    let count = windows();
    for (args, message) in [
        (
            &["launch", "fake_agent", "--name", "#{pane_id}"][..],
            "name",
        ),
        (&["launch", "shell"], "has no [launch] command"),
        (&["launch", "nosuch"], "unknown provider"),
        (&["launch", "fake_agent", "--env", "1X=y"], "not valid"),
    ] {
        let refused = server.panectl().args(args).output().unwrap();
        assert!(!refused.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(message),
            "{args:?}: {}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }
    assert_eq!(windows(), count);
}
