//! End-to-end figures of the daemon against real tmux servers (issue targets in BENCHMARKS.md).
//!
//! `cargo bench --bench daemon [-- latency|cost|scale|status-lag|transport]...` runs:
//! * `latency`: time from a byte written in a pane to its event on the API stream, with 60 idle
//!   panes and 10 printing, and, in the same run and the same way, to its detection by
//!   `capture-pane` polling every 500 ms and by a `pipe-pane` FIFO reader;
//! * `cost`: daemon CPU per 100 MB of pane output, and tmux server CPU for a 200 MB burst with
//!   and without the daemon attached;
//! * `scale`: 200 panes over 40 sessions: cold start, RSS, idle CPU and processes started over
//!   60 s;
//! * `wide`: 100 sessions x 10 panes: cold start, idle CPU of the daemon and the tmux server,
//!   processes started, and the memory of the daemon, its control clients and relays and the
//!   tmux server's growth (PSS);
//! * `flood-lag`: how late `completed` is when a flood in an agent's pane ends;
//! * `events-wide`: `latency`'s daemon row with 70 panes (10 printing) and with 1000 panes (50
//!   printing) in one run: p50/p99 of a byte to its event, and daemon CPU per MB printed;
//! * `transport`: the pipe transport against the control transport in one run: latency, and
//!   CPU for a 200 MB burst;
//! * `remote`: a server reached over ssh (a real sshd on 127.0.0.1) against the same server
//!   reached locally, in one run: latency, CPU per 100 MB (the daemon's, and the ssh
//!   transport's on both ends), processes started while idle, ssh connections per server;
//! * `status-lag`: real Claude Code turns through the fake model server; from the moment tmux's
//!   screen shows a change (polled with `capture-pane` every 10 ms) to the status event.
//!
//! It prints Markdown; nothing is asserted (timed assertions belong in no test).

#[path = "../tests/integration/agent_clis.rs"]
#[allow(dead_code)]
mod agent_clis;
#[path = "../tests/integration/fake_model.rs"]
#[allow(dead_code)]
mod fake_model;
#[path = "daemon/flood_lag.rs"]
mod flood_lag;
#[path = "../tests/integration/screen_watch.rs"]
#[allow(dead_code)]
mod screen_watch;
#[path = "../tests/integration/sshd.rs"]
#[allow(dead_code)]
mod sshd;
#[path = "../tests/integration/support/mod.rs"]
#[allow(dead_code)]
mod support;
#[path = "daemon/wide.rs"]
mod wide;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::TmuxServer;

/// Bytes per marker line on the pane's output (`mark NNNNNN` + CR LF).
const MARKER_BYTES: u64 = 13;
const PROBES: usize = 10;
const IDLE_PANES: usize = 60;
const MARKERS: usize = 400;
const MARKER_INTERVAL_MS: u64 = 25;

fn now_ns() -> u64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("clock");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs")
}

