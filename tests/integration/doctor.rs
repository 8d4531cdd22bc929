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
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("ok    server   tmux {version} at ")),
        "{text}"
    );
    assert!(
        text.contains("warn  daemon   no panectl daemon is running"),
        "{text}"
    );
    assert!(text.contains("daemon --detach"), "{text}");
    let affected = panectl::tmux::versions::TmuxVersion::parse(version)
        .is_some_and(|v| !panectl::tmux::versions::known_crashes(&v).is_empty());
    if affected {
        assert!(text.contains("note  crashes  tmux"), "{text}");
        assert!(
            text.contains("notification to a half-attached control client"),
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
    assert!(output.status.success(), "{text}");
    assert!(text.contains("warn  server   no tmux server at "), "{text}");
}
