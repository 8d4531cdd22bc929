//! A long differential run of panectl's pane screen against tmux, and the screen's own speed.
//!
//! `cargo bench --bench fidelity -- [--seconds N] [--seeds N] [--start S] [--shrink K]
//! [--per-class N] [--slots N] [--mirror-only]` (or `PANECTL_FIDELITY_SECONDS`, `_SEEDS`, `_START`, `_SHRINK`):
//! * the mirror alone: every case of the run (at least 2000 seeds' worth) fed to a fresh
//!   `PaneScreen` at 40x12 and 80x24, in MB/s, so that two screen models can be compared;
//! * the oracle: cases from seed `S` on, each at both sizes, for `N` seconds (default 60) or
//!   `N` seeds: cases per second, how many differ, the classes of their first differences with
//!   the seeds of each, and the first `K` (default 6) classes shrunk to minimal cases (the first
//!   `--per-class` cases of each, default 1) with the kinds of tokens they kept.
//!
//! It prints Markdown; nothing is asserted.

#[path = "../tests/integration/fidelity/compare.rs"]
#[allow(dead_code, unused_imports)] // the unit tests inside are not run here
mod compare;
#[path = "../tests/integration/fidelity/grammar.rs"]
#[allow(dead_code, unused_imports)] // the unit tests inside are not run here
mod grammar;
#[path = "../tests/integration/fidelity/oracle.rs"]
#[allow(dead_code, unused_imports)] // the unit tests inside are not run here
mod oracle;
#[path = "../tests/integration/fidelity/shrink.rs"]
#[allow(dead_code, unused_imports)] // the unit tests inside are not run here
mod shrink;

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::{Duration, Instant};

use oracle::{Oracle, Size};

const SIZES: [Size; 2] = [(40, 12), (80, 24)];

struct Options {
    seconds: u64,
    seeds: Option<u64>,
    start: u64,
    shrink: usize,
    per_class: usize,
    slots: usize,
    mirror_only: bool,
}

fn options() -> Options {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let mut options = Options {
        seconds: env("PANECTL_FIDELITY_SECONDS").unwrap_or(60),
        seeds: env("PANECTL_FIDELITY_SEEDS"),
        start: env("PANECTL_FIDELITY_START").unwrap_or(0),
        shrink: env("PANECTL_FIDELITY_SHRINK").unwrap_or(6) as usize,
        per_class: 1,
        slots: 3,
        mirror_only: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = || -> u64 {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{} needs a number", args[i]))
        };
        match args[i].as_str() {
            "--seconds" => options.seconds = value(),
            "--seeds" => options.seeds = Some(value()),
            "--start" => options.start = value(),
            "--shrink" => options.shrink = value() as usize,
            "--per-class" => options.per_class = value() as usize,
            "--slots" => options.slots = value() as usize,
            "--mirror-only" => {
                options.mirror_only = true;
                i += 1;
                continue;
            }
            // `cargo bench` passes `--bench`; filters and other flags mean nothing here.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    options
}

/// Feeds every case of `seeds` to fresh screens of both sizes; prints MB/s.
fn time_mirror(seeds: std::ops::Range<u64>) {
    let all: Vec<Vec<u8>> = seeds
        .clone()
        .map(|s| grammar::bytes(&grammar::case(s)))
        .collect();
    // Cases the screen panics on are left out of the timing (and counted).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (cases, panics): (Vec<Vec<u8>>, Vec<Vec<u8>>) = all.into_iter().partition(|case| {
        SIZES.iter().all(|&(width, height)| {
            std::panic::catch_unwind(|| {
                let mut screen = oracle::model(width, height);
                screen.feed(case);
                screen.styled_rows().len()
            })
            .is_ok()
        })
    });
    std::panic::set_hook(hook);
    let bytes: usize = cases.iter().map(Vec::len).sum();
    println!("## The mirror alone\n");
    println!(
        "{} cases (seeds {}..{}, less {} the screen panics on), {:.2} MB, fed whole to a new \
         `PaneScreen` each; the best of three rounds.\n",
        cases.len(),
        seeds.start,
        seeds.end,
        panics.len(),
        bytes as f64 / 1e6
    );
    println!("| size | feed | MB/s | feed + styled_rows | MB/s |");
    println!("|---|---|---|---|---|");
    for (width, height) in SIZES {
        let mut best_feed = Duration::MAX;
        let mut best_rows = Duration::MAX;
        for _ in 0..3 {
            let began = Instant::now();
            for case in &cases {
                let mut screen = oracle::model(width, height);
                screen.feed(case);
                black_box(screen.cursor());
            }
            best_feed = best_feed.min(began.elapsed());
            let began = Instant::now();
            for case in &cases {
                let mut screen = oracle::model(width, height);
                screen.feed(case);
                black_box(screen.styled_rows());
            }
            best_rows = best_rows.min(began.elapsed());
        }
        let mbps = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
        println!(
            "| {width}x{height} | {:.1} ms | {:.1} | {:.1} ms | {:.1} |",
            best_feed.as_secs_f64() * 1e3,
            mbps(best_feed),
            best_rows.as_secs_f64() * 1e3,
            mbps(best_rows)
        );
    }
    println!();
}

