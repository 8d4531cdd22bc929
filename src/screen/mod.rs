//! The screen of one pane, rebuilt from the bytes its program writes.
//!
//! [`PaneScreen`] is a terminal of the pane's size shaped on tmux's own (`input.c`,
//! `screen-write.c`, `grid.c`), following the rules of one tmux [`Dialect`] (3.3a's unless told
//! otherwise), so it holds what tmux holds cell for cell and prints what `capture-pane` prints;
//! the differential tests in `tests/integration/fidelity` check that against a real tmux of
//! each version. It is fed the unescaped `%output` bytes of the pane, which may cut
//! escape sequences and UTF-8 characters anywhere; the parser keeps its state between calls, so
//! the cuts do not matter. When the stream has a gap (at attach, after `%pause`, after a
//! restart) the screen is rebuilt from a [`Snapshot`] taken with `capture-pane` (protocol notes
//! §4.5, §6.3).

mod capture;
mod cell;
mod dialect;
mod grid;
mod input;
mod join;
mod links;
mod reflow;
#[cfg(test)]
mod regressions;
mod tab;
mod width;
mod writer;

pub use cell::{Attrs, Colour, Style, StyledCell};
pub use dialect::{Dialect, UnknownDialect};

/// Rows of scrollback kept by default: tmux's default `history-limit`, enough to read an agent's
/// last answer that scrolled off.
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
#[derive(Clone)]
pub struct PaneScreen {
    terminal: input::Terminal,
    scrollback: usize,
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

impl PaneScreen {
    /// An empty screen of `width` x `height` cells (a zero size is taken as 1).
    pub fn new(width: u16, height: u16) -> PaneScreen {
        Self::with_scrollback(width, height, DEFAULT_SCROLLBACK)
    }

    /// An empty screen that keeps `scrollback` rows of history.
    pub fn with_scrollback(width: u16, height: u16, scrollback: usize) -> PaneScreen {
        PaneScreen {
            terminal: input::Terminal::new(
                usize::from(width.max(1)),
                usize::from(height.max(1)),
                scrollback,
            ),
            scrollback,
        }
    }

    /// The same screen following `dialect`'s rules from now on (see [`Dialect`]).
    pub fn with_dialect(mut self, dialect: Dialect) -> PaneScreen {
        self.set_dialect(dialect);
        self
    }

    /// Follows `dialect`'s rules from now on: for characters still to come, and for what the
    /// screen prints (the cells already written stay as they are).
    pub fn set_dialect(&mut self, dialect: Dialect) {
        self.terminal.screen.dialect = dialect;
    }

    /// Which tmux's rules the screen follows.
    pub fn dialect(&self) -> Dialect {
        self.terminal.screen.dialect
    }

    /// Applies bytes the pane's program wrote. Chunks may be cut anywhere.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.terminal.feed(bytes);
    }

    /// Changes the size, as tmux does when the layout changes: lines rewrap to the new width on
    /// the primary screen, rows go to or come back from history, the cursor keeps its place.
    pub fn resize(&mut self, width: u16, height: u16) {
        let (width, height) = (width.max(1), height.max(1));
        if self.size() != (width, height) {
            self.terminal
                .screen
                .resize(usize::from(width), usize::from(height));
        }
    }

    /// `(width, height)` in cells.
    pub fn size(&self) -> (u16, u16) {
        let screen = &self.terminal.screen;
        (
            u16::try_from(screen.sx()).unwrap_or(u16::MAX),
            u16::try_from(screen.sy()).unwrap_or(u16::MAX),
        )
    }

    /// Whether the program switched to the alternate screen (full-screen programs do).
    pub fn alternate_screen(&self) -> bool {
        self.terminal.screen.saved_grid.is_some()
    }

