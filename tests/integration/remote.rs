//! A tmux server on "another host", reached over ssh: a real OpenSSH server on 127.0.0.1
//! ([`crate::sshd`]) in front of a real tmux server, and the daemon started with `--ssh` and a
//! `~/.ssh/config` alias. Listing, mirroring, statuses from the remote process tree, a message
//! delivered exactly once, a launch in a remote directory, one ssh connection for everything; a
//! dropped connection (the ssh master killed) and a hung one (the sshd session stopped) noticed
//! and reconnected; a killed daemon's connection taken over by the next one; an unreachable
//! host and a refused key reported in `health`; remote attaches during a storm of
//! notifications that leave tmux running.

use std::time::Duration;

use serde_json::Value;

use crate::inbox::Setup;
use crate::sshd::{
    self, ALIAS, NO_PYTHON_ALIAS, NO_TMUX_ALIAS, REFUSED_ALIAS, Sshd, WRONG_KEY_ALIAS,
};
use crate::support::{Daemon, TmuxServer, daemon_test_lock};

/// The fake agent's setup, reached over ssh.
fn remote_setup(sshd: &Sshd) -> Setup {
    let mut setup = Setup::start(0.3);
    setup.server.reach_over_ssh(ALIAS, &sshd.ssh_command());
    setup
}

fn health(server: &TmuxServer) -> Value {
    let output = server
        .panectl()
        .args(["health", "--json"])
        .output()
        .expect("run panectl health");
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

/// The daemon's ssh master: a descendant of the daemon whose command line asks for one.
fn master_pid(daemon: &Daemon) -> Option<i32> {
    let mut queue = vec![daemon.pid() as i32];
    while let Some(pid) = queue.pop() {
        for child in sshd::children_of(pid) {
            let command_line = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&command_line).replace('\0', " ");
            if text.starts_with("ssh ") && text.contains("ControlMaster=yes") {
                return Some(child);
            }
            queue.push(child);
        }
    }
    None
}

/// Types `text` into the shell pane `%1` with the test's own tmux (the "remote" side), and
/// waits until the daemon's mirror of it shows `expect`.
fn mirrored(server: &TmuxServer, text: &str, expect: &str, timeout: Duration) {
    server.tmux(&["send-keys", "-t", "%1", "-l", text]);
    server.tmux(&["send-keys", "-t", "%1", "Enter"]);
    server.wait_for(&format!("the mirror to show {expect:?}"), timeout, || {
        server
            .panectl()
            .args(["screen", "%1"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(expect))
    });
}

#[test]
fn a_remote_server_is_followed_over_one_ssh_connection() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let setup = remote_setup(&sshd);
    let server = &setup.server;
    let _daemon = setup.daemon();
    let health = health(server);
    assert_eq!(health["host"], format!("ssh:{ALIAS}"), "{health}");
    assert_eq!(health["status"], "ok", "{health}");
    assert!(
        health["tmux_socket"]
            .as_str()
            .is_some_and(|s| s.starts_with(&format!("ssh:{ALIAS}:/"))),
        "{health}"
    );
    // The provider comes from the remote process tree (`ps` over ssh).
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let panes = server.panes();
    let agent = panes.iter().find(|p| p["pane"] == "%0").expect("%0");
    assert_eq!(agent["provider"], "fake_agent", "{agent}");
    // Output of the remote pane reaches the mirror.
    mirrored(
        server,
        "echo over-ssh-$((6*7))",
        "over-ssh-42",
        Duration::from_secs(10),
    );
    // A message with everything a shell or tmux could read into: delivered once, byte-exact.
    let text = "it's \"remote\" $HOME `id` #{pane_id}; \\ done";
    let id = setup.send(text);
    let done = setup.wait_state(id, "delivered", Duration::from_secs(20));
    assert_eq!(done["attempts"], 1, "{done}");
    setup.wait_status(&["completed", "idle"], Duration::from_secs(20));
    assert_eq!(setup.bodies(), vec![text.as_bytes().to_vec()]);
    // A launch in a directory of the remote host.
    let cwd = server.dir().to_string_lossy().into_owned();
    let pane = server
        .panectl_ok(&["launch", "fake_agent", "--name", "far-agent", "--cwd", &cwd])
        .trim()
        .to_string();
    assert!(pane.starts_with('%'), "{pane}");
    let cwd_of_pane = server.tmux(&["display-message", "-p", "-t", &pane, "#{pane_current_path}"]);
    assert_eq!(cwd_of_pane.trim(), cwd);
    server.wait_for(
        "the launched agent to be idle",
        Duration::from_secs(20),
        || {
            server
                .panes()
                .iter()
                .any(|p| p["pane"] == pane && p["name"] == "far-agent" && p["status"] == "idle")
        },
    );
    let refused = server
        .panectl()
        .args(["launch", "fake_agent", "--cwd", "/no/such/directory"])
        .output()
        .expect("run panectl launch");
    assert!(
        !refused.status.success(),
        "a missing remote directory was accepted"
    );
    // Everything went over one connection: the daemon's ssh master.
    assert_eq!(sshd.established(), 1, "ssh connections to the host");
    // The pipe transport is refused for a remote server, at start.
    let output = server
        .panectl()
        .args(["daemon", "--transport", "pipe"])
        .output()
        .expect("run panectl daemon");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("off for a server on another host"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_dropped_and_a_hung_connection_are_reconnected_and_reseeded() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let setup = remote_setup(&sshd);
    let server = &setup.server;
    let daemon = setup.daemon_with(2, &["--ssh-keepalive", "1"]);
    setup.wait_status(&["idle"], Duration::from_secs(20));
    mirrored(
        server,
        "echo before-$((1+1))",
        "before-2",
        Duration::from_secs(10),
    );

    // Dropped: the ssh master is killed.
    let master = master_pid(&daemon).expect("the daemon's ssh master");
    crate::support::kill_all([master]);
    server.wait_for("a new ssh master", Duration::from_secs(20), || {
        master_pid(&daemon).is_some_and(|pid| pid != master)
    });
    mirrored(
        server,
        "echo dropped-$((2+2))",
        "dropped-4",
        Duration::from_secs(20),
    );
    let id = setup.send("after the drop");
    let done = setup.wait_state(id, "delivered", Duration::from_secs(20));
    assert_eq!(done["attempts"], 1, "{done}");

    // Hung: the sshd side of the connection stops answering (no bytes, no EOF).
    let stopped = sshd.connection_pids();
    assert_eq!(
        stopped.len(),
        1,
        "one connection before the hang: {stopped:?}"
    );
    let hung_master = master_pid(&daemon).expect("the ssh master");
    for pid in &stopped {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGSTOP,
        )
        .expect("stop the sshd session");
    }
    // Output written while the connection hangs is in the mirror once it is back (reseeded).
    server.tmux(&["send-keys", "-t", "%1", "-l", "echo hung-$((3+3))"]);
    server.tmux(&["send-keys", "-t", "%1", "Enter"]);
    server.wait_for("the hang to be noticed", Duration::from_secs(20), || {
        master_pid(&daemon).is_some_and(|pid| pid != hung_master)
    });
    server.wait_for("the mirror to show hung-6", Duration::from_secs(20), || {
        server
            .panectl()
            .args(["screen", "%1"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("hung-6"))
    });
    crate::support::kill_all(stopped);
    let id = setup.send("after the hang");
    let done = setup.wait_state(id, "delivered", Duration::from_secs(20));
    assert_eq!(done["attempts"], 1, "{done}");
    assert_eq!(
        setup.bodies(),
        [&b"after the drop"[..], b"after the hang"],
        "each message arrived once"
    );
    let health = health(server);
    assert_eq!(health["status"], "ok", "{health}");
    assert!(health["reconnects"].as_u64() >= Some(1), "{health}");
    server.wait_for("one connection again", Duration::from_secs(10), || {
        sshd.established() == 1
    });
}

#[test]
fn a_restarted_daemon_takes_over_from_a_killed_one() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let setup = remote_setup(&sshd);
    let server = &setup.server;
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let old_master = master_pid(&daemon).expect("the ssh master");
    daemon.crash();
    // The killed daemon's master is still connected; the next daemon ends it and makes its own.
    assert!(std::path::Path::new(&format!("/proc/{old_master}")).exists());
    let daemon = setup.daemon();
    let new_master = master_pid(&daemon).expect("the new daemon's ssh master");
    assert_ne!(new_master, old_master);
    server.wait_for("the old master to end", Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{old_master}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    });
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let id = setup.send("after the restart");
    let done = setup.wait_state(id, "delivered", Duration::from_secs(20));
    assert_eq!(done["attempts"], 1, "{done}");
    server.wait_for("one connection", Duration::from_secs(10), || {
        sshd.established() == 1
    });
}

