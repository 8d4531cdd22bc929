//! A dialog on an agent's screen as data: the question, the options in order, which one is
//! pointed at, the keys that pick each, and a fingerprint of the dialog as shown.
//!
//! The dialog layer already knows a dialog when it sees one ([`super::menu`]); this reads what
//! it says, so that a person or an orchestrator can answer it by option rather than by keys
//! typed blind. Two shapes are read, whatever the CLI:
//!
//! - a **menu**: options one per row under a pointer glyph (Claude Code, Codex, Gemini CLI);
//!   an option is picked by moving the pointer to it and pressing Enter, which works whether
//!   or not the CLI also takes digits;
//! - a **letter prompt** on the last row: `Run shell command? (Y)es/(N)o/(D)on't ask again
//!   [Yes]:` (Aider); an option is picked by its letter and Enter;
//! - **buttons** side by side on one row, the selected one told only by its colour (OpenCode
//!   and Kilo CLI: `Allow once   Allow always   Reject`); an option is picked by moving the
//!   selection to it with Left or Right and pressing Enter.
//!
//! The fingerprint hashes the question and the options' text, not the pointer: the same dialog
//! with the pointer moved is the same decision, another dialog in the same place is not.
//! Sans-IO: rows in, data out.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::menu::{Row, classify, content, is_border, number_marker};
use super::rules::{DEFAULT_MENU_POINTERS, Menu, Provider};
use super::shading::RowShade;

/// The most rows above the options read as the question.
const QUESTION_ROWS: usize = 12;

/// A dialog's question and options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Decision {
    /// The dialog's text above its options (what is asked, the command and why), one line per
    /// screen row.
    pub question: String,
    /// The options, in the order shown.
    pub options: Vec<Choice>,
    /// Identifies this dialog as shown (16 hex digits): answers name it so that they never
    /// land on another dialog.
    pub fingerprint: String,
}

/// One option of a dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Choice {
    /// Its number as shown in a numbered menu, else its place from 1.
    pub number: usize,
    /// Its text as shown, without pointer or number.
    pub label: String,
    /// Rows under it that belong to it (a description, the rest of a wrapped label).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Whether the pointer is on it (or, for a letter prompt, whether it is the default).
    pub pointed: bool,
    /// The tmux key names that pick it, in order.
    pub keys: Vec<String>,
}

/// Which option an answer asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// By number (as shown in a numbered menu, else the place from 1).
    Option(usize),
    /// By label: the option whose label is this text (ignoring case), else the one option
    /// whose label starts with it.
    Label(String),
    /// The dialog's first affirmative option (Yes, Allow, Approve, Proceed, Trust, ...).
    Yes,
    /// The dialog's first negative option (No, Deny, Reject, Cancel, Don't, ...).
    No,
}

/// Why an answer names no option of the dialog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no option {asked} in this dialog; its options are: {}", .options.join("; "))]
pub struct NoSuchOption {
    /// What was asked for, as said to a person.
    pub asked: String,
    /// The dialog's options, numbered.
    pub options: Vec<String>,
}

const AFFIRMATIVE: &[&str] = &[
    "yes", "y", "allow", "approve", "proceed", "trust", "accept", "continue", "ok", "confirm",
];
const NEGATIVE: &[&str] = &[
    "no", "n", "deny", "reject", "cancel", "don't", "do not", "decline", "esc", "abort",
];

/// Whether `label` starts with one of `words` as a whole word (any case).
fn starts_with_word(label: &str, words: &[&str]) -> bool {
    let label = label.trim().to_lowercase();
    words.iter().any(|word| {
        label.strip_prefix(word).is_some_and(|rest| {
            rest.chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '\'')
        })
    })
}

impl Decision {
    /// The option `answer` asks for.
    pub fn choose(&self, answer: &Answer) -> Result<&Choice, NoSuchOption> {
        let found = match answer {
            Answer::Option(number) => self.options.iter().find(|c| c.number == *number),
            Answer::Label(text) => {
                let wanted = text.trim().to_lowercase();
                let exact = self
                    .options
                    .iter()
                    .find(|c| c.label.to_lowercase() == wanted);
                let mut prefixed = self
                    .options
                    .iter()
                    .filter(|c| !wanted.is_empty() && c.label.to_lowercase().starts_with(&wanted));
                exact.or_else(|| match (prefixed.next(), prefixed.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                })
            }
            Answer::Yes => self
                .options
                .iter()
                .find(|c| starts_with_word(&c.label, AFFIRMATIVE)),
            Answer::No => self
                .options
                .iter()
                .find(|c| starts_with_word(&c.label, NEGATIVE)),
        };
        found.ok_or_else(|| NoSuchOption {
            asked: match answer {
                Answer::Option(number) => number.to_string(),
                Answer::Label(text) => format!("{text:?}"),
                Answer::Yes => "yes".into(),
                Answer::No => "no".into(),
            },
            options: self
                .options
                .iter()
                .map(|c| format!("{}. {}", c.number, c.label))
                .collect(),
        })
    }
}

