//! `cargo bench --bench daemon -- wide`: 100 sessions x 10 panes (issue 39, item 3). Cold
//! start (daemon start to every pane seeded), idle CPU of the daemon and the tmux server over
//! 60 s, processes started meanwhile, and memory counted whole: the PSS of the daemon and of
//! every process it runs (a control client per session, relays), and the tmux server's growth
//! from before the daemon started.
//!
//! `-- events-wide`: the event stream's latency (a byte written in a pane to its `output`
//! event) and the daemon's CPU per MB printed, with 70 panes of which 10 print and with 1000
//! panes of which 50 print, in one run (issue 39, item 4).

use std::time::{Duration, Instant};

use super::support::TmuxServer;
use super::{
    MARKER_BYTES, MARKER_INTERVAL_MS, MARKERS, cpu_seconds, latency_server_of, machine_forks,
    run_daemon_latency_of,
};

const SESSIONS: usize = 100;
const PANES_PER_SESSION: usize = 10;

/// The proportional set size of `pid`, in KiB (`/proc/PID/smaps_rollup`), 0 if it is gone.
fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Every process under `root` (children, theirs, ...), from `/proc/*/stat`.
fn descendants(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == parent && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// The process's command name (`/proc/PID/comm`).
fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

pub fn wide() {
    let server = TmuxServer::start(200, 60);
    for s in 0..SESSIONS {
        let name = format!("w{s}");
        if s > 0 {
            server.tmux(&["new-session", "-d", "-s", &name, "-x", "200", "-y", "60"]);
        } else {
            server.tmux(&["rename-session", "-t", "$0", &name]);
        }
        for _ in 1..PANES_PER_SESSION {
            server.tmux(&["split-window", "-t", &name]);
            server.tmux(&["select-layout", "-t", &name, "tiled"]);
        }
    }
    let panes = SESSIONS * PANES_PER_SESSION;
    let tmux_pid = server.pid() as u32;
    std::thread::sleep(Duration::from_secs(2));
    let tmux_before = pss_kib(tmux_pid);
    // The baseline: the tmux server's own idle CPU with no daemon, over the same window.
    let window = Duration::from_secs(60);
    let tmux_alone = cpu_seconds(tmux_pid);
    std::thread::sleep(window);
    let tmux_alone = cpu_seconds(tmux_pid) - tmux_alone;
    let started = Instant::now();
    let daemon = server.spawn_daemon_with_env(&[], &[]);
    // Every pane mirrored and seeded (`live`); longer than the test harness waits.
    let mut seeded_at = Vec::new();
    loop {
        // Before the API answers, nothing is listed.
        let listed: Vec<serde_json::Value> = server
            .panectl()
            .args(["ls", "--json"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| serde_json::from_slice(&o.stdout).ok())
            .unwrap_or_default();
        let live = listed.iter().filter(|p| p["sync"] == "live").count();
        seeded_at.push((started.elapsed(), live));
        if live == panes {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "{live} of {panes} panes seeded after 600 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let cold_start = started.elapsed();
    let half = seeded_at
        .iter()
        .find(|(_, live)| *live >= panes / 2)
        .map_or(cold_start, |(at, _)| *at);
    std::thread::sleep(Duration::from_secs(5));
    let daemon_pss = pss_kib(daemon.pid());
    let children = descendants(daemon.pid());
    let children_pss: u64 = children.iter().map(|&pid| pss_kib(pid)).sum();
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for &pid in &children {
        *kinds.entry(comm(pid)).or_default() += 1;
    }
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    let tmux_growth = pss_kib(tmux_pid).saturating_sub(tmux_before);
    let health_before = server.health();
    let (daemon_cpu, tmux_cpu, forks) = (
        cpu_seconds(daemon.pid()),
        cpu_seconds(tmux_pid),
        machine_forks(),
    );
    std::thread::sleep(window);
    let daemon_idle = cpu_seconds(daemon.pid()) - daemon_cpu;
    let tmux_idle = cpu_seconds(tmux_pid) - tmux_cpu;
    let clients_idle: f64 = children.iter().map(|&pid| cpu_seconds(pid)).sum::<f64>();
    let machine = machine_forks() - forks;
    let started_by_daemon = server.health()["processes_started"].as_u64().unwrap_or(0)
        - health_before["processes_started"].as_u64().unwrap_or(0);
    let mib = |kib: u64| kib as f64 / 1024.0;
    let total = daemon_pss + children_pss + tmux_growth;
    println!("\n### {SESSIONS} sessions x {PANES_PER_SESSION} panes ({panes} panes)\n");
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!(
        "| cold start (daemon start to {panes} panes seeded) | {:.2} s | <= 2 s |",
        cold_start.as_secs_f64()
    );
    println!("| half the panes seeded | {:.2} s | |", half.as_secs_f64());
    println!(
        "| idle CPU over 60 s: daemon + tmux server | {:.2} s + {:.2} s = {:.2}% of a core | <= 1% |",
        daemon_idle,
        tmux_idle,
        (daemon_idle + tmux_idle) / window.as_secs_f64() * 100.0
    );
    println!(
        "| idle CPU over 60 s: the tmux server alone, before the daemon (baseline) | {:.2} s = {:.2}% of a core | |",
        tmux_alone,
        tmux_alone / window.as_secs_f64() * 100.0
    );
    println!(
        "| CPU of the daemon's own processes (control clients, relays) since they started | {clients_idle:.2} s | (context) |"
    );
    println!("| processes started by the daemon while idle, 60 s | {started_by_daemon} | 0 |");
    println!("| processes started on the whole machine meanwhile | {machine} | (context) |");
    println!("| PSS: daemon | {:.1} MiB | |", mib(daemon_pss));
    println!(
        "| PSS: its {} processes ({}) | {:.1} MiB | |",
        children.len(),
        kinds.join(", "),
        mib(children_pss)
    );
    println!(
        "| PSS: the tmux server's growth | {:.1} MiB | |",
        mib(tmux_growth)
    );
    println!(
        "| **memory in all** | **{:.1} MiB** | <= 150 MB |",
        mib(total)
    );
}

pub fn events_wide() {
    let dir = tempfile::tempdir().unwrap();
    println!(
        "\n### Events at scale: a byte written in a pane to its event, a line every {MARKER_INTERVAL_MS} ms per printing pane\n"
    );
    println!(
        "| panes | printing | samples | p50 ms | p99 ms | max ms | daemon CPU s per MB printed |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (idle, printing) in [(60, 10), (950, 50)] {
        let server = latency_server_of(idle);
        let (stats, cpu) = run_daemon_latency_of(&server, dir.path(), &[], (idle, printing));
        let megabytes = (printing * MARKERS) as f64 * MARKER_BYTES as f64 / 1e6;
        println!(
            "| {} | {printing} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            idle + printing + 1,
            stats.samples,
            stats.p50,
            stats.p99,
            stats.max,
            cpu / megabytes
        );
    }
}