/// `panectl doctor` for the server; its exit status and what it printed.
fn doctor(server: &TmuxServer) -> (bool, String) {
    let output = server
        .panectl()
        .arg("doctor")
        .output()
        .expect("run panectl doctor");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn hosts_that_cannot_serve_are_reported_in_health_and_doctor() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let mut server = TmuxServer::start(80, 24);
    server.reach_over_ssh(ALIAS, &sshd.ssh_command());
    let (ok, text) = doctor(&server);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!(
            "ok    host     ssh:{ALIAS} answers; control clients attach through panectl's gate"
        )),
        "{text}"
    );
    assert!(text.contains(&format!(" on ssh:{ALIAS}")), "{text}");
    for (alias, alive, expected) in [
        (REFUSED_ALIAS, false, "Connection refused"),
        (WRONG_KEY_ALIAS, false, "Permission denied"),
        (NO_TMUX_ALIAS, false, "tmux is not installed on the host"),
        (
            NO_PYTHON_ALIAS,
            true,
            "no python3 for panectl's attach gate",
        ),
    ] {
        server.reach_over_ssh(alias, &sshd.ssh_command());
        let (ok, text) = doctor(&server);
        assert!(!ok, "{alias}: doctor passed:\n{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("FAIL  host") && l.contains(expected)),
            "{alias}:\n{text}"
        );
        let daemon = server.start_daemon(&[]);
        server.wait_for(
            &format!("{alias}: the problem in health"),
            Duration::from_secs(15),
            || {
                health(&server)["host_problem"]
                    .as_str()
                    .is_some_and(|p| p.contains(expected))
            },
        );
        let health = health(&server);
        assert_eq!(health["status"], "degraded", "{alias}: {health}");
        assert_eq!(health["server_alive"], alive, "{alias}: {health}");
        assert_eq!(health["attached"], 0, "{alias}: {health}");
        assert!(
            health["reasons"].as_array().is_some_and(|r| r
                .iter()
                .any(|r| r.as_str().is_some_and(|r| r.contains(expected)))),
            "{alias}: {health}"
        );
        drop(daemon);
    }
}

/// The crash a control client can set off while it attaches (docs/tmux-crashes.md) is kept off
/// on the remote host too: the daemon's clients attach there through the Python gate.
#[test]
fn remote_attaches_during_a_storm_of_notifications_leave_tmux_running() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let mut server = TmuxServer::start_foreground(100, 30);
    server.reach_over_ssh(ALIAS, &sshd.ssh_command());
    crate::tmux_crashes::session_storm(&mut server, |server| server.start_daemon(&[]));
}
