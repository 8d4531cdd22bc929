//! The daemon's life: one per tmux server whatever the caller's environment, found through
//! the server's options, started detached with every flag, stopped, restarted, its status and
//! health, and its settings from the config file.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::{TmuxServer, daemon_test_lock};

/// A daemon the test started detached (not its child): ended by pid on drop if still alive.
struct Detached(u32);

impl Drop for Detached {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0 as i32);
        if nix::sys::signal::kill(pid, None).is_err() {
            return;
        }
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while nix::sys::signal::kill(pid, None).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
}

/// `panectl` for the server with `XDG_RUNTIME_DIR` set to `runtime` (inside the test's
/// directory).
fn panectl_in(server: &TmuxServer, runtime: &str) -> Command {
    let mut command = server.panectl();
    command.env("XDG_RUNTIME_DIR", server.dir().join(runtime));
    command
}

fn run(mut command: Command, args: &[&str]) -> Output {
    command.args(args).output().expect("run panectl")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Starts a detached daemon and returns its pid (from what `--detach` prints).
fn detach(command: Command, args: &[&str]) -> Detached {
    let mut all = vec!["daemon", "--detach"];
    all.extend_from_slice(args);
    let output = run(command, &all);
    assert!(output.status.success(), "{}", text(&output));
    let printed = String::from_utf8_lossy(&output.stdout);
    let pid = printed
        .split("(pid ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {printed}"));
    Detached(pid)
}

fn alive(pid: u32) -> bool {
    panectl::daemon::discovery::process_alive(pid)
}

fn status_json(command: Command) -> (bool, serde_json::Value) {
    let output = run(command, &["daemon", "status", "--json"]);
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("daemon status --json: {}", text(&output)));
    (output.status.success(), value)
}

#[test]
fn one_daemon_per_server_found_from_another_runtime_directory() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["set-option", "-g", "@panectl-summary-empty", "no agents"]);
    let daemon = detach(panectl_in(&server, "run-a"), &["--exit-with-server"]);
    let summary = || {
        server
            .tmux(&["show-options", "-sqv", "@panectl_summary"])
            .trim()
            .to_string()
    };
    server.wait_for("the summary", Duration::from_secs(10), || {
        summary() == "no agents"
    });

    // The server says where the daemon is.
    let api = server.tmux(&["show-options", "-sqv", "@panectl_api"]);
    assert!(
        api.trim()
            .starts_with(&server.dir().join("run-a").display().to_string()),
        "{api}"
    );
    assert_eq!(
        server
            .tmux(&["show-options", "-sqv", "@panectl_pid"])
            .trim(),
        daemon.0.to_string()
    );

    // A shell with another runtime directory finds it.
    let output = run(panectl_in(&server, "run-b"), &["health", "--json"]);
    assert!(output.status.success(), "{}", text(&output));
    let health: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(health["pid"], daemon.0);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["reasons"], serde_json::json!([]));
    let output = run(panectl_in(&server, "run-b"), &["ls"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("%0"), "{}", text(&output));
    let output = run(panectl_in(&server, "run-b"), &["socket"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), api.trim());

    // Following the old advice from there does not start a second daemon.
    let output = run(panectl_in(&server, "run-b"), &["daemon", "--detach"]);
    assert!(!output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains(&format!(
            "a daemon (pid {}) already serves this tmux server",
            daemon.0
        )) && said.contains(api.trim()),
        "{said}"
    );
    assert!(
        !server.dir().join("run-b/panectl").exists()
            || std::fs::read_dir(server.dir().join("run-b/panectl"))
                .unwrap()
                .flatten()
                .all(|e| e.path().extension().is_none_or(|x| x != "sock")),
        "a second API socket exists"
    );
    // A foreground daemon is refused the same way.
    let output = run(panectl_in(&server, "run-c"), &["daemon"]);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("already serves"),
        "{}",
        text(&output)
    );
    assert_eq!(
        server
            .tmux(&["show-options", "-sqv", "@panectl_pid"])
            .trim(),
        daemon.0.to_string()
    );

    // Status and stop from the other environment.
    let (running, status) = status_json(panectl_in(&server, "run-b"));
    assert!(running, "{status}");
    assert_eq!(status["pid"], daemon.0);
    let output = run(panectl_in(&server, "run-b"), &["daemon", "stop"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("stopped the panectl daemon (pid {})", daemon.0)),
        "{}",
        text(&output)
    );
    assert!(!alive(daemon.0));
    // A clean shutdown takes the options away, and the summary no one keeps current.
    assert_eq!(
        server
            .tmux(&["show-options", "-sqv", "@panectl_api"])
            .trim(),
        ""
    );
    assert_eq!(summary(), "");
    let output = run(panectl_in(&server, "run-b"), &["daemon", "stop"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("no daemon was running"),
        "{}",
        text(&output)
    );
    let (running, status) = status_json(panectl_in(&server, "run-a"));
    assert!(!running, "{status}");
    assert_eq!(status["running"], false);
}

