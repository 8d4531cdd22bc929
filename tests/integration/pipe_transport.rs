//! The pipe transport through the daemon, against real tmux: output through `pipe-pane` and a
//! FIFO instead of `%output`, alternate-screen bursts, a pane closed while its pipe is read, a
//! killed writer healed by the watchdog (with the gap in the stream), a removed FIFO directory
//! failing over to the control transport, switching one pane with `panectl transport`, and
//! switching a pane while tmux holds output queued for the daemon (which crashed tmux 3.3a).

use std::time::Duration;

use crate::daemon::control_clients;
use crate::pipe::writers;
use crate::support::{EventReader, TmuxServer, daemon_test_lock, kill_all};

/// The daemon's FIFO directory under the test server's private runtime directory.
fn pipe_dir(server: &TmuxServer) -> std::path::PathBuf {
    let dir = server.dir().join("run/panectl");
    std::fs::read_dir(&dir)
        .expect("runtime directory")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "pipes"))
        .expect("the FIFO directory")
}

/// Waits until tmux's writer for the pane's FIFO runs, and returns its pids.
fn wait_for_writer(server: &TmuxServer, fifo: &std::path::Path) -> Vec<i32> {
    let mut pids = Vec::new();
    server.wait_for("tmux's pipe writer", Duration::from_secs(5), || {
        pids = writers(fifo);
        !pids.is_empty()
    });
    pids
}

#[test]
fn output_comes_through_the_pipe_byte_exact_and_bursts_settle() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(90, 28);
    let _daemon = server.start_daemon(&["--transport", "pipe", "--watchdog", "300ms"]);
    let panes = server.wait_for_panes(1);
    assert_eq!(panes[0]["transport"], "pipe", "{panes:#?}");
    let fifo = pipe_dir(&server).join("pane-0.fifo");
    wait_for_writer(&server, &fifo);
    // Bytes that are not UTF-8, control bytes and format-looking text, byte-exact.
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; printf 'pipe-marker \\377\\001 #{pane_id} ; \\342\\202\\254 done\\n'",
        "Enter",
    ]);
    // The typed command line holds "pipe-marker" too: wait for printf's own bytes.
    let wanted = b"pipe-marker \xff\x01 #{pane_id} ; \xe2\x82\xac done";
    let mut stream = Vec::new();
    let found = (0..100).any(|_| {
        stream = server
            .panectl()
            .args(["output", "%0", "--from", "0"])
            .output()
            .expect("panectl output")
            .stdout;
        let found = stream.windows(wanted.len()).any(|w| w == wanted);
        if !found {
            std::thread::sleep(Duration::from_millis(50));
        }
        found
    });
    assert!(found, "{:?}", String::from_utf8_lossy(&stream));
    // A full-screen program redrawing in bursts on the alternate screen settles exactly.
    server.run_redraw_bursts("%0", 8);
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.panes()[0]["alternate_screen"], true);
    let health = server.health();
    assert_eq!(health["pipe_panes"], 1, "{health:#}");
    assert!(
        health["pipe_bytes"].as_u64().unwrap() > 10_000,
        "the bursts came through the pipe: {health:#}"
    );
    // A pane closed while its pipe is read: the pipe goes with it, the daemon carries on.
    server.tmux(&["split-window", "-t", "%0", "sleep 600"]);
    let panes = server.wait_for_panes(2);
    assert!(panes.iter().all(|p| p["transport"] == "pipe"), "{panes:#?}");
    let second = pipe_dir(&server).join("pane-1.fifo");
    wait_for_writer(&server, &second);
    server.tmux(&["kill-pane", "-t", "%1"]);
    server.wait_for_panes(1);
    server.wait_for(
        "the closed pane's FIFO to go",
        Duration::from_secs(5),
        || !second.exists(),
    );
    assert_eq!(server.health()["pipe_panes"], 1);
}

