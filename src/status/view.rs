//! The screen as the rules see it: rows of text, the pane title and the foreground command,
//! cut into the regions rules name.
//!
//! Agent TUIs draw an input box between two horizontal rules and a footer under it; what is
//! above the box is the conversation. Rules name where to look:
//!
//! | region | rows |
//! |---|---|
//! | `whole` | every row |
//! | `above_input` | rows above the input box (the whole screen when there is none) |
//! | `input` | rows inside the input box |
//! | `below_input` | rows under the input box (the footer; empty when there is none) |
//! | `after_last_rule` | rows after the last horizontal rule |
//! | `live` | where a dialog can be: from the input box's top rule down when one is drawn (a dialog replaces the box or shows in it; the transcript and spinner tips above are not it), else every row |
//! | `title` | the pane title |
//!
//! The input box is the last two horizontal rules at most a few rows apart. Any region can be
//! cut to its last N non-empty rows.

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A region of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// Every row.
    Whole,
    /// Rows above the input box.
    AboveInput,
    /// Rows inside the input box.
    Input,
    /// Rows under the input box.
    BelowInput,
    /// Rows after the last horizontal rule.
    AfterLastRule,
    /// Where a dialog can be: from the input box's top rule down, else every row.
    Live,
    /// The pane title.
    Title,
}

impl Region {
    /// The name used in rule files.
    pub fn as_str(self) -> &'static str {
        match self {
            Region::Whole => "whole",
            Region::AboveInput => "above_input",
            Region::Input => "input",
            Region::BelowInput => "below_input",
            Region::AfterLastRule => "after_last_rule",
            Region::Live => "live",
            Region::Title => "title",
        }
    }
}

/// Most rows an input box can span between its two rules.
const MAX_INPUT_ROWS: usize = 12;

/// What a status evaluation reads.
#[derive(Debug, Clone, Default)]
pub struct ScreenView {
    /// Visible rows, trailing spaces removed.
    pub rows: Vec<String>,
    /// The pane title.
    pub title: String,
    /// The pane's foreground command (`#{pane_current_command}`).
    pub command: String,
}

/// Where the horizontal rules and the input box are, for one rule pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// Index of the last rule row.
    pub last_rule: Option<usize>,
    /// Rows of the input box's two rules.
    pub input_box: Option<(usize, usize)>,
}

impl ScreenView {
    /// A view of plain text (lines separated by `\n`), as `capture-pane -p` prints it.
    pub fn from_text(text: &str, title: &str, command: &str) -> ScreenView {
        ScreenView {
            rows: text.split('\n').map(|r| r.trim_end().to_string()).collect(),
            title: title.to_string(),
            command: command.to_string(),
        }
    }

    /// Finds the rules and the input box.
    pub fn layout(&self, rule: &Regex) -> Layout {
        let rules: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| !row.is_empty() && rule.is_match(row))
            .map(|(i, _)| i)
            .collect();
        let input_box = match rules.as_slice() {
            [.., upper, lower] if lower - upper <= MAX_INPUT_ROWS + 1 => Some((*upper, *lower)),
            _ => None,
        };
        Layout {
            last_rule: rules.last().copied(),
            input_box,
        }
    }

    /// The rows of a region.
    pub fn region_rows(&self, region: Region, layout: Layout) -> &[String] {
        let rows = self.rows.as_slice();
        match (region, layout.input_box) {
            (Region::Whole | Region::Title, _) => rows,
            (Region::AboveInput, Some((upper, _))) => &rows[..upper],
            (Region::AboveInput, None) => rows,
            (Region::Input, Some((upper, lower))) => &rows[upper + 1..lower],
            (Region::BelowInput, Some((_, lower))) => &rows[lower + 1..],
            (Region::Input | Region::BelowInput, None) => &[],
            (Region::Live, Some((upper, _))) => &rows[upper..],
            (Region::Live, None) => rows,
            (Region::AfterLastRule, _) => match layout.last_rule {
                Some(last) => &rows[last + 1..],
                None => &[],
            },
        }
    }

    /// The rows of a region from its `lines`-th last non-empty row on (blank rows between
    /// them kept), or all of them.
    pub fn region_tail(&self, region: Region, lines: Option<usize>, layout: Layout) -> &[String] {
        let rows = self.region_rows(region, layout);
        let Some(wanted) = lines else {
            return rows;
        };
        let mut seen = 0;
        for (index, row) in rows.iter().enumerate().rev() {
            if !row.trim().is_empty() {
                seen += 1;
                if seen == wanted {
                    return &rows[index..];
                }
            }
        }
        rows
    }

    /// The text of a region, cut to its last `lines` non-empty rows when given, rows joined
    /// with `\n`.
    pub fn region_text(&self, region: Region, lines: Option<usize>, layout: Layout) -> String {
        if region == Region::Title {
            return self.title.clone();
        }
        let rows = self.region_rows(region, layout);
        match lines {
            None => rows.join("\n"),
            Some(wanted) => {
                let mut picked: Vec<&str> = rows
                    .iter()
                    .rev()
                    .filter(|r| !r.trim().is_empty())
                    .take(wanted)
                    .map(String::as_str)
                    .collect();
                picked.reverse();
                picked.join("\n")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_like() -> ScreenView {
        ScreenView::from_text(
            "● The answer.\n✻ Baked for 2s\n────────\n❯ \n────────\n  ? for shortcuts\n",
            "✳ Claude Code",
            "claude",
        )
    }

    #[test]
    fn regions_follow_the_input_box() {
        let view = claude_like();
        let rule = Regex::new(r"^\s*─{8,}\s*$").unwrap();
        let layout = view.layout(&rule);
        assert_eq!(layout.input_box, Some((2, 4)));
        assert_eq!(
            view.region_text(Region::AboveInput, None, layout),
            "● The answer.\n✻ Baked for 2s"
        );
        assert_eq!(view.region_text(Region::Input, None, layout), "❯");
        assert_eq!(
            view.region_text(Region::BelowInput, Some(1), layout),
            "  ? for shortcuts"
        );
        assert_eq!(
            view.region_text(Region::AfterLastRule, None, layout),
            "  ? for shortcuts\n"
        );
        assert_eq!(
            view.region_text(Region::Title, None, layout),
            "✳ Claude Code"
        );
        assert_eq!(
            view.region_text(Region::Whole, Some(2), layout),
            "────────\n  ? for shortcuts"
        );
    }

    #[test]
    fn without_an_input_box_the_screen_is_above_it() {
        let view = ScreenView::from_text("$ ls\nfile\n$ ", "", "bash");
        let layout = view.layout(&Regex::new(r"^─{8,}$").unwrap());
        assert_eq!(layout, Layout::default());
        assert_eq!(view.region_text(Region::AboveInput, Some(1), layout), "$");
        assert_eq!(view.region_text(Region::BelowInput, None, layout), "");
        assert_eq!(view.region_text(Region::AfterLastRule, None, layout), "");
    }
}
