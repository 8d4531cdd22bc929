//! The daemon against real tmux servers: discovery, following changes, race-free seeding,
//! flow control, reconnects, restarts, the watchdog, and never resizing anybody's window.

use std::time::{Duration, Instant};

use crate::support::{EventReader, TmuxServer, daemon_test_lock};

/// The watchdog must stay silent on healthy streams; every test ends with this check.
fn assert_healthy(server: &TmuxServer) {
    let health = server.health();
    assert_eq!(
        health["divergences"],
        0,
        "watchdog fired: {health:#}\n{}",
        warnings(&server.daemon_logs())
    );
    assert_eq!(health["parse_errors"], 0, "{health:#}");
    assert_eq!(health["timeouts"], 0, "{health:#}");
}

/// The warning and error lines of a daemon log.
fn warnings(log: &str) -> String {
    log.lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Children of `parent` that exited but were not reaped.
fn zombie_children(parent: u32) -> Vec<String> {
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold anything, so split after the last ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&parent.to_string().as_str()) {
            zombies.push(head.to_string());
        }
    }
    zombies
}

/// The daemon's control clients of sessions, as `PID 1 $SESSION`: not its flow-control guard
/// (a client with `no-output`, docs/daemon.md), which the stalled-daemon tests cover.
pub fn control_clients(server: &TmuxServer) -> Vec<String> {
    server
        .tmux(&[
            "list-clients",
            "-F",
            "#{client_pid} #{client_control_mode} #{session_id} #{client_flags}",
        ])
        .lines()
        .filter(|l| l.split(' ').nth(1) == Some("1") && !l.contains("no-output"))
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn discovers_twenty_sessions_of_three_panes() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["split-window", "-t", "$0"]);
    server.tmux(&["split-window", "-h", "-t", "$0"]);
    for i in 1..20 {
        let name = format!("s{i}");
        server.tmux(&["new-session", "-d", "-s", &name, "-x", "100", "-y", "30"]);
        server.tmux(&["split-window", "-t", &name]);
        server.tmux(&["split-window", "-h", "-t", &name]);
    }
    let daemon = server.start_daemon(&[]);
    let panes = server.wait_for_panes(60);
    let tmux_sizes = server.tmux(&[
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{pane_width}x#{pane_height}",
    ]);
    for pane in &panes {
        let line = format!(
            "{} {}x{}",
            pane["pane"].as_str().unwrap(),
            pane["width"],
            pane["height"]
        );
        assert!(
            tmux_sizes.lines().any(|l| l == line),
            "{line} not in\n{tmux_sizes}"
        );
    }
    assert_eq!(server.health()["sessions"], 20);
    assert_eq!(
        control_clients(&server).len(),
        20,
        "one control client per session"
    );
    assert_healthy(&server);
    drop(daemon);
    // Shutdown detaches every control client.
    server.wait_for("control clients to leave", Duration::from_secs(5), || {
        control_clients(&server).is_empty()
    });
}

#[test]
fn follows_sessions_windows_and_panes_as_they_change() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);

    server.tmux(&["new-session", "-d", "-s", "later"]);
    server.wait_for_panes(2);
    server.tmux(&["new-window", "-t", "later", "-n", "agents"]);
    server.tmux(&["split-window", "-t", "later:agents"]);
    let panes = server.wait_for_panes(4);
    assert!(
        panes
            .iter()
            .any(|p| p["window"] == "agents" && p["session"] == "later"),
        "{panes:#?}"
    );

    server.tmux(&["rename-window", "-t", "later:agents", "renamed"]);
    server.wait_for("the rename", Duration::from_secs(5), || {
        server.panes().iter().any(|p| p["window"] == "renamed")
    });
    // Named by unique window name, and by session:window.pane.
    let by_window = server.panectl_ok(&["screen", "renamed"]);
    let by_target = server.panectl_ok(&["screen", "later:renamed.0"]);
    assert_eq!(by_window.is_empty(), by_target.is_empty());

    let doomed = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        "later:renamed.1",
        "#{pane_id}",
    ]);
    server.tmux(&["kill-pane", "-t", doomed.trim()]);
    server.wait_for_panes(3);
    server.tmux(&["kill-window", "-t", "later:renamed"]);
    server.wait_for_panes(2);
    server.tmux(&["kill-session", "-t", "later"]);
    let panes = server.wait_for_panes(1);
    assert_eq!(panes[0]["pane"], "%0");
    server.wait_for(
        "the connection of the closed session to go",
        Duration::from_secs(5),
        || control_clients(&server).len() == 1,
    );
    // Its tmux client was reaped, not left a zombie.
    server.wait_for("no zombie children", Duration::from_secs(5), || {
        zombie_children(daemon.pid()).is_empty()
    });

    // A resized pane is resynced and its size follows.
    server.tmux(&["split-window", "-h", "-t", "%0"]);
    server.tmux(&["resize-pane", "-t", "%0", "-x", "30"]);
    server.wait_for("the resize", Duration::from_secs(5), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%0" && p["width"] == 30)
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_healthy(&server);
}

