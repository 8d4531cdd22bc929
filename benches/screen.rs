//! The screen model's speed against the `vt100` crate it replaced, on the same bytes in the
//! same run: how fast each turns a pane's output into cells, and how fast each gives the rows
//! back as text (what status detection reads after every change).
//!
//! Three kinds of output, each a few hundred KiB, fed in 4 KiB chunks (the size of a
//! `%output` read) into a 120x40 screen:
//! - `log`: a program printing lines that scroll (a build, `cat`), some with colours;
//! - `agent`: an agent CLI redrawing its spinner and input box in place, with UTF-8 box
//!   drawing, emoji and many SGR changes;
//! - `fullscreen`: a full-screen program (an editor) on the alternate screen, repainting with
//!   scroll regions, erases and cursor moves (and still on it when the rows are read).
//!
//! Run with `cargo bench --bench screen`.

use std::hint::black_box;
use std::num::NonZeroU16;

use divan::Bencher;
use divan::counter::BytesCount;
use panectl::screen::PaneScreen;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const CHUNK: usize = 4096;

fn main() {
    divan::main();
}

fn log() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..8000 {
        if i % 7 == 0 {
            out.extend_from_slice(
                format!("\x1b[1;32m   Compiling\x1b[0m crate-{i} v0.{i}.0 (/src/crate-{i})\r\n")
                    .as_bytes(),
            );
        } else {
            out.extend_from_slice(
                format!(
                    "line {i}: the quick brown fox jumps over the lazy dog {}\r\n",
                    i * 31
                )
                .as_bytes(),
            );
        }
    }
    out
}

fn agent() -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"\x1b[2J\x1b[H");
    for i in 0..3000 {
        let spinner = ["✻", "✶", "✢", "·"][i % 4];
        out.extend_from_slice(
            format!(
                "\x1b[{row};1H\x1b[2K\x1b[38;5;174m{spinner}\x1b[39m \x1b[1mThinking…\x1b[22m \
                 \x1b[2m({secs}s · ↓ {tokens} tokens · esc to interrupt)\x1b[22m\r\n\
                 \x1b[38;2;136;136;136m╭{rule}╮\x1b[39m\r\n\
                 │ > {text:<60} 👍 日本語 │\r\n\
                 ╰{rule}╯\r\n  ⏵⏵ accept edits on (shift+tab to cycle)\x1b[K",
                row = 30,
                secs = i / 10,
                tokens = i * 7,
                rule = "─".repeat(70),
                text = format!("message {i} é à ü"),
            )
            .as_bytes(),
        );
        if i % 50 == 0 {
            out.extend_from_slice(
                format!("\x1b[1;29r\x1b[29;1H\n● answer {i}: \x1b[1mdone\x1b[22m\x1b[r").as_bytes(),
            );
        }
    }
    out
}

