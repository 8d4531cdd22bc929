//! What each terminal operation does to the grid and the cursor, as tmux's `screen-write.c` and
//! `screen.c` do it: cursor limits (the cursor may rest one past the last column, waiting to
//! wrap), scroll regions, origin mode, insert mode, wide characters and their padding,
//! characters that join the one before, the alternate screen and the erase that scrolls the
//! screen into history (`scroll-on-clear`).

use super::cell::{Colour, Style};
use super::dialect::Dialect;
use super::grid::{Cell, Clusters, Grid, PADDING};
use super::links::Links;
use super::width::Width;

/// Cursor shown (`?25`).
pub(crate) const MODE_CURSOR: u32 = 0x1;
/// Insert mode (`4h`).
pub(crate) const MODE_INSERT: u32 = 0x2;
/// Cursor keys in application mode (`?1`).
pub(crate) const MODE_KCURSOR: u32 = 0x4;
/// Keypad in application mode (`ESC =`).
pub(crate) const MODE_KKEYPAD: u32 = 0x8;
/// Autowrap (`?7`).
pub(crate) const MODE_WRAP: u32 = 0x10;
/// Mouse reporting of presses (`?1000`).
pub(crate) const MODE_MOUSE_STANDARD: u32 = 0x20;
/// Mouse reporting of motion with a button down (`?1002`).
pub(crate) const MODE_MOUSE_BUTTON: u32 = 0x40;
/// Cursor blinking (`?12`).
pub(crate) const MODE_CURSOR_BLINKING: u32 = 0x80;
/// Mouse coordinates in UTF-8 (`?1005`).
pub(crate) const MODE_MOUSE_UTF8: u32 = 0x100;
/// Mouse coordinates as SGR (`?1006`).
pub(crate) const MODE_MOUSE_SGR: u32 = 0x200;
/// Bracketed paste (`?2004`).
pub(crate) const MODE_BRACKETPASTE: u32 = 0x400;
/// Focus events (`?1004`).
pub(crate) const MODE_FOCUSON: u32 = 0x800;
/// Mouse reporting of all motion (`?1003`).
pub(crate) const MODE_MOUSE_ALL: u32 = 0x1000;
/// Origin mode (`?6`): rows count from the top of the scroll region.
pub(crate) const MODE_ORIGIN: u32 = 0x2000;
/// Cursor made very visible (`34l`).
pub(crate) const MODE_CURSOR_VERY_VISIBLE: u32 = 0x10000;
/// Cursor blinking set explicitly.
pub(crate) const MODE_CURSOR_BLINKING_SET: u32 = 0x20000;
/// Every mouse mode.
pub(crate) const ALL_MOUSE_MODES: u32 = MODE_MOUSE_STANDARD | MODE_MOUSE_BUTTON | MODE_MOUSE_ALL;

/// A character to write: one code point with its width, in a style.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Glyph {
    pub(crate) ch: u32,
    pub(crate) width: Width,
    pub(crate) style: Style,
}

/// A run of ASCII characters being collected, written in one go when something else comes
/// (tmux's `screen_write_collect_add` and `_end`).
#[derive(Debug, Default, Clone)]
struct Run {
    text: Vec<u8>,
    style: Style,
}

/// A screen: the grid, the cursor, the modes and what the alternate screen saved.
#[derive(Debug, Clone)]
pub(crate) struct Screen {
    pub(crate) grid: Grid,
    pub(crate) clusters: Clusters,
    pub(crate) cx: usize,
    pub(crate) cy: usize,
    pub(crate) rupper: usize,
    pub(crate) rlower: usize,
    pub(crate) mode: u32,
    tabs: Vec<bool>,
    /// The primary screen's visible lines while the alternate screen is on.
    pub(crate) saved_grid: Option<Grid>,
    /// The cursor saved by `?1049h`.
    pub(crate) saved_cursor: Option<(usize, usize)>,
    saved_style: Style,
    saved_history: bool,
    /// A zero-width joiner came last: the next character joins the cell before (tmux 3.3;
    /// from 3.4 the joiner is kept in the cell it follows).
    pub(super) zwj: bool,
    run: Run,
    /// Which tmux's rules the screen follows.
    pub(crate) dialect: Dialect,
    /// The OSC 8 links the cells' `link` numbers name.
    pub(crate) links: Links,
}