    /// Whether the program is in the middle of a synchronized update (it sent `?2026h` and not
    /// yet `?2026l`): the screen may hold half a frame, erased rows not yet drawn again. Qwen
    /// Code, Gemini CLI and Pi frame their redraws so; the status reader waits for the frame's
    /// end before it reads the screen.
    pub fn mid_frame(&self) -> bool {
        self.terminal.synchronized
    }

    /// Cursor `(column, row)`, 0-based, as tmux's `#{cursor_x}` and `#{cursor_y}`: the column
    /// is the width itself when a character filled the last column and the wrap is pending.
    pub fn cursor(&self) -> (u16, u16) {
        let screen = &self.terminal.screen;
        (
            u16::try_from(screen.cx).unwrap_or(u16::MAX),
            u16::try_from(screen.cy).unwrap_or(u16::MAX),
        )
    }

    fn visible_lines(&self) -> std::ops::Range<usize> {
        let grid = &self.terminal.screen.grid;
        grid.hsize..grid.hsize + grid.sy
    }

    /// The visible rows as text, trailing spaces removed (as `capture-pane -p` prints them).
    pub fn rows(&self) -> Vec<String> {
        let screen = &self.terminal.screen;
        self.visible_lines()
            .map(|py| capture::text(&screen.grid, &screen.clusters, py, screen.dialect))
            .collect()
    }

    /// One visible row as text (as [`PaneScreen::rows`] gives it), or `None` past the last.
    pub fn row(&self, y: usize) -> Option<String> {
        let screen = &self.terminal.screen;
        let py = self.visible_lines().nth(y)?;
        Some(capture::text(
            &screen.grid,
            &screen.clusters,
            py,
            screen.dialect,
        ))
    }

    /// The visible rows cell by cell, as `capture-pane -e` shows them: up to the last cell
    /// written, the columns a wide character covers after its first left out.
    pub fn styled_rows(&self) -> Vec<Vec<StyledCell>> {
        let screen = &self.terminal.screen;
        self.visible_lines()
            .map(|py| capture::cells(&screen.grid, &screen.clusters, py, screen.dialect))
            .collect()
    }

    /// The visible screen as text: rows joined by `\n`, trailing blank rows removed.
    pub fn text(&self) -> String {
        normalize_rows(self.rows())
    }

    /// The visible rows exactly as `capture-pane -p -e` prints them: SGR codes where the style
    /// changes, carried from one row to the next, trailing spaces removed.
    pub fn ansi_rows(&self) -> Vec<Vec<u8>> {
        self.capture_rows(true)
    }

    /// The visible rows as `capture-pane -p -e` prints them with `trim`, and as
    /// `capture-pane -p -e -N` prints them without: trailing spaces kept up to the last cell
    /// written (what a resize rewraps by).
    pub fn capture_rows(&self, trim: bool) -> Vec<Vec<u8>> {
        let screen = &self.terminal.screen;
        let mut last = Style::default();
        self.visible_lines()
            .map(|py| capture::with_codes(&screen.grid, screen.printer(), py, &mut last, trim))
            .collect()
    }

    /// The visible screen with SGR attributes as `capture-pane -p -e` prints it, rows separated
    /// by `\n`, ending with a reset.
    pub fn ansi(&self) -> Vec<u8> {
        let mut out = self.ansi_rows().join(&b'\n');
        out.extend_from_slice(b"\x1b[m");
        out
    }

    /// A copy without the history: the same visible screen, cursor and modes, and the same
    /// visible screen after any further output (what scrolls off is not kept). Cheaper to
    /// keep while waiting for tmux to answer a question about the screen.
    pub fn without_history(&self) -> PaneScreen {
        PaneScreen {
            terminal: self.terminal.without_history(),
            scrollback: self.scrollback,
        }
    }

