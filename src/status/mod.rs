//! Agent status: which state each CLI coding agent is in, read from its screen and from the
//! agent's own signals (hooks, OSC reports, titles: [`signal`]).
//!
//! Sans-IO. Provider rules are data ([`rules`], one TOML file per provider, embedded defaults
//! plus user overrides), evaluated on the composited screen ([`view`], [`engine`]); a
//! [`tracker`] per pane turns single evaluations into a stable status (turn tracking, a latch
//! against flapping, grace for unreadable frames). The daemon decides when to evaluate and what
//! to do with changes.

pub mod auto_answer;
pub mod decision;
pub mod engine;
pub mod meaning;
pub mod menu;
pub mod osc;
pub mod pane;
pub mod process;
pub mod providers;
pub mod rules;
pub mod shading;
pub mod signal;
pub mod tracker;
pub mod view;

use serde::{Deserialize, Serialize};

pub use meaning::{Meaning, Phase};

/// An agent's status, with the names orchestrators already use. `idle`: ready, nothing
/// answered since launch; `processing`: working; `completed`: ready after finishing a turn;
/// `waiting_user_answer`: blocked on a question, permission or dialog; `error`: stopped on an
/// error it shows; `unknown`: no rule matches (and every pane without a provider); `exited`:
/// the agent's process is gone.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Ready for input; nothing answered since launch (or since the conversation was cleared).
    Idle,
    /// Working on a turn.
    Processing,
    /// Ready for input after finishing a turn.
    Completed,
    /// Blocked on a question, a permission or a dialog.
    WaitingUserAnswer,
    /// Stopped on an error it shows.
    Error,
    /// Nothing on the screen says.
    Unknown,
    /// The agent's process is gone (the pane is back at a shell, or dead).
    Exited,
}

impl Status {
    /// Every status, in a fixed order (for summaries).
    pub const ALL: [Status; 7] = [
        Status::Idle,
        Status::Processing,
        Status::Completed,
        Status::WaitingUserAnswer,
        Status::Error,
        Status::Unknown,
        Status::Exited,
    ];

    /// Every status word, comma-separated: what an error about an unknown one lists.
    pub fn words() -> String {
        Status::ALL.map(Status::as_str).join(", ")
    }

    /// The status word.
    pub const fn as_str(self) -> &'static str {
        self.meaning().word
    }

    /// Parses a status word.
    pub fn parse(word: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Whether the agent can take input now (its phase is [`Phase::Ready`]).
    pub const fn is_ready(self) -> bool {
        matches!(self.phase(), Phase::Ready)
    }
}

