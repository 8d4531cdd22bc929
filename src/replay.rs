//! Offline replay of a recorded control-mode transcript.
//!
//! `panectl replay` runs the raw stdout of a `tmux -C` client through the [`Decoder`] and the
//! daemon's own session core ([`SessionCore::observer`]: the same windows, layouts and pane
//! mirrors, with no IO and no commands), and reports each pane's final screen. It is the quickest way to see
//! what panectl makes of a stream, and the fixtures in `fixtures/transcripts/` are checked with
//! it against the `capture-pane` tmux printed at the end of each recording.

mod turns;

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::control::{Decoder, Event, Notification};
use crate::ids::PaneId;
use crate::screen::PaneScreen;
use crate::session::{Action, SessionCore};
use crate::status::Status;
use crate::status::rules::Provider;

pub use turns::ReplayStatus;

/// Why a transcript could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The input is not the output of a tmux control client.
    #[error("not a tmux control-mode transcript: {0}")]
    NotControlMode(String),
    /// Reading the input failed.
    #[error("cannot read the transcript: {0}")]
    Io(#[from] std::io::Error),
}

/// Settings for a replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Size of a pane whose size the transcript never states (no `%layout-change` for it).
    pub default_size: (u16, u16),
    /// The rules to read every pane's status with, through the whole stream (see
    /// [`ReplayStatus`]); `None` reads no status.
    pub provider: Option<Arc<Provider>>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            default_size: (80, 24),
            provider: None,
        }
    }
}

/// The outcome of a replay: pane screens and what the stream contained.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every pane still open at the end, with its screen.
    pub panes: BTreeMap<PaneId, PaneScreen>,
    /// Notifications seen, by tmux name (`output`, `layout-change`, ...).
    pub notifications: BTreeMap<String, u64>,
    /// Reply blocks seen.
    pub replies: u64,
    /// Bare lines outside blocks.
    pub stray_lines: u64,
    /// Lines that could not be decoded.
    pub parse_errors: u64,
    /// The first few undecodable lines, described, for the user.
    pub first_errors: Vec<String>,
    /// Each pane's status, when the replay was given a provider's rules.
    pub statuses: BTreeMap<PaneId, ReplayStatus>,
}

/// A pane in the JSON report.
#[derive(Debug, Serialize)]
pub struct PaneReport {
    /// The pane id, `%N`.
    pub pane: PaneId,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Whether the alternate screen is on.
    pub alternate_screen: bool,
    /// The screen as text (see [`PaneScreen::text`]).
    pub screen: String,
    /// The status at the end of the stream (with a provider's rules only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// The rule behind `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Every status the pane went through, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<Vec<Status>>,
}

/// The JSON report of `panectl replay --json`.
#[derive(Debug, Serialize)]
pub struct ReplayReport {
    /// Final screens, in pane id order.
    pub panes: Vec<PaneReport>,
    /// Notification counts by name.
    pub notifications: BTreeMap<String, u64>,
    /// Reply blocks seen.
    pub replies: u64,
    /// Bare lines outside blocks.
    pub stray_lines: u64,
    /// Lines that could not be decoded.
    pub parse_errors: u64,
}

/// Counts decoded events and hands them to the session core, which keeps the screens.
struct Player {
    core: SessionCore,
    /// The core's actions, dropped: a replay sends and publishes nothing.
    actions: Vec<Action>,
    replay: Replay,
    /// Whether any line was recognized as control-mode output.
    recognized: bool,
    /// Set when the first line is not control-mode output.
    bad_start: Option<String>,
    lines_seen: bool,
    /// Statuses, when the replay reads them.
    turns: Option<turns::Turns>,
}

const ERRORS_KEPT: usize = 5;

