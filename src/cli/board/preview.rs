//! The live board's preview of an agent's screen: the daemon's mirror (`GET
//! /v1/panes/{pane}/screen?format=ansi`) read back into a grid of cells, drawn with its colours
//! and attributes into the board. Only cells reach the board's terminal, never the pane's
//! bytes: nothing a program printed can move the board's cursor or change its modes.

use std::num::NonZeroU16;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// A pane's screen as the daemon mirrors it.
#[derive(Debug, Clone)]
pub(in crate::cli) struct Screen {
    /// The rows with SGR attributes, separated by `\n` (the daemon's ANSI dump).
    pub ansi: Vec<u8>,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// The cursor's row.
    pub cursor_row: u16,
}

impl Screen {
    /// Reads the size (`WxH`) and cursor (`COL,ROW`) headers of the screen route.
    pub fn from_answer(ansi: Vec<u8>, size: Option<&str>, cursor: Option<&str>) -> Screen {
        let (width, height) = size
            .and_then(|s| s.split_once('x'))
            .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
            .unwrap_or((80, 24));
        let cursor_row = cursor
            .and_then(|c| c.split_once(','))
            .and_then(|(_, row)| row.parse().ok())
            .unwrap_or(0);
        Screen {
            ansi,
            width,
            height,
            cursor_row,
        }
    }
}

/// An agent's screen, ready to draw.
pub(super) struct Preview {
    /// Which agent (the board's target).
    pub target: String,
    parser: vt100::Parser,
    cursor_row: u16,
}

impl Preview {
    /// The screen of `target`, read into cells.
    pub fn new(target: String, screen: &Screen) -> Preview {
        let cells = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(cells(screen.height), cells(screen.width), 0);
        // The dump separates rows by a bare `\n`: each starts back at the left margin.
        let mut bytes = Vec::with_capacity(screen.ansi.len() + usize::from(screen.height));
        for &byte in &screen.ansi {
            if byte == b'\n' {
                bytes.push(b'\r');
            }
            bytes.push(byte);
        }
        parser.process(&bytes);
        Preview {
            target,
            parser,
            cursor_row: screen.cursor_row,
        }
    }

    /// The screen as a widget, in colour or not.
    pub fn widget(&self, colour: bool) -> PreviewWidget<'_> {
        PreviewWidget {
            screen: self.parser.screen(),
            cursor_row: self.cursor_row,
            colour,
        }
    }
}

/// Draws a screen into an area that may be smaller: its left columns, and the rows that end
/// at the cursor or the last row with text, whichever is lower (where an agent's prompt and
/// dialogs are).
pub(super) struct PreviewWidget<'a> {
    screen: &'a vt100::Screen,
    cursor_row: u16,
    colour: bool,
}

impl PreviewWidget<'_> {
    /// The first row drawn, for an area this high.
    fn first_row(&self, area_height: u16) -> u16 {
        let (rows, cols) = self.screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let last_text = (0..rows)
            .rev()
            .find(|&row| {
                (0..cols).any(|col| {
                    self.screen
                        .cell(row, col)
                        .is_some_and(|cell| !cell.contents().trim().is_empty())
                })
            })
            .unwrap_or(0);
        let end = last_text.max(self.cursor_row.min(rows - 1)) + 1;
        end.saturating_sub(area_height)
    }

    fn style(&self, cell: &vt100::Cell) -> Style {
        let mut style = Style::default();
        if self.colour {
            style = style.fg(colour(cell.fgcolor())).bg(colour(cell.bgcolor()));
        }
        let mut modifier = Modifier::empty();
        for (on, flag) in [
            (cell.bold(), Modifier::BOLD),
            (cell.dim(), Modifier::DIM),
            (cell.italic(), Modifier::ITALIC),
            (cell.underline(), Modifier::UNDERLINED),
            (cell.inverse(), Modifier::REVERSED),
        ] {
            if on {
                modifier |= flag;
            }
        }
        style.add_modifier(modifier)
    }
}

