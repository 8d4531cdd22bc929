//! A tab as tmux 3.6 writes it (`input_c0_dispatch`, HT): over cells that are all blank and
//! look alike, one cell holding the tab, as wide as the columns it covers (`capture-pane` prints
//! it as `\t`, so a program's tabs come back as tabs); over anything else a move to the next tab
//! stop, as every tmux before 3.6 does.

use super::grid::{Cell, PADDING, TAB};
use super::writer::Screen;

/// The widest tab tmux keeps as a cell (the bytes of a cell's data, `UTF8_SIZE`).
const WIDEST_TAB: usize = 32;

impl Screen {
    /// HT: the cursor to the next tab stop (the last column if there is none), and from tmux
    /// 3.6 a tab cell where every column it covers is blank.
    pub(crate) fn tab(&mut self) {
        self.collect_end();
        let sx = self.sx();
        if self.cx + 1 >= sx {
            return;
        }
        let py = self.grid.view(self.cy);
        let first = self.grid.cell(self.cx, py);
        let mut has_content = false;
        let mut cx = self.cx;
        loop {
            if !has_content {
                let cell = self.grid.cell(cx, py);
                has_content = !is_space(&cell) || !look_equal(&cell, &first);
            }
            cx += 1;
            if self.is_tab(cx) || cx >= sx - 1 {
                break;
            }
        }
        let width = cx - self.cx;
        if has_content || width > WIDEST_TAB || !self.dialect.follows_3_6() {
            self.cx = cx;
            return;
        }
        if self.tab_joins_a_joiner(width) {
            return;
        }
        let tab = Cell {
            ch: u32::from(b'\t'),
            width: width as u8,
            flags: (first.flags | TAB) & !PADDING,
            style: first.style,
        };
        self.write_sized(tab, width);
    }

    /// tmux keeps a tab's columns as spaces in its data, so a tab of two columns or more after
    /// a cell that ends with a joiner joins it as those spaces (`screen_write_combine`): the
    /// cursor stays. Whether it did.
    fn tab_joins_a_joiner(&mut self, width: usize) -> bool {
        if width < 2 {
            return false;
        }
        let Some((last, n)) = self
            .cell_to_join()
            .filter(|(last, _)| last.flags & TAB == 0)
        else {
            return false;
        };
        let py = self.grid.view(self.cy);
        let mut text = String::new();
        self.clusters.push_text(last.ch, &mut text);
        if !text.ends_with('\u{200d}') || text.len() + width > self.dialect.cluster_bytes() {
            return false;
        }
        text.extend(std::iter::repeat_n(' ', width));
        let mut cell = last;
        cell.ch = self.intern_3_6(&text);
        self.grid.set_cell(self.cx - n, py, cell);
        true
    }
}

/// Whether a cell holds one space as tmux's data has it (a tab of one column is one space).
fn is_space(cell: &Cell) -> bool {
    !cell.is_padding() && cell.width == 1 && (cell.ch == u32::from(b' ') || (cell.flags & TAB != 0))
}

/// tmux 3.6's `grid_cells_look_equal`: the same colours, attributes, link and flags, whether
/// cleared or not (the underline colour is not compared).
fn look_equal(a: &Cell, b: &Cell) -> bool {
    let flags = |cell: &Cell| cell.flags & !super::grid::CLEARED & !super::grid::EXTENDED;
    a.style.fg == b.style.fg
        && a.style.bg == b.style.bg
        && a.style.attrs == b.style.attrs
        && a.style.link == b.style.link
        && flags(a) == flags(b)
}

#[cfg(test)]
mod tests {
    use crate::screen::{Dialect, PaneScreen};

    fn row0(dialect: Dialect, bytes: &[u8]) -> (Vec<u8>, (u16, u16)) {
        let mut screen = PaneScreen::new(20, 2).with_dialect(dialect);
        screen.feed(bytes);
        let mut row = screen.capture_rows(false).remove(0);
        row.truncate(row.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1));
        (row, screen.cursor())
    }

    #[test]
    fn a_tab_over_blank_cells_is_kept_from_3_6() {
        // What tmux 3.6a and 3.5a print for the same bytes (capture-pane -p -e -N).
        assert_eq!(row0(Dialect::V3_6, b"ab\tc"), (b"ab\tc".to_vec(), (9, 0)));
        assert_eq!(row0(Dialect::V3_5, b"ab\tc").1, (9, 0));
        assert!(!row0(Dialect::V3_5, b"ab\tc").0.contains(&b'\t'));
        // Over written cells it only moves the cursor.
        let (row, cursor) = row0(Dialect::V3_6, b"abcdefghij\rxy\tz");
        assert_eq!((&row[..], cursor), (&b"xycdefghzj"[..], (9, 0)));
        // Text written into a tab's columns leaves spaces.
        let (row, _) = row0(Dialect::V3_6, b"ab\t\x1b[1;5HQ");
        assert_eq!(&row[..], b"ab  Q");
    }

    #[test]
    fn a_character_over_a_tabs_first_column_leaves_tabs_of_one_column() {
        let (row, cursor) = row0(Dialect::V3_6, "\tAB\ré".as_bytes());
        assert_eq!(&row[..], "é\t\t\t\t\t\t\tAB".as_bytes());
        assert_eq!(cursor, (1, 0));
    }
}
