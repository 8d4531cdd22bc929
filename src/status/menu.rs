//! Finding a list of options on a screen: what makes a dialog a dialog, whatever the CLI.
//!
//! Agent CLIs draw their choices the same way: one option per row, the selected one marked by
//! a pointer glyph (`❯`, `›`, `>`, `●`, ...), the others indented so that their text lines up
//! with the pointed option's text, or numbered (`1.`, `2.`) in the same column. Rows between
//! options that are indented deeper (a description, a wrapped option) belong to the option
//! above. Box borders (`│`, `┃`) around a dialog are looked through. A blank row ends the list:
//! a prompt row and a footer under it are no menu.

use super::rules::Menu;

/// A menu found on the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuMatch {
    /// The row of the pointed option (an index into the rows searched).
    pub pointer_row: usize,
    /// How many options the menu has, the pointed one included.
    pub options: usize,
    /// Whether its options are numbered.
    pub numbered: bool,
    /// The column (in chars) where the options' text (or number) starts.
    pub text_column: usize,
}

/// Characters that frame a dialog's rows.
pub(super) fn is_border(c: char) -> bool {
    matches!(c, '│' | '┃' | '║' | '|' | '▌' | '▐')
}

/// The row without the frame at its start: the column (in chars) where its content starts,
/// and the content. `None` for a row with nothing in it but spaces and borders.
pub(super) fn content(row: &str) -> Option<(usize, &str)> {
    let mut column = 0;
    for (offset, c) in row.char_indices() {
        if c == ' ' || is_border(c) {
            column += 1;
            continue;
        }
        let rest = row[offset..].trim_end_matches(|c: char| c == ' ' || is_border(c));
        return (!rest.is_empty()).then_some((column, rest));
    }
    None
}

/// `1. ` / `12) `: the length of a number marker at the start of `text`, if there is one
/// followed by option text.
pub(super) fn number_marker(text: &str) -> Option<usize> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if !(1..=2).contains(&digits) {
        return None;
    }
    let rest = &text[digits..];
    let mut chars = rest.chars();
    if !matches!(chars.next(), Some('.' | ')')) || chars.next() != Some(' ') {
        return None;
    }
    let after = rest[2..].trim_start();
    (!after.is_empty()).then_some(digits + 2)
}

/// What a row is, seen from the pointed option whose text starts at `text_column`.
pub(super) enum Row {
    /// Another option of the menu.
    Option,
    /// A row that belongs to the option above (indented deeper).
    Continuation,
    /// Not part of the menu.
    Other,
}

pub(super) fn classify(row: &str, text_column: usize, numbered: bool) -> Row {
    let Some((column, text)) = content(row) else {
        return Row::Other;
    };
    if numbered {
        // Numbers may be right-aligned (` 9.` above `10.`): one column of slack.
        if number_marker(text).is_some() && column.abs_diff(text_column) <= 1 {
            return Row::Option;
        }
    } else if column == text_column {
        return Row::Option;
    }
    if column > text_column {
        Row::Continuation
    } else {
        Row::Other
    }
}

/// Options found walking away from the pointer row (`rows` in walking order).
fn count_options<'a>(rows: impl Iterator<Item = &'a str>, column: usize, numbered: bool) -> usize {
    let mut options = 0;
    for row in rows {
        match classify(row, column, numbered) {
            Row::Option => options += 1,
            Row::Continuation => {}
            Row::Other => break,
        }
    }
    options
}

impl Menu {
    /// The last menu on `rows` (searched bottom up) that satisfies this menu's conditions.
    pub fn find(&self, rows: &[&str]) -> Option<MenuMatch> {
        (0..rows.len()).rev().find_map(|index| self.at(rows, index))
    }