fn main() {
    let options = options();
    let mirror_seeds = options.seeds.unwrap_or(2000).max(2000);
    time_mirror(options.start..options.start + mirror_seeds);
    if options.mirror_only {
        return;
    }

    let mut oracle = Oracle::start(&SIZES, options.slots);
    let deadline = Instant::now() + Duration::from_secs(options.seconds);
    let last = options.seeds.map_or(u64::MAX, |n| options.start + n);
    let began = Instant::now();
    let mut next = options.start;
    let mut mismatches = Vec::new();
    let mut cases = 0u64;
    while next < last && (options.seeds.is_some() || Instant::now() < deadline) {
        let end = (next + 8).min(last);
        let seeds: Vec<u64> = (next..end).collect();
        mismatches.extend(shrink::check_seeds(&mut oracle, &seeds, &SIZES));
        cases += (seeds.len() * SIZES.len()) as u64;
        next = end;
    }
    let elapsed = began.elapsed();
    let (scrolled, alternate) = (oracle.scrolled, oracle.ended_alternate);
    println!("## Against tmux\n");
    println!(
        "{} ({}), {} panes of each size side by side.\n",
        String::from_utf8_lossy(
            &std::process::Command::new("tmux")
                .arg("-V")
                .output()
                .map(|o| o.stdout)
                .unwrap_or_default()
        )
        .trim(),
        SIZES
            .iter()
            .map(|(w, h)| format!("{w}x{h}"))
            .collect::<Vec<_>>()
            .join(", "),
        options.slots
    );
    let percent = |n: u64| 100.0 * n as f64 / cases.max(1) as f64;
    println!(
        "| cases | seeds | time | cases/s | differ | scrolled | ended on the alternate screen |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| {cases} | {}..{next} | {:.1} s | {:.1} | {} ({:.1}%) | {:.0}% | {:.0}% |\n",
        options.start,
        elapsed.as_secs_f64(),
        cases as f64 / elapsed.as_secs_f64(),
        mismatches.len(),
        percent(mismatches.len() as u64),
        percent(scrolled),
        percent(alternate)
    );

    let mut classes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in &mismatches {
        classes
            .entry(m.difference.class.clone())
            .or_default()
            .push(format!("{}@{}x{}", m.seed, m.size.0, m.size.1));
    }
    let mut classes: Vec<(String, Vec<String>)> = classes.into_iter().collect();
    classes.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    println!("### Classes of the first difference\n");
    println!("| cases | class | seeds |");
    println!("|---|---|---|");
    for (class, seeds) in &classes {
        let shown: Vec<&str> = seeds.iter().take(10).map(String::as_str).collect();
        println!(
            "| {} | `{class}` | {}{} |",
            seeds.len(),
            shown.join(" "),
            if seeds.len() > 10 { " ..." } else { "" }
        );
    }
    println!();

    if options.shrink == 0 || mismatches.is_empty() {
        return;
    }
    println!("### Shrunk examples (the first case of each class)\n");
    let shrink_began = Instant::now();
    let runs_before = oracle.cases;
    let mut done: BTreeMap<String, usize> = BTreeMap::new();
    let mut shrunk = 0;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for mismatch in mismatches.iter_mut() {
        let class = mismatch.difference.class.clone();
        let seen = done.get(&class).copied().unwrap_or(0);
        if seen >= options.per_class || (seen == 0 && done.len() >= options.shrink) {
            continue;
        }
        done.insert(class, seen + 1);
        shrunk += 1;
        mismatch.shrink(&mut oracle, options.slots);
        if let Some((tokens, _, _)) = &mismatch.shrunk {
            let set: BTreeSet<String> = tokens.iter().map(|t| t.kind.to_string()).collect();
            for kind in set {
                *kinds.entry(kind).or_default() += 1;
            }
        }
        println!("```\n{}```\n", mismatch.report());
    }
    println!(
        "Shrinking {shrunk} cases ran {} cases in {:.1} s.\n",
        oracle.cases - runs_before,
        shrink_began.elapsed().as_secs_f64()
    );
    println!("Kinds of tokens kept by the shrunk cases: {kinds:?}");
}
