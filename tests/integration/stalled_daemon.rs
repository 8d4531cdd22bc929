//! A daemon that is stopped (SIGSTOP) must not hold back the programs in its panes for longer
//! than `pause-after`: tmux stops reading a pane when every client is a control client that is
//! backed up, and it checks `pause-after` only when output moves (docs/daemon.md, "A stopped
//! daemon").

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::{TmuxServer, daemon_test_lock};

/// Sends SIGCONT on drop, so that a failing test does not leave its daemon stopped.
struct Stopped(Pid);

impl Stopped {
    fn stop(pid: u32) -> Stopped {
        let pid = Pid::from_raw(pid as i32);
        kill(pid, Signal::SIGSTOP).expect("stop the daemon");
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

/// The count the printer last wrote: it writes its round to `file` before each burst.
fn progress(file: &std::path::Path) -> u64 {
    // The printer may be rewriting the file right now: an empty read is retried.
    for _ in 0..50 {
        if let Some(count) = std::fs::read_to_string(file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return count;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("cannot read the printer's progress from {}", file.display());
}

#[test]
fn a_stopped_daemon_holds_a_printing_program_back_for_at_most_pause_after() {
    let _lock = daemon_test_lock();
    // One session and no terminal attached: only the daemon's clients read the panes, which
    // is where a stopped daemon blocked them for as long as it was stopped.
    let server = TmuxServer::start(100, 30);
    let file = server.dir().join("progress");
    let daemon = server.start_daemon(&["--pause-after", "1"]);
    server.wait_for_panes(1);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        &format!(
            "i=0; while :; do i=$((i+1)); echo $i > {}; seq 1 3000; done",
            file.display()
        ),
        "Enter",
    ]);
    server.wait_for("the printer to start", Duration::from_secs(10), || {
        file.exists()
    });
    // Whether tmux happens to pause the pane by itself, without the guard, depends on how
    // much of its last write to the daemon's full pipe was left over (under 512 bytes and it
    // goes on reading): about one stop in two. Four stops in a row leave that to chance once
    // in sixteen runs.
    for round in 1..=4u64 {
        let stopped = Stopped::stop(daemon.pid());
        // The pipes and tmux's buffers fill and the pane is paused within pause-after (1 s);
        // from then on the program runs freely.
        std::thread::sleep(Duration::from_millis(2000));
        let before = progress(&file);
        std::thread::sleep(Duration::from_millis(2000));
        let after = progress(&file);
        drop(stopped);
        assert!(
            after > before + 5,
            "stop {round}: the program made no progress while the daemon was stopped: round \
             {before}, 2 s later round {after}\n{}",
            daemon.log_text()
        );
        // Once it runs again the daemon resyncs the pane tmux paused, and follows it as before.
        server.wait_for(
            "the daemon to resync the paused pane",
            Duration::from_secs(20),
            || server.health()["pauses"].as_u64().unwrap_or(0) >= round,
        );
        server.wait_for("the pane to be live again", Duration::from_secs(20), || {
            server.panes().iter().all(|pane| pane["sync"] == "live")
        });
    }
    server.tmux(&["send-keys", "-t", "%0", "C-c", ""]);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; echo done-printing",
        "Enter",
    ]);
    server.wait_for_same_screen("%0", Duration::from_secs(20));
}

#[test]
fn the_guard_client_is_attached_again_when_its_session_closes() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(100, 30);
    server.tmux(&["new-session", "-d", "-s", "second"]);
    let daemon = server.start_daemon(&["--pause-after", "1"]);
    server.wait_for_panes(2);
    let guards = |server: &TmuxServer| -> Vec<String> {
        server
            .tmux(&["list-clients", "-F", "#{client_flags} #{session_name}"])
            .lines()
            .filter(|line| line.contains("no-output"))
            .map(str::to_owned)
            .collect()
    };
    server.wait_for("the guard client", Duration::from_secs(10), || {
        guards(&server).len() == 1
    });
    let session = guards(&server)[0]
        .rsplit(' ')
        .next()
        .expect("a session name")
        .to_owned();
    server.tmux(&["kill-session", "-t", &session]);
    server.wait_for(
        "the guard client on the other session",
        Duration::from_secs(15),
        || {
            let now = guards(&server);
            now.len() == 1 && !now[0].ends_with(&format!(" {session}"))
        },
    );
    drop(daemon);
    server.wait_for(
        "the guard client to leave with the daemon",
        Duration::from_secs(5),
        || guards(&server).is_empty(),
    );
}

#[test]
fn with_pause_after_off_no_guard_client_attaches() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(100, 30);
    let _daemon = server.start_daemon(&["--pause-after", "0"]);
    server.wait_for_panes(1);
    std::thread::sleep(Duration::from_secs(2));
    let clients = server.tmux(&["list-clients", "-F", "#{client_flags}"]);
    assert!(
        !clients.contains("no-output"),
        "a guard client attached with flow control off: {clients}"
    );
    assert!(clients.contains("control-mode"), "{clients}");
}
