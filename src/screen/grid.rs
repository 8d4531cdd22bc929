//! The cells of a screen and its history, kept the way tmux's `grid.c` keeps them.
//!
//! What `capture-pane` shows depends on more than the characters on screen: a line prints only
//! up to the last cell that was written (`cellused`), so cells cleared with a background colour
//! past that point do not show, and a clear of a whole line empties it. The bookkeeping here
//! (`used`, the allocated `cells` whose length is tmux's `cellsize`, the wrapped flag, history
//! collection by tenths) follows tmux 3.3a so the mirror prints what tmux prints.

use std::collections::HashMap;

use super::cell::{Attrs, Colour, Style};

/// A cell holds a character (not a cluster) of this code point.
const CLUSTER: u32 = 0x8000_0000;

/// The cell is the second column of a wide character.
pub(crate) const PADDING: u8 = 0x1;
/// The cell was cleared, not written (tmux's `GRID_FLAG_CLEARED`).
pub(crate) const CLEARED: u8 = 0x2;
/// The cell is a tab (tmux 3.6's `GRID_FLAG_TAB`): `ch` is `\t` and `width` the columns it
/// covers, the ones after the first padding.
pub(crate) const TAB: u8 = 0x8;
/// The cell is stored as tmux's extended entry (wide, non-ASCII, RGB, underline colour, high
/// attributes); tmux never skips rewriting such a cell, which decides what counts as used.
pub(crate) const EXTENDED: u8 = 0x4;

/// One cell: a code point or a cluster of them, its width, flags and style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cell {
    /// A code point, or `CLUSTER | index` into [`Clusters`].
    pub(crate) ch: u32,
    /// Columns: 1 or 2 (0 for padding).
    pub(crate) width: u8,
    /// [`PADDING`], [`CLEARED`], [`EXTENDED`], [`TAB`].
    pub(crate) flags: u8,
    /// Colours and attributes.
    pub(crate) style: Style,
}

impl Cell {
    /// tmux's `grid_default_cell`: what an unwritten cell reads as.
    pub(crate) const DEFAULT: Cell = Cell {
        ch: b' ' as u32,
        width: 1,
        flags: 0,
        style: Style {
            fg: Colour::Default,
            bg: Colour::Default,
            underline: Colour::Default,
            attrs: Attrs(0),
            link: 0,
        },
    };

    const PADDING_CELL: Cell = Cell {
        ch: b'!' as u32,
        width: 0,
        flags: PADDING,
        ..Cell::DEFAULT
    };

    fn cleared(bg: Colour) -> Cell {
        Cell {
            // An RGB background makes the entry extended, which drops the cleared flag.
            flags: if matches!(bg, Colour::Rgb(..)) {
                EXTENDED
            } else {
                CLEARED
            },
            style: Style {
                bg,
                ..Style::default()
            },
            ..Cell::DEFAULT
        }
    }

    /// A cell of one code point.
    pub(crate) fn of_char(ch: u32, width: u8, style: Style) -> Cell {
        Cell {
            ch,
            width,
            flags: 0,
            style,
        }
    }

    /// Whether this is the second column of a wide character.
    pub(crate) fn is_padding(&self) -> bool {
        self.flags & PADDING != 0
    }

    /// Whether tmux would store this cell as an extended entry.
    fn needs_extended(&self) -> bool {
        self.style.attrs.0 > 0xff
            || self.width != 1
            || self.ch >= 0x80
            || matches!(self.style.fg, Colour::Rgb(..))
            || matches!(self.style.bg, Colour::Rgb(..))
            || self.style.underline != Colour::Default
            || self.style.link != 0
            || self.flags & TAB != 0
    }
}

/// Clusters (a character with the zero-width ones that joined it), kept once per screen.
#[derive(Debug, Default, Clone)]
pub(crate) struct Clusters {
    list: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
}

/// Most distinct clusters kept; beyond it a new cluster shows as its first character.
const MAX_CLUSTERS: usize = 1 << 16;

impl Clusters {
    /// The `ch` value of a cell holding `text`, or `None` when the table is full.
    pub(crate) fn intern(&mut self, text: &str) -> Option<u32> {
        if let Some(&i) = self.index.get(text) {
            return Some(CLUSTER | i);
        }
        if self.list.len() >= MAX_CLUSTERS {
            return None;
        }
        let i = u32::try_from(self.list.len()).ok()?;
        self.list.push(text.into());
        self.index.insert(text.into(), i);
        Some(CLUSTER | i)
    }

