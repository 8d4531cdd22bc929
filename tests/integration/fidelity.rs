//! Differential tests of panectl's pane screen against tmux.
//!
//! Random byte streams from a grammar of terminal sequences ([`grammar`]) are written into real
//! tmux panes ([`oracle`]) and into a [`panectl::screen::PaneScreen`] of the same size; every
//! cell (text, colours, attributes), the cursor and the alternate screen flag are compared
//! ([`compare`]). A case that differs is shrunk to a minimal one ([`shrink`]). The model runs
//! with the dialect of the tmux first on `PATH` (`oracle::dialect`), and the capture parser cuts
//! cells by that tmux's rules: `scripts/tmux-versions.sh --tests fidelity:: VERSION` runs these
//! tests against another tmux.
//!
//! * `tmux_and_the_mirror_agree_on_random_streams`: the random cases;
//! * `fixtures_replay_against_tmux`: the shrunk cases kept in `fixtures/screen-fidelity/`;
//! * `character_widths_agree_with_tmux`: every non-ASCII character and cluster of the grammar
//!   alone at column 0, tmux's cursor against the mirror's (widths, independently of the
//!   capture parser), and each character after an `a` against the `wcwidth` the parser cuts
//!   cells with.
//!
//! * `PANECTL_FIDELITY_SEEDS` (default 300) and `PANECTL_FIDELITY_START` (default 0): the seeds
//!   run, each at 40x12 and at 80x24;
//! * `PANECTL_FIDELITY_SHRINK` (default 12): how many differing cases are shrunk (the first of
//!   each class of difference; all of them when there are no more than that);
//! * `PANECTL_FIDELITY_SAVE=1`: write every shrunk case to
//!   `fixtures/screen-fidelity/<seed>-<width>x<height>.bin`, which
//!   `fixtures_replay_against_tmux` replays from then on.
//!
//! `cargo bench --bench fidelity` runs the same for a while and measures (see the bench).

mod compare;
mod grammar;
mod oracle;
mod shrink;

use std::collections::{BTreeMap, BTreeSet};

use oracle::{Oracle, Size};
use shrink::Mismatch;

/// The pane sizes every case runs at.
const SIZES: [Size; 2] = [(40, 12), (80, 24)];
/// Panes of each size, so that cases run side by side.
const SLOTS: usize = 3;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {value:?}")),
        Err(_) => default,
    }
}

/// Shrinks up to `budget` mismatches: all of them if there are no more than that, else the first
/// of each class of difference.
fn shrink_some(oracle: &mut Oracle, mismatches: &mut [Mismatch], budget: usize) {
    let all = mismatches.len() <= budget;
    let mut classes = BTreeSet::new();
    let mut left = budget;
    for mismatch in mismatches.iter_mut() {
        if left == 0 {
            break;
        }
        if all || classes.insert(mismatch.difference.class.clone()) {
            mismatch.shrink(oracle, SLOTS);
            left -= 1;
        }
    }
}

fn class_histogram(mismatches: &[Mismatch]) -> String {
    let mut classes: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for m in mismatches {
        classes
            .entry(m.difference.class.as_str())
            .or_default()
            .push(format!("{}@{}x{}", m.seed, m.size.0, m.size.1));
    }
    let mut lines: Vec<(usize, String)> = classes
        .into_iter()
        .map(|(class, cases)| {
            let shown: Vec<&str> = cases.iter().take(8).map(String::as_str).collect();
            (
                cases.len(),
                format!(
                    "{:>5}  {class}  (e.g. {}{})",
                    cases.len(),
                    shown.join(" "),
                    if cases.len() > 8 { " ..." } else { "" }
                ),
            )
        })
        .collect();
    lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    lines.into_iter().map(|(_, l)| l + "\n").collect()
}

