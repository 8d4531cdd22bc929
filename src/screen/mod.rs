//! The screen of one pane, rebuilt from the bytes its program writes.
//!
//! [`PaneScreen`] wraps a `vt100` terminal of the pane's size. It is fed the unescaped `%output`
//! bytes of the pane, which may cut escape sequences and UTF-8 characters anywhere; the terminal
//! parser keeps its state between calls, so the cuts do not matter. When the stream has a gap (at
//! attach, after `%pause`, after a restart) the screen is rebuilt from a [`Snapshot`] taken with
//! `capture-pane` (protocol notes §4.5, §6.3).

mod cell;

use std::num::NonZeroU16;

pub use cell::{Attrs, Colour, Style, StyledCell};

/// Rows of scrollback kept by default: enough to read an agent's last answer that scrolled off.
pub const DEFAULT_SCROLLBACK: usize = 2000;

/// What `capture-pane` and `list-panes` say about a pane, enough to rebuild its screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Pane width in cells.
    pub width: u16,
    /// Pane height in cells.
    pub height: u16,
    /// The primary screen with history above it, as `capture-pane -p -e` lines (the `-a` capture
    /// while the alternate screen is on). The last `height` lines are the visible rows.
    pub primary: Vec<Vec<u8>>,
    /// The visible alternate screen as `capture-pane -p -e` lines, when the alternate screen is on.
    pub alternate: Option<Vec<Vec<u8>>>,
    /// Cursor column and row (0-based, `#{cursor_x}`, `#{cursor_y}`).
    pub cursor: (u16, u16),
    /// The primary screen's saved cursor while the alternate screen is on
    /// (`#{alternate_saved_x}`, `#{alternate_saved_y}`).
    pub saved_cursor: Option<(u16, u16)>,
    /// A partial escape sequence tmux's parser holds (`capture-pane -P`), fed after the rest.
    pub pending: Vec<u8>,
}

/// A pane's screen. See the module documentation.
pub struct PaneScreen {
    parser: vt100::Parser,
    scrollback: usize,
    /// The start of a UTF-8 character cut off at the end of the last chunk, held back until the
    /// rest arrives: vte 0.15 drops the character that follows a sequence completed across two
    /// `process` calls (alacritty/vte#159), and `%output` cuts characters all the time.
    carry: Vec<u8>,
}

impl std::fmt::Debug for PaneScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (width, height) = self.size();
        f.debug_struct("PaneScreen")
            .field("width", &width)
            .field("height", &height)
            .field("alternate_screen", &self.alternate_screen())
            .finish()
    }
}

fn dimension(value: u16) -> NonZeroU16 {
    NonZeroU16::new(value).unwrap_or(NonZeroU16::MIN)
}

impl PaneScreen {
    /// An empty screen of `width` x `height` cells (a zero size is taken as 1).
    pub fn new(width: u16, height: u16) -> PaneScreen {
        Self::with_scrollback(width, height, DEFAULT_SCROLLBACK)
    }

    /// An empty screen that keeps `scrollback` rows of history.
    pub fn with_scrollback(width: u16, height: u16, scrollback: usize) -> PaneScreen {
        PaneScreen {
            parser: vt100::Parser::new(dimension(height), dimension(width), scrollback),
            scrollback,
            carry: Vec::new(),
        }
    }