#[test]
fn a_killed_writer_is_rearmed_and_the_gap_is_in_the_stream() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&["--transport", "pipe", "--watchdog", "200ms"]);
    server.wait_for_panes(1);
    let fifo = pipe_dir(&server).join("pane-0.fifo");
    let writer = wait_for_writer(&server, &fifo);
    // Some output first, so that the stall's gap is not at the attach's.
    server.tmux(&["send-keys", "-t", "%0", "echo before-the-stall", "Enter"]);
    server.wait_for("output before the stall", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("before-the-stall\n")
    });
    let events = EventReader::start(&server);
    kill_all(writer);
    server.wait_for("the writer to die", Duration::from_secs(5), || {
        writers(&fifo).is_empty()
    });
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; echo after-the-stall",
        "Enter",
    ]);
    // Two diverged checks 200 ms apart, then stop-then-start and a reseed.
    let resync = events.expect("pipe stall resync", |e| {
        e["type"] == "resync" && e["reason"] == "pipe_stall"
    });
    assert_eq!(resync["pane"], "%0");
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert!(server.daemon_screen("%0").contains("after-the-stall"));
    wait_for_writer(&server, &fifo);
    // The pipe delivers again after the re-arm.
    server.tmux(&["send-keys", "-t", "%0", "echo flowing-again", "Enter"]);
    server.wait_for("output after the re-arm", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("flowing-again\n")
    });
    assert_eq!(server.panes()[0]["transport"], "pipe");
    let gaps = server
        .panectl()
        .args(["output", "%0", "--from", "0"])
        .output()
        .expect("panectl output");
    let stderr = String::from_utf8_lossy(&gaps.stderr);
    assert!(stderr.contains("pipe_stalled"), "{stderr}");
}

/// A flood of one repeated line: tmux's screen looks the same at every check while the
/// mirror, fed through the pipe a moment later, is mid-line. The watchdog must see a pipe
/// that is delivering, and never re-arm it (a re-arm loses the bytes of its gap) or call the
/// mirror wrong.
#[test]
fn a_flooding_pane_keeps_its_pipe_and_loses_nothing() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&["--transport", "pipe", "--watchdog", "100ms"]);
    server.wait_for_panes(1);
    wait_for_writer(&server, &pipe_dir(&server).join("pane-0.fifo"));
    let before = server.health();
    const FLOOD: u64 = 5 * 20_000_000;
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "for r in 1 2 3 4 5; do yes 0123456789 | head -c 20000000; done; echo flood-$((40+2))",
        "Enter",
    ]);
    server.wait_for("the flood to end", Duration::from_secs(120), || {
        server.tmux_screen("%0").contains("flood-42\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(10));
    let health = server.health();
    assert_eq!(health["divergences"], 0, "{health:#}");
    assert_eq!(
        health["resyncs"], before["resyncs"],
        "no re-arm, no reseed: {health:#}"
    );
    assert!(
        health["pipe_bytes"].as_u64().unwrap() - before["pipe_bytes"].as_u64().unwrap() > FLOOD,
        "every byte came through the pipe: {health:#}"
    );
    let output = server
        .panectl()
        .args(["output", "%0", "--from", "0"])
        .output()
        .expect("panectl output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("pipe_stalled"), "{stderr}");
}

#[test]
fn a_removed_fifo_directory_fails_over_to_control() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&["--transport", "pipe", "--watchdog", "200ms"]);
    server.wait_for_panes(1);
    let dir = pipe_dir(&server);
    let fifo = dir.join("pane-0.fifo");
    let writer = wait_for_writer(&server, &fifo);
    let events = EventReader::start(&server);
    std::fs::remove_dir_all(&dir).expect("remove the FIFO directory");
    kill_all(writer);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; echo after-the-removal",
        "Enter",
    ]);
    let moved = events.expect("the fallback to control", |e| {
        e["type"] == "transport" && e["transport"] == "control"
    });
    let reason = moved["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("is gone") && reason.contains("pane-0.fifo"),
        "a clear reason naming the FIFO: {moved:#}"
    );
    assert!(daemon.log_text().contains("pane-0.fifo"));
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.panes()[0]["transport"], "control");
    // Output flows on the control client again.
    server.tmux(&["send-keys", "-t", "%0", "echo on-control", "Enter"]);
    server.wait_for("output on control", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("on-control\n")
    });
    assert!(
        !dir.exists(),
        "no plain file or FIFO was made again at the old path"
    );
}

