//! `panectl doctor` against a real server, with and without a daemon.

use std::time::Duration;

use crate::support::{TmuxServer, daemon_test_lock};

fn doctor(server: &TmuxServer, args: &[&str]) -> (bool, String) {
    let output = server
        .panectl()
        .arg("doctor")
        .args(args)
        .output()
        .expect("run panectl doctor");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn level<'a>(checks: &'a [serde_json::Value], name: &str) -> &'a str {
    checks
        .iter()
        .find(|check| check["check"] == name)
        .and_then(|check| check["level"].as_str())
        .unwrap_or_else(|| panic!("no {name} check in {checks:#?}"))
}

#[test]
fn doctor_checks_tmux_the_server_its_known_crashes_and_the_daemon() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let version = server.tmux(&["display-message", "-p", "#{version}"]);
    let version = version.trim();
    let (ok, text) = doctor(&server, &[]);
    // No daemon: a warning, and so not a pass.
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("ok    server   tmux {version} at ")),
        "{text}"
    );
    assert!(
        text.contains("warn  daemon   no panectl daemon is running"),
        "{text}"
    );
    assert!(text.contains("daemon --detach"), "{text}");
    // What the screen model does differently from this tmux, named.
    let parsed = panectl::tmux::versions::TmuxVersion::parse(version).unwrap();
    if panectl::tmux::versions::model_differences(&parsed).is_empty() {
        assert!(
            text.contains(&format!(
                "ok    model    the screen model follows tmux {parsed} cell for cell"
            )),
            "{text}"
        );
    } else {
        assert!(
            text.contains(&format!("note  model    with tmux {parsed}: not measured")),
            "{text}"
        );
    }
    let affected = panectl::tmux::versions::TmuxVersion::parse(version)
        .is_some_and(|v| !panectl::tmux::versions::known_crashes(&v).is_empty());
    if affected {
        let note: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("note  crashes  tmux"))
            .take_while(|l| l.starts_with("note  crashes") || l.starts_with("      "))
            .collect();
        assert_eq!(note.len(), 1, "the crash note is one line: {text}");
        assert!(
            note[0].contains("notification to a half-attached control client"),
            "{text}"
        );
    } else {
        assert!(
            text.contains("ok    crashes  no control-mode crash known"),
            "{text}"
        );
    }

    let _daemon = server.start_daemon(&[]);
    server.wait_for("the daemon to attach", Duration::from_secs(10), || {
        server.health()["sessions"] == 1
    });
    let (ok, json) = doctor(&server, &["--json"]);
    assert!(ok, "{json}");
    let checks: Vec<serde_json::Value> = serde_json::from_str(&json).expect("doctor --json");
    assert_eq!(level(&checks, "tmux"), "ok");
    assert_eq!(level(&checks, "server"), "ok");
    assert_eq!(level(&checks, "daemon"), "ok");
    assert_eq!(
        level(&checks, "crashes"),
        if affected { "note" } else { "ok" }
    );

    // Another socket, where no server runs.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_panectl"))
        .args(["-L", &format!("{}-none", server.socket_name()), "doctor"])
        .env_remove("TMUX")
        .env("TMUX_TMPDIR", server.dir())
        .env("XDG_RUNTIME_DIR", server.dir().join("run"))
        .output()
        .expect("run panectl doctor");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("warn  server   no tmux server at "), "{text}");
}

fn message<'a>(checks: &'a [serde_json::Value], name: &str) -> Vec<&'a str> {
    checks
        .iter()
        .filter(|check| check["check"] == name)
        .filter_map(|check| check["message"].as_str())
        .collect()
}

#[test]
fn doctor_checks_the_api_log_rules_runtime_directory_and_plugin() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let rules = tempfile::tempdir().unwrap();
    std::fs::write(
        rules.path().join("broken.toml"),
        "id = \"broken\"\n[[rules]]\nid = \"b\"\nstatus = \"maybe\"\n",
    )
    .unwrap();
    let daemon = server.start_daemon(&["--rules-dir", rules.path().to_str().unwrap()]);
    // The server's environment has the same runtime directory as the shell.
    let runtime = server.dir().join("run");
    server.tmux(&[
        "set-environment",
        "-g",
        "XDG_RUNTIME_DIR",
        runtime.to_str().unwrap(),
    ]);
    let (ok, json) = doctor(&server, &["--json"]);
    // The broken rule file is a warning: not a pass.
    assert!(!ok, "{json}");
    let checks: Vec<serde_json::Value> = serde_json::from_str(&json).expect("doctor --json");
    // Degraded by the broken rule file: the daemon check says why, the rules check what to do.
    assert_eq!(level(&checks, "daemon"), "warn");
    assert!(
        message(&checks, "daemon")[0].contains(&format!("(pid {}) is degraded", daemon.pid())),
        "{checks:#?}"
    );
    assert_eq!(level(&checks, "rules"), "warn");
    assert!(
        message(&checks, "rules")[0].contains("broken.toml"),
        "{checks:#?}"
    );
    assert_eq!(level(&checks, "api"), "ok");
    assert!(
        message(&checks, "log")[0].contains("daemon-"),
        "{checks:#?}"
    );
    assert_eq!(level(&checks, "runtime"), "ok");
    assert_eq!(level(&checks, "plugin"), "ok");

    // Another runtime directory in the server, a wrong @panectl-bin, a plugin error.
    server.tmux(&["set-environment", "-g", "XDG_RUNTIME_DIR", "/elsewhere"]);
    server.tmux(&["set-option", "-g", "@panectl-bin", "/nonexistent/panectl"]);
    server.tmux(&[
        "set-option",
        "-g",
        "@panectl-error",
        "panectl: the build failed",
    ]);
    std::fs::remove_file(rules.path().join("broken.toml")).unwrap();
    server.wait_for("the rules to load", Duration::from_secs(8), || {
        server.health()["status"] == "ok"
    });
    let (ok, text) = doctor(&server, &[]);
    // The plugin's problems are warnings: not a pass.
    assert!(!ok, "{text}");
    assert!(text.contains("ok    daemon   panectl "), "{text}");
    assert!(text.contains("ok    rules "), "{text}");
    assert!(
        text.contains("note  runtime  XDG_RUNTIME_DIR is ")
            && text.contains("but /elsewhere in the tmux server")
            && text.contains("@panectl_api"),
        "{text}"
    );
    assert!(
        text.contains("warn  plugin   @panectl-bin is /nonexistent/panectl, which is not"),
        "{text}"
    );
    assert!(
        text.contains("warn  plugin   the plugin reported: panectl: the build failed"),
        "{text}"
    );
}
