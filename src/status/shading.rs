//! Which rows of a capture are drawn on a shaded background: some CLIs (Pi) tell the user's
//! prompts and tool rows from the model's answers only by colour, so the last answer is the
//! plain text after the last shaded row.
//!
//! Read from the lines of `capture-pane -p -e` ([`rows`]: text with SGR sequences; tmux writes a
//! colour only where it changes, so the background carries from one line to the next), or from
//! a drawn screen's cells ([`screen_rows`]).

/// A captured row: its text without escape sequences, and whether it is shaded (a character
/// drawn on a background colour, or, for a row with no character, a background set at its
/// end: a padding row of a shaded block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The row's text.
    pub text: String,
    /// Whether it is drawn on a background colour.
    pub shaded: bool,
}

/// The rows of a `capture-pane -e` capture.
pub fn rows<L: AsRef<[u8]>>(lines: &[L]) -> Vec<Row> {
    let mut background = false;
    lines
        .iter()
        .map(|line| {
            let mut text = Vec::new();
            let mut shaded = false;
            let bytes = line.as_ref();
            let mut at = 0;
            while at < bytes.len() {
                match (bytes[at], bytes.get(at + 1)) {
                    (0x1b, Some(b'[')) => {
                        let params = at + 2;
                        let Some(end) = bytes[params..]
                            .iter()
                            .position(|b| (0x40..=0x7e).contains(b))
                        else {
                            break;
                        };
                        if bytes[params + end] == b'm' {
                            background = sgr_background(&bytes[params..params + end], background);
                        }
                        at = params + end + 1;
                    }
                    (0x1b, Some(b']')) => at = osc_end(bytes, at + 2),
                    (0x1b, _) => at += 2,
                    (byte, _) => {
                        shaded |= background && !byte.is_ascii_whitespace();
                        text.push(byte);
                        at += 1;
                    }
                }
            }
            let text = String::from_utf8_lossy(&text).trim_end().to_string();
            let shaded = shaded || (text.trim().is_empty() && background);
            Row { text, shaded }
        })
        .collect()
}

/// How one row of a drawn screen is coloured: what tells a dialog's selected option when no
/// pointer glyph does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowShade {
    /// A character (not a space) is drawn on a background colour: a menu's selected row
    /// (Grok CLI).
    pub shaded: bool,
    /// The background most of the row's text is drawn on (`None`: no text): an option whose
    /// background differs from the other options' is the selected one (OpenCode's questions,
    /// all drawn on a dialog's colour).
    pub text_background: Option<crate::screen::Colour>,
    /// Stretches of the row's text each drawn on a background that no other text of the row
    /// has (reverse video counts as the foreground's background), trimmed: a selected button
    /// among buttons side by side (OpenCode's `Allow once   Allow always   Reject`, where the
    /// others share the row's colour; Kilo CLI's, where they share one of their own). Empty
    /// when the row's text is all of one background.
    pub singled_out: Vec<String>,
}

/// How each visible row of a drawn screen is coloured (see [`RowShade`]). The same test of a
/// shaded row as [`rows`], on cells.
pub fn screen_rows(screen: &crate::screen::PaneScreen) -> Vec<RowShade> {
    screen
        .styled_rows()
        .iter()
        .map(|row| row_shade(row))
        .collect()
}

