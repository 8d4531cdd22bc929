//! A window resized a hundred times while its program prints: the daemon's mirror reflows as
//! tmux does and ends cell-exact with tmux's screen (`capture-pane -e`, colours included). A
//! reflow that does not give tmux's screen is reseeded, counted by `resync` events with reason
//! `resize`; the test prints how many and why (the daemon logs each difference).

use std::time::{Duration, Instant};

use crate::support::{EventReader, TmuxServer};

/// What the daemon mirrors of `pane`, as `capture-pane -p -e` prints it.
fn daemon_ansi(server: &TmuxServer, pane: &str) -> String {
    let output = server
        .panectl()
        .args(["screen", "--ansi", pane])
        .output()
        .expect("run panectl");
    let text = String::from_utf8_lossy(&output.stdout);
    let text = text.trim_end_matches('\n');
    let text = text.strip_suffix("\x1b[m").unwrap_or(text);
    text.trim_end_matches('\n').to_string()
}

fn tmux_ansi(server: &TmuxServer, pane: &str) -> String {
    server
        .tmux(&["capture-pane", "-p", "-e", "-t", pane])
        .trim_end_matches('\n')
        .to_string()
}

#[test]
fn a_window_resized_a_hundred_times_while_printing_ends_cell_exact() {
    let server = TmuxServer::start(80, 24);
    server.tmux(&["set-option", "-g", "window-size", "manual"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let events = EventReader::start(&server);
    let program = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/programs/resize-redraw.py"
    );
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        &format!("clear; python3 {program} 6"),
        "Enter",
    ]);
    let sizes = [
        (80, 24),
        (41, 17),
        (120, 30),
        (33, 9),
        (97, 40),
        (60, 12),
        (150, 20),
    ];
    let started = Instant::now();
    for round in 0..100 {
        let (width, height) = sizes[round % sizes.len()];
        server.tmux(&[
            "resize-window",
            "-t",
            "%0",
            "-x",
            &(width + round % 5).to_string(),
            "-y",
            &(height + round % 3).to_string(),
        ]);
        std::thread::sleep(Duration::from_millis(30));
    }
    let resizing = started.elapsed();
    server.wait_for("the program to finish", Duration::from_secs(60), || {
        server.tmux_screen("%0").contains("resize-redraw done")
    });
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (ours, theirs) = (daemon_ansi(&server, "%0"), tmux_ansi(&server, "%0"));
        if ours == theirs {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the mirror is not tmux's screen:\n--- daemon\n{ours:?}\n--- tmux\n{theirs:?}\n\
             daemon panes {:?}\ntmux {}\n{}",
            server.panes(),
            server.tmux(&[
                "display",
                "-p",
                "-t",
                "%0",
                "#{pane_width}x#{pane_height} #{cursor_x},#{cursor_y}"
            ]),
            server.daemon_log_tail(40)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = events.seen_events();
    let count = |kind: &str, reason: Option<&str>| {
        seen.iter()
            .filter(|e| e["type"] == kind && reason.is_none_or(|r| e["reason"] == r))
            .count()
    };
    let resized = count("pane_resized", None);
    let reseeds = count("resync", Some("resize"));
    let divergences = server.health()["divergences"].as_u64();
    eprintln!(
        "100 resizes in {resizing:?}: {resized} pane_resized events, {reseeds} reseeds after a \
         resize, divergences {divergences:?}"
    );
    for line in server.daemon_logs().lines() {
        if line.contains("reflow differs") {
            eprintln!("  {line}");
        }
    }
    assert!(resized >= 90, "{resized} resizes seen");
    // The reflow gives tmux's screen most of the time; a reseed is needed only when output
    // tmux parsed at the new size came before `%layout-change` (or history came back).
    assert!(reseeds < resized, "{reseeds} reseeds for {resized} resizes");
    assert_eq!(divergences, Some(0), "{}", server.daemon_log_tail(40));
}