#[test]
fn tmux_and_the_mirror_agree_on_random_streams() {
    let count = env_u64("PANECTL_FIDELITY_SEEDS", 300);
    let start = env_u64("PANECTL_FIDELITY_START", 0);
    let budget = env_u64("PANECTL_FIDELITY_SHRINK", 12) as usize;
    let mut oracle = Oracle::start(&SIZES, SLOTS);
    let seeds: Vec<u64> = (start..start + count).collect();
    let began = std::time::Instant::now();
    let mut mismatches = Vec::new();
    for chunk in seeds.chunks(16) {
        mismatches.extend(shrink::check_seeds(&mut oracle, chunk, &SIZES));
    }
    let ran = began.elapsed();
    let (scrolled, alternate) = (oracle.scrolled, oracle.ended_alternate);
    shrink_some(&mut oracle, &mut mismatches, budget);
    let cases = seeds.len() * SIZES.len();
    eprintln!(
        "{cases} cases in {:.1} s ({:.1}/s; {} scrolled, {} ended on the alternate screen), \
         {} differ; shrinking took {:.1} s",
        ran.as_secs_f64(),
        cases as f64 / ran.as_secs_f64(),
        scrolled,
        alternate,
        mismatches.len(),
        (began.elapsed() - ran).as_secs_f64()
    );
    if mismatches.is_empty() {
        return;
    }
    eprintln!(
        "classes of the first difference:\n{}",
        class_histogram(&mismatches)
    );
    for mismatch in mismatches.iter().filter(|m| m.shrunk.is_some()) {
        eprintln!("{}", mismatch.report());
    }
    for mismatch in mismatches.iter().filter(|m| m.shrunk.is_none()) {
        eprintln!("{}", mismatch.report());
    }
    panic!(
        "{} of {cases} cases differ between tmux and the mirror (seeds {start}..{}); \
         the reports above show each one's first difference and the shrunk cases",
        mismatches.len(),
        start + count
    );
}

#[test]
fn fixtures_replay_against_tmux() {
    let dir = shrink::fixture_dir();
    let mut fixtures: Vec<(String, Size, Vec<u8>)> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let size = shrink::fixture_size(&name)?;
                let bytes = std::fs::read(entry.path()).expect("read a fixture");
                Some((name, size, bytes))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    fixtures.sort();
    if fixtures.is_empty() {
        return;
    }
    let mut oracle = Oracle::start(&SIZES, SLOTS);
    let jobs: Vec<(Size, Vec<u8>)> = fixtures
        .iter()
        .map(|(_, size, bytes)| {
            assert!(SIZES.contains(size), "no pane of size {size:?}");
            (*size, bytes.clone())
        })
        .collect();
    let outcomes = shrink::check_batch(&mut oracle, &jobs);
    let mut failures = Vec::new();
    for ((name, _, bytes), outcome) in fixtures.iter().zip(&outcomes) {
        if let Some(difference) = &outcome.difference {
            failures.push(format!(
                "{name}: \"{}\"\n  {difference}\n{}",
                grammar::escape(bytes),
                compare::describe_screens(&outcome.tmux, &outcome.mirror)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ between tmux and the mirror:\n{}",
        failures.len(),
        fixtures.len(),
        failures.join("\n")
    );
}

#[test]
fn character_widths_agree_with_tmux() {
    let size = SIZES[0];
    let mut oracle = Oracle::start(&[size], SLOTS);
    let clusters = grammar::alphabet();
    let mut chars: Vec<char> = clusters
        .iter()
        .flat_map(|c| c.chars())
        .filter(|c| !c.is_ascii())
        .collect();
    chars.sort();
    chars.dedup();

    // Each cluster alone at column 0: tmux's cursor against the mirror's.
    let mut jobs: Vec<(Size, Vec<u8>)> = clusters
        .iter()
        .map(|c| (size, c.as_bytes().to_vec()))
        .collect();
    // Each character after an `a`: how far tmux moves, against the widths the capture parser
    // cuts cells with (the C library's wcwidth, and from tmux 3.4 its own tables and joins).
    jobs.extend(chars.iter().map(|c| (size, format!("a{c}").into_bytes())));
    let refs: Vec<(Size, &[u8])> = jobs.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    let captures = oracle.run_batch(&refs);
    let (by_cluster, by_char) = captures.split_at(clusters.len());

    let mut parser = Vec::new();
    for (c, capture) in chars.iter().zip(by_char) {
        let tmux = i32::from(capture.cursor.0) - 1;
        let expected = compare::advance_after_ascii(*c, oracle::dialect());
        if tmux != expected {
            parser.push(format!(
                "U+{:04X}: tmux advances {tmux}, the parser {expected} (wcwidth {})",
                *c as u32,
                compare::wcwidth(*c)
            ));
        }
    }
    assert!(
        parser.is_empty(),
        "the capture parser's widths are not tmux's:\n{}",
        parser.join("\n")
    );

    let mut mirror = Vec::new();
    for (cluster, capture) in clusters.iter().zip(by_cluster) {
        let mut screen = oracle::model(size.0, size.1);
        screen.feed(cluster.as_bytes());
        if screen.cursor() != capture.cursor {
            mirror.push(format!(
                "{:<28} tmux cursor {:?}, mirror {:?}",
                format!("\"{}\"", grammar::escape(cluster.as_bytes())),
                capture.cursor,
                screen.cursor()
            ));
        }
    }
    assert!(
        mirror.is_empty(),
        "{} of {} characters have another width in the mirror than in tmux \
         (each written alone at column 0 of a blank pane):\n{}",
        mirror.len(),
        clusters.len(),
        mirror.join("\n")
    );
}
