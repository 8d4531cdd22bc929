//! Statuses in a replay: the provider's rules read each pane's screen after every `%output`, and
//! the daemon's turn tracker follows them through the whole stream, so a turn that ran and
//! ended reads `completed` even when nothing on the final screen says so (a long answer whose
//! first row scrolled away), as the daemon reports it and unlike `panectl detect`, which sees
//! one screen.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::ids::PaneId;
use crate::mirror::PaneMirror;
use crate::status::rules::Provider;
use crate::status::tracker::StatusTracker;
use crate::status::view::ScreenView;
use crate::status::{Status, engine};

/// A pane's status at the end of a replay, and how it got there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayStatus {
    /// The status at the end of the stream.
    pub status: Status,
    /// The rule behind it (`None` when no rule matched).
    pub rule: Option<String>,
    /// Every status the pane went through, in order (the last is `status`).
    pub seen: Vec<Status>,
}

/// The turn tracker of each pane, fed the pane's screen after each of its outputs.
pub(super) struct Turns {
    provider: Arc<Provider>,
    panes: BTreeMap<PaneId, (StatusTracker, Vec<Status>)>,
}

impl Turns {
    pub(super) fn new(provider: Arc<Provider>) -> Turns {
        Turns {
            provider,
            panes: BTreeMap::new(),
        }
    }

    /// Reads `mirror`'s screen after output to `pane`.
    pub(super) fn output(&mut self, pane: PaneId, mirror: &PaneMirror) {
        let view = ScreenView {
            rows: mirror.screen().rows(),
            title: mirror.row.state.title.to_string(),
            command: mirror.row.state.command.to_string(),
        };
        let detection = engine::evaluate(&self.provider, &view);
        // No grace: a stream has no clock, and an unreadable screen between two readable ones
        // is a frame drawn half-way.
        let (tracker, seen) = self
            .panes
            .entry(pane)
            .or_insert_with(|| (StatusTracker::new(Duration::MAX), Vec::new()));
        tracker.observe(&detection, Instant::now());
        if seen.last() != Some(&tracker.status()) {
            seen.push(tracker.status());
        }
    }

    /// Each pane's status at the end.
    pub(super) fn finish(self) -> BTreeMap<PaneId, ReplayStatus> {
        self.panes
            .into_iter()
            .map(|(pane, (tracker, seen))| {
                let status = ReplayStatus {
                    status: tracker.status(),
                    rule: tracker.rule().map(ToString::to_string),
                    seen,
                };
                (pane, status)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::ids::PaneId;
    use crate::replay::{ReplayOptions, replay};
    use crate::status::providers::ProviderSet;
    use crate::status::{Status, classify, view::ScreenView};

    const RULE: &str = "────────────────────────────────────────";

    /// `%output %0` lines that clear the screen and draw `rows`, escaped as tmux escapes them.
    fn frame(rows: &[&str]) -> Vec<u8> {
        let mut data = b"\x1b[H\x1b[2J".to_vec();
        data.extend_from_slice(rows.join("\r\n").as_bytes());
        let mut line = b"%output %0 ".to_vec();
        for byte in data {
            if byte < b' ' || byte == b'\\' {
                line.extend_from_slice(format!("\\{byte:03o}").as_bytes());
            } else {
                line.push(byte);
            }
        }
        line.push(b'\n');
        line
    }

    #[test]
    fn a_turn_that_ran_and_ended_is_completed_though_its_last_screen_only_shows_a_prompt() {
        let working = frame(&[
            "❯ lines:60 reply:End.",
            "",
            "✢ Spelunking… (3s)",
            "",
            RULE,
            "❯ ",
            RULE,
            "  esc to interrupt",
        ]);
        // Only the input box is left (a TUI that redraws its transcript elsewhere): nothing on
        // this screen says a turn ended.
        let last = [RULE, "❯ ", RULE, "  ? for shortcuts"];
        let mut stream = b"%session-changed $0 main\n".to_vec();
        stream.extend(working);
        stream.extend(frame(&last));
        let set = ProviderSet::builtin().unwrap();
        let claude = Arc::clone(set.get("claude_code").unwrap());
        let replayed = replay(
            stream.as_slice(),
            ReplayOptions {
                provider: Some(Arc::clone(&claude)),
                ..ReplayOptions::default()
            },
        )
        .unwrap();
        let status = &replayed.statuses[&PaneId(0)];
        assert_eq!(status.status, Status::Completed);
        assert_eq!(status.seen, [Status::Processing, Status::Completed]);
        assert_eq!(status.rule.as_deref(), Some("claude_code.ready"));
        let report = replayed.report(None);
        assert_eq!(report.panes[0].status, Some(Status::Completed));
        assert!(
            replayed
                .text(None)
                .starts_with("--- %0 80x24 · completed (claude_code.ready) ---")
        );
        // The same final screen alone says only that the agent is ready.
        let alone = ScreenView::from_text(&last.join("\n"), "", "");
        assert_eq!(classify(&claude, &alone).0, Status::Idle);
        // Without a provider nothing is read.
        let plain = replay(stream.as_slice(), ReplayOptions::default()).unwrap();
        assert!(plain.statuses.is_empty());
        assert_eq!(plain.report(None).panes[0].status, None);
    }
}