/// CPU time (user + system) of a process, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    ticks / hz
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// Processes created on the whole machine since boot (`processes` in /proc/stat).
fn machine_forks() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("processes "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

struct Stats {
    samples: usize,
    p50: f64,
    p99: f64,
    mean: f64,
    max: f64,
}

fn stats(mut latencies_ms: Vec<f64>) -> Stats {
    latencies_ms.sort_by(f64::total_cmp);
    let at = |q: f64| latencies_ms[((latencies_ms.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        samples: latencies_ms.len(),
        p50: at(0.5),
        p99: at(0.99),
        mean: latencies_ms.iter().sum::<f64>() / latencies_ms.len() as f64,
        max: *latencies_ms.last().unwrap_or(&0.0),
    }
}

/// Creates the probe windows in session `probes`, each waiting on `channel` before writing
/// markers to a log. Returns (pane id, log path) per probe.
fn create_probes(
    server: &TmuxServer,
    channel: &str,
    dir: &Path,
    count: usize,
) -> Vec<(String, PathBuf)> {
    let marker = scripts().join("marker.py");
    (0..count)
        .map(|i| {
            let log = dir.join(format!("{channel}-{i}.log"));
            let command = format!(
                "tmux wait-for {channel}; exec python3 {} {} {MARKERS} {MARKER_INTERVAL_MS}",
                marker.display(),
                log.display()
            );
            let pane = server
                .tmux(&[
                    "new-window",
                    "-d",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "-t",
                    "probes",
                    &command,
                ])
                .trim()
                .to_string();
            (pane, log)
        })
        .collect()
}

/// Waits for the probes to finish and reads their write times.
fn write_times(probes: &[(String, PathBuf)]) -> Vec<Vec<u64>> {
    let deadline = Instant::now() + Duration::from_secs(120);
    probes
        .iter()
        .map(|(_, log)| {
            loop {
                if let Ok(text) = std::fs::read_to_string(log)
                    && text.lines().count() == MARKERS
                {
                    break text
                        .lines()
                        .map(|l| {
                            l.split(' ')
                                .nth(1)
                                .and_then(|t| t.parse().ok())
                                .unwrap_or(0)
                        })
                        .collect();
                }
                assert!(
                    Instant::now() < deadline,
                    "probe {} did not finish",
                    log.display()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .collect()
}

/// Latency of each marker given when each byte offset arrived: (end offset, time) in order.
fn latencies(writes: &[u64], arrivals: &[(u64, u64)]) -> Vec<f64> {
    writes
        .iter()
        .enumerate()
        .filter_map(|(i, &written)| {
            let end = (i as u64 + 1) * MARKER_BYTES;
            let index = arrivals.partition_point(|&(offset, _)| offset < end);
            arrivals
                .get(index)
                .map(|&(_, at)| at.saturating_sub(written) as f64 / 1e6)
        })
        .collect()
}

fn latency_server() -> TmuxServer {
    latency_server_of(IDLE_PANES)
}

/// A server with a `probes` session and `idle` idle panes: sessions of 5 windows of 2 panes.
fn latency_server_of(idle: usize) -> TmuxServer {
    let server = TmuxServer::start(80, 24);
    server.tmux(&["rename-session", "-t", "$0", "probes"]);
    for s in 0..idle / 10 {
        let name = format!("idle{s}");
        server.tmux(&["new-session", "-d", "-s", &name, "-x", "80", "-y", "24"]);
        server.tmux(&["split-window", "-t", &name]);
        for _ in 1..5 {
            server.tmux(&["new-window", "-t", &name]);
            server.tmux(&["split-window", "-t", &name]);
        }
    }
    server
}

/// Per pane: (end offset, arrival time) of every output event, in order.
type Arrivals = BTreeMap<String, Vec<(u64, u64)>>;

fn run_daemon_latency(server: &TmuxServer, dir: &Path, daemon_args: &[&str]) -> Stats {
    run_daemon_latency_of(server, dir, daemon_args, (IDLE_PANES, PROBES)).0
}

/// [`run_daemon_latency`] with `idle` idle panes and `count` probes; also the daemon's CPU
/// seconds from the probes' start to their end.
fn run_daemon_latency_of(
    server: &TmuxServer,
    dir: &Path,
    daemon_args: &[&str],
    (idle, count): (usize, usize),
) -> (Stats, f64) {
    // Each run its own channel (and so its own probe logs).
    let channel = format!("go-daemon{}", daemon_args.join("-"));
    let probes = create_probes(server, &channel, dir, count);
    let daemon = server.start_daemon(daemon_args);
    let panes = idle + count + 1;
    server.wait_for_panes(panes);
    if daemon_args.contains(&"pipe") {
        server.wait_for("every pipe", Duration::from_secs(30), || {
            server.health()["pipe_panes"].as_u64() == Some(panes as u64)
        });
    }
    // Subscribe to the event stream and time every output event of the probes.
    let arrivals: Arc<Mutex<Arrivals>> = Arc::default();
    let stop = tokio_util::sync::CancellationToken::new();
    let consumer = {
        let arrivals = arrivals.clone();
        let stop = stop.clone();
        // The one daemon's API socket (its name depends on how the server is reached).
        let socket = std::fs::read_dir(server.dir().join("run/panectl"))
            .expect("the daemon's runtime directory")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "sock"))
            .expect("the daemon's API socket");
        let client = panectl::api::client::ApiClient::new(socket, String::new(), String::new());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let mut pending = Vec::new();
                let stream = client.stream("/v1/events", |chunk| {
                    let at = now_ns();
                    pending.extend_from_slice(chunk);
                    while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = pending.drain(..=end).collect();
                        let Some(data) = line.strip_prefix(b"data: ") else {
                            continue;
                        };
                        let Ok(event) = serde_json::from_slice::<serde_json::Value>(data) else {
                            continue;
                        };
                        if event["type"] == "output" {
                            let pane = event["pane"].as_str().unwrap_or_default().to_string();
                            let end = event["seq"].as_u64().unwrap_or(0)
                                + event["len"].as_u64().unwrap_or(0);
                            arrivals
                                .lock()
                                .unwrap()
                                .entry(pane)
                                .or_default()
                                .push((end, at));
                        }
                    }
                    true
                });
                tokio::select! {
                    _ = stream => {}
                    () = stop.cancelled() => {}
                }
            });
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let cpu_before = cpu_seconds(daemon.pid());
    server.tmux(&["wait-for", "-S", &channel]);
    let writes = write_times(&probes);
    std::thread::sleep(Duration::from_millis(200));
    let cpu = cpu_seconds(daemon.pid()) - cpu_before;
    stop.cancel();
    let _ = consumer.join();
    let arrivals = arrivals.lock().unwrap();
    let mut all = Vec::new();
    for ((pane, _), writes) in probes.iter().zip(&writes) {
        all.extend(latencies(
            writes,
            arrivals.get(pane).map_or(&[][..], Vec::as_slice),
        ));
    }
    let health = server.health();
    assert_eq!(health["divergences"], 0);
    drop(daemon);
    for (pane, _) in &probes {
        server.tmux(&["kill-pane", "-t", pane]);
    }
    (stats(all), cpu)
}

fn run_polling_latency(server: &TmuxServer, dir: &Path) -> Stats {
    let probes = create_probes(server, "go-poll", dir, PROBES);
    std::thread::sleep(Duration::from_millis(500));
    let seen: Vec<Mutex<Vec<u64>>> = (0..PROBES).map(|_| Mutex::new(Vec::new())).collect();
    server.tmux(&["wait-for", "-S", "go-poll"]);
    let started = Instant::now();
    let total = Duration::from_millis(MARKERS as u64 * MARKER_INTERVAL_MS) + Duration::from_secs(3);
    while started.elapsed() < total {
        let tick = Instant::now();
        for (i, (pane, _)) in probes.iter().enumerate() {
            // One tmux process per pane per poll, as polling orchestrators do.
            let screen = server.tmux(&["capture-pane", "-p", "-t", pane]);
            let at = now_ns();
            let newest = screen
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("mark ")
                        .and_then(|n| n.trim().parse::<usize>().ok())
                })
                .max();
            if let Some(newest) = newest {
                let mut detected = seen[i].lock().unwrap();
                while detected.len() <= newest {
                    detected.push(at);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(500).saturating_sub(tick.elapsed()));
    }
    let writes = write_times(&probes);
    let mut all = Vec::new();
    for (writes, detected) in writes.iter().zip(&seen) {
        let detected = detected.lock().unwrap();
        all.extend(
            writes
                .iter()
                .zip(detected.iter())
                .map(|(&w, &d)| d.saturating_sub(w) as f64 / 1e6),
        );
    }
    for (pane, _) in &probes {
        server.tmux(&["kill-pane", "-t", pane]);
    }
    stats(all)
}

fn run_pipe_pane_latency(server: &TmuxServer, dir: &Path) -> Stats {
    let probes = create_probes(server, "go-pipe", dir, PROBES);
    let mut readers = Vec::new();
    for (i, (pane, _)) in probes.iter().enumerate() {
        let fifo = dir.join(format!("fifo-{i}"));
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .expect("mkfifo");
        server.tmux(&[
            "pipe-pane",
            "-O",
            "-t",
            pane,
            &format!("cat > {}", fifo.display()),
        ]);
        readers.push(std::thread::spawn(move || {
            let mut file = std::fs::File::open(&fifo).expect("open fifo");
            let mut arrivals = Vec::new();
            let mut offset = 0u64;
            let mut buffer = [0u8; 65536];
            while offset < MARKERS as u64 * MARKER_BYTES {
                match file.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        offset += n as u64;
                        arrivals.push((offset, now_ns()));
                    }
                }
            }
            arrivals
        }));
    }
    std::thread::sleep(Duration::from_millis(500));
    server.tmux(&["wait-for", "-S", "go-pipe"]);
    let writes = write_times(&probes);
    let mut all = Vec::new();
    for (writes, reader) in writes.iter().zip(readers) {
        let arrivals = reader.join().unwrap_or_default();
        all.extend(latencies(writes, &arrivals));
    }
    for (pane, _) in &probes {
        server.tmux(&["kill-pane", "-t", pane]);
    }
    stats(all)
}

fn latency() {
    let server = latency_server();
    let dir = tempfile::tempdir().unwrap();
    let daemon = run_daemon_latency(&server, dir.path(), &[]);
    let polling = run_polling_latency(&server, dir.path());
    let pipe = run_pipe_pane_latency(&server, dir.path());
    println!(
        "\n### Latency: byte written in a pane to its event ({IDLE_PANES} idle panes, {PROBES} printing a line every {MARKER_INTERVAL_MS} ms)\n"
    );
    println!("| reader | samples | p50 ms | p99 ms | mean ms | max ms | p50 vs daemon |");
    println!("|---|---|---|---|---|---|---|");
    for (name, s) in [
        ("panectl daemon, /v1/events", &daemon),
        ("capture-pane polling every 500 ms", &polling),
        ("pipe-pane FIFO reader", &pipe),
    ] {
        println!(
            "| {name} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}x |",
            s.samples,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            s.p50 / daemon.p50
        );
    }
}

/// Writes `bytes` of text in pane `%0` and waits until it has all been shown (and, with a
/// daemon, until its mirror has settled); returns the seconds it took.
fn run_flood(server: &TmuxServer, panes: usize, bytes: u64, with_daemon: bool) -> f64 {
    let started = Instant::now();
    for pane in 0..panes {
        server.tmux(&[
            "send-keys",
            "-t",
            &format!("%{pane}"),
            &format!("yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -c {bytes}; echo flood-$((6*7))"),
            "Enter",
        ]);
    }
    for pane in 0..panes {
        let pane = format!("%{pane}");
        server.wait_for("the flood", Duration::from_secs(900), || {
            server.tmux_screen(&pane).contains("flood-42")
        });
        if with_daemon {
            server.wait_for_same_screen(&pane, Duration::from_secs(60));
        }
    }
    started.elapsed().as_secs_f64()
}

/// Floods each of `panes` panes of a fresh server with `bytes` at once and returns (tmux CPU s,
/// daemon CPU s, seconds); `daemon_args` `None` runs no daemon.
fn flood(panes: usize, bytes: u64, daemon_args: Option<&[&str]>) -> (f64, f64, f64) {
    let server = TmuxServer::start(200, 60);
    for _ in 1..panes {
        server.tmux(&["split-window", "-d", "-t", "%0"]);
        server.tmux(&["select-layout", "tiled"]);
    }
    let with_daemon = daemon_args.is_some();
    let daemon = daemon_args.map(|args| server.start_daemon(args));
    if let Some(args) = daemon_args {
        server.wait_for_panes(panes);
        if args.contains(&"pipe") {
            server.wait_for("the pipes", Duration::from_secs(10), || {
                server.health()["pipe_panes"] == panes
            });
        }
    }
    let tmux_pid = server.pid() as u32;
    let daemon_pid = daemon.as_ref().map(support::Daemon::pid);
    let (tmux_before, daemon_before) = (cpu_seconds(tmux_pid), daemon_pid.map_or(0.0, cpu_seconds));
    let elapsed = run_flood(&server, panes, bytes, with_daemon);
    (
        cpu_seconds(tmux_pid) - tmux_before,
        daemon_pid.map_or(0.0, cpu_seconds) - daemon_before,
        elapsed,
    )
}

fn cost() {
    let rows: [(&str, &[&str]); 3] = [
        (
            "daemon, control transport (`--flood-rate 0`, before)",
            &["--flood-rate", "0"],
        ),
        ("daemon, floods moved to pipes (default, after)", &[]),
        (
            "daemon, pipe transport (`--transport pipe`)",
            &["--transport", "pipe"],
        ),
    ];
    for (what, panes, bytes) in [
        ("a 200 MB burst in one pane", 1, 200_000_000),
        ("10 panes x 20 MB at once", 10, 20_000_000),
    ] {
        let (tmux_alone, _, alone_s) = flood(panes, bytes, None);
        println!("\n### Cost of {what}\n");
        println!("| | tmux server CPU s | vs no daemon | daemon CPU s | wall s |");
        println!("|---|---|---|---|---|");
        println!("| no daemon (baseline) | {tmux_alone:.2} | 1.00x | - | {alone_s:.1} |");
        for (name, args) in rows {
            let (tmux_with, daemon_cpu, with_s) = flood(panes, bytes, Some(args));
            println!(
                "| {name} | {tmux_with:.2} | {:.2}x | {daemon_cpu:.2} | {with_s:.1} |",
                tmux_with / tmux_alone
            );
        }
    }
}

fn scale() {
    let server = TmuxServer::start(160, 48);
    for s in 0..40 {
        let name = format!("s{s}");
        if s > 0 {
            server.tmux(&["new-session", "-d", "-s", &name, "-x", "160", "-y", "48"]);
        } else {
            server.tmux(&["rename-session", "-t", "$0", &name]);
        }
        for _ in 0..4 {
            server.tmux(&["split-window", "-t", &name]);
            server.tmux(&["select-layout", "-t", &name, "tiled"]);
        }
    }
    let started = Instant::now();
    let daemon = server.start_daemon(&[]);
    server.wait_for_panes(200);
    let cold_start = started.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let rss = rss_mib(daemon.pid());
    let health_before = server.health();
    let (cpu_before, forks_before) = (cpu_seconds(daemon.pid()), machine_forks());
    let window = Duration::from_secs(60);
    std::thread::sleep(window);
    let idle_cpu = cpu_seconds(daemon.pid()) - cpu_before;
    let machine = machine_forks() - forks_before;
    let health_after = server.health();
    let started_by_daemon = health_after["processes_started"].as_u64().unwrap_or(0)
        - health_before["processes_started"].as_u64().unwrap_or(0);
    println!("\n### 200 panes over 40 sessions\n");
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!(
        "| cold start (daemon start to 200 panes seeded) | {:.2} s | <= 2 s |",
        cold_start.as_secs_f64()
    );
    println!("| daemon RSS after start | {rss:.1} MiB | <= 100 MB |");
    println!(
        "| daemon CPU while idle, 60 s | {:.3} s ({:.2}%) | <= 1% |",
        idle_cpu,
        idle_cpu / window.as_secs_f64() * 100.0
    );
    println!("| processes started by the daemon while idle, 60 s | {started_by_daemon} | 0 |");
    println!("| processes started on the whole machine meanwhile | {machine} | (context) |");
    println!(
        "| processes capture-pane polling every 500 ms would start, 60 s | {} | (baseline) |",
        200 * 120
    );
}

fn status_lag() {
    const TURNS: usize = 20;
    let model = fake_model::FakeModel::start();
    let claude = agent_clis::ClaudeHome::new();
    let server = TmuxServer::start(120, 40);
    server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let events = support::EventReader::start(&server);
    let watch = screen_watch::ScreenWatch::start(&server, "%0", "claude_code");
    claude.respawn_in(&server, "%0", &model.url());
    let work = claude.work().to_string_lossy().into_owned();
    let send = |text: &str| {
        server.tmux(&["send-keys", "-t", "%0", "-l", text]);
        std::thread::sleep(Duration::from_millis(150));
        server.tmux(&["send-keys", "-t", "%0", "Enter"]);
    };
    let status_is = |wanted: &str| {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%0" && p["provider"] == "claude_code" && p["status"] == wanted)
    };
    let long = Duration::from_secs(30);
    server.wait_for("Claude Code to start", long, || status_is("idle"));
    for turn in 0..TURNS {
        if turn % 3 == 2 {
            let finished = server.tmux_screen("%0").matches("tool finished").count();
            send(&format!("tool:touch {work}/file-{turn}"));
            server.wait_for("the permission dialog", long, || {
                status_is("waiting_user_answer")
            });
            // Approve (again, if the CLI asks twice) until the turn is over.
            server.wait_for("the tool turn", long, || {
                if status_is("waiting_user_answer") {
                    std::thread::sleep(Duration::from_millis(200));
                    server.tmux(&["send-keys", "-t", "%0", "Enter"]);
                    std::thread::sleep(Duration::from_millis(300));
                }
                status_is("completed")
                    && server.tmux_screen("%0").matches("tool finished").count() > finished
            });
        } else {
            let answer = format!("Answer number {turn}.");
            send(&format!("slow:800 reply:{answer}"));
            server.wait_for("the answer", long, || {
                status_is("completed") && server.tmux_screen("%0").contains(&format!("● {answer}"))
            });
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut lags = Vec::new();
    for event in events.seen_events() {
        if event["type"] != "status" || event["provider"] != "claude_code" {
            continue;
        }
        let Some(status) = event["status"]
            .as_str()
            .and_then(panectl::status::Status::parse)
        else {
            continue;
        };
        let at = event["time_ms"].as_u64().unwrap_or(0);
        if let Some(shown) = watch.shown_since(screen_watch::class(status), at) {
            lags.push(at.saturating_sub(shown) as f64);
        }
    }
    let s = stats(lags);
    println!(
        "\n### Status lag: real Claude Code turns ({TURNS} turns, {} status changes)\n",
        s.samples
    );
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!("| p50 | {:.0} ms | <= 40 ms |", s.p50);
    println!("| p99 | {:.0} ms | <= 150 ms |", s.p99);
    println!("| mean | {:.1} ms | |", s.mean);
    println!("| max | {:.0} ms | |", s.max);
}

/// Prints latency figures as a table, each row against the first (the baseline).
fn latency_table(what: &str, rows: &[(&str, &Stats)]) {
    let Some((baseline_name, baseline)) = rows.first() else {
        return;
    };
    println!("| {what} | samples | p50 ms | p99 ms | mean ms | max ms | p50 vs {baseline_name} |");
    println!("|---|---|---|---|---|---|---|");
    for (name, s) in rows {
        println!(
            "| {name} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2}x |",
            s.samples,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            s.p50 / baseline.p50
        );
    }
}

/// The pipe transport against the control transport, in one run: latency as in `latency`, and
/// the cost of a 200 MB burst as in `cost`.
fn transport() {
    let server = latency_server();
    let dir = tempfile::tempdir().unwrap();
    let control = run_daemon_latency(&server, dir.path(), &[]);
    let pipe = run_daemon_latency(&server, dir.path(), &["--transport", "pipe"]);
    drop(server);
    let (tmux_alone, _, alone_s) = flood(1, 200_000_000, None);
    let (tmux_control, daemon_control, control_s) =
        flood(1, 200_000_000, Some(&["--flood-rate", "0"]));
    let (tmux_pipe, daemon_pipe, pipe_s) = flood(1, 200_000_000, Some(&["--transport", "pipe"]));
    println!(
        "\n### Transports: control (`%output`) and pipe (`pipe-pane` FIFO), one run\n\nLatency: byte written in a pane to its event ({IDLE_PANES} idle panes, {PROBES} printing a line every {MARKER_INTERVAL_MS} ms).\n"
    );
    latency_table("transport", &[("control", &control), ("pipe", &pipe)]);
    println!("\nCost of a 200 MB burst in one pane (CPU seconds; per 100 MB = half):\n");
    println!(
        "| | tmux server CPU s | vs no daemon | daemon CPU s | daemon CPU per 100 MB | wall s |"
    );
    println!("|---|---|---|---|---|---|");
    println!("| no daemon | {tmux_alone:.2} | 1.00x | - | - | {alone_s:.1} |");
    for (name, tmux, daemon, wall) in [
        ("control", tmux_control, daemon_control, control_s),
        ("pipe", tmux_pipe, daemon_pipe, pipe_s),
    ] {
        println!(
            "| {name} | {tmux:.2} | {:.2}x | {daemon:.2} | {:.2} | {wall:.1} |",
            tmux / tmux_alone,
            daemon / 2.0
        );
    }
}

/// `pid` and its descendants, from `/proc`.
fn family(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut at = 0;
    while at < out.len() {
        let parent = out[at] as i32;
        out.extend(sshd::children_of(parent).into_iter().map(|c| c as u32));
        at += 1;
    }
    out
}

/// CPU seconds of `pids`, each read now.
fn cpu_of(pids: &[u32]) -> BTreeMap<u32, f64> {
    pids.iter().map(|&pid| (pid, cpu_seconds(pid))).collect()
}

/// What a 200 MB burst cost: tmux's, the daemon's and the ssh transport's CPU seconds (both
/// ends: the daemon's ssh processes and sshd's sessions with what they run), and the wall time.
fn remote_flood(bytes: u64, over: Option<&sshd::Sshd>) -> (f64, f64, f64, f64, usize) {
    let mut server = TmuxServer::start(80, 24);
    if let Some(sshd) = over {
        server.reach_over_ssh(sshd::ALIAS, &sshd.ssh_command());
    }
    let daemon = server.start_daemon(&["--flood-rate", "0"]);
    server.wait_for_panes(1);
    let tmux_pid = server.pid() as u32;
    let daemon_pid = daemon.pid();
    let transport = || -> Vec<u32> {
        let mut pids: Vec<u32> = family(daemon_pid).into_iter().skip(1).collect();
        if let Some(sshd) = over {
            for connection in sshd.connection_pids() {
                pids.extend(family(connection as u32));
            }
        }
        pids
    };
    let pids = transport();
    let before = cpu_of(&pids);
    let (tmux_before, daemon_before) = (cpu_seconds(tmux_pid), cpu_seconds(daemon_pid));
    let elapsed = run_flood(&server, 1, bytes, true);
    let after = cpu_of(&pids);
    let transport_cpu: f64 = pids
        .iter()
        .map(|pid| after[pid] - before.get(pid).copied().unwrap_or(0.0))
        .sum();
    let connections = over.map_or(0, sshd::Sshd::established);
    (
        cpu_seconds(tmux_pid) - tmux_before,
        cpu_seconds(daemon_pid) - daemon_before,
        transport_cpu,
        elapsed,
        connections,
    )
}

/// Processes the daemon starts over `seconds` of idle panes (its `processes_started`), once it
/// has settled, and the ssh connections to the host at the end (while the daemon still runs).
fn idle_processes(over: Option<&sshd::Sshd>, seconds: u64) -> (u64, usize) {
    let mut server = latency_server();
    if let Some(sshd) = over {
        server.reach_over_ssh(sshd::ALIAS, &sshd.ssh_command());
    }
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(IDLE_PANES + 1);
    std::thread::sleep(Duration::from_secs(3));
    let before = server.health()["processes_started"].as_u64().unwrap_or(0);
    std::thread::sleep(Duration::from_secs(seconds));
    let started = server.health()["processes_started"].as_u64().unwrap_or(0) - before;
    (started, over.map_or(0, sshd::Sshd::established))
}

fn remote() {
    let sshd = sshd::Sshd::start();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = latency_server();
    let local = run_daemon_latency(&server, dir.path(), &[]);
    drop(server);
    let mut server = latency_server();
    server.reach_over_ssh(sshd::ALIAS, &sshd.ssh_command());
    let remote_dir = tempfile::tempdir().expect("a temporary directory");
    let remote = run_daemon_latency(&server, remote_dir.path(), &[]);
    drop(server);
    let (tmux_local, daemon_local, _, local_s, _) = remote_flood(200_000_000, None);
    let (tmux_remote, daemon_remote, ssh_remote, remote_s, flood_connections) =
        remote_flood(200_000_000, Some(&sshd));
    let (idle_local, _) = idle_processes(None, 30);
    let (idle_remote, connections) = idle_processes(Some(&sshd), 30);
    // Every daemon has stopped by now: what is left of their connections, after up to 5 s.
    let deadline = Instant::now() + Duration::from_secs(5);
    while sshd.established() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = sshd.established();
    println!(
        "\n### A server over ssh against the same server locally, one run\n\nLatency: byte written in a pane to its event ({IDLE_PANES} idle panes, {PROBES} printing a line every {MARKER_INTERVAL_MS} ms; the sshd is on 127.0.0.1).\n"
    );
    latency_table("reached", &[("locally", &local), ("over ssh", &remote)]);
    println!("\nCost of a 200 MB burst in one pane (CPU seconds; per 100 MB = half):\n");
    println!(
        "| reached | tmux server CPU s | daemon CPU s | daemon per 100 MB | ssh transport CPU s (both ends) | transport per 100 MB | wall s |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| locally | {tmux_local:.2} | {daemon_local:.2} | {:.2} | - | - | {local_s:.1} |",
        daemon_local / 2.0
    );
    println!(
        "| over ssh | {tmux_remote:.2} | {daemon_remote:.2} | {:.2} ({:.2}x) | {ssh_remote:.2} | {:.2} | {remote_s:.1} |",
        daemon_remote / 2.0,
        daemon_remote / daemon_local,
        ssh_remote / 2.0
    );
    println!(
        "\nssh connections to the host: {connections} with {} panes in {} sessions, {flood_connections} during the burst, {left} once the daemons had stopped.",
        IDLE_PANES + PROBES + 1,
        IDLE_PANES / 10 + 1
    );
    println!(
        "\nProcesses the daemon started over 30 s of idle panes: locally {idle_local}, over ssh {idle_remote}."
    );
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| f == name);
    println!("# panectl daemon benchmarks");
    println!(
        "\nmachine: {} cores; tmux {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        {
            let output = std::process::Command::new("tmux")
                .arg("-V")
                .output()
                .unwrap();
            String::from_utf8_lossy(&output.stdout).trim().to_string()
        }
    );
    if wanted("latency") {
        latency();
    }
    if wanted("cost") {
        cost();
    }
    if wanted("scale") {
        scale();
    }
    if wanted("wide") {
        wide::wide();
    }
    if wanted("events-wide") {
        wide::events_wide();
    }
    if wanted("flood-lag") {
        flood_lag::flood_lag();
    }
    if wanted("status-lag") {
        status_lag();
    }
    if wanted("transport") {
        transport();
    }
    if wanted("remote") {
        remote();
    }
}