impl Player {
    fn event(&mut self, event: Event) {
        let first = !self.lines_seen;
        self.lines_seen = true;
        match event {
            Event::Notification(notification) => {
                if first && matches!(notification, Notification::Unknown { .. }) {
                    self.bad_start = Some(describe_first_line(&notification));
                }
                if !matches!(notification, Notification::Unknown { .. }) {
                    self.recognized = true;
                }
                *self
                    .replay
                    .notifications
                    .entry(notification.name().to_string())
                    .or_default() += 1;
                self.notification(notification);
            }
            Event::Reply(_) => {
                self.recognized = true;
                self.replay.replies += 1;
            }
            Event::Abandoned { .. } => {}
            Event::Stray(line) => {
                if first {
                    self.bad_start = Some(format!("the first line is {:?}", clip(&line)));
                }
                self.replay.stray_lines += 1;
            }
            Event::ParseError(error) => {
                if first {
                    self.bad_start = Some(format!("the first line is {:?}", clip(&error.line)));
                }
                self.replay.parse_errors += 1;
                if self.replay.first_errors.len() < ERRORS_KEPT {
                    self.replay.first_errors.push(error.to_string());
                }
            }
        }
    }

    fn notification(&mut self, notification: Notification) {
        let output = match &notification {
            Notification::Output { pane, .. } | Notification::ExtendedOutput { pane, .. } => {
                Some(*pane)
            }
            _ => None,
        };
        self.core
            .event(Event::Notification(notification), Instant::now());
        self.core.take_actions(&mut self.actions);
        self.actions.clear();
        if let (Some(turns), Some(pane)) = (&mut self.turns, output)
            && let Some(mirror) = self.core.mirror(pane)
        {
            turns.output(pane, mirror);
        }
    }
}

fn clip(bytes: &[u8]) -> String {
    let text = crate::raw::escape(&bytes[..bytes.len().min(60)]);
    if bytes.len() > 60 {
        format!("{text}...")
    } else {
        text
    }
}

fn describe_first_line(notification: &Notification) -> String {
    match notification {
        Notification::Unknown { name, .. } => {
            format!(
                "the first line starts with %{}, which tmux never sends",
                clip(name)
            )
        }
        other => format!("unexpected first line %{}", other.name()),
    }
}

/// Replays a transcript read from `input`.
pub fn replay(mut input: impl Read, options: ReplayOptions) -> Result<Replay, ReplayError> {
    let mut decoder = Decoder::new();
    let mut player = Player {
        core: SessionCore::observer(options.default_size, Instant::now()),
        actions: Vec::new(),
        replay: Replay::default(),
        recognized: false,
        bad_start: None,
        lines_seen: false,
        turns: options.provider.map(turns::Turns::new),
    };
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        decoder.feed(&buffer[..read], &mut |event| player.event(event));
        if let Some(reason) = player.bad_start.take() {
            return Err(ReplayError::NotControlMode(reason));
        }
    }
    decoder.finish(&mut |event| player.event(event));
    if let Some(reason) = player.bad_start.take() {
        return Err(ReplayError::NotControlMode(reason));
    }
    if !player.lines_seen {
        return Err(ReplayError::NotControlMode("the input is empty".into()));
    }
    if !player.recognized {
        return Err(ReplayError::NotControlMode(
            "no line is a notification or reply tmux sends".into(),
        ));
    }
    let mut replay = player.replay;
    replay.panes = player.core.into_screens();
    if let Some(turns) = player.turns {
        replay.statuses = turns.finish();
        replay
            .statuses
            .retain(|pane, _| replay.panes.contains_key(pane));
    }
    Ok(replay)
}

impl Replay {
    /// The JSON report, optionally for one pane only.
    pub fn report(&self, only: Option<PaneId>) -> ReplayReport {
        let panes = self
            .panes
            .iter()
            .filter(|(id, _)| only.is_none_or(|wanted| **id == wanted))
            .map(|(id, screen)| {
                let (width, height) = screen.size();
                let status = self.statuses.get(id);
                PaneReport {
                    pane: *id,
                    width,
                    height,
                    alternate_screen: screen.alternate_screen(),
                    screen: screen.text(),
                    status: status.map(|s| s.status),
                    rule: status.and_then(|s| s.rule.clone()),
                    seen: status.map(|s| s.seen.clone()),
                }
            })
            .collect();
        ReplayReport {
            panes,
            notifications: self.notifications.clone(),
            replies: self.replies,
            stray_lines: self.stray_lines,
            parse_errors: self.parse_errors,
        }
    }