    fn at(&self, rows: &[&str], index: usize) -> Option<MenuMatch> {
        let (column, text) = content(rows[index])?;
        let pointer = text.chars().next()?;
        if !self.pointers.contains(pointer) {
            return None;
        }
        let after = &text[pointer.len_utf8()..];
        let spaces = after.chars().take_while(|&c| c == ' ').count();
        if spaces == 0 {
            return None;
        }
        let option_text = &after[spaces..];
        if option_text.is_empty() {
            return None;
        }
        let numbered = number_marker(option_text).is_some();
        if self.numbered.is_some_and(|wanted| wanted != numbered) {
            return None;
        }
        // The column where the pointed option's text (or number) starts.
        let text_column = column + 1 + spaces;
        let below = count_options(rows[index + 1..].iter().copied(), text_column, numbered);
        let above = count_options(rows[..index].iter().rev().copied(), text_column, numbered);
        let options = 1 + above + below;
        (options >= self.min_options).then_some(MenuMatch {
            pointer_row: index,
            options,
            numbered,
            text_column,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::rules::DEFAULT_MENU_POINTERS;

    fn menu(numbered: Option<bool>) -> Menu {
        Menu {
            numbered,
            min_options: 2,
            pointers: DEFAULT_MENU_POINTERS.to_string(),
        }
    }

    fn find(numbered: Option<bool>, text: &str) -> Option<MenuMatch> {
        let rows: Vec<&str> = text.lines().collect();
        menu(numbered).find(&rows)
    }

    #[test]
    fn numbered_options_under_a_pointer_are_a_menu() {
        let screen = " Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access\n   3. No\n\n Esc to cancel";
        let found = find(Some(true), screen).unwrap();
        assert_eq!(
            (found.pointer_row, found.options, found.numbered),
            (1, 3, true)
        );
        // The pointer on a later option: options above count too.
        let lower = "› 1. Yes, proceed (y)\n  2. Yes, and don't ask again\n› 3. No (esc)";
        assert!(find(Some(true), &lower.replacen('›', " ", 1)).is_some());
    }

    #[test]
    fn framed_and_described_options_count() {
        let gemini = "│ Allow execution of [Shell]?       │\n│                                   │\n│ ● 1. Allow once                   │\n│   2. Allow for this session       │\n│   3. No, suggest changes (esc)    │\n╰───────────────────────────────────╯";
        assert_eq!(find(Some(true), gemini).unwrap().options, 3);
        let described = " ❯ Yes, make it my default\n     (you can change it in /permissions)\n   No, ask me each time";
        let found = find(Some(false), described).unwrap();
        assert_eq!((found.options, found.numbered), (2, false));
    }

    #[test]
    fn a_prompt_row_is_no_menu() {
        // Claude Code's input box, typed or empty.
        assert!(
            find(
                None,
                "────────\n❯ what is 1. or 2.?\n────────\n  ? for shortcuts"
            )
            .is_none()
        );
        assert!(find(None, "────────\n❯ \n────────").is_none());
        // Codex: the prompt row, a blank row, the footer in the prompt text's column.
        assert!(find(None, "› fail:401\n\n  gpt-5 default · /tmp/work").is_none());
        // An answer that is a numbered list, without a pointer.
        assert!(find(None, "• Here:\n  1. one\n  2. two").is_none());
        // A single pointed option.
        assert!(find(None, " ❯ 1. Yes").is_none());
    }

    #[test]
    fn rules_can_ask_for_numbered_or_plain_options_and_other_pointers() {
        let plain = " ❯ Yes\n   No";
        assert!(find(Some(true), plain).is_none());
        assert!(find(Some(false), plain).is_some());
        let mut claude = menu(None);
        claude.pointers = "❯›".into();
        let answer = "● 1. First step\n  2. Second step";
        assert!(claude.find(&answer.lines().collect::<Vec<_>>()).is_none());
        assert!(find(None, answer).is_some());
    }

    #[test]
    fn right_aligned_numbers_line_up() {
        let long = "  9. nine\n❯ 10. ten\n 11. eleven";
        let rows: Vec<&str> = long.lines().collect();
        let mut wide = menu(Some(true));
        wide.min_options = 3;
        assert_eq!(wide.find(&rows).unwrap().options, 3);
    }
}