fn row_shade(row: &[crate::screen::StyledCell]) -> RowShade {
    use crate::screen::{Attrs, Colour};
    let background = |cell: &crate::screen::StyledCell| {
        let style = cell.style.as_seen();
        if style.attrs.contains(Attrs::REVERSE) {
            Some(style.fg)
        } else {
            (style.bg != Colour::Default).then_some(style.bg)
        }
    };
    let shaded = row
        .iter()
        .any(|cell| !cell.text.trim().is_empty() && cell.style.bg != Colour::Default);
    // Text, not a frame: box-drawing and block glyphs (a dialog's border drawn on a colour of
    // its own) do not count.
    let inked = |cell: &crate::screen::StyledCell| {
        cell.text
            .chars()
            .any(|c| !c.is_whitespace() && !('\u{2500}'..='\u{259f}').contains(&c))
    };
    // Stretches of one background, and how many inked cells each has.
    let mut stretches: Vec<(Option<Colour>, String, usize)> = Vec::new();
    for cell in row {
        let colour = background(cell);
        match stretches.last_mut() {
            Some((last, text, inked_cells)) if *last == colour => {
                text.push_str(&cell.text);
                *inked_cells += usize::from(inked(cell));
            }
            _ => stretches.push((colour, cell.text.clone(), usize::from(inked(cell)))),
        }
    }
    let inked: Vec<&(Option<Colour>, String, usize)> = stretches
        .iter()
        .filter(|(_, _, cells)| *cells > 0)
        .collect();
    let singled_out = if inked.len() < 2 {
        Vec::new()
    } else {
        inked
            .iter()
            .filter(|(colour, _, _)| inked.iter().filter(|(c, _, _)| c == colour).count() == 1)
            .map(|(_, text, _)| text.trim().to_string())
            .collect()
    };
    let mut counts: Vec<(Option<Colour>, usize)> = Vec::new();
    for (colour, _, cells) in &inked {
        match counts.iter_mut().find(|(c, _)| c == colour) {
            Some((_, count)) => *count += cells,
            None => counts.push((*colour, *cells)),
        }
    }
    let text_background = counts
        .iter()
        .max_by_key(|(_, count)| *count)
        .map(|(colour, _)| colour.unwrap_or_default());
    RowShade {
        shaded,
        text_background,
        singled_out,
    }
}

/// Where an OSC sequence starting at `from` (after `ESC ]`) ends: after its BEL or `ESC \`.
fn osc_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            0x07 => return at + 1,
            0x1b => return at + 2,
            _ => at += 1,
        }
    }
    at
}

/// Whether a background colour is set after an SGR sequence's parameters.
fn sgr_background(params: &[u8], mut background: bool) -> bool {
    let params = String::from_utf8_lossy(params);
    let mut numbers = params
        .split([';', ':'])
        .map(|p| p.parse::<u16>().unwrap_or(0));
    while let Some(number) = numbers.next() {
        match number {
            0 | 49 => background = false,
            40..=47 | 100..=107 => background = true,
            // Extended colours: `;5;N` or `;2;R;G;B` follow (a foreground's must be skipped
            // too, or its numbers would read as codes).
            38 | 48 | 58 => {
                let skip = match numbers.next() {
                    Some(5) => 1,
                    Some(2) => 3,
                    _ => 0,
                };
                for _ in 0..skip {
                    numbers.next();
                }
                if number == 48 {
                    background = true;
                }
            }
            _ => {}
        }
    }
    background
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_carries_across_lines_until_reset() {
        let rows = rows(&[
            "\x1b[48;2;52;53;65m",
            " my prompt",
            "",
            "\x1b[49m The answer.",
            " \x1b[38;2;48;48;48mgrey text\x1b[39m",
            "\x1b[44m",
            "\x1b[0m after a reset",
        ]);
        let shaded: Vec<bool> = rows.iter().map(|r| r.shaded).collect();
        assert_eq!(shaded, [true, true, true, false, false, true, false]);
        assert_eq!(rows[1].text, " my prompt");
        assert_eq!(rows[3].text, " The answer.");
        assert_eq!(rows[4].text, " grey text");
    }

    #[test]
    fn broken_and_foreign_sequences_are_left_out_without_panicking() {
        let rows = rows(&[
            &b"\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ \x1b[1m"[..],
            b"\x1b[48;5",
            b"\x1b",
            b"\xff\x1b[48;5;1mX",
        ]);
        assert_eq!(rows[0].text, "link");
        assert!(!rows[0].shaded);
        assert_eq!(rows[3].text, "\u{fffd}X");
        assert!(rows[3].shaded);
    }
}