#[test]
fn a_pane_printing_while_it_is_seeded_ends_equal_to_tmux() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(100, 30);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); echo \"line $i $(printf '%040d' $i)\"; done; echo finished-$((6*7))",
        "Enter",
    ]);
    std::thread::sleep(Duration::from_millis(300));
    // The daemon attaches and seeds while the loop prints.
    let _daemon = server.start_daemon(&[]);
    server.wait_for("the loop to finish", Duration::from_secs(60), || {
        server.tmux_screen("%0").contains("finished-42")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    let panes = server.panes();
    assert_eq!(panes[0]["sync"], "live");
    assert!(
        panes[0]["output_seq"].as_u64().unwrap() > 100_000,
        "{panes:#?}"
    );
    assert_healthy(&server);
}

#[test]
fn a_full_screen_program_bursting_on_the_alternate_screen_settles_exactly() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(90, 28);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.run_redraw_bursts("%0", 8);
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.panes()[0]["alternate_screen"], true);
    // Leaving the alternate screen restores the shell exactly.
    server.tmux(&["send-keys", "-t", "%0", "q"]);
    server.wait_for("the program to exit", Duration::from_secs(5), || {
        server.panes()[0]["alternate_screen"] == false
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_healthy(&server);
}

#[test]
fn the_watchdog_repairs_a_screen_the_model_cannot_follow() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(40, 8);
    let _daemon = server.start_daemon(&["--watchdog", "200ms"]);
    server.wait_for_panes(1);
    // A zero-width joiner at the end of one write and the emoji it joins in the next: tmux
    // forgets the joiner between two reads from the pane (each starts a new screen_write_ctx)
    // and draws the emoji in a cell of its own; the mirror cannot see where tmux's reads end
    // and joins them, as tmux does within one read.
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; printf 'a\\342\\200\\215'; sleep 1; printf '\\360\\237\\221\\215'; sleep 30",
        "Enter",
    ]);
    // (tmux 3.4 and later show the joiner too, in the `a`'s cell.)
    server.wait_for("tmux to show the emoji", Duration::from_secs(5), || {
        server
            .tmux_screen("%0")
            .replace('\u{200d}', "")
            .starts_with("a👍")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    let health = server.health();
    let version = server.tmux(&["display-message", "-p", "#{version}"]);
    if panectl::tmux_version::TmuxVersion::dialect_of(&version) >= panectl::screen::Dialect::V3_4 {
        // tmux 3.4 and later keep the joiner in the `a`'s cell, so the emoji joins it whatever
        // the reads: the mirror, following that tmux's rules, was never wrong.
        assert_eq!(health["divergences"], 0, "tmux {version}: {health:#}");
        return;
    }
    assert!(health["divergences"].as_u64().unwrap() >= 1, "{health:#}");
    // The divergence is saved, and its replay gives the mirror's screen, not tmux's: the
    // bytes alone cannot tell where tmux's reads ended.
    server.wait_for("a divergence record", Duration::from_secs(5), || {
        !server.divergence_records().is_empty()
    });
    let records = server.divergence_records();
    let output = server
        .panectl()
        .args(["replay", "--divergence", "--json"])
        .arg(&records[0])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["pane"], "%0", "{report:#}");
    assert_eq!(report["reproduces_mirror"], true, "{report:#}");
    assert_eq!(report["equals_tmux"], false, "{report:#}");
    assert!(
        report["replay_vs_tmux"]
            .as_str()
            .is_some_and(|d| d.starts_with("row 0")),
        "{report:#}"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
    let output: String = saved["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|step| step["output"].as_str())
        .collect();
    assert!(
        output.contains("a\\xe2\\x80\\x8d") && output.contains("\\xf0\\x9f\\x91\\x8d"),
        "{saved:#}"
    );
}

#[test]
fn panes_printing_side_by_side_under_a_fast_watchdog_show_no_divergence() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(160, 40);
    let _daemon = server.start_daemon(&["--watchdog", "100ms", "--flood-rate", "0"]);
    server.wait_for_panes(1);
    // Three panes of one session print at once: tmux then often writes one pane's output
    // read after a check before the check's reply, which waits behind another pane's older
    // output. Each such reply shows an earlier point of the output than the mirror reached.
    let floods = [
        "yes \"$(printf '\\033[31mred\\033[m \\033[1mbold\\033[m ')\" | head -c 20000000; echo done-a",
        "seq 1 1500000; echo done-b",
        "for i in $(seq 1 300); do printf '\\344\\270\\255\\346\\226\\207 caf\\303\\251 %s\\n' $i; done; echo done-c",
    ];
    server.tmux(&["split-window", "-h", "-t", "%0"]);
    server.tmux(&["split-window", "-v", "-t", "%1"]);
    server.wait_for_panes(3);
    for (pane, flood) in ["%0", "%1", "%2"].iter().zip(floods) {
        server.tmux(&["send-keys", "-t", pane, flood, "Enter"]);
    }
    for (pane, done) in [("%0", "done-a"), ("%1", "done-b"), ("%2", "done-c")] {
        server.wait_for(done, Duration::from_secs(90), || {
            server.tmux_screen(pane).contains(done)
        });
    }
    for pane in ["%0", "%1", "%2"] {
        server.wait_for_same_screen(pane, Duration::from_secs(10));
    }
    let health = server.health();
    let replays: Vec<String> = server
        .divergence_records()
        .iter()
        .map(|record| {
            let output = server
                .panectl()
                .args(["replay", "--divergence"])
                .arg(record)
                .output()
                .unwrap();
            String::from_utf8_lossy(&output.stdout).into_owned()
        })
        .collect();
    assert_eq!(health["divergences"], 0, "{health:#}\n{replays:#?}");
    assert!(replays.is_empty(), "{replays:#?}");
    eprintln!("early answers: {}", health["early_answers"]);
}

#[test]
fn flow_control_pauses_and_resyncs_but_never_disconnects() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // The control transport under a flood (no move to a pipe).
    let daemon = server.start_daemon(&["--pause-after", "1", "--flood-rate", "0"]);
    server.wait_for_panes(1);
    let clients_before = control_clients(&server);
    // Hold the daemon back: stop it for a few seconds while the pane floods, so tmux pauses
    // the pane. How soon tmux notices depends on its timers, so stop it again if needed.
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "yes 0123456789 | head -c 100000000; echo flood-$((6*7))",
        "Enter",
    ]);
    let pid = nix::unistd::Pid::from_raw(daemon.pid() as i32);
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..4 {
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(3000));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        if server.health()["pauses"].as_u64().unwrap() > 0 {
            break;
        }
    }
    server.wait_for("the flood to end", Duration::from_secs(60), || {
        server.tmux_screen("%0").contains("flood-42")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(10));
    let health = server.health();
    assert!(
        health["pauses"].as_u64().unwrap() >= 1,
        "tmux never paused: {health:#}\n{}",
        daemon.log_text()
    );
    assert_eq!(health["reconnects"], 0, "{health:#}");
    assert_eq!(
        control_clients(&server),
        clients_before,
        "the control client was replaced"
    );
    assert_healthy(&server);
}