    /// The text report: each pane's screen under a header line, or one pane's screen alone.
    pub fn text(&self, only: Option<PaneId>) -> String {
        if let Some(pane) = only {
            return self
                .panes
                .get(&pane)
                .map(PaneScreen::text)
                .unwrap_or_default();
        }
        let mut out = String::new();
        for (id, screen) in &self.panes {
            let (width, height) = screen.size();
            let alternate = if screen.alternate_screen() {
                " alternate screen"
            } else {
                ""
            };
            let status = match self.statuses.get(id) {
                Some(status) => format!(
                    " · {} ({})",
                    status.status,
                    status.rule.as_deref().unwrap_or("no rule")
                ),
                None => String::new(),
            };
            out.push_str(&format!(
                "--- {id} {width}x{height}{alternate}{status} ---\n"
            ));
            let text = screen.text();
            if !text.is_empty() {
                out.push_str(&text);
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stream: &[u8]) -> Result<Replay, ReplayError> {
        replay(stream, ReplayOptions::default())
    }

    #[test]
    fn output_builds_screens_sized_by_layouts() {
        let stream = b"%begin 1 2 0\n%end 1 2 0\n%session-changed $0 main\n\
%layout-change @0 b25d,80x24,0,0,0 b25d,80x24,0,0,0 *\n\
%output %0 caf\xc3\n%output %0 \xa9 \\033[1mbold\\033[m\\015\\012$ \n";
        let replay = run(stream).unwrap();
        let screen = &replay.panes[&PaneId(0)];
        assert_eq!(screen.text(), "café bold\n$");
        assert_eq!(screen.size(), (80, 24));
        assert_eq!(replay.notifications["output"], 2);
        assert_eq!(replay.replies, 1);
    }

    #[test]
    fn panes_leave_with_their_window_or_layout() {
        let layout = |w: u32, body: &str| {
            format!(
                "%layout-change @{w} {csum:04x},{body} {csum:04x},{body} *\n",
                csum = crate::control::layout::checksum(body.as_bytes())
            )
        };
        let mut stream = String::new();
        stream += &layout(0, "80x24,0,0{40x24,0,0,0,39x24,41,0,1}");
        stream += &layout(1, "80x24,0,0,2");
        stream += "%output %1 x\n%output %2 y\n";
        stream += &layout(0, "80x24,0,0,0");
        stream += "%unlinked-window-close @1\n";
        let replay = run(stream.as_bytes()).unwrap();
        assert_eq!(
            replay.panes.keys().copied().collect::<Vec<_>>(),
            [PaneId(0)]
        );
        assert_eq!(replay.panes[&PaneId(0)].size(), (80, 24));
    }

    #[test]
    fn zoomed_panes_take_the_visible_size() {
        let full = "80x24,0,0{40x24,0,0,0,39x24,41,0,1}";
        let visible = "80x24,0,0,1";
        let stream = format!(
            "%layout-change @0 {:04x},{full} {:04x},{visible} *Z\n",
            crate::control::layout::checksum(full.as_bytes()),
            crate::control::layout::checksum(visible.as_bytes())
        );
        let replay = run(stream.as_bytes()).unwrap();
        assert_eq!(replay.panes[&PaneId(0)].size(), (40, 24));
        assert_eq!(replay.panes[&PaneId(1)].size(), (80, 24));
    }

    #[test]
    fn input_that_is_not_control_mode_is_refused() {
        for input in [
            &b""[..],
            b"hello world\n",
            b"%PDF-1.4\n\x00\x01binary\n",
            b"\x89PNG\r\n\x1a\n",
        ] {
            match run(input) {
                Err(ReplayError::NotControlMode(reason)) => assert!(!reason.contains('\n')),
                other => panic!("{input:?}: {other:?}"),
            }
        }
    }
}
