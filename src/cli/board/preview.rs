//! The live board's preview of an agent's screen: the daemon's mirror (`GET
//! /v1/panes/{pane}/screen?format=ansi`) read back into a grid of cells, drawn with its colours
//! and attributes into the board. Only cells reach the board's terminal, never the pane's
//! bytes: nothing a program printed can move the board's cursor or change its modes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use panectl::screen::{Attrs, Colour, PaneScreen, StyledCell};

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
    rows: Vec<Vec<StyledCell>>,
    cursor_row: u16,
}

impl Preview {
    /// The screen of `target`, read into cells (by panectl's own screen model, the one the
    /// daemon mirrors panes with).
    pub fn new(target: String, screen: &Screen) -> Preview {
        let mut cells = PaneScreen::with_scrollback(screen.width, screen.height, 0);
        // The dump separates rows by a bare `\n`: each starts back at the left margin.
        let mut bytes = Vec::with_capacity(screen.ansi.len() + usize::from(screen.height));
        for &byte in &screen.ansi {
            if byte == b'\n' {
                bytes.push(b'\r');
            }
            bytes.push(byte);
        }
        cells.feed(&bytes);
        Preview {
            target,
            rows: cells.styled_rows(),
            cursor_row: screen.cursor_row,
        }
    }

    /// The screen as a widget, in colour or not.
    pub fn widget(&self, colour: bool) -> PreviewWidget<'_> {
        PreviewWidget {
            rows: &self.rows,
            cursor_row: self.cursor_row,
            colour,
        }
    }
}

/// Draws a screen into an area that may be smaller: its left columns, and the rows that end
/// at the cursor or the last row with text, whichever is lower (where an agent's prompt and
/// dialogs are).
pub(super) struct PreviewWidget<'a> {
    rows: &'a [Vec<StyledCell>],
    cursor_row: u16,
    colour: bool,
}

impl PreviewWidget<'_> {
    /// The first row drawn, for an area this high.
    fn first_row(&self, area_height: u16) -> usize {
        let rows = self.rows.len();
        let last_text = self
            .rows
            .iter()
            .rposition(|row| row.iter().any(|cell| !cell.text.trim().is_empty()))
            .unwrap_or(0);
        let end = last_text.max(usize::from(self.cursor_row).min(rows.saturating_sub(1))) + 1;
        end.saturating_sub(usize::from(area_height))
    }

    fn style(&self, cell: &StyledCell) -> Style {
        let mut style = Style::default();
        if self.colour {
            style = style.fg(colour(cell.style.fg)).bg(colour(cell.style.bg));
        }
        let attrs = cell.style.attrs;
        let mut modifier = Modifier::empty();
        for (attr, flag) in [
            (Attrs::BOLD, Modifier::BOLD),
            (Attrs::DIM, Modifier::DIM),
            (Attrs::ITALIC, Modifier::ITALIC),
            (Attrs::ALL_UNDERLINES, Modifier::UNDERLINED),
            (Attrs::BLINK, Modifier::SLOW_BLINK),
            (Attrs::REVERSE, Modifier::REVERSED),
            (Attrs::HIDDEN, Modifier::HIDDEN),
            (Attrs::STRIKETHROUGH, Modifier::CROSSED_OUT),
        ] {
            if attrs.0 & attr.0 != 0 {
                modifier |= flag;
            }
        }
        style.add_modifier(modifier)
    }
}

fn colour(colour: Colour) -> Color {
    match colour {
        Colour::Default => Color::Reset,
        Colour::Ansi(n) | Colour::Palette(n) => Color::Indexed(n),
        Colour::Bright(n) => Color::Indexed(8 + n),
        Colour::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

/// A character of the DEC line-drawing set (`ESC ( 0`) as the Unicode character a terminal
/// draws for it.
fn line_drawing(text: &str) -> &str {
    match text {
        "j" => "┘",
        "k" => "┐",
        "l" => "┌",
        "m" => "└",
        "n" => "┼",
        "q" => "─",
        "t" => "├",
        "u" => "┤",
        "v" => "┴",
        "w" => "┬",
        "x" => "│",
        "`" => "◆",
        "a" => "▒",
        "f" => "°",
        "g" => "±",
        "~" => "·",
        "y" => "≤",
        "z" => "≥",
        "{" => "π",
        "|" => "≠",
        "}" => "£",
        other => other,
    }
}

impl Widget for PreviewWidget<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let first = self.first_row(area.height);
        for (y, row) in (area.top()..area.bottom()).zip(self.rows.iter().skip(first)) {
            let mut x = area.left();
            for cell in row {
                if x >= area.right() {
                    break;
                }
                let width = u16::from(cell.width.max(1));
                let text = if cell.style.attrs.contains(Attrs::CHARSET) {
                    line_drawing(&cell.text)
                } else {
                    &cell.text
                };
                // A wide character that would be cut at the right edge is left out, as
                // tmux does.
                let symbol = if x + width > area.right()
                    || text.is_empty()
                    || text.chars().any(char::is_control)
                {
                    " "
                } else {
                    text
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
    fn line_drawing_and_bright_colours_are_drawn_as_a_terminal_would() {
        let dump = b"\x1b(0lqk\x1b(B \x1b[91mhot\x1b[m";
        let preview = Preview::new("%1".into(), &screen(dump, 10, 1, 0));
        let buf = drawn(&preview, 10, 1, true);
        assert_eq!(text(&buf), ["┌─┐ hot"]);
        assert_eq!(buf[(4, 0)].fg, Color::Indexed(9));
    }

    #[test]
    fn headers_give_size_and_cursor() {
        let s = Screen::from_answer(Vec::new(), Some("120x40"), Some("3,17"));
        assert_eq!((s.width, s.height, s.cursor_row), (120, 40, 17));
        let s = Screen::from_answer(Vec::new(), Some("junk"), None);
        assert_eq!((s.width, s.height, s.cursor_row), (80, 24, 0));
    }
}