    /// The screen as a seed would capture it from tmux (history, visible rows, the primary
    /// screen under the alternate one, cursors), so that [`PaneScreen::reseed`] from it gives
    /// these cells again. `None` while a sequence or character is half-read: a snapshot then
    /// would lose it. What the cells do not show (the pen, modes, the scroll region) goes in
    /// `pending`, as bytes that set it again after the reseed.
    pub fn snapshot(&self) -> Option<Snapshot> {
        if !self.terminal.at_rest() {
            return None;
        }
        let screen = &self.terminal.screen;
        let lines = |grid: &grid::Grid, range: std::ops::Range<usize>| {
            let mut last = Style::default();
            range
                .map(|py| capture::with_codes(grid, screen.printer(), py, &mut last, false))
                .collect::<Vec<_>>()
        };
        let grid = &screen.grid;
        let (width, height) = self.size();
        let (primary, alternate, saved_cursor) = match &screen.saved_grid {
            Some(saved) => (
                lines(saved, 0..saved.hsize + saved.sy),
                Some(lines(grid, self.visible_lines())),
                screen.saved_cursor.map(|(x, y)| {
                    (
                        u16::try_from(x).unwrap_or(u16::MAX),
                        u16::try_from(y).unwrap_or(u16::MAX),
                    )
                }),
            ),
            None => (lines(grid, 0..grid.hsize + grid.sy), None, None),
        };
        Some(Snapshot {
            width,
            height,
            primary,
            alternate,
            cursor: self.cursor(),
            saved_cursor,
            pending: self.terminal.restore_bytes(),
        })
    }

    /// Rebuilds the screen from a snapshot, discarding everything fed so far.
    pub fn reseed(&mut self, snapshot: &Snapshot) {
        let dialect = self.dialect();
        self.terminal = input::Terminal::new(
            usize::from(snapshot.width.max(1)),
            usize::from(snapshot.height.max(1)),
            self.scrollback,
        );
        self.set_dialect(dialect);
        self.paint(&snapshot.primary);
        if let Some(alternate) = &snapshot.alternate {
            // The primary cursor is saved by the switch, so place it first.
            if let Some((x, y)) = snapshot.saved_cursor {
                self.move_cursor(x, y);
            }
            self.feed(b"\x1b[?1049h");
            let height = usize::from(snapshot.height.max(1));
            let visible = &alternate[alternate.len().saturating_sub(height)..];
            self.paint(visible);
        }
        self.move_cursor(snapshot.cursor.0, snapshot.cursor.1);
        self.feed(&snapshot.pending);
    }

    /// Writes captured lines from the top of the screen: lines beyond the height scroll the
    /// first ones into history, leaving the last lines visible, as in tmux. `capture-pane -e`
    /// writes each line's codes relative to the style the line before ended in, so that style
    /// is set again after the line break (made in the default style, as tmux's own wraps are).
    fn paint(&mut self, lines: &[Vec<u8>]) {
        // `capture-pane -e` marks line-drawing cells with SO and SI: G1 is made line drawing
        // for them, and ASCII again after.
        self.feed(b"\x1b[H\x1b[m\x1b)0");
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                let style = self.terminal.pen_style();
                self.feed(b"\x1b[m\r\n");
                self.feed(&capture::codes_for(&style));
            }
            self.feed(line);
        }
        self.feed(b"\x1b[m\x0f\x1b)B");
    }

    /// Puts the cursor where tmux says it is. Not with a CUP: that stops at the last column,
    /// and tmux's cursor can be one past it (a wrap pending after the last column was written).
    fn move_cursor(&mut self, x: u16, y: u16) {
        self.terminal.place_cursor(usize::from(x), usize::from(y));
    }
}

