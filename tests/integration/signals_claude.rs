//! A real Claude Code launched by `panectl launch` (so with panectl's hooks) against the fake
//! model server: the hooks reach the daemon and decide statuses (`source: hook`), the screen
//! keeps working alongside, and the lag of each channel is measured in the same run (printed;
//! BENCHMARKS.md, "Status lag: screen and hooks"):
//!
//! `cargo test --test integration claude_code_hooks -- --nocapture`

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent_clis::ClaudeHome;
use crate::fake_model::FakeModel;
use crate::support::{EventReader, TmuxServer, daemon_test_lock};

/// Turns measured.
const ROUNDS: usize = 6;
/// How long the fake model waits before its answer.
const DELAY_MS: u64 = 1500;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Milliseconds since the epoch of a log line's RFC 3339 UTC time stamp
/// (`2026-12-02T00:05:01.123456Z ...`).
fn log_time_ms(line: &str) -> Option<u64> {
    let stamp = line.split_whitespace().next()?;
    let (date, time) = stamp.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, min, s) = (t.next()??, t.next()??, t.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let millis: i64 = format!("{:0<3}", &frac[..frac.len().min(3)]).parse().ok()?;
    u64::try_from(((days * 24 + h) * 60 + min) * 60_000 + s * 1000 + millis).ok()
}

/// The first log line after `after_ms` containing every one of `needles`: its time.
fn first_after(log: &str, after_ms: u64, needles: &[&str]) -> Option<u64> {
    log.lines()
        .filter(|line| needles.iter().all(|n| line.contains(n)))
        .filter_map(log_time_ms)
        .find(|&t| t >= after_ms)
}

fn median(mut values: Vec<i64>) -> i64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(-1)
}

#[test]
fn claude_code_hooks_decide_statuses_and_are_measured_against_the_screen() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let claude = ClaudeHome::new();
    let server = TmuxServer::start(120, 40);
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);
    let events = EventReader::start(&server);
    let work = claude.work().to_string_lossy().into_owned();
    let env = claude.launch_env(&model.url());
    let mut args: Vec<&str> = vec![
        "launch",
        "claude_code",
        "--name",
        "hooked",
        "--cwd",
        &work,
        "--timeout",
        "90",
    ];
    for pair in &env {
        args.extend(["--env", pair.as_str()]);
    }
    let output = server.panectl().args(&args).output().unwrap();
    assert!(
        output.status.success(),
        "launch failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        daemon.log_text()
    );
    let pane = String::from_utf8_lossy(&output.stdout).trim().to_string();
    // The SessionStart hook came through.
    server.wait_for("the SessionStart hook", Duration::from_secs(20), || {
        daemon.log_text().contains("event=SessionStart")
    });

    let mut marks = Vec::new();
    for round in 0..ROUNDS {
        std::thread::sleep(Duration::from_millis(800));
        let prompt = format!("slow:{DELAY_MS} reply:round {round} done");
        server.tmux(&["send-keys", "-t", &pane, "-l", &prompt]);
        std::thread::sleep(Duration::from_millis(200));
        let submitted = now_ms();
        server.tmux(&["send-keys", "-t", &pane, "Enter"]);
        events.expect_within("completed", Duration::from_secs(30), |e| {
            e["type"] == "status"
                && e["pane"] == pane.as_str()
                && e["status"] == "completed"
                && e["time_ms"].as_u64().is_some_and(|t| t > submitted)
        });
        marks.push((round, submitted));
    }
    // Let the last hooks and screens land in the log.
    std::thread::sleep(Duration::from_millis(1500));
    let log = daemon.log_text();
    let requests = model.log();
    let pane_field = format!("pane={pane}");
    let mut rows = Vec::new();
    for (round, submitted) in &marks {
        let marker = format!("reply:round {round} done");
        let asked = requests
            .iter()
            .filter(|r| r.prompt.contains(&marker) && r.at_ms >= *submitted)
            .map(|r| r.at_ms)
            .min()
            .expect("the model was asked");
        let answered = asked + DELAY_MS;
        let lag = |t: Option<u64>, from: u64| t.map_or(-1, |t| t as i64 - from as i64);
        let hook_busy = first_after(
            &log,
            *submitted,
            &["hook", &pane_field, "event=UserPromptSubmit"],
        );
        let screen_busy = first_after(
            &log,
            *submitted,
            &["screen status", &pane_field, "screen=processing"],
        );
        let hook_done = first_after(&log, answered, &["hook", &pane_field, "event=Stop"]);
        let screen_done = first_after(
            &log,
            answered,
            &["screen status", &pane_field, "screen=completed"],
        );
        rows.push([
            lag(hook_busy, *submitted),
            lag(screen_busy, *submitted),
            lag(hook_done, answered),
            lag(screen_done, answered),
        ]);
    }
    eprintln!("round  submit->processing (hook, screen)  answer->completed (hook, screen)  [ms]");
    for (i, row) in rows.iter().enumerate() {
        eprintln!(
            "{i:>5}  {:>8} {:>8}                        {:>8} {:>8}",
            row[0], row[1], row[2], row[3]
        );
    }
    let column = |c: usize| {
        rows.iter()
            .map(|r| r[c])
            .filter(|&v| v >= 0)
            .collect::<Vec<_>>()
    };
    let (hb, sb, hd, sd) = (column(0), column(1), column(2), column(3));
    eprintln!(
        "median  processing: hook {} ms, screen {} ms; completed: hook {} ms, screen {} ms",
        median(hb.clone()),
        median(sb.clone()),
        median(hd.clone()),
        median(sd.clone())
    );
    // Every turn's hooks reached the daemon, and statuses came from them.
    assert_eq!(hb.len(), ROUNDS, "UserPromptSubmit hooks: {rows:?}");
    assert_eq!(hd.len(), ROUNDS, "Stop hooks: {rows:?}");
    let seen = events.seen_events();
    assert!(
        seen.iter()
            .any(|e| e["type"] == "status" && e["pane"] == pane.as_str() && e["source"] == "hook"),
        "no status from a hook: {seen:#?}"
    );
    // Claude Code's own settings file was not touched.
    let settings = std::fs::read_to_string(claude.home().join(".claude/settings.json")).unwrap();
    assert_eq!(settings, r#"{"permissions":{"defaultMode":"default"}}"#);
}
