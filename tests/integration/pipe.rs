//! The pipe transport's parts against real tmux: a FIFO in a directory whose name tmux would
//! expand, `pipe-pane -O` into it, the reader with its kept-open write end, and the watchdog
//! healing a pipe whose writer was killed (stop-then-start, model reseeded from tmux).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use panectl::control::command::{Line, commands};
use panectl::ids::PaneId;
use panectl::pipe::{Fifo, PipeLiveness, Probe, Verdict, WatchdogConfig};
use panectl::screen::{PaneScreen, Snapshot, normalize_capture};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::support::TmuxServer;

/// The pane's screen as tmux shows it, and a snapshot to seed a model from.
fn tmux_screen(server: &TmuxServer) -> (String, Snapshot) {
    let capture = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    let cursor = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        "%0",
        "#{cursor_x} #{cursor_y}",
    ]);
    let mut xy = cursor
        .split_whitespace()
        .map(|n| n.parse::<u16>().unwrap_or(0));
    let snapshot = Snapshot {
        width: 80,
        height: 24,
        primary: capture
            .split('\n')
            .take(24)
            .map(|l| l.as_bytes().to_vec())
            .collect(),
        cursor: (xy.next().unwrap_or(0), xy.next().unwrap_or(0)),
        ..Snapshot::default()
    };
    (normalize_capture(&capture), snapshot)
}

fn hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The pids of processes writing to `path` (tmux's `cat` for the pipe).
pub fn writers(path: &std::path::Path) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(entry.path().join("fd/1")).is_ok_and(|target| target == path) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn a_fifo_carries_pane_output_and_the_watchdog_heals_a_killed_writer() {
    let server = TmuxServer::start(80, 24);
    let dir = server.dir().join("pipes #{pane_id} 'q'");
    let fifo = Fifo::create(&dir, PaneId(0)).expect("fifo");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (sender, mut receiver) = mpsc::channel::<Vec<u8>>(1024);
    let cancel = CancellationToken::new();
    let delivered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let fifo = std::sync::Arc::new(fifo);
    let reader = {
        let cancel = cancel.clone();
        let delivered = delivered.clone();
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(fifo.read(
                sender,
                |n| {
                    delivered.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                },
                cancel,
            ))
        })
    };
    let mut control = server.control_client("$0");
    let start = |control: &mut crate::support::ControlClient| {
        let replies = control.run(&Line::new(fifo.start_command(PaneId(0)).unwrap()));
        assert!(
            replies
                .iter()
                .all(|r| r.as_ref().is_some_and(|r| r.success)),
            "{replies:?}"
        );
    };
    // Quiet pane, then the pipe, then the model seeded from tmux: they agree.
    server.tmux(&["send-keys", "-t", "%0", "clear", "Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    start(&mut control);
    let (_, snapshot) = tmux_screen(&server);
    let mut model = PaneScreen::new(80, 24);
    model.reseed(&snapshot);
    let config = WatchdogConfig::default();
    let mut pipe = PipeLiveness::new(config, Instant::now());
    let mut received = Vec::new();

    // Output reaches the reader byte-exact, and the model follows tmux.
    let mut drain = |model: &mut PaneScreen, received: &mut Vec<u8>, pipe: &mut PipeLiveness| {
        runtime.block_on(async {
            while let Ok(Some(chunk)) =
                tokio::time::timeout(Duration::from_millis(300), receiver.recv()).await
            {
                model.feed(&chunk);
                received.extend_from_slice(&chunk);
                pipe.delivered(Instant::now());
            }
        });
    };
    server.tmux(&[
        "send-keys",
        "-t",
        "%0",
        "printf '\\303\\251\\346\\227\\245 \\033[1mbold\\033[0m one\\n'",
        "Enter",
    ]);
    let expected = "é日 \x1b[1mbold\x1b[0m one".as_bytes();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !received.windows(expected.len()).any(|w| w == expected) {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            String::from_utf8_lossy(&received)
        );
        drain(&mut model, &mut received, &mut pipe);
    }
    let check = |model: &PaneScreen, pipe: &mut PipeLiveness| {
        let (shown, _) = tmux_screen(&server);
        pipe.check(
            Instant::now(),
            Probe {
                model_matches: model.text() == shown,
                screen_hash: hash(&shown),
                pane_has_content: !shown.is_empty(),
            },
        )
    };
    // Healthy once the last bytes (the prompt) are in.
    let healthy =
        |model: &mut PaneScreen,
         received: &mut Vec<u8>,
         pipe: &mut PipeLiveness,
         drain: &mut dyn FnMut(&mut PaneScreen, &mut Vec<u8>, &mut PipeLiveness)| {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                drain(model, received, pipe);
                let verdict = check(model, pipe);
                if verdict == Verdict::Healthy {
                    return;
                }
                assert!(Instant::now() < deadline, "{verdict:?}");
            }
        };
    healthy(&mut model, &mut received, &mut pipe, &mut drain);

    // The writer dies: output stops arriving, the model falls behind, the watchdog re-arms.
    let writers_now = writers(fifo.path());
    assert_eq!(writers_now.len(), 1, "tmux's cat");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(writers_now[0]),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    server.tmux(&["send-keys", "-t", "%0", "echo two", "Enter"]);
    server.wait_for("tmux to show two", Duration::from_secs(10), || {
        tmux_screen(&server).0.contains("\ntwo")
    });
    std::thread::sleep(Duration::from_millis(300));
    drain(&mut model, &mut received, &mut pipe);
    assert!(!String::from_utf8_lossy(&received).contains("two\r\n"));
    let mut verdicts = Vec::new();
    loop {
        let verdict = check(&model, &mut pipe);
        verdicts.push(verdict.clone());
        if let Verdict::Rearm(_) = verdict {
            break;
        }
        assert!(verdicts.len() < 5, "{verdicts:?}");
    }
    // Stop, then start (a bare start would toggle a stalled pipe off), then reseed.
    control.run(&Line::new(commands::pipe_pane_stop(PaneId(0))));
    start(&mut control);
    let (_, snapshot) = tmux_screen(&server);
    model.reseed(&snapshot);
    pipe.rearmed(Instant::now());
    server.tmux(&["send-keys", "-t", "%0", "echo three", "Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&received).contains("three\r\n") {
        assert!(
            Instant::now() < deadline,
            "the re-armed pipe delivers nothing"
        );
        drain(&mut model, &mut received, &mut pipe);
    }
    healthy(&mut model, &mut received, &mut pipe, &mut drain);
    assert!(delivered.load(std::sync::atomic::Ordering::Relaxed) > 0);

    cancel.cancel();
    assert!(reader.join().unwrap().is_ok());
    drop(control);
}