/// The decision on a screen of `provider`'s agent: its menus with the pointers the provider's
/// dialogs use. `shades` says how the rows are coloured (empty when not known): a numbered
/// menu with no pointer glyph whose selected option is told by its background alone (Grok
/// CLI) is read with that option pointed, and buttons side by side whose selected one is told
/// by its colour (OpenCode) are read as options.
pub fn for_provider(provider: &Provider, rows: &[&str], shades: &[RowShade]) -> Option<Decision> {
    let menu = Menu {
        numbered: None,
        min_options: 2,
        pointers: provider
            .layer_use
            .pointers
            .clone()
            .unwrap_or_else(|| DEFAULT_MENU_POINTERS.to_string()),
    };
    extract(rows, &menu)
        .or_else(|| {
            let marked = highlighted_as_pointed(rows, shades, menu.pointers.chars().next()?)?;
            let marked: Vec<&str> = marked.iter().map(String::as_str).collect();
            from_menu(&marked, &menu)
        })
        .or_else(|| from_buttons(rows, shades))
        .or_else(|| {
            // Last: numbered options apart by blank rows (Codex's first-run sign-in menus).
            let compact = without_blank_rows_between_options(rows)?;
            let compact: Vec<&str> = compact.iter().map(String::as_str).collect();
            from_menu(&compact, &menu)
        })
}

/// The column (in chars) where a numbered option without a pointer starts on `row` (`1. Yes`,
/// inside a frame or not).
fn plain_option_column(row: &str) -> Option<usize> {
    let (column, text) = content(row)?;
    number_marker(text).is_some().then_some(column)
}

/// The column (in chars) where a numbered option's number starts on `row`, after any frame
/// and pointer glyph: `> 1. Sign in` and `  2. Use a key` both give 2.
fn numbered_option_column(row: &str) -> Option<usize> {
    if let Some(column) = plain_option_column(row) {
        return Some(column);
    }
    let (column, text) = content(row)?;
    let mut chars = text.chars();
    let pointer = chars.next()?;
    let rest = chars.as_str();
    let spaces = rest.chars().take_while(|&c| c == ' ').count();
    (!pointer.is_alphanumeric() && spaces > 0 && number_marker(&rest[spaces..]).is_some())
        .then_some(column + 1 + spaces)
}

/// `rows` without the blank rows that stand between the numbered options of one menu (at one
/// column, each option's deeper rows under it): a menu read so has its options together. `None`
/// when no blank row stands so.
fn without_blank_rows_between_options(rows: &[&str]) -> Option<Vec<String>> {
    let mut kept: Vec<String> = Vec::with_capacity(rows.len());
    // The column of the menu the rows above belong to, while they do.
    let mut menu: Option<usize> = None;
    let mut dropped = false;
    for (index, row) in rows.iter().enumerate() {
        match (content(row), numbered_option_column(row)) {
            (None, _) => {
                let next = rows[index + 1..].iter().find(|r| content(r).is_some());
                let joins = menu.is_some_and(|column| {
                    next.and_then(|r| numbered_option_column(r)) == Some(column)
                });
                if joins {
                    dropped = true;
                    continue;
                }
            }
            (Some(_), Some(column)) if menu.is_none_or(|m| m == column) => menu = Some(column),
            (Some((column, _)), None) if menu.is_some_and(|m| column > m) => {}
            _ => menu = None,
        }
        kept.push(row.to_string());
    }
    dropped.then_some(kept)
}

/// The widest gap (in spaces) between two buttons of one row; hints further right (`ctrl+f
/// fullscreen  ⇆ select`) sit further away.
const BUTTON_GAP: usize = 4;

/// The longest label read as a button.
const BUTTON_LABEL: usize = 40;

