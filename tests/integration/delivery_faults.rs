//! Message delivery under faults (issue 15): a receiver that takes the text without showing a
//! turn, a crash between `delivering` and the paste while the pane already shows the same
//! text, a shell whose turns are too short to see, and an inbox that floods or breaks under a
//! running daemon (which must not spin).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::inbox::Setup;
use crate::support::{TmuxServer, daemon_test_lock};

/// A receiver detected as the fake agent (its script is named `fake_agent.py`) that takes the
/// text like the fake agent but shows nothing of it once submitted: the input is cleared, the
/// prompt drawn again, no turn, no text left on the screen. Logs what it took, one hex line each.
const SWALLOWER: &str = r#"
import os, sys, termios, tty
log = open(sys.argv[1], "a")
tty.setraw(0)
os.write(1, b"\x1b[?2004hfake> ")
buffer = b""
pending = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    pending += chunk
    pending = pending.replace(b"\x1b[200~", b"")
    if b"\x1b[201~" in pending:
        buffer += pending.replace(b"\x1b[201~", b"")
        pending = b""
        os.write(1, b"\r\x1b[Kfake> " + buffer.split(b"\n")[0][:60])
        continue
    if pending in (b"\r", b"\n") and buffer:
        log.write(buffer.hex() + "\n")
        log.flush()
        buffer = b""
        os.write(1, b"\r\x1b[Kfake> ")
    pending = b""
"#;

/// The inbox database of the server's daemon.
fn inbox_path(server: &TmuxServer) -> PathBuf {
    let base = server.dir().join("state/panectl");
    std::fs::read_dir(&base)
        .expect("the daemon's state directory")
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("inbox.sqlite"))
        .find(|path| path.exists())
        .expect("the inbox database")
}

/// CPU seconds (user and system) a process has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the daemon's stat");
    // Fields after the command (which may hold spaces) end with `)`.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    ticks / per_second
}

/// The share of one core the process uses over `window`.
fn cpu_share(pid: u32, window: Duration) -> f64 {
    let start = cpu_seconds(pid);
    std::thread::sleep(window);
    (cpu_seconds(pid) - start) / window.as_secs_f64()
}

/// Issue 15, item 8: a receiver took the text but no turn and no trace of it can be seen. The
/// message was submitted; whether it was taken cannot be told, so it is `uncertain` (a retrying
/// orchestrator must not send it again), never `failed`.
#[test]
fn a_text_taken_without_a_visible_turn_is_uncertain_not_failed() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let dir = tempfile::tempdir().expect("script dir");
    let script = dir.path().join("fake_agent.py");
    std::fs::write(&script, SWALLOWER).expect("script");
    let log = setup.server.dir().join("swallowed.log");
    let command = format!("exec python3 {} {}", script.display(), log.display());
    setup
        .server
        .tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let id = setup.send("take this quietly");
    let done = setup.wait_state(id, "uncertain", Duration::from_secs(30));
    assert_eq!(done["attempts"], 1, "{done}");
    let reason = done["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("may have taken it"), "{done}");
    let taken = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        taken.lines().collect::<Vec<_>>(),
        [hex(b"take this quietly")],
        "the receiver took it once"
    );
    // Uncertain is final: it is not delivered again.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(setup.message(id)["state"], "uncertain");
    assert_eq!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count(),
        1
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Issue 15, item 9: a crash left a message `delivering` before its paste, and the pane already
/// shows the same text (an earlier message). Recovery must not take that text for this
/// message's delivery: the message goes back to pending and arrives, once.
#[test]
fn recovery_does_not_take_the_same_text_from_earlier_for_a_paste_that_never_happened() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let first = {
        let _daemon = setup.daemon();
        setup.wait_status(&["idle"], Duration::from_secs(10));
        let first = setup.send("continue");
        setup.wait_state(first, "delivered", Duration::from_secs(10));
        setup.wait_status(&["completed"], Duration::from_secs(10));
        setup.message(first)
    };
    assert!(
        setup.server.tmux_screen("%0").contains("fake> continue"),
        "{}",
        setup.server.tmux_screen("%0")
    );
    // What a crash right after `delivering` was committed leaves: the same text, never pasted.
    let path = inbox_path(&setup.server);
    let second = {
        let db = rusqlite::Connection::open(&path).expect("open the inbox");
        let now = first["created_at"].as_i64().expect("created_at") + 1000;
        db.execute(
            "INSERT INTO messages (pane, agent, sender, body, created_at, state, attempts, \
             attempt_at) VALUES ('%0', ?1, 'cli', CAST('continue' AS BLOB), ?2, 'delivering', 1, ?2)",
            rusqlite::params![first["agent"].as_str().expect("agent"), now],
        )
        .expect("insert");
        db.last_insert_rowid()
    };
    let _daemon = setup.daemon();
    let done = setup.wait_state(second, "delivered", Duration::from_secs(20));
    assert_eq!(
        done["attempts"], 2,
        "went back to pending, then delivered: {done}"
    );
    setup.wait_status(&["completed"], Duration::from_secs(10));
    assert_eq!(
        setup.bodies(),
        [&b"continue"[..], b"continue"],
        "each message arrives once"
    );
}