fn fullscreen() -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"\x1b[?1049h\x1b[H\x1b[2J");
    for frame in 0..300 {
        out.extend_from_slice(b"\x1b[1;39r\x1b[H");
        for row in 1..=39 {
            out.extend_from_slice(
                format!(
                    "\x1b[{row};1H\x1b[33m{n:>4}\x1b[m \x1b[38;5;{c}mfn\x1b[m item_{n}(x: u32) -> u32 {{ x + {frame} }}\x1b[K",
                    n = frame + row,
                    c = 70 + row % 20,
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(b"\x1b[39;1H\n\x1b[38;1H\x1b[L\x1b[5;1H\x1b[2M\x1b[r");
        out.extend_from_slice(
            format!("\x1b[40;1H\x1b[7m NORMAL \x1b[m src/main.rs [+] {frame},1 \x1b[K").as_bytes(),
        );
    }
    out
}

fn corpora() -> Vec<&'static str> {
    vec!["log", "agent", "fullscreen"]
}

fn corpus(name: &str) -> Vec<u8> {
    match name {
        "log" => log(),
        "agent" => agent(),
        _ => fullscreen(),
    }
}

#[divan::bench(args = corpora(), sample_count = 20, sample_size = 1)]
fn feed_panectl(bencher: Bencher, name: &str) {
    let bytes = corpus(name);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .with_inputs(|| PaneScreen::with_scrollback(WIDTH, HEIGHT, 500))
        .bench_local_values(|mut screen| {
            for chunk in bytes.chunks(CHUNK) {
                screen.feed(chunk);
            }
            black_box(screen)
        });
}

#[divan::bench(args = corpora(), sample_count = 20, sample_size = 1)]
fn feed_vt100(bencher: Bencher, name: &str) {
    let bytes = corpus(name);
    let size = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .with_inputs(|| vt100::Parser::new(size(HEIGHT), size(WIDTH), 500))
        .bench_local_values(|mut parser| {
            for chunk in bytes.chunks(CHUNK) {
                parser.process(chunk);
            }
            black_box(parser)
        });
}

#[divan::bench(args = corpora())]
fn rows_panectl(bencher: Bencher, name: &str) {
    let mut screen = PaneScreen::with_scrollback(WIDTH, HEIGHT, 500);
    screen.feed(&corpus(name));
    bencher.bench_local(|| black_box(screen.rows()));
}

#[divan::bench(args = corpora())]
fn rows_vt100(bencher: Bencher, name: &str) {
    let size = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
    let mut parser = vt100::Parser::new(size(HEIGHT), size(WIDTH), 500);
    parser.process(&corpus(name));
    bencher.bench_local(|| black_box(parser.screen().rows(0, WIDTH).collect::<Vec<_>>()));
}

/// The output a check waits for: the corpus' last 64 KiB (what tmux may write before a reply).
fn answer_window(name: &str) -> (PaneScreen, Vec<u8>) {
    let bytes = corpus(name);
    let cut = bytes.len().saturating_sub(64 << 10);
    let mut screen = PaneScreen::with_scrollback(WIDTH, HEIGHT, 500);
    screen.feed(&bytes[..cut]);
    (screen, bytes[cut..].to_vec())
}

/// Placing a check's reply that shows the screen 1 KiB before the end of the output since
/// the check (an early answer): the search the daemon makes when a reply differs.
#[divan::bench(args = corpora(), sample_count = 20, sample_size = 1)]
fn place_early_answer(bencher: Bencher, name: &str) {
    use panectl::mirror::asked::{Asked, Looks};
    let (base, output) = answer_window(name);
    let mut shown = base.clone();
    shown.feed(&output[..output.len() - 1024]);
    let mut asked = Asked::new(1, &base);
    asked.output(&output);
    let looks = Looks::new(
        shown.dialect(),
        &shown.capture_rows(true),
        shown.size(),
        shown.cursor(),
        shown.alternate_screen(),
    );
    bencher
        .counter(BytesCount::new(output.len()))
        .bench_local(|| black_box(asked.point_of(&looks)));
}

/// The same 64 KiB fed as the mirror feeds it (the baseline for `place_early_answer`).
#[divan::bench(args = corpora(), sample_count = 20, sample_size = 1)]
fn feed_answer_window(bencher: Bencher, name: &str) {
    let (base, output) = answer_window(name);
    bencher
        .counter(BytesCount::new(output.len()))
        .with_inputs(|| base.without_history())
        .bench_local_values(|mut screen| {
            for chunk in output.chunks(CHUNK) {
                screen.feed(chunk);
            }
            black_box(screen)
        });
}

/// Feeding as the mirror does, with the divergence journal kept beside the screen (the
/// baseline is `feed_panectl`, the screen alone).
#[divan::bench(args = corpora(), sample_count = 20, sample_size = 1)]
fn feed_with_journal(bencher: Bencher, name: &str) {
    use panectl::mirror::Journal;
    let bytes = corpus(name);
    bencher
        .counter(BytesCount::new(bytes.len()))
        .with_inputs(|| {
            (
                PaneScreen::with_scrollback(WIDTH, HEIGHT, 500),
                Journal::blank(WIDTH, HEIGHT),
            )
        })
        .bench_local_values(|(mut screen, mut journal)| {
            for chunk in bytes.chunks(CHUNK) {
                screen.feed(chunk);
                journal.output(chunk, &screen);
            }
            black_box((screen, journal))
        });
}