    /// Appends a cell's characters to `out`; a code point past U+10FFFF (tmux 3.4 keeps
    /// them), which no `char` holds, as U+FFFD.
    pub(crate) fn push_text(&self, ch: u32, out: &mut String) {
        if ch & CLUSTER != 0 {
            if let Some(text) = self.list.get((ch & !CLUSTER) as usize) {
                out.push_str(text);
            }
        } else if let Some(c) = char::from_u32(ch) {
            out.push(c);
        } else if ch > 0x10ffff {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }

    /// Appends a cell's bytes to `out` as tmux prints them: UTF-8, and a code point past
    /// U+10FFFF in the 4-byte form it came in.
    pub(crate) fn push_bytes(&self, ch: u32, out: &mut Vec<u8>) {
        if ch & CLUSTER == 0 && (0x110000..=0x13ffff).contains(&ch) {
            out.extend_from_slice(&[
                0xf0 | (ch >> 18) as u8,
                0x80 | ((ch >> 12) & 0x3f) as u8,
                0x80 | ((ch >> 6) & 0x3f) as u8,
                0x80 | (ch & 0x3f) as u8,
            ]);
            return;
        }
        let mut text = String::new();
        self.push_text(ch, &mut text);
        out.extend_from_slice(text.as_bytes());
    }
}

/// One line: the allocated cells (tmux's `cellsize` is their number), how many were written.
#[derive(Debug, Default, Clone)]
pub(crate) struct Line {
    pub(crate) cells: Vec<Cell>,
    /// tmux's `cellused`: one past the last cell written; `capture-pane` prints up to here.
    pub(crate) used: usize,
    /// The line continues on the next (it was wrapped, not ended by a line feed).
    pub(crate) wrapped: bool,
}

impl Line {
    /// The cell at `x`, or the default cell past the allocated ones.
    pub(crate) fn cell(&self, x: usize) -> Cell {
        self.cells.get(x).copied().unwrap_or(Cell::DEFAULT)
    }
}

/// History and visible lines: `lines[..hsize]` is history, `lines[hsize..]` the screen.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub(crate) sx: usize,
    pub(crate) sy: usize,
    /// Most lines of history kept (`history-limit`).
    pub(crate) hlimit: usize,
    /// Whether lines scrolled off the top go to history (off on the alternate screen).
    pub(crate) history: bool,
    pub(crate) hsize: usize,
    /// Lines scrolled into history (rather than cleared into it): a taller pane takes them back.
    pub(crate) hscrolled: usize,
    pub(crate) lines: Vec<Line>,
}

impl Grid {
    /// An empty grid of `sx` x `sy` keeping `hlimit` lines of history.
    pub(crate) fn new(sx: usize, sy: usize, hlimit: usize) -> Grid {
        Grid {
            sx,
            sy,
            hlimit,
            history: hlimit != 0,
            hsize: 0,
            hscrolled: 0,
            lines: vec![Line::default(); sy],
        }
    }

    /// A copy of the visible lines alone (history left out, as if cleared).
    pub(crate) fn without_history(&self) -> Grid {
        Grid {
            sx: self.sx,
            sy: self.sy,
            hlimit: self.hlimit,
            history: self.history,
            hsize: 0,
            hscrolled: 0,
            lines: self.lines[self.hsize.min(self.lines.len())..].to_vec(),
        }
    }

    fn valid(&self, py: usize) -> bool {
        py < self.hsize + self.sy
    }

    /// The line at absolute row `py` (history included), if any.
    pub(crate) fn line(&self, py: usize) -> Option<&Line> {
        self.lines.get(py)
    }

    /// The cell at absolute `(px, py)`; the default cell outside the written area.
    pub(crate) fn cell(&self, px: usize, py: usize) -> Cell {
        match self.lines.get(py) {
            Some(line) if py < self.hsize + self.sy => line.cell(px),
            _ => Cell::DEFAULT,
        }
    }

    /// tmux's `grid_expand_line`: grows the allocated cells to at least `sx`, in quarters.
    fn expand_line(&mut self, py: usize, sx: usize, bg: Colour) {
        let gsx = self.sx;
        let line = &mut self.lines[py];
        if sx <= line.cells.len() {
            return;
        }
        let sx = if sx < gsx / 4 {
            gsx / 4
        } else if sx < gsx / 2 {
            gsx / 2
        } else if gsx > sx {
            gsx
        } else {
            sx
        };
        line.cells.resize(sx, Cell::cleared(bg));
    }