    /// Applies bytes the pane's program wrote. Chunks may be cut anywhere.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.carry.is_empty() {
            let whole = bytes.len() - incomplete_utf8_suffix(bytes);
            self.parser.process(&bytes[..whole]);
            self.carry.extend_from_slice(&bytes[whole..]);
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            let whole = joined.len() - incomplete_utf8_suffix(&joined);
            self.parser.process(&joined[..whole]);
            joined.drain(..whole);
            self.carry = joined;
        }
    }

    /// Changes the size, as tmux does when the layout changes. Content is cut or padded; tmux
    /// may reflow instead, so a resync after a resize is what makes the screen exact again.
    pub fn resize(&mut self, width: u16, height: u16) {
        if self.size() != (width.max(1), height.max(1)) {
            self.parser.set_size(dimension(height), dimension(width));
        }
    }

    /// `(width, height)` in cells.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (cols.get(), rows.get())
    }

    /// Whether the program switched to the alternate screen (full-screen programs do).
    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// Cursor `(column, row)`, 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        let (row, col) = self.parser.screen().cursor_position();
        (col, row)
    }

    /// The visible rows as text, trailing spaces removed (as `capture-pane -p` prints them).
    pub fn rows(&self) -> Vec<String> {
        let (width, _) = self.size();
        self.parser
            .screen()
            .rows(0, width)
            .map(|mut row| {
                // Spaces written by a program (or by a seed of `capture-pane -N`) are cells
                // too; trailing ones are dropped like unwritten cells.
                row.truncate(row.trim_end_matches(' ').len());
                row
            })
            .collect()
    }

    /// The visible rows cell by cell, as `capture-pane -e` shows them (the columns a wide
    /// character covers after its first are left out).
    pub fn styled_rows(&self) -> Vec<Vec<StyledCell>> {
        let (width, height) = self.size();
        let screen = self.parser.screen();
        (0..height)
            .map(|row| {
                (0..width)
                    .filter_map(|col| screen.cell(row, col))
                    .filter(|cell| !cell.is_wide_continuation())
                    .map(|cell| StyledCell {
                        text: if cell.has_contents() {
                            cell.contents().to_string()
                        } else {
                            " ".to_string()
                        },
                        width: if cell.is_wide() { 2 } else { 1 },
                        style: vt100_style(cell),
                    })
                    .collect()
            })
            .collect()
    }

    /// The visible screen as text: rows joined by `\n`, trailing blank rows removed.
    pub fn text(&self) -> String {
        normalize_rows(self.rows())
    }

    /// The visible screen with SGR attributes, rows separated by `\n`.
    pub fn ansi(&self) -> Vec<u8> {
        let (width, _) = self.size();
        let rows: Vec<String> = self.parser.screen().rows_formatted(0, width).collect();
        let mut out = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b"\x1b[m\n");
            }
            out.extend_from_slice(row.as_bytes());
        }
        out.extend_from_slice(b"\x1b[m");
        out
    }

    /// Rebuilds the screen from a snapshot, discarding everything fed so far.
    pub fn reseed(&mut self, snapshot: &Snapshot) {
        self.parser = vt100::Parser::new(
            dimension(snapshot.height),
            dimension(snapshot.width),
            self.scrollback,
        );
        self.carry.clear();
        let height = usize::from(snapshot.height.max(1));
        self.paint(&snapshot.primary, height);
        if let Some(alternate) = &snapshot.alternate {
            // The primary cursor is saved by the switch, so place it first.
            if let Some((x, y)) = snapshot.saved_cursor {
                self.move_cursor(x, y);
            }
            self.feed(b"\x1b[?1049h");
            let visible = &alternate[alternate.len().saturating_sub(height)..];
            self.paint(visible, height);
        }
        self.move_cursor(snapshot.cursor.0, snapshot.cursor.1);
        self.feed(&snapshot.pending);
    }

    /// Writes captured lines from the top of the screen: lines beyond `height` scroll the first
    /// ones into history, leaving the last `height` lines visible, as in tmux.
    fn paint(&mut self, lines: &[Vec<u8>], height: usize) {
        self.feed(b"\x1b[H\x1b[2J\x1b[m");
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                self.feed(b"\r\n");
            }
            self.feed(line);
            self.feed(b"\x1b[m");
        }
        // Fewer lines than rows happen only with an odd capture; the rest stays blank.
        let _ = height;
    }

    fn move_cursor(&mut self, x: u16, y: u16) {
        let sequence = format!("\x1b[{};{}H", u32::from(y) + 1, u32::from(x) + 1);
        self.feed(sequence.as_bytes());
    }
}

fn vt100_colour(colour: vt100::Color) -> Colour {
    match colour {
        vt100::Color::Default => Colour::Default,
        vt100::Color::Idx(n) => Colour::Palette(n),
        vt100::Color::Rgb(r, g, b) => Colour::Rgb(r, g, b),
    }
}

fn vt100_style(cell: &vt100::Cell) -> Style {
    let mut attrs = Attrs::default();
    for (on, attr) in [
        (cell.bold(), Attrs::BOLD),
        (cell.dim(), Attrs::DIM),
        (cell.italic(), Attrs::ITALIC),
        (cell.underline(), Attrs::UNDERLINE),
        (cell.inverse(), Attrs::REVERSE),
    ] {
        if on {
            attrs.insert(attr);
        }
    }
    Style {
        fg: vt100_colour(cell.fgcolor()),
        bg: vt100_colour(cell.bgcolor()),
        underline: Colour::Default,
        attrs,
    }
}