#[test]
fn a_closed_pane_leaves_the_reader_waiting_and_a_removed_directory_is_a_clear_error() {
    let server = TmuxServer::start(80, 24);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let dir = server.dir().join("pipes");
    let fifo = std::sync::Arc::new(Fifo::create(&dir, PaneId(1)).expect("fifo"));
    let (sender, mut receiver) = mpsc::channel::<Vec<u8>>(64);
    let cancel = CancellationToken::new();
    let reader = {
        let (fifo, cancel) = (fifo.clone(), cancel.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(fifo.read(sender, |_| {}, cancel))
        })
    };
    let mut control = server.control_client("$0");
    let replies = control.run(&Line::new(fifo.start_command(PaneId(1)).unwrap()));
    assert!(
        replies
            .iter()
            .all(|r| r.as_ref().is_some_and(|r| r.success))
    );
    server.tmux(&["send-keys", "-t", "%1", "echo before-close", "Enter"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut seen = Vec::new();
    runtime.block_on(async {
        while !String::from_utf8_lossy(&seen).contains("before-close\r\n") {
            match tokio::time::timeout(Duration::from_secs(5), receiver.recv()).await {
                Ok(Some(chunk)) => seen.extend_from_slice(&chunk),
                other => panic!("no output through the pipe: {other:?}"),
            }
        }
    });
    // The pane closes: tmux's writer goes away, but the reader sees no EOF and does not spin;
    // it ends only when told.
    server.tmux(&["kill-pane", "-t", "%1"]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!reader.is_finished(), "the reader ended on its own");
    cancel.cancel();
    assert!(reader.join().unwrap().is_ok());

    // The FIFO's directory removed under panectl: opening it again fails, naming the file.
    std::fs::remove_dir_all(&dir).unwrap();
    let (sender, _receiver) = mpsc::channel::<Vec<u8>>(1);
    let error = runtime
        .block_on(fifo.read(sender, |_| {}, CancellationToken::new()))
        .expect_err("no FIFO to open");
    let message = error.to_string();
    assert!(
        message.contains("cannot open the FIFO") && message.contains("pane-1.fifo"),
        "{message}"
    );
    drop(control);
}
