//! Decoder throughput on a large `%output`-heavy stream built from the recorded transcripts.
//!
//! Three decoders read the same bytes, in the 64 KiB chunks a pipe read returns:
//! * `panectl_decoder`: panectl's [`Decoder`], decoding every line and unescaping every payload,
//!   lending output to a [`Sink`] as the daemon's connection takes it;
//! * `panectl_decoder_owned`: the same, with every event owned (each `%output` in a `Vec` of its
//!   own), as [`Decoder::feed`] gives them;
//! * `termwiz_tmux_cc`: wezterm's termwiz `tmux_cc::Parser` (the best-known Rust parser);
//! * `memchr_line_split`: splitting into lines with memchr and nothing else, the floor.
//!
//! Run with `cargo bench --bench decoder`; figures go into BENCHMARKS.md.

use std::hint::black_box;
use std::path::Path;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;
use panectl::control::{Decoder, Event, Notification, Output, Sink};

const TARGET_BYTES: usize = 64 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;

/// Every recorded transcript, concatenated and repeated to at least 64 MiB.
static INPUT: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts");
    let mut recordings = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/transcripts")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for entry in entries {
        recordings.extend(std::fs::read(entry.join("control.bin")).expect("control.bin"));
    }
    let mut input = Vec::with_capacity(TARGET_BYTES + recordings.len());
    while input.len() < TARGET_BYTES {
        input.extend_from_slice(&recordings);
    }
    input
});

fn main() {
    let input = &*INPUT;
    let output_lines = input
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"%output ") || l.starts_with(b"%extended-output "))
        .count();
    let lines = memchr::memchr_iter(b'\n', input).count();
    eprintln!(
        "input: {:.1} MiB, {lines} lines, {output_lines} of them %output/%extended-output",
        input.len() as f64 / (1024.0 * 1024.0)
    );
    divan::main();
}

/// Counts what it is lent, and keeps the optimizer from dropping it.
#[derive(Default)]
struct CountingSink {
    output_bytes: usize,
    events: usize,
}

impl Sink for CountingSink {
    fn output(&mut self, output: Output<'_>) {
        self.output_bytes += black_box(output.data).len();
    }

    fn event(&mut self, event: Event) {
        self.events += 1;
        black_box(event);
    }
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn panectl_decoder(bencher: Bencher) {
    bencher.counter(BytesCount::new(INPUT.len())).bench(|| {
        let mut decoder = Decoder::new();
        let mut sink = CountingSink::default();
        for chunk in INPUT.chunks(CHUNK) {
            decoder.feed_to(chunk, &mut sink);
        }
        (sink.output_bytes, sink.events)
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn panectl_decoder_owned(bencher: Bencher) {
    bencher.counter(BytesCount::new(INPUT.len())).bench(|| {
        let mut decoder = Decoder::new();
        let mut output_bytes = 0usize;
        for chunk in INPUT.chunks(CHUNK) {
            decoder.feed(chunk, &mut |event| {
                if let Event::Notification(Notification::Output { data, .. }) = &event {
                    output_bytes += data.len();
                }
                black_box(event);
            });
        }
        output_bytes
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn termwiz_tmux_cc(bencher: Bencher) {
    bencher.counter(BytesCount::new(INPUT.len())).bench(|| {
        let mut parser = termwiz::tmux_cc::Parser::new();
        let mut output_bytes = 0usize;
        for chunk in INPUT.chunks(CHUNK) {
            // Byte by byte, as `advance_bytes` does, but without stopping at the first line it
            // rejects, so it reads the whole input like the others.
            for &byte in chunk {
                if let Ok(Some(event)) = parser.advance_byte(byte) {
                    if let termwiz::tmux_cc::Event::Output { text, .. } = &event {
                        output_bytes += text.len();
                    }
                    black_box(event);
                }
            }
        }
        output_bytes
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn memchr_line_split(bencher: Bencher) {
    bencher.counter(BytesCount::new(INPUT.len())).bench(|| {
        let mut lines = 0usize;
        let mut line_bytes = 0usize;
        for chunk in INPUT.chunks(CHUNK) {
            let mut start = 0;
            for newline in memchr::memchr_iter(b'\n', chunk) {
                lines += 1;
                line_bytes += black_box(&chunk[start..newline]).len();
                start = newline + 1;
            }
        }
        (lines, line_bytes)
    });
}
