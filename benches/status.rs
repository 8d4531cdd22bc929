//! Status detection cost: one evaluation of a 200x50 screen, for every built-in provider, on
//! a screen of its own kind (a busy conversation above the input box). `evaluate` alone, and
//! with the rows taken from the terminal model first (what the daemon does per evaluation).
//!
//! Run with `cargo bench --bench status`; the target is 50 µs per evaluation.

use std::hint::black_box;

use divan::Bencher;
use panectl::screen::PaneScreen;
use panectl::status::engine::evaluate;
use panectl::status::providers::ProviderSet;
use panectl::status::view::ScreenView;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;

fn main() {
    divan::main();
}

/// A full 200x50 screen: 44 rows of conversation, then the provider's input area and footer.
fn screen(provider: &str) -> PaneScreen {
    let mut text = String::new();
    for row in 0..44 {
        let line = match row % 4 {
            0 => format!(
                "❯ question number {row} about the code in src/status/engine.rs and its regions"
            ),
            1 => format!(
                "● Answer {row}: the rules are evaluated in priority order, first match wins, {}",
                "x".repeat(90)
            ),
            2 => "  ⎿  Read 120 lines (ctrl+o to expand)".to_string(),
            _ => format!("✻ Baked for {row}s · done 1:09 AM"),
        };
        text.push_str(&line);
        text.push_str("\r\n");
    }
    let footer = match provider {
        "codex" => {
            "• Working (3s • esc to interrupt)\r\n\r\n› Ask Codex to do anything\r\n\r\n  gpt-5 default · ~/src\r\n  ? for shortcuts"
        }
        "gemini_cli" => {
            " ⠧ Thinking... (esc to cancel, 1s)\r\n────────────────────────────────────────\r\n Shift+Tab to accept edits\r\n >   Type your message or @path/to/file\r\n workspace (/directory)\r\n /tmp/work"
        }
        _ => {
            "✢ Metamorphosing…\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n  ⏸ manual mode on · esc to interrupt\r\n"
        }
    };
    text.push_str(footer);
    let mut screen = PaneScreen::with_scrollback(WIDTH, HEIGHT, 0);
    screen.feed(text.as_bytes());
    screen
}

fn providers() -> Vec<&'static str> {
    vec![
        "claude_code",
        "codex",
        "gemini_cli",
        "aider",
        "kiro_cli",
        "opencode",
        "shell",
    ]
}

#[divan::bench(args = providers())]
fn evaluate_view(bencher: Bencher, provider: &str) {
    let set = ProviderSet::builtin().expect("built-in rules");
    let rules = set.get(provider).expect("provider").clone();
    let view = ScreenView {
        rows: screen(provider).rows(),
        title: "✳ Claude Code".into(),
        command: "claude".into(),
    };
    bencher.bench_local(|| black_box(evaluate(&rules, black_box(&view))));
}

#[divan::bench(args = providers())]
fn rows_and_evaluate(bencher: Bencher, provider: &str) {
    let set = ProviderSet::builtin().expect("built-in rules");
    let rules = set.get(provider).expect("provider").clone();
    let screen = screen(provider);
    bencher.bench_local(|| {
        let view = ScreenView {
            rows: screen.rows(),
            title: "✳ Claude Code".into(),
            command: "claude".into(),
        };
        black_box(evaluate(&rules, &view))
    });
}

/// Live panes in the fleet benchmark.
const LIVE_PANES: usize = 200;

/// `rows_and_evaluate` with 200 panes live: each iteration evaluates the next of 200 different
/// screens in turn, so the screens and rows come from memory the way they do in a daemon
/// watching 200 panes (6 MiB of cells), not from a cache warmed by the previous iteration.
#[divan::bench(args = providers(), sample_count = 400)]
fn rows_and_evaluate_200_panes(bencher: Bencher, provider: &str) {
    let set = ProviderSet::builtin().expect("built-in rules");
    let rules = set.get(provider).expect("provider").clone();
    let screens: Vec<PaneScreen> = (0..LIVE_PANES)
        .map(|pane| {
            let mut screen = screen(provider);
            // Each pane's screen differs from the others in its first row.
            screen.feed(format!("\x1b[H\x1b[2Kpane {pane}").as_bytes());
            screen
        })
        .collect();
    let mut next = 0;
    bencher.bench_local(|| {
        let screen = &screens[next % LIVE_PANES];
        next += 1;
        let view = ScreenView {
            rows: screen.rows(),
            title: "✳ Claude Code".into(),
            command: "claude".into(),
        };
        black_box(evaluate(&rules, &view))
    });
}
