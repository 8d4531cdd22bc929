//! How a character joins the cell before it, by the rules of each tmux (`screen_write_cell`
//! and `screen_write_combine`): 3.3 joins zero-width characters and what follows a joiner; 3.4
//! also keeps the joiner in its cell and widens with VS16 and the emoji modifiers. The rest of
//! writing a cell is in `writer.rs`.

use super::grid::Cell;
use super::width::{Width, is_modifier};
use super::writer::{CLUSTER_BYTES, Glyph, Screen};

impl Screen {
    /// Writes one character (tmux's `screen_write_cell`).
    pub(crate) fn cell(&mut self, glyph: Glyph) {
        let joined = if self.dialect.joins_like_3_4() {
            self.combine_3_4(&glyph)
        } else if self.dialect.joins_after_a_joiner() {
            self.joins_like_3_3(&glyph)
        } else {
            // tmux 3.2: only a character of no width (a joiner too) joins.
            glyph.width == Width::Zero && {
                self.combine(glyph.ch);
                true
            }
        };
        if !joined {
            self.write_cell(glyph);
        }
    }

    /// tmux 3.3's joining: a joiner waits for the next character, which joins the cell before
    /// as a zero-width character does. Whether `glyph` was taken.
    fn joins_like_3_3(&mut self, glyph: &Glyph) -> bool {
        if glyph.ch == 0x200d {
            self.zwj = true;
            return true;
        }
        if self.zwj {
            self.combine(0x200d);
        }
        if glyph.width == Width::Zero || self.zwj {
            self.zwj = false;
            self.combine(glyph.ch);
            return true;
        }
        false
    }

    /// tmux 3.4's `screen_write_combine`: whether `glyph` joined the cell before the cursor, or
    /// was dropped as a character that means nothing alone. A joiner, VS16 or a zero-width
    /// character joins any character that is not ASCII; a modifier joins one and makes it two
    /// wide (as VS16 does); anything joins a cell that ends with a joiner.
    fn combine_3_4(&mut self, glyph: &Glyph) -> bool {
        let vs16 = glyph.ch == 0xfe0f;
        let zero_width = glyph.ch == 0x200d || vs16 || glyph.width == Width::Zero;
        let mut force_wide = vs16;
        if glyph.ch < 0x80 || self.cx == 0 {
            return zero_width;
        }
        let py = self.grid.view(self.cy);
        let mut n = 1;
        let mut last = self.grid.cell(self.cx - 1, py);
        if self.cx != 1 && last.is_padding() {
            n = 2;
            last = self.grid.cell(self.cx - 2, py);
        }
        if usize::from(last.width) != n || last.is_padding() {
            return zero_width;
        }
        let mut text = String::new();
        self.clusters.push_text(last.ch, &mut text);
        if !zero_width {
            if is_modifier(glyph.ch) {
                if text.len() < 2 {
                    return false;
                }
                force_wide = true;
            } else if !text.ends_with('\u{200d}') {
                return false;
            }
        }
        // A code point past U+10FFFF joins as U+FFFD: the cells and the cursor as tmux has
        // them, the cluster's bytes not (a cluster is text here).
        let joining = char::from_u32(glyph.ch).unwrap_or(char::REPLACEMENT_CHARACTER);
        if text.len() + joining.len_utf8() > CLUSTER_BYTES {
            // Written as a cell of its own (one of no width too, see `write_cell`).
            return false;
        }
        text.push(joining);
        let mut cell = last;
        cell.ch = self.clusters.intern(&text).unwrap_or(u32::from(b' '));
        let mut cx = self.cx;
        if last.width == 1 && force_wide {
            cell.width = 2;
            n = 2;
            cx += 1;
        } else {
            force_wide = false;
        }
        self.grid.set_cell(cx - n, py, cell);
        if force_wide {
            let padding = cx - 1 + self.dialect.widened_padding_offset();
            self.grid.set_padding(padding, py);
        }
        self.set_cursor(Some(cx), None);
        true
    }

    /// Joins `ch` to the cell left of the cursor (tmux's `screen_write_combine`).
    fn combine(&mut self, ch: u32) {
        if self.cx == 0 {
            return;
        }
        let py = self.grid.view(self.cy);
        let mut n = 1;
        let mut cell = Cell::DEFAULT;
        while n <= self.cx {
            cell = self.grid.cell(self.cx - n, py);
            if !cell.is_padding() {
                break;
            }
            n += 1;
        }
        if n > self.cx {
            return;
        }
        let mut text = String::new();
        self.clusters.push_text(cell.ch, &mut text);
        let Some(joining) = char::from_u32(ch) else {
            return;
        };
        if text.len() + joining.len_utf8() > CLUSTER_BYTES {
            return;
        }
        text.push(joining);
        cell.ch = self.clusters.intern(&text).unwrap_or(u32::from(b' '));
        self.grid.set_cell(self.cx - n, py, cell);
    }
}