/// Buttons side by side: the lowest row where a stretch of text singled out by its colour
/// (see [`RowShade::singled_out`]) is one of two or more labels, each apart from the next by
/// two to [`BUTTON_GAP`] spaces. The options are those labels, the selected one pointed; the
/// question is the dialog's text above the row.
fn from_buttons(rows: &[&str], shades: &[RowShade]) -> Option<Decision> {
    shades.iter().enumerate().rev().find_map(|(index, shade)| {
        let row = rows.get(index)?;
        (shade.singled_out.iter()).find_map(|selected| buttons(rows, index, row, selected))
    })
}

/// The buttons of `row` (the `index`th of `rows`) if `selected` is one of them.
fn buttons(rows: &[&str], index: usize, row: &str, selected: &str) -> Option<Decision> {
    let segments = segments(row);
    let at = segments.iter().position(|(_, _, text)| *text == selected)?;
    // The buttons next to the selected one, on both sides.
    let mut first = at;
    while first > 0 && segments[first].0 - segments[first - 1].1 <= BUTTON_GAP {
        first -= 1;
    }
    let mut last = at;
    while last + 1 < segments.len() && segments[last + 1].0 - segments[last].1 <= BUTTON_GAP {
        last += 1;
    }
    let buttons = &segments[first..=last];
    let is_label =
        |text: &str| text.chars().count() <= BUTTON_LABEL && text.chars().any(char::is_alphabetic);
    if buttons.len() < 2 || !buttons.iter().all(|(_, _, text)| is_label(text)) {
        return None;
    }
    let pointed = at - first;
    let options: Vec<Choice> = buttons
        .iter()
        .enumerate()
        .map(|(place, (_, _, label))| {
            let key = if place > pointed { "Right" } else { "Left" };
            Choice {
                number: place + 1,
                label: label.to_string(),
                detail: String::new(),
                pointed: place == pointed,
                keys: std::iter::repeat_n(key.to_string(), place.abs_diff(pointed))
                    .chain(std::iter::once("Enter".to_string()))
                    .collect(),
            }
        })
        .collect();
    let question = question_above(rows, index);
    Some(Decision {
        fingerprint: fingerprint(&question, &options),
        question,
        options,
    })
}

/// A row's pieces of text apart by two spaces or more, each as its first column, the column
/// after it (in chars) and its text; frame glyphs are not text.
fn segments(row: &str) -> Vec<(usize, usize, &str)> {
    let mut segments = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut end = (0, 0);
    let mut spaces = 0;
    for (column, (offset, c)) in row.char_indices().enumerate() {
        if c == ' ' || is_border(c) {
            spaces += 1;
            if spaces >= 2
                && let Some((first, from)) = start.take()
            {
                segments.push((first, end.0, &row[from..end.1]));
            }
            continue;
        }
        spaces = 0;
        start.get_or_insert((column, offset));
        end = (column + 1, offset + c.len_utf8());
    }
    if let Some((first, from)) = start {
        segments.push((first, end.0, &row[from..end.1]));
    }
    segments
}

/// `rows` with a pointer glyph put before the one selected option of a numbered menu drawn
/// without pointers, so that the menu reader sees which one is selected: options `N. label`
/// at one column (inside a frame or not, rows indented deeper between them belong to the
/// option above), exactly one of them shaded, or exactly one on another background than the
/// others (three options or more: with two, either could be the odd one). `None` when there
/// is no such menu.
fn highlighted_as_pointed(
    rows: &[&str],
    shades: &[RowShade],
    pointer: char,
) -> Option<Vec<String>> {
    let option_column = |row: &str| plain_option_column(row).filter(|&column| column >= 2);
    let mut end = rows.len();
    while end > 0 {
        let Some(width) = option_column(rows[end - 1]) else {
            end -= 1;
            continue;
        };
        // Up while rows are options at this column or deeper rows under one.
        let mut start = end - 1;
        while start > 0 {
            let above = rows[start - 1];
            match (option_column(above), content(above)) {
                (Some(column), _) if column == width => start -= 1,
                (None, Some((column, _))) if column > width => start -= 1,
                _ => break,
            }
        }
        let options: Vec<usize> = (start..end)
            .filter(|&i| option_column(rows[i]) == Some(width))
            .collect();
        if let Some(selected) = selected_option(&options, shades) {
            let mut marked: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
            let row = rows[selected];
            let before: String = row.chars().take(width - 2).collect();
            let text: String = row.chars().skip(width).collect();
            marked[selected] = format!("{before}{pointer} {text}");
            return Some(marked);
        }
        end = start;
    }
    None
}