/// Issue 15, item 18: a shell runs `echo` too fast for any status but ready to be seen. The end
/// of such a turn (the prompt back) lets the next message go at once, not after the settle
/// wait: 31 messages take seconds, not a minute and a half; each runs exactly once, in order.
#[test]
fn a_shell_takes_31_messages_in_seconds_each_once() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    let _daemon = setup.daemon();
    server.wait_for("%1 to be a ready shell", Duration::from_secs(10), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%1" && p["provider"] == "shell" && p["status"] == "idle")
    });
    let out = server.dir().join("ran.txt");
    let started = Instant::now();
    let ids: Vec<i64> = (1..=31)
        .map(|n| {
            let command = format!("echo m-{n:02} >> {}", out.display());
            let id = server.panectl_ok(&["send", "%1", "--allow-shell", &command]);
            id.trim().parse::<i64>().expect("message id")
        })
        .collect();
    let last = *ids.last().expect("ids");
    let mut state = Value::Null;
    server.wait_for(
        "every message to be delivered",
        Duration::from_secs(120),
        || {
            state = setup.message(last);
            state["state"] != "pending" && state["state"] != "delivering"
        },
    );
    let took = started.elapsed();
    eprintln!("31 messages to a shell: {took:?}");
    let messages = setup.messages();
    for id in &ids {
        let m = messages.iter().find(|m| m["id"] == *id).expect("message");
        assert_eq!(m["state"], "delivered", "{m}");
        assert_eq!(m["attempts"], 1, "{m}");
    }
    server.wait_for("the last command to run", Duration::from_secs(10), || {
        std::fs::read_to_string(&out).is_ok_and(|t| t.lines().count() >= 31)
    });
    let ran = std::fs::read_to_string(&out).expect("output");
    let expected: Vec<String> = (1..=31).map(|n| format!("m-{n:02}")).collect();
    assert_eq!(
        ran.lines().collect::<Vec<_>>(),
        expected,
        "each ran once, in order"
    );
    assert!(
        took < Duration::from_secs(20),
        "31 messages to a shell took {took:?}"
    );
}