impl Screen {
    /// An empty screen of `sx` x `sy` keeping `hlimit` lines of history.
    pub(crate) fn new(sx: usize, sy: usize, hlimit: usize) -> Screen {
        let sx = sx.max(1);
        let sy = sy.max(1);
        let mut screen = Screen {
            grid: Grid::new(sx, sy, hlimit),
            clusters: Clusters::default(),
            cx: 0,
            cy: 0,
            rupper: 0,
            rlower: sy - 1,
            mode: MODE_CURSOR | MODE_WRAP,
            tabs: Vec::new(),
            saved_grid: None,
            saved_cursor: None,
            saved_style: Style::default(),
            saved_history: false,
            zwj: false,
            run: Run::default(),
            dialect: Dialect::default(),
            links: Links::default(),
        };
        screen.reset_tabs();
        screen
    }

    /// A copy whose grid has no history (see [`Grid::without_history`]).
    pub(crate) fn without_history(&self) -> Screen {
        Screen {
            grid: self.grid.without_history(),
            clusters: self.clusters.clone(),
            cx: self.cx,
            cy: self.cy,
            rupper: self.rupper,
            rlower: self.rlower,
            mode: self.mode,
            tabs: self.tabs.clone(),
            saved_grid: self.saved_grid.clone(),
            saved_cursor: self.saved_cursor,
            saved_style: self.saved_style,
            saved_history: self.saved_history,
            zwj: self.zwj,
            run: self.run.clone(),
            dialect: self.dialect,
            links: self.links.clone(),
        }
    }

