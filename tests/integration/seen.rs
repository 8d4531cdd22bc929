//! The status-line summary and `seen`, against real tmux, the fake agent and an attached
//! (non-control) client on a pseudo-terminal: a completed agent whose pane the client has in
//! view is seen and leaves the summary; the summary's options change how it reads.

use std::time::Duration;

use crate::inbox::Setup;
use crate::support::{EventReader, PtyClient, TmuxServer, daemon_test_lock};

fn summary(server: &TmuxServer) -> String {
    server
        .tmux(&["show-options", "-s", "-q", "-v", "@panectl_summary"])
        .trim_end_matches('\n')
        .to_string()
}

fn wait_summary(server: &TmuxServer, wanted: &str) {
    let mut last = String::new();
    server.wait_for(
        &format!("the summary {wanted:?} (last {last:?})"),
        Duration::from_secs(15),
        || {
            last = summary(server);
            last == wanted
        },
    );
}

/// `(status, seen)` of `%0`.
fn agent(server: &TmuxServer) -> (String, bool) {
    let pane = server
        .panes()
        .into_iter()
        .find(|p| p["pane"] == "%0")
        .expect("%0");
    (
        pane["status"].as_str().unwrap_or_default().to_string(),
        pane["seen"] == true,
    )
}

/// The name of the one attached client that is not a control client.
fn client_name(server: &TmuxServer) -> String {
    let mut name = String::new();
    server.wait_for("the client to attach", Duration::from_secs(10), || {
        name = server
            .tmux(&[
                "list-clients",
                "-F",
                "#{client_control_mode} #{client_name}",
            ])
            .lines()
            .find_map(|l| l.strip_prefix("0 "))
            .unwrap_or_default()
            .to_string();
        !name.is_empty()
    });
    name
}

#[test]
fn a_completed_agent_in_view_is_seen_and_leaves_the_summary() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    server.tmux(&["new-session", "-d", "-s", "other", "sh"]);
    let _daemon = setup.daemon_for(3);
    setup.wait_status(&["idle"], Duration::from_secs(10));
    // The user looks at a shell in another session; the daemon's control client of `$0` has
    // `%0` as its current pane, which must not count.
    let _pty = PtyClient::attach_to(server, "other", 100, 30);
    let client = client_name(server);
    let events = EventReader::start(server);

    setup.send("first turn");
    setup.wait_status(&["completed"], Duration::from_secs(15));
    wait_summary(server, "completed:1");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(agent(server), ("completed".to_string(), false));
    assert_eq!(summary(server), "completed:1");

    // The client switches to the agent: seen, out of the summary, still completed.
    server.tmux(&["switch-client", "-c", &client, "-t", "%0"]);
    wait_summary(server, "");
    assert_eq!(agent(server), ("completed".to_string(), true));
    let seen = events.expect("seen", |e| e["type"] == "seen");
    assert_eq!(seen["pane"], "%0");

    // A new turn, finished while the client looks elsewhere: not seen. The options change the
    // summary's words.
    server.tmux(&["switch-client", "-c", &client, "-t", "other"]);
    server.tmux(&["set-option", "-g", "@panectl-summary-format", "icons"]);
    server.tmux(&["set-option", "-g", "@panectl-summary-colour", "on"]);
    setup.send("second turn");
    setup.wait_status(&["processing"], Duration::from_secs(10));
    setup.wait_status(&["completed"], Duration::from_secs(15));
    wait_summary(server, "#[fg=green]✔1#[fg=default]");
    assert_eq!(agent(server), ("completed".to_string(), false));

    // With @panectl-seen off, looking at it changes nothing.
    server.tmux(&["set-option", "-g", "@panectl-seen", "off"]);
    server.tmux(&["switch-client", "-c", &client, "-t", "%0"]);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(summary(server), "#[fg=green]✔1#[fg=default]");
    assert_eq!(agent(server), ("completed".to_string(), false));
    assert_eq!(
        events
            .seen_events()
            .iter()
            .filter(|e| e["type"] == "seen")
            .count(),
        1
    );

    // Only the waiting ones, and a text of the user's when there are none.
    server.tmux(&["set-option", "-g", "@panectl-summary-only", "waiting"]);
    server.tmux(&[
        "set-option",
        "-g",
        "@panectl-summary-empty",
        "#[fg=green]all calm",
    ]);
    server.tmux(&["switch-client", "-c", &client, "-t", "other"]);
    wait_summary(server, "#[fg=green]all calm");
}

#[test]
fn the_notification_bell_rings_in_the_agents_pane() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    server.tmux(&["new-window", "-d", "-t", "$0:1", "sh"]);
    let _daemon = setup.daemon_for(3);
    setup.wait_status(&["idle"], Duration::from_secs(10));
    // The user looks at another window of the agent's session.
    server.tmux(&["select-window", "-t", "$0:1"]);
    let _pty = PtyClient::attach(server, 100, 30);
    client_name(server);
    let bell = || {
        server
            .tmux(&["display-message", "-p", "-t", "$0:0", "#{window_bell_flag}"])
            .trim()
            .to_string()
    };
    // Off by default.
    setup.send("quiet turn");
    setup.wait_status(&["completed"], Duration::from_secs(15));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(bell(), "0");
    server.tmux(&["set-option", "-g", "@panectl-notify-bell", "on"]);
    setup.send("loud turn");
    setup.wait_status(&["processing"], Duration::from_secs(10));
    setup.wait_status(&["completed"], Duration::from_secs(15));
    server.wait_for("the bell", Duration::from_secs(10), || bell() == "1");
}
