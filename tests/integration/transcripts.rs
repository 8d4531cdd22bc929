//! The recorded transcripts in `fixtures/transcripts/`: snapshots of their events, and replayed
//! final screens compared with the `capture-pane` tmux printed at the end of each recording.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use panectl::control::{Decoder, Event, Layout, Notification};
use panectl::ids::PaneId;
use panectl::replay::{ReplayOptions, replay};
use panectl::screen::normalize_capture;

pub const FIXTURES: &[&str] = &[
    "shell-utf8",
    "redraw-bursts",
    "vim-alternate-screen",
    "windows-and-panes",
    "pause-continue",
    "session-killed",
];

pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts")
        .join(name)
}

pub fn transcript(name: &str) -> Vec<u8> {
    std::fs::read(fixture_dir(name).join("control.bin")).expect("fixture transcript")
}

fn size(name: &str) -> (u16, u16) {
    let text = std::fs::read_to_string(fixture_dir(name).join("size")).expect("size file");
    let (w, h) = text.trim().split_once('x').expect("WxH");
    (w.parse().expect("width"), h.parse().expect("height"))
}

/// `panes.tsv`: pane id -> (size, alternate screen).
fn recorded_panes(name: &str) -> BTreeMap<PaneId, ((u16, u16), bool)> {
    let text = std::fs::read_to_string(fixture_dir(name).join("panes.tsv")).expect("panes.tsv");
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let (w, h) = fields[1].split_once('x').expect("WxH");
            (
                fields[0].parse().expect("pane id"),
                (
                    (w.parse().expect("w"), h.parse().expect("h")),
                    fields[2] == "1",
                ),
            )
        })
        .collect()
}

#[test]
fn replayed_screens_equal_the_recorded_captures() {
    for name in FIXTURES {
        let replay = replay(
            transcript(name).as_slice(),
            ReplayOptions {
                default_size: size(name),
                provider: None,
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(replay.parse_errors, 0, "{name}: {:?}", replay.first_errors);
        let panes = recorded_panes(name);
        assert!(!panes.is_empty(), "{name} recorded no panes");
        for (pane, (size, alternate)) in panes {
            let screen = replay
                .panes
                .get(&pane)
                .unwrap_or_else(|| panic!("{name}: {pane} missing from the replay"));
            let capture =
                std::fs::read_to_string(fixture_dir(name).join(format!("captures/{}.txt", pane.0)))
                    .expect("capture");
            assert_eq!(screen.size(), size, "{name} {pane} size");
            assert_eq!(
                screen.alternate_screen(),
                alternate,
                "{name} {pane} alternate screen"
            );
            assert_eq!(
                screen.text(),
                normalize_capture(&capture),
                "{name} {pane} screen"
            );
        }
    }
}

fn layout_summary(layout: &Layout) -> String {
    layout
        .panes()
        .iter()
        .map(|p| format!("{} {}x{}+{}+{}", p.pane, p.width, p.height, p.x, p.y))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per event; runs of output from one pane are folded into one line with counts.
fn render_events(events: &[Event]) -> String {
    let mut out = String::new();
    let mut run: Option<(PaneId, &str, usize, usize)> = None;
    let flush = |out: &mut String, run: &mut Option<(PaneId, &str, usize, usize)>| {
        if let Some((pane, kind, lines, bytes)) = run.take() {
            let _ = writeln!(out, "{kind} {pane}: {lines} lines, {bytes} bytes");
        }
    };
    for event in events {
        let output = match event {
            Event::Notification(Notification::Output { pane, data }) => {
                Some((*pane, "output", data.len()))
            }
            Event::Notification(Notification::ExtendedOutput { pane, data, .. }) => {
                Some((*pane, "extended-output", data.len()))
            }
            _ => None,
        };
        if let Some((pane, kind, bytes)) = output {
            match &mut run {
                Some((p, k, lines, total)) if *p == pane && *k == kind => {
                    *lines += 1;
                    *total += bytes;
                }
                _ => {
                    flush(&mut out, &mut run);
                    run = Some((pane, kind, 1, bytes));
                }
            }
            continue;
        }
        flush(&mut out, &mut run);
        let line = match event {
            Event::Notification(Notification::LayoutChange {
                window,
                layout,
                visible_layout,
                flags,
            }) => format!(
                "layout-change {window} [{}] visible [{}] flags {:?}",
                layout_summary(layout),
                visible_layout
                    .as_ref()
                    .map(layout_summary)
                    .unwrap_or_default(),
                flags
            ),
            Event::Notification(other) => format!("{other:?}"),
            Event::Reply(reply) => format!(
                "reply number={} flags={} success={} body={:?}",
                reply.guard.number, reply.guard.flags, reply.success, reply.body
            ),
            other => format!("{other:?}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    flush(&mut out, &mut run);
    out
}

#[test]
fn transcript_event_snapshots() {
    for name in FIXTURES {
        let mut decoder = Decoder::new();
        let mut events = decoder.feed_vec(&transcript(name));
        decoder.finish(&mut |e| events.push(e));
        insta::assert_snapshot!(format!("events-{name}"), render_events(&events));
    }
}