/// Length of an incomplete UTF-8 sequence at the end of `bytes` (0 to 3): a lead byte in the
/// last three bytes whose sequence needs more bytes than follow it.
fn incomplete_utf8_suffix(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xc0 == 0x80 {
            continue; // a continuation byte: keep looking for the lead
        }
        let needed = match byte {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return 0,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

/// Joins rows with `\n` after removing trailing spaces from each and trailing blank rows, the
/// form in which panectl compares and prints screens.
pub fn normalize_rows<S: AsRef<str>>(rows: impl IntoIterator<Item = S>) -> String {
    let rows: Vec<String> = rows
        .into_iter()
        .map(|row| row.as_ref().trim_end_matches(' ').to_string())
        .collect();
    let keep = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .map_or(0, |i| i + 1);
    rows[..keep].join("\n")
}

/// Normalizes `capture-pane -p` text (lines separated by `\n`) the same way as [`PaneScreen::text`].
pub fn normalize_capture(capture: &str) -> String {
    normalize_rows(capture.split('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_split_anywhere_give_the_same_screen() {
        let stream = "caf\u{e9} \u{65e5}\u{672c}\x1b[1;31mred\x1b[m\r\nnext \x1b[2;3Hx".as_bytes();
        let mut whole = PaneScreen::new(20, 5);
        whole.feed(stream);
        for cut in 0..stream.len() {
            let mut split = PaneScreen::new(20, 5);
            split.feed(&stream[..cut]);
            split.feed(&stream[cut..]);
            assert_eq!(split.text(), whole.text(), "cut at {cut}");
            assert_eq!(split.cursor(), whole.cursor());
        }
        assert_eq!(whole.text(), "café 日本red\nnext");
    }

    #[test]
    fn incomplete_utf8_suffixes() {
        assert_eq!(incomplete_utf8_suffix(b"ab"), 0);
        assert_eq!(incomplete_utf8_suffix(b"a\xc3"), 1);
        assert_eq!(incomplete_utf8_suffix(b"a\xc3\xa9"), 0);
        assert_eq!(incomplete_utf8_suffix(b"\xe6\x97"), 2);
        assert_eq!(incomplete_utf8_suffix(b"\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_utf8_suffix(b"\xf0\x9f\x98\x80"), 0);
        assert_eq!(incomplete_utf8_suffix(b"\x80\x80\x80"), 0);
        assert_eq!(incomplete_utf8_suffix(b"\xff"), 0);
    }

    #[test]
    fn reseed_rebuilds_screen_history_and_cursor() {
        let mut screen = PaneScreen::new(10, 3);
        screen.feed(b"garbage that will be replaced");
        let snapshot = Snapshot {
            width: 10,
            height: 3,
            primary: vec![
                b"old".to_vec(),
                b"\x1b[1mone\x1b[0m".to_vec(),
                b"two".to_vec(),
                b"".to_vec(),
            ],
            cursor: (3, 1),
            ..Snapshot::default()
        };
        screen.reseed(&snapshot);
        assert_eq!(screen.rows(), ["one", "two", ""]);
        assert_eq!(screen.cursor(), (3, 1));
        assert!(!screen.alternate_screen());
        // Output after the snapshot lands where tmux's cursor was.
        screen.feed(b"!");
        assert_eq!(screen.text(), "one\ntwo!");
    }

    #[test]
    fn reseed_restores_the_alternate_screen_over_the_primary() {
        let mut screen = PaneScreen::new(10, 2);
        screen.reseed(&Snapshot {
            width: 10,
            height: 2,
            primary: vec![b"$ vi".to_vec(), b"".to_vec()],
            alternate: Some(vec![b"history".to_vec(), b"~ file".to_vec(), b"~".to_vec()]),
            cursor: (0, 0),
            saved_cursor: Some((4, 0)),
            pending: b"\x1b[".to_vec(),
        });
        assert!(screen.alternate_screen());
        assert_eq!(screen.text(), "~ file\n~");
        // The pending partial sequence completes with the next bytes.
        screen.feed(b"2J");
        assert_eq!(screen.text(), "");
        // Leaving the alternate screen shows the primary with its cursor.
        screen.feed(b"\x1b[?1049l");
        assert_eq!(screen.text(), "$ vi");
        assert_eq!(screen.cursor(), (4, 0));
    }

    #[test]
    fn full_width_rows_do_not_scroll_when_painted() {
        let mut screen = PaneScreen::new(4, 2);
        screen.reseed(&Snapshot {
            width: 4,
            height: 2,
            primary: vec![b"abcd".to_vec(), b"efgh".to_vec()],
            cursor: (3, 1),
            ..Snapshot::default()
        });
        assert_eq!(screen.rows(), ["abcd", "efgh"]);
    }

    #[test]
    fn resize_and_normalization() {
        let mut screen = PaneScreen::new(0, 0);
        assert_eq!(screen.size(), (1, 1));
        screen.resize(30, 4);
        assert_eq!(screen.size(), (30, 4));
        screen.feed(b"x  \r\n\r\n");
        assert_eq!(screen.text(), "x");
        assert_eq!(normalize_capture("a  \nb\n\n\n"), "a\nb");
        let ansi = String::from_utf8(screen.ansi()).unwrap();
        assert!(ansi.starts_with('x'), "{ansi:?}");
    }
}
