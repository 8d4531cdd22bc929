//! UTF-8 as tmux's parser reads it (`input_top_bit_set`, `utf8_open`, `utf8_append`): a
//! sequence is as long as its first byte says; a byte that does not continue it still counts.
//! Before 3.6 tmux drops what it cannot decode; from 3.6 it writes one U+FFFD in the pen's
//! style for each bad sequence, and for one a printable or control byte cuts short.

use super::{Repeat, Terminal};
use crate::screen::width::{Width, width_in};
use crate::screen::writer::Glyph;

impl Terminal {
    /// A byte of 0x80 or more in the ground state (tmux's `input_top_bit_set`).
    pub(super) fn top_bit_set(&mut self, ch: u8) {
        self.last = None;
        if self.utf8_size == 0 {
            let size = match ch {
                0xc2..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf4 => 4,
                // A byte no sequence starts with: U+FFFD from tmux 3.6, nothing before.
                _ => return self.write_replacement(),
            };
            self.utf8.clear();
            self.utf8.push(ch);
            self.utf8_size = size;
            self.utf8_invalid = false;
            return;
        }
        if ch & 0xc0 != 0x80 {
            self.utf8_invalid = true;
        }
        self.utf8.push(ch);
        if self.utf8.len() != self.utf8_size {
            return;
        }
        self.utf8_size = 0;
        let dialect = self.screen.dialect;
        let decoded = if self.utf8_invalid {
            None
        } else {
            decode(&self.utf8, dialect.keeps_past_unicode())
        };
        let Some(cp) = decoded else {
            // A sequence with a byte that does not continue it, an overlong form, a surrogate
            // or a code point past Unicode: one U+FFFD for all of it (tmux 3.6).
            return self.write_replacement();
        };
        let width = width_in(cp, dialect);
        if width == Width::Dropped {
            return;
        }
        if dialect.repeats_any_character() {
            self.last = Some(Repeat::Char(cp, width));
        }
        self.screen.cell(Glyph {
            ch: cp,
            width,
            style: self.pen.style,
        });
    }

    /// Ends a UTF-8 sequence that a printable or control byte cut short (tmux's
    /// `input_stop_utf8`): U+FFFD for it from tmux 3.6, nothing before.
    pub(super) fn stop_utf8(&mut self) {
        if self.utf8_size != 0 {
            self.write_replacement();
        }
    }

    /// Writes U+FFFD for what could not be decoded, where the dialect does (3.6 and later):
    /// one column, the pen's style, not something REP repeats.
    fn write_replacement(&mut self) {
        self.utf8_size = 0;
        if !self.screen.dialect.follows_3_6() {
            return;
        }
        self.screen.collect_end();
        self.screen.cell(Glyph {
            ch: 0xfffd,
            width: Width::One,
            style: self.pen.style,
        });
    }
}

/// Decodes a complete UTF-8 sequence the way glibc's `mbtowc` accepts it (no overlong forms,
/// no surrogates, nothing past U+10FFFF).
/// The code point of a complete UTF-8 sequence, as glibc's `mbtowc()` reads it: surrogates and
/// overlong forms refused, and code points past U+10FFFF (up to U+13FFFF, what a 4-byte form
/// can hold) only when `past_unicode` (tmux 3.4 prints them; 3.3 drops them for their width).
pub(super) fn decode(bytes: &[u8], past_unicode: bool) -> Option<u32> {
    let cont = |i: usize| u32::from(bytes[i] & 0x3f);
    let (cp, min) = match *bytes {
        [a, _] => ((u32::from(a & 0x1f) << 6) | cont(1), 0x80),
        [a, _, _] => (
            (u32::from(a & 0x0f) << 12) | (cont(1) << 6) | cont(2),
            0x800,
        ),
        [a, _, _, _] => (
            (u32::from(a & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            0x10000,
        ),
        _ => return None,
    };
    // The lead and continuation bytes were checked as they came.
    let max = if past_unicode { 0x13ffff } else { 0x10ffff };
    (cp >= min && cp <= max && !(0xd800..=0xdfff).contains(&cp)).then_some(cp)
}