    /// What a capture of this screen's lines reads besides the grid.
    pub(crate) fn printer(&self) -> super::capture::Printer<'_> {
        super::capture::Printer {
            clusters: &self.clusters,
            links: &self.links,
            dialect: self.dialect,
        }
    }

    /// A zero-width joiner came last and waits for the character it joins.
    pub(crate) fn joiner_pending(&self) -> bool {
        self.zwj
    }

    /// Columns.
    pub(crate) fn sx(&self) -> usize {
        self.grid.sx
    }

    /// Rows.
    pub(crate) fn sy(&self) -> usize {
        self.grid.sy
    }

    /// Tab stops every eight columns.
    pub(crate) fn reset_tabs(&mut self) {
        self.tabs = (0..self.sx()).map(|x| x != 0 && x % 8 == 0).collect();
    }

    /// Whether column `x` is a tab stop.
    pub(crate) fn is_tab(&self, x: usize) -> bool {
        self.tabs.get(x).copied().unwrap_or(false)
    }

    /// Sets or clears the tab stop at `x`.
    pub(crate) fn set_tab(&mut self, x: usize, on: bool) {
        if let Some(tab) = self.tabs.get_mut(x) {
            *tab = on;
        }
    }

    /// Clears every tab stop.
    pub(crate) fn clear_tabs(&mut self) {
        self.tabs.iter_mut().for_each(|tab| *tab = false);
    }

    /// tmux's `screen_write_set_cursor`; `None` leaves a coordinate as it is. The column may
    /// be one past the last (a wrap is pending).
    pub(crate) fn set_cursor(&mut self, cx: Option<usize>, cy: Option<usize>) {
        if let Some(cx) = cx {
            self.cx = if cx > self.sx() { self.sx() - 1 } else { cx };
        }
        if let Some(cy) = cy {
            self.cy = cy.min(self.sy() - 1);
        }
    }

    pub(crate) fn mode_set(&mut self, mode: u32) {
        self.mode |= mode;
    }

    pub(crate) fn mode_clear(&mut self, mode: u32) {
        self.mode &= !mode;
    }

    pub(crate) fn cursor_up(&mut self, ny: usize) {
        let (mut cx, cy) = (self.cx, self.cy);
        let mut ny = ny.max(1);
        if cy < self.rupper {
            ny = ny.min(cy);
        } else {
            ny = ny.min(cy - self.rupper);
        }
        if cx == self.sx() {
            cx -= 1;
        }
        self.set_cursor(Some(cx), Some(cy - ny));
    }

    pub(crate) fn cursor_down(&mut self, ny: usize) {
        let (mut cx, cy) = (self.cx, self.cy);
        let mut ny = ny.max(1);
        if cy > self.rlower {
            ny = ny.min(self.sy() - 1 - cy);
        } else {
            ny = ny.min(self.rlower - cy);
        }
        if cx == self.sx() {
            cx -= 1;
        } else if ny == 0 {
            return;
        }
        self.set_cursor(Some(cx), Some(cy + ny));
    }

    /// CUF. From the column past the last (a wrap pending) tmux's unsigned limit wraps
    /// around, so the cursor moves and is put back on the last column.
    pub(crate) fn cursor_right(&mut self, nx: usize) {
        let nx = nx.max(1).min((self.sx() - 1).wrapping_sub(self.cx));
        if nx == 0 {
            return;
        }
        self.set_cursor(Some(self.cx.saturating_add(nx)), None);
    }

    pub(crate) fn cursor_left(&mut self, nx: usize) {
        let nx = nx.max(1).min(self.cx);
        if nx == 0 {
            return;
        }
        self.set_cursor(Some(self.cx - nx), None);
    }

    /// BS: left, or to the end of the line above when this line is its continuation.
    pub(crate) fn backspace(&mut self) {
        let (mut cx, mut cy) = (self.cx, self.cy);
        if cx == 0 {
            if cy == 0 {
                return;
            }
            let above = self.grid.view(cy - 1);
            if self.grid.line(above).is_some_and(|line| line.wrapped) {
                cy -= 1;
                cx = self.sx() - 1;
            }
        } else {
            cx -= 1;
        }
        self.set_cursor(Some(cx), Some(cy));
    }

    /// DECALN: the screen full of `E`.
    pub(crate) fn alignment_test(&mut self) {
        let mut cell = Cell::DEFAULT;
        cell.ch = u32::from(b'E');
        for yy in 0..self.sy() {
            for xx in 0..self.sx() {
                let py = self.grid.view(yy);
                self.grid.set_cell(xx, py, cell);
            }
        }
        self.set_cursor(Some(0), Some(0));
        self.rupper = 0;
        self.rlower = self.sy() - 1;
    }

    /// The count of cells an ICH, DCH or ECH acts on, or `None` when the cursor is past the end.
    fn cells_from_cursor(&self, nx: usize) -> Option<usize> {
        let nx = nx.max(1).min(self.sx().saturating_sub(self.cx));
        (nx != 0 && self.cx < self.sx()).then_some(nx)
    }

    pub(crate) fn insert_characters(&mut self, nx: usize, bg: Colour) {
        if let Some(nx) = self.cells_from_cursor(nx) {
            self.grid.view_insert_cells(self.cx, self.cy, nx, bg);
        }
    }

    pub(crate) fn delete_characters(&mut self, nx: usize, bg: Colour) {
        if let Some(nx) = self.cells_from_cursor(nx) {
            self.grid.view_delete_cells(self.cx, self.cy, nx, bg);
        }
    }

    pub(crate) fn erase_characters(&mut self, nx: usize, bg: Colour) {
        if let Some(nx) = self.cells_from_cursor(nx) {
            self.grid.view_clear(self.cx, self.cy, nx, 1, bg);
        }
    }

    /// How many lines an IL or DL at the cursor acts on, and whether within the scroll region
    /// (the lines below it otherwise); `None` when none.
    fn lines_from_cursor(&self, ny: usize) -> Option<(usize, bool)> {
        let ny = ny.max(1);
        let (ny, in_region) = if self.cy < self.rupper || self.cy > self.rlower {
            (ny.min(self.sy() - self.cy), false)
        } else {
            (ny.min(self.rlower + 1 - self.cy), true)
        };
        (ny != 0).then_some((ny, in_region))
    }

    /// IL.
    pub(crate) fn insert_lines(&mut self, ny: usize, bg: Colour) {
        match self.lines_from_cursor(ny) {
            Some((ny, true)) => self
                .grid
                .view_insert_lines_region(self.rlower, self.cy, ny, bg),
            Some((ny, false)) => self.grid.view_insert_lines(self.cy, ny, bg),
            None => {}
        }
    }

    /// DL.
    pub(crate) fn delete_lines(&mut self, ny: usize, bg: Colour) {
        match self.lines_from_cursor(ny) {
            Some((ny, true)) => self
                .grid
                .view_delete_lines_region(self.rlower, self.cy, ny, bg),
            Some((ny, false)) => self.grid.view_delete_lines(self.cy, ny, bg),
            None => {}
        }
    }

    fn cursor_line_cells(&self) -> usize {
        let py = self.grid.view(self.cy);
        self.grid.line(py).map_or(0, |line| line.cells.len())
    }

    /// EL 2.
    pub(crate) fn clear_line(&mut self, bg: Colour) {
        if self.cursor_line_cells() == 0 && bg == Colour::Default {
            return;
        }
        self.grid.view_clear(0, self.cy, self.sx(), 1, bg);
    }

    /// EL 0.
    pub(crate) fn clear_end_of_line(&mut self, bg: Colour) {
        if self.cx == 0 {
            self.clear_line(bg);
            return;
        }
        let sx = self.sx();
        if self.cx > sx - 1 || (self.cx >= self.cursor_line_cells() && bg == Colour::Default) {
            return;
        }
        self.grid.view_clear(self.cx, self.cy, sx - self.cx, 1, bg);
    }

    /// EL 1.
    pub(crate) fn clear_start_of_line(&mut self, bg: Colour) {
        let sx = self.sx();
        if self.cx >= sx - 1 {
            self.clear_line(bg);
            return;
        }
        self.grid.view_clear(0, self.cy, self.cx + 1, 1, bg);
    }

    /// CUP and friends: `None` leaves a coordinate; `origin` applies origin mode to the row.
    pub(crate) fn cursor_move(&mut self, px: Option<usize>, py: Option<usize>, origin: bool) {
        let mut py = py;
        if let Some(y) = py.filter(|_| origin && self.mode & MODE_ORIGIN != 0) {
            py = Some(if y > self.rlower - self.rupper {
                self.rlower
            } else {
                y + self.rupper
            });
        }
        let px = px.map(|x| x.min(self.sx() - 1));
        let py = py.map(|y| y.min(self.sy() - 1));
        self.set_cursor(px, py);
    }

    /// RI.
    pub(crate) fn reverse_index(&mut self, bg: Colour) {
        if self.cy == self.rupper {
            self.grid
                .view_scroll_region_down(self.rupper, self.rlower, bg);
        } else if self.cy > 0 {
            self.set_cursor(None, Some(self.cy - 1));
        }
    }

    /// DECSTBM (rows 0-based); the cursor goes home.
    pub(crate) fn scroll_region(&mut self, rupper: usize, rlower: usize) {
        let last = self.sy() - 1;
        let (rupper, rlower) = (rupper.min(last), rlower.min(last));
        if rupper >= rlower {
            return;
        }
        self.set_cursor(Some(0), Some(0));
        self.rupper = rupper;
        self.rlower = rlower;
    }

    /// LF, and the wrap of a full line when `wrapped`.
    pub(crate) fn linefeed(&mut self, wrapped: bool, bg: Colour) {
        let py = self.grid.view(self.cy);
        if let Some(line) = self.grid.lines.get_mut(py).filter(|_| wrapped) {
            line.wrapped = true;
        }
        if self.cy == self.rlower {
            self.grid
                .view_scroll_region_up(self.rupper, self.rlower, bg);
        } else if self.cy < self.sy() - 1 {
            self.set_cursor(None, Some(self.cy + 1));
        }
    }

    /// SU.
    pub(crate) fn scroll_up(&mut self, lines: usize, bg: Colour) {
        let lines = lines.max(1).min(self.rlower - self.rupper + 1);
        for _ in 0..lines {
            self.grid
                .view_scroll_region_up(self.rupper, self.rlower, bg);
        }
    }

    /// SD.
    pub(crate) fn scroll_down(&mut self, lines: usize, bg: Colour) {
        let lines = lines.max(1).min(self.rlower - self.rupper + 1);
        for _ in 0..lines {
            self.grid
                .view_scroll_region_down(self.rupper, self.rlower, bg);
        }
    }

    /// CR.
    pub(crate) fn carriage_return(&mut self) {
        self.set_cursor(Some(0), None);
    }

    /// ED 0.
    pub(crate) fn clear_end_of_screen(&mut self, bg: Colour) {
        let (sx, sy) = (self.sx(), self.sy());
        if self.cx == 0 && self.cy == 0 && self.grid.history {
            self.grid.view_clear_history(bg);
        } else {
            if self.cx < sx {
                self.grid.view_clear(self.cx, self.cy, sx - self.cx, 1, bg);
            }
            self.grid
                .view_clear(0, self.cy + 1, sx, sy - (self.cy + 1), bg);
        }
    }

    /// ED 1.
    pub(crate) fn clear_start_of_screen(&mut self, bg: Colour) {
        let sx = self.sx();
        if self.cy > 0 {
            self.grid.view_clear(0, 0, sx, self.cy, bg);
        }
        if self.cx > sx - 1 {
            self.grid.view_clear(0, self.cy, sx, 1, bg);
        } else {
            self.grid.view_clear(0, self.cy, self.cx + 1, 1, bg);
        }
    }

    /// ED 2.
    pub(crate) fn clear_screen(&mut self, bg: Colour) {
        if self.grid.history {
            self.grid.view_clear_history(bg);
        } else {
            let (sx, sy) = (self.sx(), self.sy());
            self.grid.view_clear(0, 0, sx, sy, bg);
        }
    }

    /// ED 3.
    pub(crate) fn clear_history(&mut self) {
        self.grid.clear_history();
    }

    /// RIS (and the start of a pane).
    pub(crate) fn reset(&mut self) {
        // Links stay: tmux forgets them only when the pane's program is respawned.
        self.reset_tabs();
        self.scroll_region(0, self.sy() - 1);
        self.mode = MODE_CURSOR | MODE_WRAP;
        self.clear_screen(Colour::Default);
        self.set_cursor(Some(0), Some(0));
    }

    /// `?47h`, `?1047h`, `?1049h` (`cursor`: also save the cursor and `style`).
    pub(crate) fn alternate_on(&mut self, style: Style, cursor: bool) {
        if self.saved_grid.is_some() {
            return;
        }
        let (sx, sy) = (self.sx(), self.sy());
        let mut saved = Grid::new(sx, sy, 0);
        saved.duplicate_lines(0, &self.grid, self.grid.hsize, sy);
        self.saved_grid = Some(saved);
        if cursor {
            self.saved_cursor = Some((self.cx, self.cy));
        }
        self.saved_style = style;
        self.grid.view_clear(0, 0, sx, sy, Colour::Default);
        self.saved_history = self.grid.history;
        self.grid.history = false;
    }

    /// `?47l`, `?1047l`, `?1049l`; with `cursor`, the saved cursor and style come back (even
    /// when the alternate screen was not on), and the style is returned.
    pub(crate) fn alternate_off(&mut self, cursor: bool) -> Option<Style> {
        let mut restored = None;
        if let Some((cx, cy)) = self.saved_cursor.filter(|_| cursor) {
            self.cx = cx;
            self.cy = cy;
            restored = Some(self.saved_style);
        }
        if let Some(saved) = self.saved_grid.take() {
            // Back at the size the primary screen was saved at, then to today's size.
            let (sx, sy) = (self.sx(), self.sy());
            self.resize_with(saved.sx, saved.sy, true);
            let hsize = self.grid.hsize;
            self.grid.duplicate_lines(hsize, &saved, 0, saved.sy);
            if self.saved_history {
                self.grid.history = true;
            }
            self.resize_with(sx, sy, true);
        }
        self.cx = self.cx.min(self.sx() - 1);
        self.cy = self.cy.min(self.sy() - 1);
        restored
    }

    /// A new size, as tmux's `screen_resize`: fewer rows first drop empty ones below the
    /// cursor, then push the top ones into history; more rows take back lines that scrolled into
    /// history; a new width rewraps the lines (on the primary screen only, as tmux does) and
    /// keeps the cursor at its place in the text.
    pub(crate) fn resize(&mut self, sx: usize, sy: usize) {
        let reflow = self.saved_grid.is_none();
        self.resize_with(sx, sy, reflow);
    }

    fn resize_with(&mut self, sx: usize, sy: usize, mut reflow: bool) {
        self.collect_end();
        let (sx, sy) = (sx.max(1), sy.max(1));
        let mut cx = self.cx;
        let mut cy = self.grid.hsize + self.cy;
        if sx != self.sx() {
            self.grid.sx = sx;
            self.reset_tabs();
        } else {
            reflow = false;
        }
        if sy != self.sy() {
            self.resize_y(sy, &mut cy);
        }
        if reflow {
            let (wx, wy) = super::reflow::wrap_position(&self.grid, cx, cy);
            super::reflow::reflow(&mut self.grid);
            (cx, cy) = super::reflow::unwrap_position(&self.grid, wx, wy);
        }
        if cy >= self.grid.hsize {
            self.cx = cx;
            self.cy = cy - self.grid.hsize;
        } else {
            self.cx = 0;
            self.cy = 0;
        }
    }

    fn resize_y(&mut self, sy: usize, cy: &mut usize) {
        let oldy = self.sy();
        if sy < oldy {
            let mut needed = oldy - sy;
            let mut available = oldy - 1 - self.cy.min(oldy - 1);
            if available > 0 {
                available = available.min(needed);
                self.grid
                    .view_delete_lines(oldy - available, available, Colour::Default);
            }
            needed -= available;
            let available = self.cy;
            if self.grid.history {
                self.grid.hscrolled += needed;
                self.grid.hsize += needed;
            } else if needed > 0 && available > 0 {
                let available = available.min(needed);
                self.grid.view_delete_lines(0, available, Colour::Default);
                *cy -= available;
            }
        }
        let total = self.grid.hsize + sy;
        self.grid.lines.resize(total, super::grid::Line::default());
        if sy > oldy {
            let mut needed = sy - oldy;
            let mut available = self.grid.hscrolled;
            if self.grid.history && available > 0 {
                available = available.min(needed);
                self.grid.hscrolled -= available;
                self.grid.hsize -= available;
            } else {
                available = 0;
            }
            needed -= available;
            let hsize = self.grid.hsize;
            for line in &mut self.grid.lines[hsize + sy - needed..hsize + sy] {
                *line = super::grid::Line::default();
            }
        }
        self.grid.lines.truncate(self.grid.hsize + sy);
        self.grid.sy = sy;
        self.rupper = 0;
        self.rlower = sy - 1;
    }

    /// Adds a printable ASCII character (tmux's `screen_write_collect_add`).
    pub(crate) fn collect_add(&mut self, byte: u8, style: Style) {
        let collect = self.mode & MODE_WRAP != 0
            && self.mode & MODE_INSERT == 0
            && !style.attrs.contains(super::cell::Attrs::CHARSET);
        if !collect {
            self.collect_end();
            self.cell(Glyph {
                ch: u32::from(byte),
                width: Width::One,
                style,
            });
            return;
        }
        let sx = self.sx();
        if self.cx > sx - 1 || self.run.text.len() > sx - 1 - self.cx {
            self.collect_end();
        }
        if self.cx > sx - 1 {
            self.linefeed(true, Colour::Default);
            self.set_cursor(Some(0), None);
        }
        if self.run.text.is_empty() {
            self.run.style = style;
        }
        self.run.text.push(byte);
    }

    /// [`Screen::collect_add`] for each byte of `bytes`, a line's room at a time.
    pub(crate) fn collect_run(&mut self, bytes: &[u8], style: Style) {
        if self.mode & MODE_WRAP == 0
            || self.mode & MODE_INSERT != 0
            || style.attrs.contains(super::cell::Attrs::CHARSET)
        {
            for &byte in bytes {
                self.collect_add(byte, style);
            }
            return;
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let sx = self.sx();
            if self.cx > sx - 1 || self.run.text.len() > sx - 1 - self.cx {
                self.collect_end();
            }
            if self.cx > sx - 1 {
                self.linefeed(true, Colour::Default);
                self.set_cursor(Some(0), None);
            }
            if self.run.text.is_empty() {
                self.run.style = style;
            }
            let room = (sx - self.cx - self.run.text.len()).max(1);
            let take = room.min(rest.len());
            self.run.text.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
        }
    }

    /// Writes the collected ASCII run (tmux's `screen_write_collect_end`).
    pub(crate) fn collect_end(&mut self) {
        if self.run.text.is_empty() {
            return;
        }
        let run = std::mem::take(&mut self.run);
        let py = self.grid.view(self.cy);
        if self.cx != 0 {
            // Writing over part of a wide character clears all of it.
            let mut xx = self.cx;
            let mut cell = self.grid.cell(xx, py);
            while xx > 0 {
                cell = self.grid.cell(xx, py);
                if !cell.is_padding() {
                    break;
                }
                self.grid.set_cell(xx, py, Cell::DEFAULT);
                xx -= 1;
            }
            // tmux 3.6 reads the cell again when the walk reached column 0 (3.5 looked at the
            // last padding cell there, so a wide character at column 0 stayed).
            if xx == 0 && xx != self.cx && self.dialect.follows_3_6() {
                cell = self.grid.cell(0, py);
            }
            if cell.width > 1 {
                self.grid.set_cell(xx, py, Cell::DEFAULT);
            }
        }
        self.grid.set_ascii(self.cx, py, run.style, &run.text);
        self.set_cursor(Some(self.cx + run.text.len()), None);
        for xx in self.cx..self.sx() {
            if !self.grid.cell(xx, py).is_padding() {
                break;
            }
            self.grid.set_cell(xx, py, Cell::DEFAULT);
        }
        self.run = Run {
            text: run.text,
            style: Style::default(),
        };
        self.run.text.clear();
    }

    /// Writes a character that joins nothing: the rest of `screen_write_cell`.
    pub(super) fn write_cell(&mut self, glyph: Glyph) {
        let width = match glyph.width {
            Width::Two => 2,
            // tmux 3.4 writes a character of no width that could not join (its cell is full)
            // as a cell of its own, that the cursor does not pass.
            Width::Zero if self.dialect.joins_like_3_4() => 0,
            _ => 1,
        };
        self.write_sized(Cell::of_char(glyph.ch, width as u8, glyph.style), width);
    }

    /// Writes `cell`, `width` columns wide, at the cursor: a character, or a tab (tmux 3.6).
    pub(super) fn write_sized(&mut self, cell: Cell, width: usize) {
        let (sx, sy) = (self.sx(), self.sy());
        if self.mode & MODE_WRAP == 0
            && width > 1
            && (width > sx || (self.cx != sx && self.cx > sx - width))
        {
            return;
        }
        let mut skip = true;
        if self.mode & MODE_INSERT != 0 {
            self.grid
                .view_insert_cells(self.cx, self.cy, width, Colour::Default);
            skip = false;
        }
        if self.mode & MODE_WRAP != 0 && self.cx > sx.wrapping_sub(width) {
            self.linefeed(true, Colour::Default);
            self.set_cursor(Some(0), None);
        }
        if self.cx > sx.wrapping_sub(width) || self.cy > sy - 1 {
            return;
        }
        let py = self.grid.view(self.cy);
        let now = self.grid.cell(self.cx, py);
        if self.overwrite(now, width) {
            skip = false;
        }
        for xx in self.cx + 1..self.cx + width {
            self.grid.set_padding(xx, py);
            skip = false;
        }
        if !(skip && self.grid.write_is_noop(self.cx, py, &cell)) {
            self.grid.set_cell(self.cx, py, cell);
        }
        let last = usize::from(self.mode & MODE_WRAP == 0);
        if self.cx + last + width <= sx {
            self.set_cursor(Some(self.cx + width), None);
        } else {
            self.set_cursor(Some(sx - last), None);
        }
    }

    /// Clears what a new character of `width` partly covers (tmux's `screen_write_overwrite`).
    fn overwrite(&mut self, now: Cell, width: usize) -> bool {
        let py = self.grid.view(self.cy);
        let mut done = false;
        if now.flags & PADDING != 0 {
            let mut xx = self.cx + 1;
            loop {
                xx -= 1;
                if xx == 0 {
                    break;
                }
                if !self.grid.cell(xx, py).is_padding() {
                    break;
                }
                self.grid.set_cell(xx, py, Cell::DEFAULT);
            }
            self.grid.set_cell(xx, py, Cell::DEFAULT);
            done = true;
        }
        if width != 1 || now.width != 1 || now.is_padding() {
            let mut xx = self.cx + width;
            while xx < self.sx() {
                if !self.grid.cell(xx, py).is_padding() {
                    break;
                }
                // tmux 3.6 leaves what a tab covered as tabs of one column each.
                let rest = if now.flags & super::grid::TAB != 0 {
                    Cell { width: 1, ..now }
                } else {
                    Cell::DEFAULT
                };
                self.grid.set_cell(xx, py, rest);
                done = true;
                xx += 1;
            }
        }
        done
    }
}