    /// tmux's `grid_empty_line`.
    fn empty_line(&mut self, py: usize, bg: Colour) {
        self.lines[py] = Line::default();
        if bg != Colour::Default {
            self.expand_line(py, self.sx, bg);
        }
    }

    /// tmux's `grid_set_cell`.
    pub(crate) fn set_cell(&mut self, px: usize, py: usize, cell: Cell) {
        if !self.valid(py) {
            return;
        }
        self.expand_line(py, px + 1, Colour::Default);
        let line = &mut self.lines[py];
        line.used = line.used.max(px + 1);
        let entry = &mut line.cells[px];
        let extended = entry.flags & EXTENDED != 0 || cell.needs_extended();
        *entry = cell;
        entry.flags &= !CLEARED;
        if extended {
            entry.flags |= EXTENDED;
        }
    }

    /// tmux's `grid_set_padding`.
    pub(crate) fn set_padding(&mut self, px: usize, py: usize) {
        self.set_cell(px, py, Cell::PADDING_CELL);
    }

    /// tmux's `grid_set_cells`: a run of ASCII characters in one style.
    pub(crate) fn set_ascii(&mut self, px: usize, py: usize, style: Style, text: &[u8]) {
        if !self.valid(py) {
            return;
        }
        self.expand_line(py, px + text.len(), Colour::Default);
        let line = &mut self.lines[py];
        line.used = line.used.max(px + text.len());
        for (i, &byte) in text.iter().enumerate() {
            let cell = Cell::of_char(u32::from(byte), 1, style);
            let entry = &mut line.cells[px + i];
            let extended = entry.flags & EXTENDED != 0 || cell.needs_extended();
            *entry = cell;
            if extended {
                entry.flags |= EXTENDED;
            }
        }
    }

    /// Whether writing `cell` at `(px, py)` changes nothing, so tmux skips it (and does not
    /// count the cell as used). Mirrors the test in `screen_write_cell`, quirks included: a
    /// palette colour never compares equal, and past the allocated cells only the default
    /// cell is skipped.
    pub(crate) fn write_is_noop(&self, px: usize, py: usize, cell: &Cell) -> bool {
        let Some(line) = self.lines.get(py) else {
            return true;
        };
        let plain = |colour: Colour| !matches!(colour, Colour::Palette(_) | Colour::Rgb(..));
        match line.cells.get(px) {
            None => {
                cell.ch == u32::from(b' ')
                    && cell.width == 1
                    && cell.flags == 0
                    && cell.style.fg == Colour::Default
                    && cell.style.bg == Colour::Default
                    && cell.style.attrs.0 == 0
            }
            Some(entry) => {
                entry.flags & EXTENDED == 0
                    && entry.flags == cell.flags
                    && entry.style.attrs == cell.style.attrs
                    && plain(cell.style.fg)
                    && entry.style.fg == cell.style.fg
                    && plain(cell.style.bg)
                    && entry.style.bg == cell.style.bg
                    && cell.width == 1
                    && cell.ch < 0x80
                    && entry.ch == cell.ch
            }
        }
    }

    /// tmux's `grid_clear`. Counts may come from unsigned arithmetic that wrapped, as in tmux
    /// (a delete near the end of a line asks to clear a "negative" width): sums wrap the same
    /// way, so the same cells (often none) are cleared.
    pub(crate) fn clear(&mut self, px: usize, py: usize, nx: usize, ny: usize, bg: Colour) {
        if nx == 0 || ny == 0 {
            return;
        }
        if px == 0 && nx == self.sx {
            self.clear_lines(py, ny, bg);
            return;
        }
        if !self.valid(py) || !self.valid(py.wrapping_add(ny).wrapping_sub(1)) {
            return;
        }
        let mut yy = py;
        while yy < py.wrapping_add(ny) {
            let sx = self.sx.min(self.lines[yy].cells.len());
            let mut ox = nx;
            if bg == Colour::Default {
                if px > sx {
                    yy += 1;
                    continue;
                }
                if px.wrapping_add(nx) > sx {
                    ox = sx - px;
                }
            }
            let end = px.wrapping_add(ox);
            if end > px {
                self.expand_line(yy, end, Colour::Default);
                for cell in &mut self.lines[yy].cells[px..end] {
                    *cell = Cell::cleared(bg);
                }
            }
            yy += 1;
        }
    }