/// The rows this model's capture prints for the cells that `capture-pane -e` lines describe:
/// tmux versions print the same cells with other codes (3.4 and later end a style with `\e[0m`
/// alone where 3.3a adds `\e[39m\e[49m`, keep hyperlinks, pad `-N` lines), so screens are
/// compared in one encoding. Apply it to both sides, with the dialect of the server the rows
/// came from: it drops what a trimmed line cannot carry (the codes tmux prints for trailing
/// spaces it then trims).
pub fn recapture(dialect: Dialect, width: u16, height: u16, rows: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut screen = PaneScreen::with_scrollback(width, height, 0).with_dialect(dialect);
    screen.reseed(&Snapshot {
        width,
        height,
        primary: rows.to_vec(),
        ..Snapshot::default()
    });
    screen.capture_rows(true)
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
    fn a_string_never_ended_leaves_no_trace_in_the_parser_however_long() {
        // OSC, DCS (its parameters and its data), APC, SOS/PM and tmux's rename string:
        // their bytes are parsed past, so 20 MB leave the parser as the first kilobyte did.
        let cases: [(&[u8], &[u8]); 6] = [
            (b"\x1b]", b"52;c;QUJD"),
            (b"\x1bP", b"1;2;"),
            (b"\x1bPq", b"#0;2;0;0;0~~~~"),
            (b"\x1b_", b"Gf=100;AAAA"),
            (b"\x1bX", b"text"),
            (b"\x1bk", b"name"),
        ];
        for (start, filler) in cases {
            let mut screen = PaneScreen::new(20, 3);
            screen.feed(b"text\r\n");
            screen.feed(start);
            let chunk = filler.repeat((64 << 10) / filler.len());
            screen.feed(&chunk[..1024]);
            let early = format!("{:?}", screen.terminal);
            for _ in 0..(20 << 20) / chunk.len() {
                screen.feed(&chunk);
            }
            assert_eq!(format!("{:?}", screen.terminal), early, "{start:?}");
            assert!(screen.snapshot().is_none());
            // It ends: nothing was printed.
            screen.feed(b"\x1b\\");
            assert_eq!(screen.text(), "text");
        }
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
    fn a_reseed_keeps_a_cursor_past_the_last_column() {
        let mut screen = PaneScreen::new(4, 2);
        screen.reseed(&Snapshot {
            width: 4,
            height: 2,
            primary: vec![b"abcd".to_vec(), b"".to_vec()],
            cursor: (4, 0),
            ..Snapshot::default()
        });
        assert_eq!(screen.cursor(), (4, 0));
        // The next character wraps, as in tmux.
        screen.feed(b"e");
        assert_eq!(screen.rows(), ["abcd", "e"]);
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

    #[test]
    fn a_snapshot_of_the_model_reseeds_the_same_screen() {
        let streams: [&[u8]; 6] = [
            b"\x1b[31mred\x1b[44m on blue\x1b[m plain\r\nline two \xe4\xb8\xad\xe6\x96\x87 wide\r\n",
            b"0123456789012345678901234567890 wraps over the edge\r\nmore\r\nand more\r\nscrolled\r\n",
            b"$ vim\r\n\x1b[?1049h\x1b[H\x1b[2J\x1b[1;33m~\x1b[m\r\n\x1b[7mstatus\x1b[m\x1b[2;3H",
            b"last column filled 0123456789!",
            b"\x1b[1;41mpen left red\x1b(0qqq\x1b[4h\x1b[?7l",
            b"a\r\nb\r\nc\x1b[2;3r\x1b[?6h\x1b[2;4H\x1b[32m",
        ];
        for stream in streams {
            let mut screen = PaneScreen::with_scrollback(20, 4, 50);
            screen.feed(stream);
            let snapshot = screen.snapshot().expect("at rest");
            let mut again = PaneScreen::with_scrollback(20, 4, 50);
            again.reseed(&snapshot);
            assert_eq!(again.capture_rows(false), screen.capture_rows(false));
            assert_eq!(again.cursor(), screen.cursor());
            assert_eq!(again.alternate_screen(), screen.alternate_screen());
            assert_eq!(again.snapshot(), Some(snapshot));
            // What follows lands the same in both.
            for s in [&mut screen, &mut again] {
                s.feed(
                    b"\x1b[?1049lafter\r\nqx more that is long enough to wrap\x1b[5;1Hend\n\n\n",
                );
            }
            assert_eq!(again.capture_rows(false), screen.capture_rows(false));
            assert_eq!(again.cursor(), screen.cursor());
        }
    }

    #[test]
    fn no_snapshot_while_a_sequence_is_half_read() {
        let mut screen = PaneScreen::new(20, 4);
        for (bytes, at_rest) in [
            (&b"ok"[..], true),
            (b"\x1b[3", false),
            (b"1m", true),
            (b"\xe4\xb8", false),
            (b"\xad", true),
            (b"a\xe2\x80\x8d", false),
            // (ASCII after a joiner is collected without clearing it, as in tmux.)
            (b"b", false),
            (b"\xe4\xb8\xad", true),
        ] {
            screen.feed(bytes);
            assert_eq!(screen.snapshot().is_some(), at_rest, "after {bytes:?}");
        }
    }

    #[test]
    fn a_reseed_keeps_line_drawing_cells() {
        // tmux 3.3a, `printf '\033(0lqqk\r\nx\033(B a \033[31m\033(0qq\r\nqq\033(B end'` in
        // a 20x4 pane, then `capture-pane -p -e -N`: SO and SI mark the line-drawing cells,
        // and carry over to the next line as colours do.
        let capture: [&[u8]; 4] = [b"\x0elqqk", b"x\x0f a \x1b[31m\x0eqq", b"qq\x0f end", b""];
        let mut screen = PaneScreen::new(20, 4);
        screen.reseed(&Snapshot {
            width: 20,
            height: 4,
            primary: capture.iter().map(|l| l.to_vec()).collect(),
            cursor: (6, 2),
            ..Snapshot::default()
        });
        assert_eq!(screen.capture_rows(false), capture);
        // What follows is plain ASCII again.
        screen.feed(b"\x1b[31mq");
        assert_eq!(screen.capture_rows(false)[2], b"qq\x0f endq");
    }

    #[test]
    fn a_copy_without_history_shows_what_the_screen_shows_after_more_output() {
        let mut screen = PaneScreen::with_scrollback(20, 4, 50);
        for i in 0..30 {
            screen.feed(format!("\x1b[3{}mline {i}\r\n", i % 8).as_bytes());
        }
        screen.feed(b"\x1b[2;3r\x1b[1mhalf-way \x1b[3");
        let mut copy = screen.without_history();
        assert_eq!(copy.capture_rows(false), screen.capture_rows(false));
        for s in [&mut screen, &mut copy] {
            s.feed(b"2mgreen\r\n\n\n\x1b[r\x1b[Hover\x1b[?1049hon the alternate\r\n");
        }
        assert_eq!(copy.capture_rows(false), screen.capture_rows(false));
        assert_eq!(copy.cursor(), screen.cursor());
        assert_eq!(copy.alternate_screen(), screen.alternate_screen());
        copy.feed(b"\x1b[?1049l");
        screen.feed(b"\x1b[?1049l");
        assert_eq!(copy.capture_rows(false), screen.capture_rows(false));
    }

    #[test]
    fn a_synchronized_update_is_mid_frame_until_it_ends_or_the_terminal_resets() {
        let mut screen = PaneScreen::new(20, 4);
        assert!(!screen.mid_frame());
        // Cut inside the sequence, as `%output` may cut it.
        screen.feed(b"\x1b[?20");
        screen.feed(b"26h\x1b[2Khalf");
        assert!(screen.mid_frame());
        // Drawn as it comes (tmux does not hold the frame back), and copies keep the state.
        assert_eq!(screen.rows()[0], "half");
        assert!(screen.without_history().mid_frame());
        screen.feed(b"\x1b[?2026l");
        assert!(!screen.mid_frame());
        screen.feed(b"\x1b[?25;2026h");
        assert!(screen.mid_frame());
        screen.feed(b"\x1bc");
        assert!(!screen.mid_frame());
    }
}
