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
    let mut daemon = setup.daemon();
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
    // A daemon that stops detaches its clients and takes back what it published on the remote
    // server before its connection ends: no control client, option or connection is left.
    assert!(
        !server
            .tmux(&["show-options", "-sqv", "@panectl_api"])
            .trim()
            .is_empty()
    );
    assert!(daemon.stop(Duration::from_secs(15)), "the daemon stopped");
    assert_eq!(
        server
            .tmux(&["show-options", "-sqv", "@panectl_api"])
            .trim(),
        ""
    );
    assert_eq!(server.tmux(&["list-clients"]).trim(), "", "clients left");
    server.wait_for(
        "the ssh connection to close",
        Duration::from_secs(5),
        || sshd.established() == 0,
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
fn a_killed_daemon_leaves_no_connection_and_the_next_one_carries_on() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let setup = remote_setup(&sshd);
    let server = &setup.server;
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let old_master = master_pid(&daemon).expect("the ssh master");
    let id = setup.send("before the crash");
    setup.wait_state(id, "delivered", Duration::from_secs(20));
    daemon.crash();
    // Its control clients' and its master's stdin closed with it: the master ends by itself.
    server.wait_for(
        "the killed daemon's master to end",
        Duration::from_secs(15),
        || {
            std::fs::read_to_string(format!("/proc/{old_master}/stat"))
                .map_or(true, |stat| stat.contains(") Z "))
        },
    );
    server.wait_for("no connection left", Duration::from_secs(10), || {
        sshd.established() == 0
    });
    // Nor a control client on the remote server (each gate ended its own).
    server.wait_for("no control client left", Duration::from_secs(10), || {
        server.tmux(&["list-clients"]).trim().is_empty()
    });
    let daemon = setup.daemon();
    let new_master = master_pid(&daemon).expect("the new daemon's ssh master");
    assert_ne!(new_master, old_master);
    setup.wait_status(&["idle", "completed"], Duration::from_secs(20));
    let id = setup.send("after the restart");
    let done = setup.wait_state(id, "delivered", Duration::from_secs(20));
    assert_eq!(done["attempts"], 1, "{done}");
    assert_eq!(
        setup.bodies(),
        [&b"before the crash"[..], b"after the restart"],
        "each message arrived once"
    );
    assert_eq!(sshd.established(), 1);
    // Stopped, it leaves nothing either.
    drop(daemon);
    server.wait_for(
        "no connection after a stop",
        Duration::from_secs(10),
        || sshd.established() == 0,
    );
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
    // No daemon yet: a warning, so not a pass; everything else is in place.
    assert!(!ok, "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("warn")).count(),
        1,
        "{text}"
    );
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

/// A local server and a remote one whose daemons share a runtime directory (so that each
/// finds the other, as two daemons of one user do).
fn local_and_remote(sshd: &Sshd) -> (TmuxServer, Setup) {
    let local = TmuxServer::start(80, 24);
    let mut setup = remote_setup(sshd);
    setup.server.share_runtime_dir_of(&local);
    (local, setup)
}

/// `ls --all`, `status SERVER/PANE`, `events --all`, `board --all` and a status-line summary
/// over every server: a local server and a remote one, each with its daemon.
#[test]
fn a_local_and_a_remote_server_are_seen_together() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let (local, setup) = local_and_remote(&sshd);
    let _remote_daemon = setup.daemon();
    // The local status line counts every server's agents (an option of tmux.conf, read when
    // the summary changes).
    local.tmux(&["set-option", "-g", "@panectl-summary-all", "on"]);
    let _local_daemon = local.start_daemon(&[]);
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let local_label = local.socket_name().to_string();
    let remote_label = format!("{ALIAS}:{}", setup.server.socket_name());

    // One table, a SERVER column, every pane of both servers.
    let listed = local.panectl_ok(&["ls", "--all"]);
    let header = listed.lines().next().unwrap_or_default();
    assert!(header.starts_with("SERVER "), "{listed}");
    let servers: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        servers.iter().filter(|s| **s == local_label).count(),
        1,
        "{listed}"
    );
    assert_eq!(
        servers.iter().filter(|s| **s == remote_label).count(),
        2,
        "{listed}"
    );
    let json: Vec<Value> =
        serde_json::from_str(&local.panectl_ok(&["ls", "--all", "--json"])).expect("JSON");
    assert!(
        json.iter()
            .any(|p| p["server"] == remote_label && p["provider"] == "fake_agent"),
        "{json:?}"
    );

    // `SERVER/PANE` reaches the other daemon, from a command aimed at the local one.
    let status = local.panectl_ok(&["status", &format!("{remote_label}/%0")]);
    assert_eq!(status.trim(), "idle");
    let shell = local.panectl_ok(&["status", &format!("{local_label}/%0")]);
    assert_eq!(shell.trim(), "idle");

    // Events of both, each with its server.
    let mut events = local
        .panectl()
        .args(["events", "--all", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run panectl events --all");
    let stdout = events.stdout.take().expect("stdout");
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let id = local.panectl_ok(&["send", &format!("{remote_label}/%0"), "seen together"]);
    assert!(id.trim().parse::<i64>().is_ok(), "{id}");
    local.tmux(&["rename-window", "-t", "%0", "renamed-here"]);
    let mut seen_remote = false;
    let mut seen_local = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !(seen_remote && seen_local) && std::time::Instant::now() < deadline {
        let Ok(line) = received.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let event: Value = serde_json::from_str(&line).expect("an event line");
        seen_remote |= event["server"] == remote_label && event["type"] == "message";
        seen_local |= event["server"] == local_label;
    }
    let _ = events.kill();
    let _ = events.wait();
    let _ = reader.join();
    assert!(
        seen_remote && seen_local,
        "remote {seen_remote}, local {seen_local}"
    );
    setup.wait_state(
        id.trim().parse().expect("id"),
        "delivered",
        Duration::from_secs(20),
    );

    // The board lists the remote agent with its server; a jump there says where to attach.
    let board = local
        .panectl()
        .args(["board", "--all"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run panectl board --all");
    {
        use std::io::Write;
        board
            .stdin
            .as_ref()
            .expect("stdin")
            .write_all(b"1\n")
            .expect("type a jump");
    }
    let output = board.wait_with_output().expect("the board ends");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SERVER"), "{text}");
    assert!(text.contains(&remote_label), "{text}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(&format!("ssh -t {ALIAS} tmux attach")),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The local server has a shell and no agent: its status line shows the remote agent, as
    // the remote server's own does.
    local.wait_for(
        "a summary over both servers",
        Duration::from_secs(15),
        || {
            let here = local.tmux(&["show-options", "-sqv", "@panectl_summary"]);
            let there = setup
                .server
                .tmux(&["show-options", "-sqv", "@panectl_summary"]);
            !here.trim().is_empty() && here == there
        },
    );
}

/// Handoff, assign and the MCP server against a remote server: from the local side with
/// `SERVER/PANE` names, and with `--ssh`. An answer only ever goes to a pane of the worker's
/// server: a local pane (`$TMUX_PANE`, `--reply-to LOCAL/PANE`) is never taken for the remote
/// pane of the same number.
#[test]
fn handoff_assign_and_mcp_reach_a_remote_server() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let (local, setup) = local_and_remote(&sshd);
    let _remote_daemon = setup.daemon();
    let _local_daemon = local.start_daemon(&[]);
    setup.wait_status(&["idle"], Duration::from_secs(20));
    let remote = format!("{ALIAS}:{}", setup.server.socket_name());
    let here = local.socket_name().to_string();

    // Handoff from the local side: the remote worker's answer, exactly.
    let answer = local.panectl_ok(&[
        "handoff",
        &format!("{remote}/%0"),
        "hello world ; #{pane_id}",
    ]);
    assert_eq!(answer, "}di_enap{# ; dlrow olleh\n");
    assert_eq!(
        setup.bodies().last().map(Vec::as_slice),
        Some(&b"hello world ; #{pane_id}"[..])
    );

    // Assign from a local pane: its `$TMUX_PANE` is not a pane of the worker's server.
    let boss = setup
        .server
        .panectl_ok(&["launch", "fake_agent", "--name", "boss"])
        .trim()
        .to_string();
    let in_local_pane = |args: &[&str]| {
        local
            .panectl()
            .args(args)
            .env("TMUX", format!("{},1,0", local.socket_path().display()))
            .env("TMUX_PANE", "%0")
            .output()
            .expect("run panectl")
    };
    let worker = format!("{remote}/%0");
    let elsewhere = format!("{here}/%0");
    for (args, words) in [
        (&["assign", &worker, "no reply pane"][..], "give --reply-to"),
        (
            &["assign", &worker, "elsewhere", "--reply-to", &elsewhere][..],
            "a pane of the worker's server",
        ),
    ] {
        let refused = in_local_pane(args);
        assert!(!refused.status.success(), "{args:?}: {refused:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(words),
            "{args:?}: {refused:?}"
        );
    }
    let assigned = in_local_pane(&[
        "assign",
        &format!("{remote}/%0"),
        "task two",
        "--reply-to",
        &format!("{remote}/boss"),
    ]);
    assert!(assigned.status.success(), "{assigned:?}");
    let id = String::from_utf8_lossy(&assigned.stdout).trim().to_string();
    let expected = format!("[panectl] Answer from %0 to assignment {id}:\nowt ksat");
    setup.server.wait_for(
        "the answer to reach the boss",
        Duration::from_secs(30),
        || {
            setup
                .bodies()
                .iter()
                .any(|b| b.as_slice() == expected.as_bytes())
        },
    );
    let answers = setup
        .bodies()
        .into_iter()
        .filter(|b| b.starts_with(b"[panectl] Answer"))
        .count();
    assert_eq!(answers, 1, "delivered once");
    let assignments = setup.server.panectl_ok(&["assignments", "--json"]);
    assert!(
        assignments.contains(&format!("\"reply_to\":\"{boss}\"")),
        "{assignments}"
    );

    // The MCP server of the remote daemon (`--ssh`), as an agent's MCP client starts it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let _context = runtime.enter();
    let mut command = setup.server.panectl();
    command.arg("mcp");
    let client: crate::mcp::Client = runtime.block_on(async {
        use rmcp::ServiceExt;
        let transport =
            rmcp::transport::TokioChildProcess::new(tokio::process::Command::from(command))
                .expect("start panectl mcp");
        tokio::time::timeout(Duration::from_secs(20), ().serve(transport))
            .await
            .expect("no handshake within 20 s")
            .expect("the MCP handshake")
    });
    let agents: Value = serde_json::from_str(&crate::mcp::call_ok(
        &runtime,
        &client,
        "list_agents",
        serde_json::json!({}),
    ))
    .expect("JSON");
    assert!(
        agents.to_string().contains("\"boss\""),
        "the remote agents: {agents}"
    );
    let _ = runtime.block_on(client.cancel());
}

/// What a remote server says is data (issue: trust only what comes from where it should): its
/// `@panectl-notify-command` is never run here, the daemon's own `--notify-command` runs with
/// the remote values in its environment, and the remote bell rings through tmux there.
#[test]
fn a_remote_servers_notify_command_never_runs_here() {
    let _guard = daemon_test_lock();
    let sshd = Sshd::start();
    let setup = remote_setup(&sshd);
    let server = &setup.server;
    let marker = server.dir().join("pwned");
    let local_log = server.dir().join("notified.log");
    // Set on the remote server by anything that can run tmux there (its agents, say).
    server.tmux(&[
        "set-option",
        "-g",
        "@panectl-notify-command",
        &format!("touch {}", marker.display()),
    ]);
    server.tmux(&["set-option", "-g", "@panectl-notify-bell", "on"]);
    server.tmux(&["new-window", "-d", "-t", "$0:1", "sh"]);
    let own = format!(
        "echo \"$PANECTL_SERVER $PANECTL_PANE $PANECTL_STATUS\" >> {}",
        local_log.display()
    );
    let _daemon = setup.daemon_with(3, &["--notify-command", &own]);
    setup.wait_status(&["idle"], Duration::from_secs(20));
    // Someone looks at another window, so the agent's window can show its bell.
    server.tmux(&["select-window", "-t", "$0:1"]);
    let _pty = crate::support::PtyClient::attach(server, 100, 30);
    setup.send("a turn");
    setup.wait_status(&["processing"], Duration::from_secs(20));
    setup.wait_status(&["completed"], Duration::from_secs(20));
    server.wait_for("the local command", Duration::from_secs(10), || {
        std::fs::read_to_string(&local_log).is_ok_and(|t| t.contains("%0 completed"))
    });
    let logged = std::fs::read_to_string(&local_log).unwrap_or_default();
    let label = format!("{ALIAS}:{}", server.socket_name());
    assert!(logged.starts_with(&label), "{logged}");
    server.wait_for("the remote bell", Duration::from_secs(10), || {
        server
            .tmux(&["display-message", "-p", "-t", "$0:0", "#{window_bell_flag}"])
            .trim()
            == "1"
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !marker.exists(),
        "the remote server's notify command ran on this machine"
    );
    assert!(
        server.daemon_logs().contains("not run here"),
        "the ignored option is not logged"
    );
}
