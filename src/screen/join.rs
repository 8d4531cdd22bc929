//! How a character joins the cell before it, by the rules of each tmux (`screen_write_cell`
//! and `screen_write_combine`): 3.3 joins zero-width characters and what follows a joiner; 3.4
//! also keeps the joiner in its cell and widens with VS16 and the emoji modifiers. The rest of
//! writing a cell is in `writer.rs`.

use super::grid::{Cell, TAB};
use super::width::tmux36::{self, JamoClass};
use super::width::{Width, is_modifier};
use super::writer::{Glyph, Screen};

impl Screen {
    /// Writes one character (tmux's `screen_write_cell`).
    pub(crate) fn cell(&mut self, glyph: Glyph) {
        let joined = if self.dialect.follows_3_6() {
            self.combine_3_6(&glyph)
        } else if self.dialect.joins_like_3_4() {
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
        let Some((last, mut n)) = self.cell_to_join() else {
            return zero_width;
        };
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
        if text.len() + joining.len_utf8() > self.dialect.cluster_bytes() {
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

    /// tmux 3.6a's `screen_write_combine`: 3.4's, except that U+3164 is ignored, a skin tone
    /// and the emoji that take one join in either order and two regional indicators join (each
    /// making the cell two wide), a Hangul vowel or trailing consonant of some width joins the
    /// jamo it follows or is dropped, and a leading consonant starts a cell even after a joiner.
    fn combine_3_6(&mut self, glyph: &Glyph) -> bool {
        if glyph.ch == tmux36::HANGUL_FILLER {
            return true;
        }
        let vs16 = glyph.ch == 0xfe0f;
        let zero_width = glyph.ch == 0x200d || vs16 || glyph.width == Width::Zero;
        let mut force_wide = vs16;
        if glyph.ch < 0x80 || self.cx == 0 {
            return zero_width;
        }
        let py = self.grid.view(self.cy);
        let Some((last, mut n)) = self.cell_to_join() else {
            return zero_width;
        };
        // A tab cell holds its width in spaces, as tmux stores it.
        let mut text = String::new();
        if last.flags & TAB != 0 {
            text.extend(std::iter::repeat_n(' ', usize::from(last.width)));
        } else {
            self.clusters.push_text(last.ch, &mut text);
        }
        if !zero_width {
            let last_three = text
                .char_indices()
                .next_back()
                .filter(|(i, c)| text.len() - i == 3 && c.len_utf8() == 3)
                .map(|(_, c)| u32::from(c));
            let composable = |class| last_three.and_then(tmux36::jamo_class) == Some(class);
            match tmux36::jamo_class(glyph.ch) {
                Some(JamoClass::Leading) => return false,
                Some(JamoClass::Vowel) if !composable(JamoClass::Leading) => return true,
                Some(JamoClass::Trailing) if !composable(JamoClass::Vowel) => return true,
                Some(_) => {}
                None => {
                    let first = text.chars().next().map_or(0, u32::from);
                    if tmux36::should_combine(first, glyph.ch)
                        || (self.dialect.joins_skin_tones_either_way()
                            && tmux36::should_combine(glyph.ch, first))
                    {
                        force_wide = true;
                    } else if !text.ends_with('\u{200d}') {
                        return false;
                    }
                }
            }
        }
        let Some(joining) = char::from_u32(glyph.ch) else {
            return false;
        };
        if text.len() + joining.len_utf8() > self.dialect.cluster_bytes() {
            return false;
        }
        text.push(joining);
        let mut cell = last;
        if last.flags & TAB == 0 {
            cell.ch = self.intern_3_6(&text);
        }
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
            self.grid.set_padding(cx - 1, py);
        }
        self.set_cursor(Some(cx), None);
        true
    }

    /// The cell a character at the cursor may join (`screen_write_combine`), and how many
    /// columns back it starts: the one just before, or the one before its padding. None when
    /// that is not a whole character, or at column 0.
    pub(super) fn cell_to_join(&self) -> Option<(Cell, usize)> {
        if self.cx == 0 {
            return None;
        }
        let py = self.grid.view(self.cy);
        let mut n = 1;
        let mut last = self.grid.cell(self.cx - 1, py);
        if self.cx != 1 && last.is_padding() {
            n = 2;
            last = self.grid.cell(self.cx - 2, py);
        }
        (usize::from(last.width) == n && !last.is_padding()).then_some((last, n))
    }

    /// A cluster's cell value as tmux 3.6 stores it: a cluster of exactly 32 bytes keeps its
    /// size in five bits, so it reads back empty (tmux prints nothing for it, and nothing
    /// joins it after).
    pub(super) fn intern_3_6(&mut self, text: &str) -> u32 {
        let kept = if text.len() == 32 { "" } else { text };
        self.clusters.intern(kept).unwrap_or(u32::from(b' '))
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
        if text.len() + joining.len_utf8() > self.dialect.cluster_bytes() {
            return;
        }
        text.push(joining);
        cell.ch = self.clusters.intern(&text).unwrap_or(u32::from(b' '));
        self.grid.set_cell(self.cx - n, py, cell);
    }
}