/// The one option row of `options` marked by its colour (see [`highlighted_as_pointed`]).
fn selected_option(options: &[usize], shades: &[RowShade]) -> Option<usize> {
    if options.len() < 2 {
        return None;
    }
    let shade = |i: usize| shades.get(i).cloned().unwrap_or_default();
    let lit: Vec<usize> = options
        .iter()
        .copied()
        .filter(|&i| shade(i).shaded)
        .collect();
    if let [selected] = lit.as_slice() {
        return Some(*selected);
    }
    if options.len() < 3 {
        return None;
    }
    let background = |i: usize| shade(i).text_background;
    let odd: Vec<usize> = options
        .iter()
        .copied()
        .filter(|&i| {
            options
                .iter()
                .filter(|&&j| background(j) == background(i))
                .count()
                == 1
        })
        .collect();
    match odd.as_slice() {
        [selected] if background(*selected).is_some() => Some(*selected),
        _ => None,
    }
}

/// The decision on `rows` (the screen's rows, top to bottom): the last menu `menu` finds, else
/// a letter prompt on the last row with text. `None` when neither is there.
pub fn extract(rows: &[&str], menu: &Menu) -> Option<Decision> {
    let rows: Vec<&str> = rows.iter().map(|row| without_scrollbar(row)).collect();
    from_menu(&rows, menu).or_else(|| from_letter_prompt(&rows))
}

/// A row without the scrollbar a full-screen CLI draws in its last column (Qwen Code's `█`
/// thumb): the glyph alone, or after spaces at the end of the row. It is not text of the
/// dialog, and on a row of its own it is no more than a blank row.
pub(crate) fn without_scrollbar(row: &str) -> &str {
    let trimmed = row.trim_end();
    match trimmed.strip_suffix(['█', '▐', '▕', '▌', '░', '▒', '▓']) {
        Some(rest) if rest.is_empty() || rest.ends_with("  ") => rest.trim_end(),
        _ => row,
    }
}

fn from_menu(rows: &[&str], menu: &Menu) -> Option<Decision> {
    let found = menu.find(rows)?;
    let column = found.text_column;
    // The first row of the menu: walk up from the pointer while rows belong to it.
    let mut first = found.pointer_row;
    while first > 0 {
        match classify(rows[first - 1], column, found.numbered) {
            Row::Option | Row::Continuation => first -= 1,
            Row::Other => break,
        }
    }
    // A continuation above the first option is not part of it.
    while first < found.pointer_row
        && !matches!(classify(rows[first], column, found.numbered), Row::Option)
    {
        first += 1;
    }
    let mut options: Vec<Choice> = Vec::new();
    for (index, row) in rows.iter().enumerate().skip(first) {
        let kind = if index == found.pointer_row {
            Row::Option
        } else {
            classify(row, column, found.numbered)
        };
        let text = option_text(row, column);
        match kind {
            Row::Option => {
                // A numbered menu keeps its numbers (a scrolled one starts past 1).
                let marker = found.numbered.then(|| number_marker(text)).flatten();
                let shown = marker.and_then(|len| text[..len - 2].parse().ok());
                let label = marker.map_or(text, |len| text[len..].trim_start());
                options.push(Choice {
                    number: shown.unwrap_or(options.len() + 1),
                    label: label.to_string(),
                    detail: String::new(),
                    pointed: index == found.pointer_row,
                    keys: Vec::new(),
                });
            }
            Row::Continuation => {
                if let Some(last) = options.last_mut() {
                    if !last.detail.is_empty() {
                        last.detail.push('\n');
                    }
                    last.detail.push_str(content(row).map_or("", |(_, t)| t));
                }
            }
            Row::Other if index > found.pointer_row => break,
            Row::Other => {}
        }
    }
    let pointed = options.iter().position(|c| c.pointed)?;
    for (place, choice) in options.iter_mut().enumerate() {
        let key = if place > pointed { "Down" } else { "Up" };
        choice.keys = std::iter::repeat_n(key.to_string(), place.abs_diff(pointed))
            .chain(std::iter::once("Enter".to_string()))
            .collect();
    }
    let question = question_above(rows, first);
    Some(Decision {
        fingerprint: fingerprint(&question, &options),
        question,
        options,
    })
}

/// An option row's text from `column` on: the pointed row's text after its pointer, the
/// others' text where it starts.
fn option_text(row: &str, column: usize) -> &str {
    let Some((start, text)) = content(row) else {
        return "";
    };
    if start >= column {
        return text;
    }
    // Skip the pointer glyph and the spaces after it.
    let mut chars = text.char_indices().skip(column - start);
    chars
        .next()
        .map_or("", |(offset, _)| text[offset..].trim_start())
}