/// A status word as a [`Status`], for `#[serde(deserialize_with)]` on the statuses clients
/// read: a word this build does not know (from a newer daemon) reads as [`Status::Unknown`]
/// instead of failing the whole answer. (The derived `Deserialize` stays strict: a rules file
/// naming an unknown status is an error.)
pub fn lenient<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
    let word = String::deserialize(deserializer)?;
    Ok(Status::parse(&word).unwrap_or(Status::Unknown))
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status on a command line (`panectl wait --until`): its word, as [`Status::as_str`] gives it.
impl clap::ValueEnum for Status {
    fn value_variants<'a>() -> &'a [Self] {
        &Status::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

/// A screen capture read from a file, as the rules see it.
pub fn view_of_capture(capture: &[u8], title: &str, command: &str) -> view::ScreenView {
    match draw_capture(capture) {
        Some(screen) => view::ScreenView {
            rows: screen.rows(),
            title: title.to_string(),
            command: command.to_string(),
        },
        None => view::ScreenView::from_text(&String::from_utf8_lossy(capture), title, command),
    }
}

/// [`view_of_capture`], and how its rows are coloured ([`shading::screen_rows`]; nothing for a
/// capture without colours): what a decision is read from.
pub fn view_and_shading_of_capture(
    capture: &[u8],
    title: &str,
    command: &str,
) -> (view::ScreenView, Vec<shading::RowShade>) {
    match draw_capture(capture) {
        Some(screen) => (
            view::ScreenView {
                rows: screen.rows(),
                title: title.to_string(),
                command: command.to_string(),
            },
            shading::screen_rows(&screen),
        ),
        None => (view_of_capture(capture, title, command), Vec::new()),
    }
}

/// A `capture-pane -e` capture drawn by a terminal, one captured line per row; `None` for plain
/// text.
fn draw_capture(capture: &[u8]) -> Option<crate::screen::PaneScreen> {
    if !capture.contains(&0x1b) {
        return None;
    }
    let text = String::from_utf8_lossy(capture);
    let lines: Vec<&str> = text.split('\n').collect();
    let width = lines
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .clamp(1, 1000);
    let height = lines.len().clamp(1, 10_000);
    let mut screen = crate::screen::PaneScreen::with_scrollback(width as u16, height as u16, 0);
    screen.feed(text.replace('\n', "\r\n").as_bytes());
    Some(screen)
}

/// Classifies one screen on its own (no history): what `panectl detect` reports. A `ready`
/// verdict reads as `idle`, since nothing says a turn was finished.
pub fn classify(
    provider: &rules::Provider,
    view: &view::ScreenView,
) -> (Status, engine::Detection) {
    let detection = engine::evaluate(provider, view);
    let mut tracker = tracker::StatusTracker::new(std::time::Duration::ZERO);
    tracker.observe(&detection, std::time::Instant::now());
    (tracker.status(), detection)
}

/// Cuts the last answer out of a pane's text (scrollback and screen, one row per line) with the
/// provider's `[last_response]` rule: from the last row matching `start` to the row before the
/// first one after it matching `end`, prefixes (and a scrollbar in the last column) stripped,
/// blank rows at the ends dropped. A provider whose answer follows the last shaded row needs
/// the colours: [`last_response_shaded`].
pub fn last_response(provider: &rules::Provider, lines: &[String]) -> Option<String> {
    let rule = provider.last_response.as_ref()?;
    let rules::AnswerStart::Row(start) = &rule.start else {
        return None;
    };
    let start = lines.iter().rposition(|line| start.is_match(line))?;
    cut_answer(rule, lines, start)
}

/// [`last_response`] from a capture with its colours (`capture-pane -e`, read by
/// [`shading::rows`]): a provider whose answer follows the last shaded row is read here.
pub fn last_response_shaded(provider: &rules::Provider, rows: &[shading::Row]) -> Option<String> {
    let rule = provider.last_response.as_ref()?;
    let lines: Vec<String> = rows.iter().map(|row| row.text.clone()).collect();
    let start = match &rule.start {
        rules::AnswerStart::Row(_) => return last_response(provider, &lines),
        rules::AnswerStart::AfterShaded => {
            let shaded = rows.iter().rposition(|row| row.shaded)?;
            shaded
                + 1
                + rows[shaded + 1..]
                    .iter()
                    .position(|row| !row.text.trim().is_empty())?
        }
    };
    cut_answer(rule, &lines, start)
}

fn cut_answer(rule: &rules::LastResponse, lines: &[String], start: usize) -> Option<String> {
    let end = rule
        .end
        .as_ref()
        .and_then(|end| {
            lines[start + 1..]
                .iter()
                .position(|line| end.is_match(line))
        })
        .map_or(lines.len(), |offset| start + 1 + offset);
    let mut answer: Vec<String> = lines[start..end]
        .iter()
        .map(|line| {
            let mut text = decision::without_scrollbar(line);
            for strip in &rule.strip {
                if let Some(found) = strip.find(text).filter(|m| m.start() == 0) {
                    text = &text[found.end()..];
                    break;
                }
            }
            text.trim_end().to_string()
        })
        .collect();
    while answer.last().is_some_and(|l| l.is_empty()) {
        answer.pop();
    }
    while answer.first().is_some_and(|l| l.is_empty()) {
        answer.remove(0);
    }
    (!answer.is_empty()).then(|| answer.join("\n"))
}

#[cfg(test)]
mod generic_tests;
#[cfg(test)]
mod live_region_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_answer_is_cut_out_of_the_scrollback() {
        let set = providers::ProviderSet::builtin().unwrap();
        let claude = set.get("claude_code").unwrap();
        let lines: Vec<String> = [
            "❯ first question",
            "● First answer.",
            "✻ Baked for 1s",
            "❯ second question",
            "● Second answer,",
            "  on two lines.",
            "",
            "✻ Crunched for 3s · done 1:09 AM",
            "────────────",
            "❯ ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            last_response(claude, &lines).as_deref(),
            Some("Second answer,\non two lines.")
        );
        assert_eq!(
            last_response(claude, &lines[..3]).as_deref(),
            Some("First answer.")
        );
        assert_eq!(last_response(claude, &lines[..1]), None);
    }

    #[test]
    fn qwen_codes_last_answer_leaves_its_scrollbar_out() {
        let set = providers::ProviderSet::builtin().unwrap();
        let qwen = set.get("qwen_code").unwrap();
        let bar = |text: &str| format!("{text:<79}█");
        let lines = vec![
            bar("  > reply:Two lines"),
            bar(""),
            bar("  ◆︎ First line,"),
            bar("    second line."),
            bar(""),
            "─".repeat(80),
            ">   Type your message or @path/to/file".to_string(),
            "─".repeat(80),
        ];
        assert_eq!(
            last_response(qwen, &lines).as_deref(),
            Some("First line,\nsecond line.")
        );
    }

    /// Pi tells prompts and tool rows from answers only by their background: the answer is
    /// the plain text after the last shaded row, read from recorded captures with colours.
    #[test]
    fn pis_last_answer_follows_the_last_shaded_row() {
        let set = providers::ProviderSet::builtin().unwrap();
        let pi = set.get("pi").unwrap();
        let capture = |name: &str| {
            let path = format!(
                "{}/fixtures/incoming/pi/0.73.1/{name}.ansi",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read(&path).unwrap();
            let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            shading::rows(&lines)
        };
        let second = capture("completed--second-prompt");
        assert_eq!(
            last_response_shaded(pi, &second).as_deref(),
            Some("Second answer is here.")
        );
        assert_eq!(
            last_response_shaded(pi, &capture("completed--slow-reply-80x24")).as_deref(),
            Some("The slow answer is ready.")
        );
        // A long answer's prompt scrolled off this screen (the daemon reads the history too).
        assert_eq!(
            last_response_shaded(pi, &capture("completed--long-answer")),
            None
        );
        // Without the colours the prompts cannot be told apart: no answer rather than a wrong one.
        let plain: Vec<String> = second.iter().map(|row| row.text.clone()).collect();
        assert_eq!(last_response(pi, &plain), None);
        // A screen with no shaded row has no prompt to follow.
        let none = shading::rows(&["just text", "────────"]);
        assert_eq!(last_response_shaded(pi, &none), None);
    }

    /// A layout no rule of the provider knows still says what it shows: a spinner is
    /// `processing`, a prompt row is ready, an unanswered `[Y/n]` waits; only a screen that
    /// shows none of these is `unknown`.
    #[test]
    fn a_screen_is_unknown_only_when_nothing_on_it_says_anything() {
        let set = providers::ProviderSet::builtin().unwrap();
        for id in [
            "claude_code",
            "codex",
            "gemini_cli",
            "aider",
            "kiro_cli",
            "opencode",
            "qwen_code",
            "pi",
            "kilo",
            "grok_cli",
        ] {
            let provider = set.get(id).unwrap();
            let status =
                |text: &str| classify(provider, &view::ScreenView::from_text(text, "", "")).0;
            let cases = [
                (
                    "some output\n\n⠹ Reticulating the splines\n",
                    Status::Processing,
                ),
                ("an answer\n\n│ > \n", Status::Idle),
                ("Overwrite settings.json? [Y/n] ", Status::WaitingUserAnswer),
                (
                    "Pick a plan\n ❯ 1. Free\n   2. Pro\n",
                    Status::WaitingUserAnswer,
                ),
                ("Loading the workspace\n", Status::Unknown),
            ];
            for (screen, wanted) in cases {
                assert_eq!(status(screen), wanted, "{id} on {screen:?}");
            }
        }
    }

    #[test]
    fn status_words_round_trip() {
        for status in Status::ALL {
            assert_eq!(Status::parse(status.as_str()), Some(status));
            assert_eq!(
                serde_json::to_string(&status).unwrap(),
                format!("\"{status}\"")
            );
        }
    }
}