#[test]
fn a_200_megabyte_flood_with_the_daemon_starved_of_cpu_never_disconnects() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&["--flood-rate", "0"]);
    server.wait_for_panes(1);
    let clients_before = control_clients(&server);
    // The daemon (every thread) and a busy loop share one core.
    let mut hog = std::process::Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .expect("taskset (util-linux)");
    let pinned = std::process::Command::new("taskset")
        .args(["-a", "-cp", "0", &daemon.pid().to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(pinned.success());
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -c 200000000; echo flood-$((6*7))",
        "Enter",
    ]);
    let started = Instant::now();
    server.wait_for("the flood to end", Duration::from_secs(240), || {
        server.tmux_screen("%0").contains("flood-42")
    });
    let flood_time = started.elapsed();
    let _ = hog.kill();
    let _ = hog.wait();
    server.wait_for_same_screen("%0", Duration::from_secs(20));
    let health = server.health();
    eprintln!("200 MB flood took {flood_time:?}; health {health}");
    assert_eq!(health["reconnects"], 0, "{health:#}");
    assert_eq!(
        control_clients(&server),
        clients_before,
        "the control client was dropped"
    );
    assert_healthy(&server);
}

#[test]
fn a_killed_control_client_is_restarted_and_resynced() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let old = control_clients(&server);
    let pid: i32 = old[0].split(' ').next().unwrap().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "echo printed while reconnecting",
        "Enter",
    ]);
    server.wait_for("a new control client", Duration::from_secs(5), || {
        let now = control_clients(&server);
        now.len() == 1 && now != old
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.health()["reconnects"], 1);
    assert_healthy(&server);
}