#[test]
fn one_pane_moves_between_transports_on_request() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&["--watchdog", "300ms"]);
    server.wait_for_panes(1);
    assert_eq!(
        server.panectl_ok(&["transport", "%0"]).trim(),
        "%0: control"
    );
    let events = EventReader::start(&server);
    assert_eq!(
        server.panectl_ok(&["transport", "%0", "pipe"]).trim(),
        "%0: pipe"
    );
    events.expect("the move to the pipe", |e| {
        e["type"] == "transport" && e["transport"] == "pipe" && e["reason"] == "asked for"
    });
    let fifo = pipe_dir(&server).join("pane-0.fifo");
    wait_for_writer(&server, &fifo);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; echo through-the-pipe",
        "Enter",
    ]);
    server.wait_for("output through the pipe", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("through-the-pipe\n")
    });
    server.wait_for("pipe bytes", Duration::from_secs(5), || {
        server.health()["pipe_bytes"].as_u64().unwrap_or(0) > 0
    });
    let body = serde_json::json!({ "transport": "control" });
    let pane = server.api_post("/v1/panes/%250/transport", &body);
    assert_eq!(pane["transport"], "control");
    server.wait_for("tmux's writer to stop", Duration::from_secs(5), || {
        writers(&fifo).is_empty()
    });
    server.tmux(&["send-keys", "-t", "%0", "echo back-on-control", "Enter"]);
    server.wait_for("output on control", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("back-on-control\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    // Nothing is left of the pipe, but its bytes still count.
    assert!(!fifo.exists());
    let health = server.health();
    assert_eq!(health["pipe_panes"], 0);
    assert!(health["pipe_bytes"].as_u64().unwrap() > 0, "{health:#}");
    // A whole session, and the panes it gets later.
    server.tmux(&["split-window", "-t", "%0", "sh"]);
    server.wait_for_panes(2);
    let moved = server.panectl_ok(&["transport", "--session", "$0", "pipe"]);
    assert_eq!(moved.lines().collect::<Vec<_>>(), ["%0: pipe", "%1: pipe"]);
    server.tmux(&["split-window", "-t", "%0", "sh"]);
    let panes = server.wait_for_panes(3);
    assert!(panes.iter().all(|p| p["transport"] == "pipe"), "{panes:#?}");
    server.wait_for("three pipes", Duration::from_secs(5), || {
        server.health()["pipe_panes"] == 3
    });
    let unknown = server
        .panectl()
        .args(["transport", "--session", "nosuch", "pipe"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session named"));
}

#[test]
fn cross_check_compares_both_transports_and_reports_bytes_only_one_has() {
    use std::io::Write;
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(90, 28);
    let _daemon = server.start_daemon(&["--watchdog", "300ms"]);
    server.wait_for_panes(1);
    assert_eq!(
        server
            .panectl_ok(&["transport", "%0", "cross-check"])
            .trim(),
        "%0: cross_check"
    );
    let fifo = pipe_dir(&server).join("pane-0.fifo");
    wait_for_writer(&server, &fifo);
    // The same bytes through both: hostile bytes, then bursts on the alternate screen.
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; printf 'both \\377\\001 #{pane_id} ; \\342\\202\\254 ways\\n'",
        "Enter",
    ]);
    server.run_redraw_bursts("%0", 4);
    server.tmux(&["send-keys", "-t", "%0", "q"]);
    server.wait_for("the program to exit", Duration::from_secs(5), || {
        server.panes()[0]["alternate_screen"] == false
    });
    assert!(server.health()["cross_check_matched"].as_u64().unwrap() > 20_000);
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    let health = server.health();
    assert_eq!(health["cross_check_findings"], 0, "{health:#}");
    assert_eq!(health["divergences"], 0, "{health:#}");
    // Bytes that only the pipe carries (written into the FIFO by someone else) are found.
    let events = EventReader::start(&server);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the FIFO for writing")
        .write_all(b"forged bytes")
        .expect("write into the FIFO");
    server.tmux(&["send-keys", "-t", "%0", "echo after-the-forgery", "Enter"]);
    let found = events.expect("a cross-check finding", |e| e["type"] == "cross_check");
    assert_eq!(found["pane"], "%0");
    assert_eq!(found["finding"], "mismatch", "{found:#}");
    assert!(
        found["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("forged"),
        "{found:#}"
    );
    assert!(server.health()["cross_check_findings"].as_u64().unwrap() >= 1);
    // The mirror, fed by %output, never saw the forged bytes.
    server.wait_for("the echo", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("after-the-forgery\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert!(!server.daemon_screen("%0").contains("forged"));
    // After the finding the streams line up again and keep matching.
    let matched = server.health()["cross_check_matched"].as_u64().unwrap();
    server.tmux(&["send-keys", "-t", "%0", "seq 1 500", "Enter"]);
    server.wait_for("more matched bytes", Duration::from_secs(5), || {
        server.health()["cross_check_matched"].as_u64().unwrap() > matched + 1000
    });
    assert_eq!(server.health()["cross_check_findings"], 1);
}

#[test]
fn auto_moves_a_session_whose_control_client_keeps_failing_to_pipes_and_back() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&[
        "--transport",
        "auto",
        "--auto-failures",
        "2",
        "--auto-recover",
        "3s",
        "--watchdog",
        "300ms",
    ]);
    assert_eq!(server.wait_for_panes(1)[0]["transport"], "control");
    let events = EventReader::start(&server);
    // The session's control client is killed twice.
    for _ in 0..2 {
        let old = control_clients(&server);
        let pid: i32 = old[0].split(' ').next().unwrap().parse().unwrap();
        kill_all([pid]);
        server.wait_for("a new control client", Duration::from_secs(10), || {
            let now = control_clients(&server);
            now.len() == 1 && now != old
        });
        server.wait_for_panes(1);
    }
    // From the second failure on, the session's panes are on pipes.
    let moved = events.expect("the move to pipes", |e| {
        e["type"] == "transport" && e["transport"] == "pipe"
    });
    assert!(
        moved["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("keeps failing"),
        "{moved:#}"
    );
    assert!(daemon.log_text().contains("keeps failing"));
    server.wait_for("the pane on a pipe", Duration::from_secs(5), || {
        server.panes()[0]["transport"] == "pipe"
    });
    wait_for_writer(&server, &pipe_dir(&server).join("pane-0.fifo"));
    server.tmux(&["send-keys", "-t", "%0", "clear; echo on-the-pipe", "Enter"]);
    server.wait_for("output on the pipe", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("on-the-pipe\n")
    });
    assert!(server.health()["pipe_bytes"].as_u64().unwrap() > 0);
    // The control client holds for 3 s: the pane goes back to it.
    let back = events.expect("the move back to control", |e| {
        e["type"] == "transport" && e["transport"] == "control"
    });
    assert!(
        back["reason"].as_str().unwrap_or_default().contains("held"),
        "{back:#}"
    );
    assert_eq!(server.panes()[0]["transport"], "control");
    server.tmux(&["send-keys", "-t", "%0", "echo on-control-again", "Enter"]);
    server.wait_for("output on control", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("on-control-again\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.health()["pipe_panes"], 0);
}

/// tmux before 3.7 keeps a pane's queued `%output` blocks when the pane is turned off, then
/// crashes writing them once the data under them is gone. Moving a pane to the pipe while tmux
/// holds output queued for the daemon (stopped for a moment, as a busy machine would) must
/// leave tmux running, and the mirror equal to tmux's screen.
#[test]
fn a_pane_moved_to_the_pipe_with_output_queued_leaves_tmux_running() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&["--watchdog", "300ms"]);
    server.wait_for_panes(1);
    let pid = nix::unistd::Pid::from_raw(daemon.pid() as i32);
    for (round, transport) in ["pipe", "control", "pipe"].into_iter().enumerate() {
        server.tmux(&[
            "send-keys",
            "-t",
            "%0",
            &format!("yes {round}123456789 | head -c 20000000; echo round-$(({round}+40))"),
            "Enter",
        ]);
        std::thread::sleep(Duration::from_millis(100));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
        // The request waits in the API socket while tmux queues output for the daemon.
        let request = server
            .panectl()
            .args(["transport", "%0", transport])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("panectl transport");
        std::thread::sleep(Duration::from_millis(700));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
        let answer = request.wait_with_output().expect("panectl transport");
        assert!(
            answer.status.success(),
            "round {round}: {}\n{}",
            String::from_utf8_lossy(&answer.stderr),
            server.daemon_logs()
        );
        let marker = format!("round-{}", round + 40);
        server.wait_for("the flood to end", Duration::from_secs(60), || {
            server.tmux_screen("%0").contains(&marker)
        });
        server.wait_for_same_screen("%0", Duration::from_secs(10));
        let health = server.health();
        assert_eq!(health["server_alive"], true, "{health:#}");
        assert_eq!(health["reconnects"], 0, "{health:#}");
        assert_eq!(health["divergences"], 0, "{health:#}");
    }
    assert_eq!(server.health()["pipe_panes"], 1);
}
