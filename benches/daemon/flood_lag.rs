//! `cargo bench --bench daemon -- flood-lag`: how late an agent's `completed` is when a flood
//! in its pane ends (issue 39 asks for <= 100 ms). The fake agent
//! (`scripts/programs/fake_agent.py`) is given `FLOOD N` messages: it prints N bytes while it
//! works, then its answer and its prompt. tmux's screen is polled with `capture-pane` every
//! 10 ms; the lag is from the first poll that shows the prompt back under this turn's answer
//! to the daemon's `completed` event (its `time_ms`). Turns without a flood are the baseline,
//! in the same run; with the default flood handling a flood moves the pane to the pipe
//! transport and back.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::support::{EventReader, TmuxServer};
use super::{Stats, stats};

const ROUNDS: usize = 6;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One turn of `message`: the lag from the prompt shown back to the `completed` event.
fn turn(server: &TmuxServer, events: &EventReader, message: &str) -> Option<f64> {
    let answer: String = message.chars().rev().collect();
    let sent_at = now_ms();
    server.tmux(&["send-keys", "-t", "%0", "-l", message]);
    std::thread::sleep(Duration::from_millis(150));
    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
    let mut shown = 0;
    server.wait_for(
        "the turn's answer and prompt",
        Duration::from_secs(600),
        || {
            let screen = server.tmux_screen("%0");
            let rows: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
            let back = rows.last().is_some_and(|l| l.trim_end() == "fake>")
                && screen.contains(&format!("answer: {answer}"));
            if back {
                shown = now_ms();
            }
            back
        },
    );
    let event = events.expect_within("the completed status", Duration::from_secs(30), |e| {
        e["type"] == "status"
            && e["pane"] == "%0"
            && e["status"] == "completed"
            && e["time_ms"].as_u64().is_some_and(|t| t > sent_at)
    });
    let at = event["time_ms"].as_u64()?;
    Some(at as f64 - shown as f64)
}

pub fn flood_lag() {
    let server = TmuxServer::start(120, 40);
    let rules = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs");
    std::fs::copy(
        root.join("fake_agent.toml"),
        rules.path().join("fake_agent.toml"),
    )
    .unwrap();
    let log = rules.path().join("received.log");
    server.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        "%0",
        &format!(
            "exec python3 {} {} 0.2",
            root.join("fake_agent.py").display(),
            log.display()
        ),
    ]);
    let rules_dir = rules.path().display().to_string();
    let _daemon = server.start_daemon(&["--rules-dir", &rules_dir]);
    server.wait_for_panes(1);
    server.wait_for("the fake agent idle", Duration::from_secs(20), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%0" && p["status"] == "idle")
    });
    let events = EventReader::start(&server);
    let mut rows: Vec<(&str, Stats)> = Vec::new();
    for (name, bytes) in [
        ("no flood (baseline)", 0u64),
        ("2 MB flood", 2_000_000),
        ("50 MB flood", 50_000_000),
    ] {
        let mut lags = Vec::new();
        for round in 0..ROUNDS {
            let message = if bytes == 0 {
                format!("turn r{round}x{bytes}")
            } else {
                format!("FLOOD {bytes} r{round}")
            };
            if let Some(lag) = turn(&server, &events, &message) {
                lags.push(lag);
            }
            std::thread::sleep(Duration::from_secs(3));
        }
        rows.push((name, stats(lags)));
    }
    let health = server.health();
    println!(
        "\n### Status lag at the end of a flood: the prompt back on tmux's screen to `completed`\n"
    );
    println!("| turn | samples | p50 ms | max ms |");
    println!("|---|---|---|---|");
    for (name, s) in &rows {
        println!("| {name} | {} | {:.0} | {:.0} |", s.samples, s.p50, s.max);
    }
    println!(
        "\nDivergences repaired meanwhile: {}; transport moves: see the daemon's counters.",
        health["divergences"]
    );
}