#[test]
fn the_daemon_waits_for_a_tmux_server_that_dies_and_comes_back() {
    let _guard = daemon_test_lock();
    let mut server = TmuxServer::start(80, 24);
    // Several sessions: each control client hears `%sessions-changed` as the others close,
    // so the daemon re-lists sessions while, and after, the server goes.
    for name in ["two", "three", "four", "five"] {
        server.tmux(&["new-session", "-d", "-s", name]);
    }
    let mut daemon = server.start_daemon(&[]);
    server.wait_for_panes(5);
    server.tmux(&["kill-server"]);
    server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(5),
        || server.health()["server_alive"] == false,
    );
    // And it stays gone: the lists of sessions the dying server's clients asked for must not
    // mark it alive again.
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(server.health()["server_alive"], false);
    }
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again("reborn", 70, 20);
    let panes = server.wait_for_panes(1);
    assert_eq!(panes[0]["session"], "reborn");
    assert!(
        daemon.stop(Duration::from_secs(5)),
        "the daemon did not stop"
    );
}

#[test]
fn with_exit_with_server_the_daemon_ends_with_tmux() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let mut daemon = server.start_daemon(&["--exit-with-server"]);
    server.wait_for_panes(1);
    server.tmux(&["kill-server"]);
    assert!(
        daemon.wait_exit(Duration::from_secs(5)),
        "the daemon outlived the server"
    );
    // Its API socket is gone with it.
    let output = server.panectl().arg("ls").output().unwrap();
    assert!(!output.status.success());
}