    /// tmux's `grid_clear_lines`: empties whole lines (the count may have wrapped, see
    /// [`Grid::clear`]; the line above loses its wrapped flag all the same).
    pub(crate) fn clear_lines(&mut self, py: usize, ny: usize, bg: Colour) {
        if ny == 0 || !self.valid(py) || !self.valid(py.wrapping_add(ny).wrapping_sub(1)) {
            return;
        }
        let mut yy = py;
        while yy < py.wrapping_add(ny) {
            self.empty_line(yy, bg);
            yy += 1;
        }
        if py != 0 {
            self.lines[py - 1].wrapped = false;
        }
    }

    /// tmux's `grid_move_lines`: moves `ny` lines from `py` to `dy`, emptying the ones left.
    pub(crate) fn move_lines(&mut self, dy: usize, py: usize, ny: usize, bg: Colour) {
        if ny == 0 || py == dy {
            return;
        }
        if !self.valid(py)
            || !self.valid(py.wrapping_add(ny).wrapping_sub(1))
            || !self.valid(dy)
            || !self.valid(dy.wrapping_add(ny).wrapping_sub(1))
        {
            return;
        }
        if dy != 0 {
            self.lines[dy - 1].wrapped = false;
        }
        let moved: Vec<Line> = self.lines[py..py + ny].to_vec();
        for (i, line) in moved.into_iter().enumerate() {
            self.lines[dy + i] = line;
        }
        for yy in py..py + ny {
            if yy < dy || yy >= dy + ny {
                self.empty_line(yy, bg);
            }
        }
        if py != 0 && (py < dy || py >= dy + ny) {
            self.lines[py - 1].wrapped = false;
        }
    }

    /// tmux's `grid_move_cells`.
    pub(crate) fn move_cells(&mut self, dx: usize, px: usize, py: usize, nx: usize, bg: Colour) {
        if nx == 0 || px == dx || !self.valid(py) {
            return;
        }
        self.expand_line(py, px + nx, Colour::Default);
        self.expand_line(py, dx + nx, Colour::Default);
        let line = &mut self.lines[py];
        line.cells.copy_within(px..px + nx, dx);
        line.used = line.used.max(dx + nx);
        for xx in px..px + nx {
            if xx >= dx && xx < dx + nx {
                continue;
            }
            line.cells[xx] = Cell::cleared(bg);
        }
    }

    /// tmux's `grid_collect_history`: at the limit, drops the oldest tenth.
    pub(crate) fn collect_history(&mut self) {
        if self.hsize == 0 || self.hsize < self.hlimit {
            return;
        }
        let ny = (self.hlimit / 10).clamp(1, self.hsize);
        self.lines.drain(..ny);
        self.hsize -= ny;
        self.hscrolled = self.hscrolled.min(self.hsize);
    }

    /// tmux's `grid_scroll_history`: the whole screen up one line into history.
    pub(crate) fn scroll_history(&mut self, bg: Colour) {
        self.lines.push(Line::default());
        let last = self.lines.len() - 1;
        self.empty_line(last, bg);
        self.hscrolled += 1;
        self.hsize += 1;
    }

    /// tmux's `grid_clear_history`.
    pub(crate) fn clear_history(&mut self) {
        self.lines.drain(..self.hsize);
        self.hsize = 0;
        self.hscrolled = 0;
    }

    /// tmux's `grid_scroll_history_region`: the top line of a region into history.
    pub(crate) fn scroll_history_region(&mut self, upper: usize, lower: usize, bg: Colour) {
        // Absolute rows: the region's first line goes to the end of history.
        let line = self.lines.remove(upper);
        self.lines.insert(self.hsize, line);
        // The rest of the region closed over the gap; its last row (one lower now that history
        // grew by a line) is a new empty line.
        self.lines.insert(lower + 1, Line::default());
        self.empty_line(lower + 1, bg);
        self.hscrolled += 1;
        self.hsize += 1;
    }

    /// tmux's `grid_duplicate_lines`: copies `ny` lines of `src` from `sy` to `dy` here.
    pub(crate) fn duplicate_lines(&mut self, dy: usize, src: &Grid, sy: usize, ny: usize) {
        let ny = ny
            .min((self.hsize + self.sy).saturating_sub(dy))
            .min((src.hsize + src.sy).saturating_sub(sy));
        for i in 0..ny {
            self.lines[dy + i] = src.lines[sy + i].clone();
        }
    }

    /// Absolute row of visible row `y`.
    pub(crate) fn view(&self, y: usize) -> usize {
        self.hsize + y
    }

