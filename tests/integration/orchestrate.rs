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

    // Key names are checked; an unknown pane is "not found" (1), an unknown status a usage
    // error (2): the one exit-code table.
    for bad in ["bad key", "#{pane_id}", "Enter;"] {
        let refused = server.panectl().args(["key", "%0", bad]).output().unwrap();
        assert!(!refused.status.success(), "{bad}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("is not a key name"),
            "{bad}: {refused:?}"
        );
    }
    for (args, code) in [
        (&["wait", "%99", "--until", "idle"][..], 1),
        (&["wait", "%0", "--until", "sleepy"], 2),
    ] {
        let error = server.panectl().args(args).output().unwrap();
        assert_eq!(error.status.code(), Some(code), "{args:?}: {error:?}");
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
        (
            &["launch", "nosuch"],
            "unknown provider \"nosuch\" (claude_code, ",
        ),
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

/// `(index, window id)` of every window of a session.
fn windows_of(server: &crate::support::TmuxServer, session: &str) -> Vec<(u32, String)> {
    server
        .tmux(&[
            "list-windows",
            "-t",
            session,
            "-F",
            "#{window_index} #{window_id}",
        ])
        .lines()
        .filter_map(|l| {
            let (index, id) = l.split_once(' ')?;
            Some((index.parse().ok()?, id.to_string()))
        })
        .collect()
}

#[test]
fn launch_goes_after_the_last_window_of_the_callers_session() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    // Gaps in the numbering, and a second session, before the daemon starts.
    server.tmux(&["new-window", "-d", "-t", "$0:3", "sh"]);
    server.tmux(&["new-window", "-d", "-t", "$0:5", "sh"]);
    server.tmux(&["new-session", "-d", "-s", "other", "sh"]);
    server.tmux(&["new-window", "-d", "-t", "other:4", "sh"]);
    let _daemon = setup.daemon_for(6);
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let first = windows_of(server, "$0");
    let other = windows_of(server, "other");
    let other_pane = server.tmux(&["display-message", "-p", "-t", "other:0", "#{pane_id}"]);

    // From a pane of `other` (`$TMUX_PANE`): there, after its last window.
    let launched = server
        .panectl()
        .args(["launch", "fake_agent", "--name", "in-other"])
        .env("TMUX_PANE", other_pane.trim())
        .output()
        .unwrap();
    assert!(launched.status.success(), "{launched:?}");
    let pane = String::from_utf8_lossy(&launched.stdout).trim().to_string();
    let now = windows_of(server, "other");
    assert_eq!(&now[..other.len()], &other[..], "windows were renumbered");
    assert_eq!(now.len(), other.len() + 1);
    assert_eq!(now.last().map(|w| w.0), Some(5), "{now:?}");
    let session = server.tmux(&["display-message", "-p", "-t", &pane, "#{session_name}"]);
    assert_eq!(session.trim(), "other");
    assert_eq!(windows_of(server, "$0"), first);

    // From %0, with a gap at 1, 2 and 4: after 5, nothing moved.
    let launched = server
        .panectl()
        .args(["launch", "fake_agent", "--no-wait"])
        .env("TMUX_PANE", "%0")
        .output()
        .unwrap();
    assert!(launched.status.success(), "{launched:?}");
    let now = windows_of(server, "$0");
    assert_eq!(&now[..first.len()], &first[..], "windows were renumbered");
    assert_eq!(now.last().map(|w| w.0), Some(6), "{now:?}");
    // --session wins over $TMUX_PANE.
    let launched = server
        .panectl()
        .args(["launch", "fake_agent", "--no-wait", "--session", "other"])
        .env("TMUX_PANE", "%0")
        .output()
        .unwrap();
    assert!(launched.status.success(), "{launched:?}");
    assert_eq!(windows_of(server, "other").last().map(|w| w.0), Some(6));
}