/// Issue 15, item 17: no part of the daemon may spin. Messages waiting for a busy receiver, a
/// flood of them, and then a database that breaks under the daemon: the daemon's CPU use stays
/// low (a generous bound: a spinning loop takes a whole core).
#[test]
fn the_daemon_does_not_spin_on_waiting_messages_a_flood_or_a_broken_inbox() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    // A dialog holds everything back.
    let ask = setup.send("ASK hold on");
    setup.wait_state(ask, "delivered", Duration::from_secs(10));
    setup.wait_status(&["waiting_user_answer"], Duration::from_secs(5));
    for n in 0..200 {
        let request = serde_json::json!({ "body": format!("flood {n}") });
        setup.server.api_post("/v1/panes/%250/messages", &request);
    }
    std::thread::sleep(Duration::from_secs(1));
    let waiting = cpu_share(daemon.pid(), Duration::from_secs(5));
    eprintln!(
        "daemon CPU with 200 messages waiting: {:.1}%",
        waiting * 100.0
    );
    assert!(
        waiting < 0.3,
        "the daemon used {:.0}% of a core while messages waited for a busy receiver",
        waiting * 100.0
    );
    // The database is overwritten with garbage under the running daemon.
    let path = inbox_path(&setup.server);
    corrupt(&path);
    std::thread::sleep(Duration::from_secs(1));
    let broken = cpu_share(daemon.pid(), Duration::from_secs(5));
    eprintln!("daemon CPU with a corrupted inbox: {:.1}%", broken * 100.0);
    assert!(
        broken < 0.3,
        "the daemon used {:.0}% of a core with a corrupted inbox",
        broken * 100.0
    );
    // The receiver becomes ready: deliveries now fail on the database, and must back off.
    setup.server.tmux(&["send-keys", "-t", "%0", "y"]);
    std::thread::sleep(Duration::from_secs(1));
    let failing = cpu_share(daemon.pid(), Duration::from_secs(5));
    eprintln!(
        "daemon CPU with a ready receiver and a corrupted inbox: {:.1}%",
        failing * 100.0
    );
    assert!(
        failing < 0.3,
        "the daemon used {:.0}% of a core retrying a broken inbox",
        failing * 100.0
    );
    assert!(
        setup.server.health().is_object(),
        "the daemon still answers"
    );
}

/// Overwrites every page of a SQLite file but the first with garbage, and its WAL.
fn corrupt(path: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    for file in [
        path.to_path_buf(),
        PathBuf::from(format!("{}-wal", path.display())),
    ] {
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&file) else {
            continue;
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let start = if file == path { 100 } else { 32 };
        if len <= start {
            continue;
        }
        f.seek(SeekFrom::Start(start)).expect("seek");
        let garbage: Vec<u8> = (0..len - start).map(|i| (i * 7 + 13) as u8).collect();
        f.write_all(&garbage).expect("corrupt");
    }
}

/// 31 messages queued at once to a shell (`echo`) and 31 to the fake agent with no work: every
/// one arrives once. Prints the messages per second, for BENCHMARKS.md:
/// `cargo test --test integration delivery_faults::throughput -- --nocapture` (no time is
/// asserted).
#[test]
fn throughput() {
    const MESSAGES: usize = 31;
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.0);
    let server = &setup.server;
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    server.wait_for("%1 to be a ready shell", Duration::from_secs(10), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%1" && p["provider"] == "shell" && p["status"] == "idle")
    });
    let out = server.dir().join("ran.txt");
    let run = |pane: &str, text: &dyn Fn(usize) -> String| -> f64 {
        let started = Instant::now();
        let ids: Vec<String> = (1..=MESSAGES)
            .map(|n| {
                server
                    .panectl_ok(&["send", pane, "--allow-shell", &text(n)])
                    .trim()
                    .to_string()
            })
            .collect();
        let last: i64 = ids.last().expect("ids").parse().expect("id");
        server.wait_for("the last message", Duration::from_secs(300), || {
            let state = setup.message(last)["state"].clone();
            state != "pending" && state != "delivering"
        });
        let took = started.elapsed().as_secs_f64();
        eprintln!(
            "{pane}: {MESSAGES} messages in {took:.2} s = {:.2} messages/s",
            MESSAGES as f64 / took
        );
        took
    };
    run("%1", &|n| format!("echo m-{n:02} >> {}", out.display()));
    run("%0", &|n| format!("message {n:02}"));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .count(),
        MESSAGES
    );
    assert_eq!(setup.bodies().len(), MESSAGES);
}