/// Characters of a rule row: a row made only of these is a rule, not text.
fn is_rule_char(c: char) -> bool {
    ('\u{2500}'..='\u{257f}').contains(&c) || matches!(c, '▀' | '▄' | ' ')
}

/// A dashed rule (Claude Code frames the command it asks about with them): part of the dialog.
fn is_dashed_rule(text: &str) -> bool {
    text.chars()
        .all(|c| matches!(c, '╌' | '┄' | '┈' | '╍' | '┅' | '┉' | ' '))
}

/// The rows above the menu that ask: up from the menu past blank rows right above it, then
/// until two blank rows in a row, a solid rule or [`QUESTION_ROWS`] rows. A single blank row
/// separates paragraphs of the question. A rule inside the dialog's frame (the border of a
/// box within it, as Gemini CLI frames the command it asks about) is part of the dialog: the
/// walk goes on past it, so the command is in the question (and its fingerprint).
fn question_above(rows: &[&str], first: usize) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut index = first;
    let mut blanks = 0;
    while index > 0 && lines.len() < QUESTION_ROWS {
        index -= 1;
        match content(rows[index]) {
            None if lines.is_empty() => continue,
            None => {
                blanks += 1;
                if blanks == 2 {
                    break;
                }
            }
            Some((_, text)) if is_dashed_rule(text) => {}
            Some((_, text)) if text.chars().all(is_rule_char) => {
                let framed = rows[index].trim_start().starts_with(['│', '┃', '║']);
                if !framed {
                    break;
                }
            }
            Some((_, text)) => {
                if blanks == 1 {
                    lines.push("");
                }
                blanks = 0;
                lines.push(text);
            }
        }
    }
    lines.reverse();
    lines.join("\n")
}

/// `(Y)es/(N)o/(D)on't ask again` at the end of a prompt.
/// (`None` only if the pattern were wrong, which a unit test rules out.)
static LETTER_OPTIONS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\([A-Za-z]\)[^/()]*(?:/\([A-Za-z]\)[^/()]*)+$").ok());

/// `(Y)es/(N)o/(D)on't ask again [Yes]:` at the end of the last row with text. The question is
/// that row's text before the options, under the row above it when that has text: Aider prints
/// the command it asks about there (`touch notes.txt` over `Run shell command?`), so two
/// prompts about two commands are two decisions.
fn from_letter_prompt(rows: &[&str]) -> Option<Decision> {
    let (index, last) = rows
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, row)| Some((index, content(row)?.1)))?;
    let subject = index
        .checked_sub(1)
        .and_then(|above| content(rows[above]))
        .map(|(_, text)| text)
        .filter(|text| !text.chars().all(is_rule_char));
    let (before_default, default) = match last.trim_end().strip_suffix(':') {
        Some(rest) => match rest.trim_end().strip_suffix(']') {
            Some(rest) => {
                let open = rest.rfind('[')?;
                (&rest[..open], Some(rest[open + 1..].trim()))
            }
            None => (rest, None),
        },
        None => (last.trim_end(), None),
    };
    let before_default = before_default.trim_end();
    // The options: `(L)abel` parts joined by `/` at the end.
    let tail = LETTER_OPTIONS.as_ref()?.find(before_default)?.as_str();
    let mut options = Vec::new();
    for part in tail.split('/') {
        let mut chars = part.chars();
        let (Some('('), Some(letter), Some(')')) = (chars.next(), chars.next(), chars.next())
        else {
            return None;
        };
        if !letter.is_ascii_alphabetic() {
            return None;
        }
        let label = format!("{letter}{}", chars.as_str());
        options.push(Choice {
            number: options.len() + 1,
            pointed: default.is_some_and(|d| d.eq_ignore_ascii_case(&label)),
            keys: vec![letter.to_ascii_lowercase().to_string(), "Enter".into()],
            label,
            detail: String::new(),
        });
    }
    if options.len() < 2 {
        return None;
    }
    let asked = before_default[..before_default.len() - tail.len()].trim();
    let question = match subject {
        Some(subject) => format!("{subject}\n{asked}"),
        None => asked.to_string(),
    };
    Some(Decision {
        fingerprint: fingerprint(&question, &options),
        question,
        options,
    })
}

/// FNV-1a over the question and the options' text: stable across runs and machines.
fn fingerprint(question: &str, options: &[Choice]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    };
    feed(question.as_bytes());
    for choice in options {
        feed(choice.label.as_bytes());
        feed(choice.detail.as_bytes());
    }
    format!("{hash:016x}")
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