#[test]
fn a_command_that_fails_at_once_is_an_error_with_its_last_lines() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    std::fs::write(
        setup.rules_dir().join("missing_agent.toml"),
        "id = \"missing_agent\"\nname = \"Missing agent\"\n\n[launch]\n\
         command = [\"panectl-test-no-such-agent\", \"--flag\"]\n\n[detect]\n\
         commands = [\"panectl-test-no-such-agent\"]\n\n[[rules]]\nid = \"missing_agent.ready\"\n\
         status = \"ready\"\npriority = 30\nlines = 1\nregex = ['^> $']\nseen_on = \"test\"\n",
    )
    .unwrap();
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    for args in [
        &["launch", "missing_agent"][..],
        &["launch", "missing_agent", "--no-wait"],
        &[
            "launch",
            "missing_agent",
            "--new-session",
            "--session",
            "lost",
        ],
    ] {
        let started = std::time::Instant::now();
        let failed = server.panectl().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&failed.stderr);
        // The request's fault (2), not an unreachable daemon (3).
        assert_eq!(failed.status.code(), Some(2), "{args:?}: {failed:?}");
        assert!(
            // tmux may not have the exit status yet when the pane is read.
            (stderr.contains("launch failed: the command exited with status 127: ")
                || stderr.contains("launch failed: the command ended at once: "))
                && stderr.contains("panectl-test-no-such-agent")
                && stderr.contains("not found"),
            "{args:?}: {stderr}\n{}",
            server.daemon_log_tail(60)
        );
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
        // Its window is closed again.
        server.wait_for("the dead window to close", Duration::from_secs(5), || {
            windows() == before
        });
    }
    // Nothing is recorded for restore: it would start the failing command again.
    assert_eq!(
        server
            .panectl_ok(&["restore", "--dry-run", "--json"])
            .trim(),
        "[]"
    );
    assert!(
        !server
            .tmux(&["list-sessions", "-F", "#{session_name}"])
            .lines()
            .any(|s| s == "lost")
    );
    // An agent that starts is left to exit like any other: no dead pane stays behind.
    let pane = server.panectl_ok(&["launch", "fake_agent", "--no-wait"]);
    let pane = pane.trim();
    let remain = server.tmux(&[
        "show-options",
        "-w",
        "-q",
        "-v",
        "-t",
        pane,
        "remain-on-exit",
    ]);
    assert_eq!(remain.trim(), "", "remain-on-exit is still set on {pane}");
}

#[test]
fn text_for_a_plain_shell_is_refused_unless_allowed() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    // %2 runs a program no provider recognises.
    server.tmux(&["new-window", "-d", "exec cat"]);
    let _daemon = setup.daemon_for(3);
    setup.wait_status(&["idle"], Duration::from_secs(10));
    server.wait_for("%1 to be a shell", Duration::from_secs(10), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%1" && p["provider"] == "shell")
    });
    let refused = |args: &[&str], words: &str| {
        let output = server.panectl().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {output:?}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    };
    let shell = "%1 runs a plain shell (provider shell): the text would run as commands; \
                 pass --allow-shell";
    refused(&["send", "%1", "echo REFUSED-$((6*7))"], shell);
    refused(&["input", "%1", "echo REFUSED-$((6*7))"], shell);
    refused(&["handoff", "%1", "echo REFUSED-$((6*7))"], shell);
    refused(&["assign", "%0", "a task", "--reply-to", "%1"], shell);
    refused(
        &["send", "%2", "echo REFUSED"],
        "%2 runs no agent panectl recognises (no provider)",
    );
    for (route, field) in [
        ("/v1/panes/%251/messages", "body"),
        ("/v1/panes/%251/input", "text"),
    ] {
        let (status, answer) =
            server.api_post_status(route, &serde_json::json!({ field: "echo REFUSED" }));
        assert_eq!(status, 409, "{route}: {answer}");
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|e| e.contains("allow_shell: true")),
            "{answer}"
        );
    }
    // Nothing was queued, typed or run.
    assert_eq!(server.panectl_ok(&["inbox", "--json"]), "");
    assert!(setup.bodies().is_empty());

    // Asked for, it goes.
    server.panectl_ok(&["send", "%1", "--allow-shell", "echo SENT-$((6*7))"]);
    server.wait_for("the sent command to run", Duration::from_secs(15), || {
        server.tmux_screen("%1").contains("\nSENT-42")
    });
    server.panectl_ok(&["input", "%1", "--allow-shell", "echo TYPED-$((6*7))"]);
    server.wait_for("the typed command to run", Duration::from_secs(10), || {
        server.tmux_screen("%1").contains("\nTYPED-42")
    });
    let (status, answer) = server.api_post_status(
        "/v1/panes/%252/input",
        &serde_json::json!({"text": "to cat", "allow_shell": true}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["submitted"], true, "{answer}");
    assert_eq!(answer["enters"], 1, "{answer}");
    assert!(!server.tmux_screen("%1").contains("REFUSED"));
}