/// A killed server goes on accepting connections until its last client has gone, and an
/// attached terminal can take its time (here it is stopped). The daemon must not take that
/// for a live server: with `--exit-with-server` (the plugin's way) it ends, and without it
/// it attaches to the next server.
#[test]
fn a_server_held_open_by_a_slow_client_is_not_taken_for_alive() {
    let _guard = daemon_test_lock();
    for exit_with_server in [true, false] {
        let mut server = TmuxServer::start(80, 24);
        let args: &[&str] = if exit_with_server {
            &["--exit-with-server"]
        } else {
            &[]
        };
        let mut daemon = server.start_daemon(args);
        server.wait_for_panes(1);
        let client = crate::support::PtyClient::attach(&server, 100, 30);
        server.wait_for("the client to attach", Duration::from_secs(10), || {
            server
                .tmux(&["list-clients", "-F", "#{client_control_mode}"])
                .lines()
                .any(|l| l == "0")
        });
        let client_pid = nix::unistd::Pid::from_raw(client.pid() as i32);
        nix::sys::signal::kill(client_pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
        server.tmux(&["kill-server"]);
        // The daemon's control client is told to exit at once; the server waits for the
        // stopped one.
        std::thread::sleep(Duration::from_millis(1500));
        nix::sys::signal::kill(client_pid, nix::sys::signal::Signal::SIGCONT).unwrap();
        if exit_with_server {
            assert!(
                daemon.wait_exit(Duration::from_secs(5)),
                "the daemon outlived the server:\n{}",
                server.daemon_logs()
            );
        } else {
            server.wait_for(
                "the daemon to see the server gone",
                Duration::from_secs(5),
                || server.health()["server_alive"] == false,
            );
            server.wait_for_exit(Duration::from_secs(10));
            server.start_again("next", 70, 20);
            let panes = server.wait_for_panes(1);
            assert_eq!(panes[0]["session"], "next");
            assert!(
                daemon.stop(Duration::from_secs(5)),
                "the daemon did not stop"
            );
        }
        drop(client);
    }
}

#[test]
fn a_daemon_killed_and_restarted_is_correct_within_a_second() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["split-window", "-t", "%0"]);
    for pane in ["%0", "%1"] {
        server.tmux(&[
            "send-keys",
            "-t",
            pane,
            "for i in $(seq 1 40); do echo tick $i; sleep 0.2; done; echo ticks-$((6*7))",
            "Enter",
        ]);
    }
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    std::thread::sleep(Duration::from_millis(500));
    daemon.crash();
    std::thread::sleep(Duration::from_millis(500));
    let restarted = Instant::now();
    let _daemon = server.start_daemon(&[]);
    // Within a second of the restart every screen matches tmux at a quiet moment.
    for pane in ["%0", "%1"] {
        let mut matched = false;
        while restarted.elapsed() < Duration::from_secs(1) && !matched {
            let before = server.tmux_screen(pane);
            let ours = server.daemon_screen(pane);
            let after = server.tmux_screen(pane);
            matched = before == after && ours == before;
        }
        assert!(
            matched,
            "{pane} did not match tmux within 1 s of the restart"
        );
    }
    // The crashed daemon left no control client behind.
    server.wait_for("exactly one control client", Duration::from_secs(5), || {
        control_clients(&server).len() == 1
    });
    server.wait_for("the ticks to end", Duration::from_secs(15), || {
        server.tmux_screen("%0").contains("ticks-42")
            && server.tmux_screen("%1").contains("ticks-42")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    server.wait_for_same_screen("%1", Duration::from_secs(5));
    assert_healthy(&server);
}

#[test]
fn an_ordinary_client_keeps_its_size() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _client = crate::support::PtyClient::attach(&server, 80, 24);
    let window_size = || {
        server.tmux(&[
            "display-message",
            "-p",
            "-t",
            "$0",
            "#{window_width}x#{window_height}",
        ])
    };
    server.wait_for("the client to attach", Duration::from_secs(5), || {
        server
            .tmux(&["list-clients", "-F", "#{client_control_mode}"])
            .lines()
            .any(|l| l == "0")
    });
    let before = window_size();
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.tmux(&["split-window", "-t", "%0"]);
    server.tmux(&["new-session", "-d", "-s", "other", "-x", "132", "-y", "50"]);
    server.wait_for_panes(3);
    server.tmux(&["send-keys", "-t", "%0", "echo hello", "Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(window_size(), before);
    assert_eq!(before.trim(), "80x23", "80x24 minus the status line");
    assert_healthy(&server);
}

#[test]
fn client_commands_without_a_daemon_say_how_to_start_one() {
    let server = TmuxServer::start(80, 24);
    for args in [&["ls"][..], &["health"], &["screen", "%0"], &["events"]] {
        let output = server.panectl().args(args).output().unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("no panectl daemon is running"),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("panectl -L {} daemon", server.socket_name())),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn events_report_every_change_in_order() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let events = EventReader::start(&server);

    server.tmux(&["split-window", "-t", "%0"]);
    let added = events.expect("pane_added", |e| e["type"] == "pane_added");
    assert_eq!(added["pane"], "%1");
    events.expect("resync of the new pane", |e| {
        e["type"] == "resync" && e["pane"] == "%1"
    });
    events.expect("resize of the old pane", |e| {
        e["type"] == "pane_resized" && e["pane"] == "%0"
    });

    server.tmux(&[
        "send-keys",
        "-t",
        "%1",
        "printf '\\033]2;agent title\\033\\\\'; echo out",
        "Enter",
    ]);
    let output = events.expect("output", |e| e["type"] == "output" && e["pane"] == "%1");
    assert!(output["len"].as_u64().unwrap() > 0);
    events.expect("title", |e| {
        e["type"] == "pane_renamed" && e["title"] == "agent title"
    });

    server.tmux(&["send-keys", "-t", "%1", "sleep 3", "Enter"]);
    events.expect("the command", |e| {
        e["type"] == "pane_command" && e["pane"] == "%1" && e["command"] == "sleep"
    });

    server.tmux(&["kill-pane", "-t", "%1"]);
    let removed = events.expect("pane_removed", |e| e["type"] == "pane_removed");
    assert_eq!(removed["pane"], "%1");
    assert!(removed["id"].as_u64() > added["id"].as_u64());
    assert!(removed["time_ms"].as_u64().unwrap() >= added["time_ms"].as_u64().unwrap());
    assert_healthy(&server);
}

#[test]
fn output_can_be_resumed_by_sequence_number() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&["--ring-bytes", "4096"]);
    server.wait_for_panes(1);
    server.tmux(&["send-keys", "-t", "%0", "clear; echo first-marker", "Enter"]);
    server.wait_for("the first marker", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("first-marker\n")
    });
    let read = |from: Option<u64>| {
        let mut command = server.panectl();
        command.args(["output", "%0"]);
        if let Some(from) = from {
            command.args(["--from", &from.to_string()]);
        }
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let next: u64 = stderr
            .lines()
            .find_map(|l| l.strip_prefix("panectl: next sequence number "))
            .unwrap()
            .parse()
            .unwrap();
        (output.stdout, next, stderr)
    };
    let (first, next, _) = read(None);
    assert!(String::from_utf8_lossy(&first).contains("first-marker"));
    server.tmux(&["send-keys", "-t", "%0", "echo second-marker", "Enter"]);
    server.wait_for("the second marker", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("second-marker\n")
    });
    // Resuming gives exactly what came after.
    let (second, after, _) = read(Some(next));
    let text = String::from_utf8_lossy(&second);
    assert!(
        text.contains("second-marker") && !text.contains("first-marker"),
        "{text:?}"
    );
    assert_eq!(after, next + second.len() as u64);
    // Push the first bytes out of the 4 KiB ring: the reader learns exactly what it missed.
    server.tmux(&["send-keys", "-t", "%0", "seq 1 3000", "Enter"]);
    server.wait_for("the flood", Duration::from_secs(5), || {
        server.daemon_screen("%0").contains("3000\n")
    });
    let (_, _, stderr) = read(Some(0));
    assert!(stderr.contains("panectl: bytes 0-"), "{stderr}");
}