    /// tmux's `grid_view_clear_history`: an erase of the whole screen scrolls its used lines
    /// into history first (`scroll-on-clear`).
    pub(crate) fn view_clear_history(&mut self, bg: Colour) {
        let last = (0..self.sy)
            .filter(|&yy| self.lines[self.view(yy)].used != 0)
            .map(|yy| yy + 1)
            .max()
            .unwrap_or(0);
        if last == 0 {
            self.view_clear(0, 0, self.sx, self.sy, bg);
            return;
        }
        for _ in 0..last {
            self.collect_history();
            self.scroll_history(bg);
        }
        if last < self.sy {
            self.view_clear(0, 0, self.sx, self.sy - last, bg);
        }
        self.hscrolled = 0;
    }

    /// tmux's `grid_view_clear`.
    pub(crate) fn view_clear(&mut self, px: usize, py: usize, nx: usize, ny: usize, bg: Colour) {
        let py = self.view(py);
        self.clear(px, py, nx, ny, bg);
    }

    /// tmux's `grid_view_scroll_region_up`.
    pub(crate) fn view_scroll_region_up(&mut self, rupper: usize, rlower: usize, bg: Colour) {
        if self.history {
            self.collect_history();
            if rupper == 0 && rlower == self.sy - 1 {
                self.scroll_history(bg);
            } else {
                let (upper, lower) = (self.view(rupper), self.view(rlower));
                self.scroll_history_region(upper, lower, bg);
            }
        } else {
            let (upper, lower) = (self.view(rupper), self.view(rlower));
            self.move_lines(upper, upper + 1, lower - upper, bg);
        }
    }

    /// tmux's `grid_view_scroll_region_down`.
    pub(crate) fn view_scroll_region_down(&mut self, rupper: usize, rlower: usize, bg: Colour) {
        let (upper, lower) = (self.view(rupper), self.view(rlower));
        self.move_lines(upper + 1, upper, lower - upper, bg);
    }

    /// tmux's `grid_view_insert_lines`.
    pub(crate) fn view_insert_lines(&mut self, py: usize, ny: usize, bg: Colour) {
        let py = self.view(py);
        let sy = self.view(self.sy);
        self.move_lines(py + ny, py, sy - py - ny, bg);
    }

    /// tmux's `grid_view_insert_lines_region`.
    pub(crate) fn view_insert_lines_region(
        &mut self,
        rlower: usize,
        py: usize,
        ny: usize,
        bg: Colour,
    ) {
        let rlower = self.view(rlower);
        let py = self.view(py);
        let ny2 = rlower + 1 - py - ny;
        self.move_lines(rlower + 1 - ny2, py, ny2, bg);
        self.clear(0, py + ny2, self.sx, ny.wrapping_sub(ny2), bg);
    }

    /// tmux's `grid_view_delete_lines`.
    pub(crate) fn view_delete_lines(&mut self, py: usize, ny: usize, bg: Colour) {
        let py = self.view(py);
        let sy = self.view(self.sy);
        self.move_lines(py, py + ny, sy - py - ny, bg);
        self.clear(0, sy - ny, self.sx, (py + ny).wrapping_sub(sy - ny), bg);
    }

    /// tmux's `grid_view_delete_lines_region`.
    pub(crate) fn view_delete_lines_region(
        &mut self,
        rlower: usize,
        py: usize,
        ny: usize,
        bg: Colour,
    ) {
        let rlower = self.view(rlower);
        let py = self.view(py);
        let ny2 = rlower + 1 - py - ny;
        self.move_lines(py, py + ny, ny2, bg);
        self.clear(0, py + ny2, self.sx, ny.wrapping_sub(ny2), bg);
    }

    /// tmux's `grid_view_insert_cells`.
    pub(crate) fn view_insert_cells(&mut self, px: usize, py: usize, nx: usize, bg: Colour) {
        let py = self.view(py);
        let sx = self.sx;
        if px + 1 >= sx {
            self.clear(px, py, 1, 1, bg);
        } else {
            self.move_cells(px + nx, px, py, sx - px - nx, bg);
        }
    }

    /// tmux's `grid_view_delete_cells`.
    pub(crate) fn view_delete_cells(&mut self, px: usize, py: usize, nx: usize, bg: Colour) {
        let py = self.view(py);
        let sx = self.sx;
        self.move_cells(px, px + nx, py, sx - px - nx, bg);
        self.clear(sx - nx, py, (px + nx).wrapping_sub(sx - nx), 1, bg);
    }
}