fn colour(colour: vt100::Color) -> Color {
    match colour {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(index) => Color::Indexed(index),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

impl Widget for PreviewWidget<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let first = self.first_row(area.height);
        for (y, row) in (area.top()..area.bottom()).zip(first..rows.get()) {
            let mut x = area.left();
            for col in 0..cols.get() {
                if x >= area.right() {
                    break;
                }
                let Some(cell) = self.screen.cell(row, col) else {
                    break;
                };
                if cell.is_wide_continuation() {
                    continue;
                }
                let width: u16 = if cell.is_wide() { 2 } else { 1 };
                let contents = cell.contents();
                // A wide character that would be cut at the right edge is left out, as
                // tmux does.
                let symbol = if x + width > area.right()
                    || contents.is_empty()
                    || contents.chars().any(char::is_control)
                {
                    " "
                } else {
                    contents
                };
                buf.set_stringn(
                    x,
                    y,
                    symbol,
                    usize::from(area.right() - x),
                    self.style(cell),
                );
                x += width;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(ansi: &[u8], width: u16, height: u16, cursor_row: u16) -> Screen {
        Screen {
            ansi: ansi.to_vec(),
            width,
            height,
            cursor_row,
        }
    }

    fn drawn(preview: &Preview, width: u16, height: u16, colour: bool) -> Buffer {
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        preview.widget(colour).render(area, &mut buf);
        buf
    }

    fn text(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| {
                let mut line = String::new();
                let mut x = 0;
                while x < buf.area.width {
                    let symbol = buf[(x, y)].symbol();
                    line.push_str(symbol);
                    x += u16::try_from(symbol.width().max(1)).unwrap_or(1);
                }
                line.trim_end().to_string()
            })
            .collect()
    }

    use unicode_width::UnicodeWidthStr;

    #[test]
    fn the_rows_near_the_prompt_are_shown_with_their_colours() {
        let dump =
            b"one\x1b[m\n\x1b[31mred\x1b[m\x1b[m\ntwo\x1b[m\n> \x1b[1mask\x1b[m\n\x1b[m\n\x1b[m";
        let preview = Preview::new("%1".into(), &screen(dump, 10, 6, 3));
        let buf = drawn(&preview, 10, 3, true);
        assert_eq!(text(&buf), ["red", "two", "> ask"]);
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(1));
        assert!(buf[(2, 2)].modifier.contains(Modifier::BOLD));
        // Without colour the attributes stay, the colours go.
        let plain = drawn(&preview, 10, 3, false);
        assert_eq!(plain[(0, 0)].fg, Color::Reset);
        assert!(plain[(2, 2)].modifier.contains(Modifier::BOLD));
        // A larger area: from the top.
        assert_eq!(
            text(&drawn(&preview, 10, 8, true))[..4],
            ["one", "red", "two", "> ask"]
        );
    }

    #[test]
    fn the_cursor_below_the_text_keeps_its_row_in_view() {
        let preview = Preview::new("%1".into(), &screen(b"top\n\n\n\n", 5, 5, 4));
        assert_eq!(text(&drawn(&preview, 5, 2, true)), ["", ""]);
        assert_eq!(text(&drawn(&preview, 5, 5, true))[0], "top");
    }

    #[test]
    fn wide_characters_are_whole_or_left_out_and_controls_never_pass() {
        let dump = "ab\x1b]0;title\x07漢字".as_bytes();
        let preview = Preview::new("%1".into(), &screen(dump, 8, 1, 0));
        assert_eq!(text(&drawn(&preview, 8, 1, true)), ["ab漢字"]);
        // 5 columns: the second wide character would be cut.
        assert_eq!(text(&drawn(&preview, 5, 1, true)), ["ab漢"]);
    }

    #[test]
    fn headers_give_size_and_cursor() {
        let s = Screen::from_answer(Vec::new(), Some("120x40"), Some("3,17"));
        assert_eq!((s.width, s.height, s.cursor_row), (120, 40, 17));
        let s = Screen::from_answer(Vec::new(), Some("junk"), None);
        assert_eq!((s.width, s.height, s.cursor_row), (80, 24, 0));
    }
}