#[test]
fn screens_come_as_text_or_ansi() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(60, 10);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "clear; printf '\\033[1;31mred\\033[0m plain\\n'",
        "Enter",
    ]);
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    let text = server.panectl_ok(&["screen", "%0"]);
    assert!(text.contains("red plain"), "{text:?}");
    assert!(!text.contains('\x1b'));
    let ansi = server.panectl_ok(&["screen", "%0", "--ansi"]);
    assert!(ansi.contains("\x1b[") && ansi.contains("red"), "{ansi:?}");
    let unknown = server.panectl().args(["screen", "%42"]).output().unwrap();
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no pane named \"%42\""));
}

#[test]
fn a_pane_that_dies_under_remain_on_exit_is_reseeded_without_a_divergence() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(60, 10);
    let _daemon = server.start_daemon(&["--watchdog", "100ms"]);
    server.wait_for_panes(1);
    let events = EventReader::start(&server);
    server.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    server.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        "%0",
        "printf 'last words\\n'; sleep 0.3",
    ]);
    // tmux may write "Pane is dead (...)" into the pane itself; no %output would carry it.
    server.wait_for("the pane to die", Duration::from_secs(5), || {
        server
            .tmux(&["display-message", "-p", "-t", "%0", "#{pane_dead}"])
            .trim()
            == "1"
    });
    events.expect("the reseed of the dead pane", |e| {
        e["type"] == "resync" && e["pane"] == "%0" && e["reason"] == "died"
    });
    server.wait_for_same_screen("%0", Duration::from_secs(5));
    assert_eq!(server.panes()[0]["dead"], true);
    // Several watchdog rounds later the mirror still agrees, and nothing was a divergence.
    std::thread::sleep(Duration::from_millis(500));
    server.wait_for_same_screen("%0", Duration::from_secs(1));
    let health = server.health();
    assert_eq!(health["divergences"], 0, "{health:#}");
}
