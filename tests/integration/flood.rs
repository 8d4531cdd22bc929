//! A flood in a pane on the control transport (the default): once its output rate stays high
//! the pane moves to the pipe transport (tmux stops encoding every byte as `%output` for the
//! daemon), and back to `%output` once it is calm; the mirror stays tmux's screen throughout,
//! and the control client is never replaced.

use std::time::Duration;

use crate::daemon::control_clients;
use crate::support::{EventReader, TmuxServer, daemon_test_lock};

#[test]
fn a_flooding_pane_moves_to_a_pipe_and_back_when_it_is_calm() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let clients_before = control_clients(&server);
    let events = EventReader::start(&server);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "yes 0123456789 | head -c 60000000; echo flood-$((40+2))",
        "Enter",
    ]);
    let moved = events.expect_within("the move to a pipe", Duration::from_secs(60), |e| {
        e["type"] == "transport" && e["pane"] == "%0" && e["transport"] == "pipe"
    });
    assert!(
        moved["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("a flood of "),
        "{moved}"
    );
    server.wait_for("the flood to end", Duration::from_secs(120), || {
        server.tmux_screen("%0").contains("flood-42\n")
    });
    let back = events.expect_within("the move back", Duration::from_secs(30), |e| {
        e["type"] == "transport" && e["pane"] == "%0" && e["transport"] == "control"
    });
    assert_eq!(back["reason"], "the flood is over", "{back}");
    // Output after the flood comes through `%output` again, and the mirror is tmux's screen.
    server.tmux(&["send-keys", "-t", "%0", "echo calm-$((40+3))", "Enter"]);
    server.wait_for("the line after the flood", Duration::from_secs(10), || {
        server.tmux_screen("%0").contains("calm-43\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(10));
    let panes = server.panes();
    assert_eq!(panes[0]["transport"], "control", "{panes:#?}");
    let health = server.health();
    assert_eq!(health["divergences"], 0, "{health:#}");
    assert_eq!(health["reconnects"], 0, "{health:#}");
    assert_eq!(control_clients(&server), clients_before);
}

#[test]
fn with_flood_rate_0_a_flood_stays_on_the_control_transport() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&["--flood-rate", "0"]);
    server.wait_for_panes(1);
    let events = EventReader::start(&server);
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "yes 0123456789 | head -c 20000000; echo flood-$((40+2))",
        "Enter",
    ]);
    server.wait_for("the flood to end", Duration::from_secs(120), || {
        server.tmux_screen("%0").contains("flood-42\n")
    });
    server.wait_for_same_screen("%0", Duration::from_secs(10));
    assert!(
        !events
            .seen_events()
            .iter()
            .any(|e| e["type"] == "transport"),
        "with --flood-rate 0 no pane moves"
    );
    assert_eq!(server.panes()[0]["transport"], "control");
}