#[test]
fn detach_passes_every_flag_and_restart_keeps_them() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let first = detach(
        server.panectl(),
        &[
            "--exit-with-server",
            "--status-quiet-ms=33",
            "--submit-delay-ms",
            "250",
        ],
    );
    let (running, status) = status_json(server.panectl());
    assert!(running, "{status}");
    let line: Vec<String> = serde_json::from_value(status["command_line"].clone()).unwrap();
    // The command line as typed, `--detach` taken out.
    let typed = [
        "daemon",
        "--exit-with-server",
        "--status-quiet-ms=33",
        "--submit-delay-ms",
        "250",
    ];
    assert!(
        line.windows(typed.len()).any(|w| w == typed),
        "{typed:?} missing in {line:?}"
    );
    assert!(!line.iter().any(|w| w.starts_with("--detach")), "{line:?}");
    assert!(
        status["log_file"]
            .as_str()
            .is_some_and(|l| l.ends_with(".log"))
    );

    let output = run(server.panectl(), &["daemon", "restart"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(!alive(first.0), "the old daemon still runs");
    let (running, status) = status_json(server.panectl());
    assert!(running, "{status}");
    let second = Detached(status["pid"].as_u64().unwrap() as u32);
    assert_ne!(second.0, first.0);
    let again: Vec<String> = serde_json::from_value(status["command_line"].clone()).unwrap();
    assert!(
        again.iter().any(|w| w == "--status-quiet-ms=33"),
        "{again:?}"
    );
    let human = text(&run(server.panectl(), &["daemon", "status"]));
    assert!(
        human.contains(&format!("pid {}", second.0)) && human.contains("api "),
        "{human}"
    );
    let output = run(server.panectl(), &["daemon", "stop"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(!alive(second.0));
}

#[test]
fn detach_fails_at_once_without_a_server() {
    let server = TmuxServer::start(80, 24);
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_panectl"))
        .args(["-L", &format!("{}-none", server.socket_name())])
        .args(["daemon", "--detach"])
        .env_remove("TMUX")
        .env("TMUX_TMPDIR", server.dir())
        .env("XDG_RUNTIME_DIR", server.dir().join("run"))
        .env("XDG_CONFIG_HOME", server.dir().join("config"))
        .output()
        .expect("run panectl");
    assert!(!output.status.success());
    assert!(started.elapsed() < Duration::from_secs(5));
    let said = text(&output);
    assert!(
        said.contains("no tmux server at ") && said.contains("--wait-for-server"),
        "{said}"
    );
}

/// A detached daemon that fails as it starts says why, and its log has the reason too (issue
/// 31, item 8: "see log" named a log without it).
#[test]
fn a_detached_daemon_that_fails_at_start_says_why() {
    let server = TmuxServer::start(80, 24);
    let not_a_dir = server.dir().join("file");
    std::fs::write(&not_a_dir, "x").expect("a file");
    let log = server.dir().join("detached.log");
    let inbox = not_a_dir.join("inbox.sqlite");
    let output = run(
        panectl_in(&server, "run-f"),
        &[
            "daemon",
            "--detach",
            "--inbox",
            inbox.to_str().expect("UTF-8"),
            "--log-file",
            log.to_str().expect("UTF-8"),
        ],
    );
    assert!(!output.status.success());
    let said = text(&output);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("inbox"), "{said}");
    assert!(logged.contains("inbox"), "the log says nothing: {logged:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log)
        .expect("the log")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn with_wait_for_server_a_detached_daemon_waits_and_says_why_it_is_degraded() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let missing = format!("{}-later", server.socket_name());
    let command = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_panectl"));
        command
            .args(["-L", &missing])
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", server.dir())
            .env("XDG_RUNTIME_DIR", server.dir().join("run"))
            .env("XDG_STATE_HOME", server.dir().join("state"))
            .env("XDG_CONFIG_HOME", server.dir().join("config"));
        command
    };
    let daemon = detach(command(), &["--wait-for-server"]);
    let output = run(command(), &["health", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let health: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["pid"], daemon.0);
    assert!(
        health["reasons"][0]
            .as_str()
            .is_some_and(|r| r.contains("does not answer")),
        "{health}"
    );
    let output = run(command(), &["daemon", "stop"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(!alive(daemon.0));
}

#[test]
fn health_explains_degraded_and_exits_1() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let rules = tempfile::tempdir().unwrap();
    std::fs::write(
        rules.path().join("broken.toml"),
        "id = \"broken\"\n[[rules]]\nid = \"b\"\nstatus = \"maybe\"\n",
    )
    .unwrap();
    let daemon = server.start_daemon(&["--rules-dir", rules.path().to_str().unwrap()]);
    server.wait_for("the session to attach", Duration::from_secs(10), || {
        server.health()["attached"] == 1
    });
    let output = run(server.panectl(), &["health"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains("status        degraded") && said.contains("broken.toml"),
        "{said}"
    );
    let health = server.health();
    assert_eq!(health["pid"], daemon.pid());
    assert_eq!(health["sessions"], 1);
    let reasons = health["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].as_str().unwrap().contains("provider rule files"));

    // Fixed: ok again, exit code 0.
    std::fs::remove_file(rules.path().join("broken.toml")).unwrap();
    server.wait_for("the rules to load", Duration::from_secs(8), || {
        server.health()["status"] == "ok"
    });
    let output = run(server.panectl(), &["health"]);
    assert!(output.status.success(), "{}", text(&output));
}

#[test]
fn the_config_file_sets_daemon_flags_and_the_command_line_wins() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let broken = server.dir().join("broken-rules");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(
        broken.join("broken.toml"),
        "id = \"broken\"\n[[rules]]\nid = \"b\"\nstatus = \"maybe\"\n",
    )
    .unwrap();
    let config_dir = server.dir().join("config/panectl");
    std::fs::create_dir_all(&config_dir).unwrap();
    let config = config_dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[daemon]\nrules_dir = {:?}\nstatus_quiet_ms = 20\n",
            broken.display().to_string()
        ),
    )
    .unwrap();

    // The file's rules_dir applies...
    {
        let _daemon = server.start_daemon(&[]);
        let health = server.health();
        assert!(
            health["rules_errors"].to_string().contains("broken.toml"),
            "{health}"
        );
    }
    // ...unless the command line says otherwise.
    let good = server.dir().join("good-rules");
    std::fs::create_dir(&good).unwrap();
    {
        let _daemon = server.start_daemon(&["--rules-dir", good.to_str().unwrap()]);
        let health = server.health();
        assert_eq!(health["rules_errors"], serde_json::json!([]), "{health}");
    }
    // --config picks another file.
    let other = server.dir().join("other.toml");
    std::fs::write(&other, "[daemon]\n").unwrap();
    {
        let _daemon = server.start_daemon(&["--config", other.to_str().unwrap()]);
        assert_eq!(server.health()["rules_errors"], serde_json::json!([]));
    }

    // An unknown key is an error naming it and the file; no daemon starts.
    std::fs::write(&config, "[daemon]\nstatus_quite = 20\n").unwrap();
    let output = run(server.panectl(), &["daemon", "--detach"]);
    assert!(!output.status.success());
    let said = text(&output);
    assert!(
        said.contains("`status_quite`") && said.contains(&config.display().to_string()),
        "{said}"
    );
    assert_eq!(
        server
            .tmux(&["show-options", "-sqv", "@panectl_pid"])
            .trim(),
        ""
    );
}

/// The server options a daemon publishes, as `tmux show -s` lists them.
fn published_options(server: &TmuxServer) -> Vec<String> {
    server
        .tmux(&["show-options", "-s"])
        .lines()
        .filter(|l| l.starts_with("@panectl_"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_daemon_killed_outright_leaves_no_status_behind() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["set-option", "-g", "@panectl-summary-empty", "no agents"]);
    // The window glyphs as the plugin puts them, for every pane, shells included.
    let glyphs = panectl::status::meaning::window_glyphs_format(true);
    server.tmux(&["set-option", "-g", "window-status-format", &glyphs]);
    // A user's own hook on the same event stays.
    server.tmux(&[
        "set-hook",
        "-g",
        "client-detached[0]",
        "set -s @user-hook kept",
    ]);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    server.wait_for("the summary", Duration::from_secs(10), || {
        server
            .tmux(&["show-options", "-sqv", "@panectl_summary"])
            .trim()
            == "no agents"
    });
    // The shell's status shows in the window name while the daemon runs.
    let window = || server.tmux(&["display-message", "-p", "-t", "%0", &glyphs]);
    server.tmux(&[
        "set-option",
        "-p",
        "-t",
        "%0",
        "@panectl_status",
        "completed",
    ]);
    assert_eq!(window().trim(), "✔");
    assert!(
        server
            .tmux(&["show-hooks", "-g"])
            .contains("client-detached[4242]"),
        "{}",
        server.tmux(&["show-hooks", "-g"])
    );

    daemon.crash();
    server.wait_for(
        "the options withdrawn after the daemon died",
        Duration::from_secs(10),
        || published_options(&server).is_empty(),
    );
    assert_eq!(window().trim(), "", "a dead daemon's statuses still show");
    let hooks = server.tmux(&["show-hooks", "-g"]);
    assert!(!hooks.contains("[4242]"), "{hooks}");
    assert!(hooks.contains("client-detached[0]"), "{hooks}");

    // A daemon started again publishes again; stopped cleanly, it withdraws everything too.
    let mut again = server.start_daemon(&[]);
    server.wait_for("published again", Duration::from_secs(10), || {
        published_options(&server)
            .iter()
            .any(|o| o.starts_with("@panectl_pid"))
    });
    assert!(again.stop(Duration::from_secs(10)));
    assert_eq!(published_options(&server), Vec::<String>::new());
    assert!(!server.tmux(&["show-hooks", "-g"]).contains("[4242]"));
    // A user's client leaving while a daemon runs withdraws nothing.
    let _third = server.start_daemon(&[]);
    server.wait_for("published a third time", Duration::from_secs(10), || {
        published_options(&server)
            .iter()
            .any(|o| o.starts_with("@panectl_pid"))
    });
    let client = std::process::Command::new("tmux")
        .args([
            "-S",
            &server.socket_path().display().to_string(),
            "-C",
            "attach",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("a control client that leaves at once");
    assert!(client.success());
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        published_options(&server)
            .iter()
            .any(|o| o.starts_with("@panectl_pid")),
        "a user's client leaving withdrew the daemon's options"
    );
}

#[test]
fn a_daemon_that_never_saw_a_session_ends_with_its_server() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // A server with no session (one still reading its config, as when the plugin starts the
    // daemon from tmux.conf): nothing attached, so no connection ends when it goes.
    server.tmux(&["set-option", "-s", "exit-empty", "off"]);
    server.tmux(&["kill-session"]);
    let mut daemon = server.start_daemon(&["--exit-with-server"]);
    server.wait_for("the daemon published", Duration::from_secs(10), || {
        !server
            .tmux(&["show-options", "-sqv", "@panectl_pid"])
            .trim()
            .is_empty()
    });
    server.tmux(&["kill-server"]);
    assert!(
        daemon.wait_exit(Duration::from_secs(10)),
        "the daemon outlived its server:\n{}",
        daemon.log_text()
    );
}
