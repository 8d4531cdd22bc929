//! The tmux crashes that control clients provoke (docs/tmux-crashes.md), reproduced against a
//! real server that runs in the foreground as the test's child, so that a crash shows as the
//! signal that ended it.
//!
//! - A control client half introduced to the server when a notification for every control
//!   client comes: the daemon attaches to each new session while sessions are created and
//!   the active pane changes many times a second.
//! - A control client with a `refresh-client -B` subscription left attached to nothing while
//!   the server exits: the daemon stopping while `kill-server` runs.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::{Daemon, TmuxServer, daemon_test_lock};

/// A control client of the test's own that changes the active pane of `base` over and over:
/// a `%window-pane-changed` for every control client, hundreds of times a second.
pub(crate) struct PaneFlipper {
    child: Child,
    stop: Arc<AtomicBool>,
    writer: Option<std::thread::JoinHandle<()>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl PaneFlipper {
    pub(crate) fn start(server: &TmuxServer) -> PaneFlipper {
        let mut child = server
            .command()
            .args(["-C", "attach-session", "-t", "base"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the flipping control client");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let writer = std::thread::spawn(move || {
            let lines = "select-pane -t base:0.0\nselect-pane -t base:0.1\n".repeat(5);
            while !stopped.load(Ordering::Relaxed) {
                if stdin.write_all(lines.as_bytes()).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let (first_output, attached) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut buffer = vec![0u8; 64 * 1024];
            while stdout.read(&mut buffer).is_ok_and(|n| n > 0) {
                let _ = first_output.send(());
            }
        });
        // This client is a plain `tmux -C`: until tmux has taken it in (its first output), a
        // session created meanwhile crashes tmux 3.2-3.6a (docs/tmux-crashes.md), which is
        // the very race the daemon's relay avoids. So the test lets it attach first.
        attached
            .recv_timeout(Duration::from_secs(10))
            .expect("the flipping control client attached");
        PaneFlipper {
            child,
            stop,
            writer: Some(writer),
            reader: Some(reader),
        }
    }
}

impl Drop for PaneFlipper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Variables that make the daemon's environment large, as a developer's often is: a
/// client's environment is part of what it sends while it introduces itself, so the
/// dangerous moment lasts longer (about 400 KB, the size that took tmux down within a few
/// attaches in the measurements).
pub(crate) fn large_environment() -> Vec<(String, String)> {
    (0..48)
        .map(|i| (format!("PANECTL_TEST_PAD_{i}"), "x".repeat(8000)))
        .collect()
}

fn server_running(server: &mut TmuxServer) -> bool {
    server.exit_status(Duration::ZERO).is_none()
}

/// Panics with how the server ended, if it has.
fn assert_running(server: &mut TmuxServer, when: &str) {
    if let Some(status) = server.exit_status(Duration::ZERO) {
        panic!(
            "the tmux server ended {when}: {status} (signal {:?})",
            status.signal()
        );
    }
}

/// Kills the server and checks that it exited rather than crashed; `context` is shown if not.
fn assert_exits_cleanly(server: &mut TmuxServer, context: &str) {
    server.tmux(&["kill-server"]);
    let Some(status) = server.exit_status(Duration::from_secs(10)) else {
        // What still holds it: a client that has not left (tmux waits for every client whose
        // output is undelivered), or a job still running.
        panic!(
            "the tmux server did not exit after kill-server; tmux, ssh and python processes:\n{}",
            related_processes()
        );
    };
    assert!(
        status.success(),
        "the tmux server did not exit cleanly: {status} (signal {:?})\n{context}",
        status.signal()
    );
}

/// Lines of `ps` for tmux, ssh and python processes, shortened (the gate's command is long).
fn related_processes() -> String {
    let listing = std::process::Command::new("ps")
        .args(["-eo", "pid,ppid,stat,wchan:24,etimes,args"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    listing
        .lines()
        .filter(|l| l.contains("tmux") || l.contains("ssh") || l.contains("python3"))
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            if chars.len() <= 200 {
                return l.to_string();
            }
            let head: String = chars[..120].iter().collect();
            let tail: String = chars[chars.len() - 60..].iter().collect();
            format!("{head} ... {tail}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks that the daemon's control clients all left when asked, none had to be killed.
fn assert_no_client_killed(daemon: &Daemon) {
    assert!(
        !daemon.log_text().contains("did not exit; killing it"),
        "a control client had to be killed:\n{}",
        daemon.log_text()
    );
}

#[test]
fn sessions_created_while_the_active_pane_keeps_changing_leave_tmux_running() {
    let _lock = daemon_test_lock();
    let mut server = TmuxServer::start_foreground(100, 30);
    session_storm(&mut server, |server| {
        server.start_daemon_with_env(&[], &large_environment())
    });
}

/// The reproduction of the half-attached client crash: a server (in the foreground, with a
/// `base` session of two panes made here) whose active pane keeps changing while sessions are
/// created one after another and the daemon `start` returns attaches to each; the server must
/// survive it all and exit cleanly.
pub(crate) fn session_storm(server: &mut TmuxServer, start: impl FnOnce(&TmuxServer) -> Daemon) {
    server.tmux(&["rename-session", "-t", "$0", "base"]);
    server.tmux(&["split-window", "-t", "base"]);
    let daemon = start(server);
    let flipper = PaneFlipper::start(server);
    // The reproduction of the report: sessions created one after another, each split three
    // times and tiled, while the daemon attaches a control client to each new one.
    let mut sessions = 1;
    for round in 0..5 {
        for index in 0..4 {
            let name = format!("s{round}{index}");
            let created = server
                .command()
                .args(["new-session", "-d", "-s", &name, "-x", "160", "-y", "48"])
                .output()
                .expect("run tmux");
            if !created.status.success() {
                let ended = server.exit_status(Duration::from_secs(2));
                panic!(
                    "new-session {name} failed: {created:?}; the server: {ended:?} (signal {:?})",
                    ended.and_then(|status| status.signal())
                );
            }
            sessions += 1;
            for _ in 0..3 {
                // A split can fail for lack of room; the notifications are what matter.
                let _ = server
                    .command()
                    .args(["split-window", "-t", &name])
                    .output();
            }
            let _ = server
                .command()
                .args(["select-layout", "-t", &name, "tiled"])
                .output();
            assert_running(server, &format!("after session {name} was created"));
        }
    }
    server.wait_for(
        "the daemon to attach to every session",
        Duration::from_secs(30),
        || server.health()["sessions"] == sessions,
    );
    assert_running(server, "after the daemon attached");
    drop(flipper);
    drop(daemon);
    assert!(server_running(server));
    assert_exits_cleanly(server, "");
}

#[test]
fn the_daemon_stopping_while_tmux_is_killed_leaves_tmux_to_exit_cleanly() {
    let _lock = daemon_test_lock();
    // It crashed tmux 3.3a in every round before; three rounds.
    for round in 0..3 {
        let mut server = TmuxServer::start_foreground(80, 24);
        for name in ["a", "b", "c"] {
            server.tmux(&["new-session", "-d", "-s", name]);
            server.tmux(&["split-window", "-t", name]);
        }
        let mut daemon = server.start_daemon(&[]);
        server.wait_for("the daemon to attach", Duration::from_secs(10), || {
            server.health()["sessions"] == 4
        });
        // Let a second go by: tmux's subscription timer fires once a second.
        std::thread::sleep(Duration::from_millis(1200));
        let pid = nix::unistd::Pid::from_raw(daemon.pid() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("stop the daemon");
        assert_exits_cleanly(
            &mut server,
            &format!("round {round}, daemon log:\n{}", daemon.log_text()),
        );
        assert!(
            daemon.wait_exit(Duration::from_secs(10)),
            "the daemon did not stop"
        );
        assert_no_client_killed(&daemon);
    }
}

#[test]
fn a_stopping_daemon_lets_its_clients_go_at_once_and_tmux_keeps_running() {
    let _lock = daemon_test_lock();
    let mut server = TmuxServer::start_foreground(80, 24);
    for name in ["a", "b", "c"] {
        server.tmux(&["new-session", "-d", "-s", name]);
    }
    let mut daemon = server.start_daemon(&[]);
    server.wait_for("the daemon to attach", Duration::from_secs(10), || {
        server.health()["sessions"] == 4
    });
    let clients = |server: &TmuxServer| {
        server
            .tmux(&[
                "list-clients",
                "-F",
                "#{client_control_mode} #{client_flags}",
            ])
            .lines()
            // Not the flow-control guard (`no-output`, docs/daemon.md).
            .filter(|line| line.starts_with("1 ") && !line.contains("no-output"))
            .count()
    };
    // `sessions` counts connections started; their clients show in tmux once attached.
    server.wait_for("four control clients", Duration::from_secs(10), || {
        clients(&server) == 4
    });
    // The clients attached through relay sockets in a private directory, whose names are
    // gone once a client is in.
    let runtime = server.dir().join("run/panectl");
    let attach_dirs: Vec<std::path::PathBuf> = std::fs::read_dir(&runtime)
        .expect("runtime directory")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "attach"))
        .collect();
    assert_eq!(attach_dirs.len(), 1, "{attach_dirs:?}");
    let metadata = std::fs::metadata(&attach_dirs[0]).expect("attach directory");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777,
        0o700
    );
    let left: Vec<_> = std::fs::read_dir(&attach_dirs[0])
        .expect("attach directory")
        .collect();
    assert!(left.is_empty(), "relay sockets left: {left:?}");
    assert!(
        daemon.stop(Duration::from_secs(5)),
        "the daemon did not stop"
    );
    assert_eq!(clients(&server), 0, "control clients left behind");
    assert_no_client_killed(&daemon);
    assert_running(&mut server, "after the daemon stopped");
    assert_exits_cleanly(&mut server, "");
}

#[test]
fn attaching_leaves_the_sessions_environment_alone() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["set-environment", "SSH_AUTH_SOCK", "/the/users/agent"]);
    let before = server.tmux(&["show-environment"]);
    let daemon = server.start_daemon_with_env(
        &[],
        &[
            ("SSH_AUTH_SOCK".into(), "/the/daemons/agent".into()),
            ("DISPLAY".into(), ":99".into()),
        ],
    );
    server.wait_for_panes(1);
    assert_eq!(server.tmux(&["show-environment"]), before);
    drop(daemon);
}
