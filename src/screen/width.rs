//! How many columns a character takes, the way tmux decides it.

#[path = "width_table.rs"]
mod table;
#[path = "width_tmux34.rs"]
mod tmux34;
#[path = "width_tmux36.rs"]
#[allow(dead_code)]
pub(crate) mod tmux36;

use super::dialect::Dialect;

/// What tmux does with a decoded character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    /// Not printable: tmux drops it.
    Dropped,
    /// Joins the character before it (combining marks, variation selectors, ZWJ).
    Zero,
    /// One column.
    One,
    /// Two columns (East Asian wide, most emoji).
    Two,
}

/// Widths of the Basic Multilingual Plane, one byte each (-1, 0, 1 or 2), built from the table
/// at compile time: most characters a pane prints are here, and a lookup beats a search.
static BMP: [i8; 0x10000] = bmp();

const fn bmp() -> [i8; 0x10000] {
    let mut widths = [1i8; 0x10000];
    let mut cp = 0;
    while cp < 0x20 {
        widths[cp] = -1;
        cp += 1;
    }
    widths[0x7f] = -1;
    let mut i = 0;
    while i < table::NOT_ONE.len() {
        let (first, last, width) = table::NOT_ONE[i];
        if first < 0x10000 {
            let mut cp = first as usize;
            let end = if last < 0x10000 {
                last as usize
            } else {
                0xffff
            };
            while cp <= end {
                widths[cp] = width;
                cp += 1;
            }
        }
        i += 1;
    }
    widths
}

/// The width of code point `cp` as tmux of `dialect` decides it (tmux 3.4's `utf8_width`: the
/// forced-wide emoji first, then `wcwidth()`, whose -1 means one column, or none for a C1
/// control; 3.3's: `wcwidth()` alone, -1 dropped; 3.2's: `wcwidth()`, -1 one column).
pub(crate) fn width_in(cp: u32, dialect: Dialect) -> Width {
    let known = width(cp);
    if !dialect.prints_unknown_characters() {
        return known;
    }
    if !dialect.joins_like_3_4() {
        return match known {
            Width::Dropped => Width::One,
            width => width,
        };
    }
    // tmux 3.6 takes regional indicators out of the always-wide emoji: a flag is two of them
    // joined, and one alone is one column.
    if dialect.follows_3_6() && tmux36::is_regional_indicator(cp) {
        return Width::One;
    }
    if tmux34::FORCE_WIDE.binary_search(&cp).is_ok() {
        return Width::Two;
    }
    match known {
        Width::Dropped if (0x80..=0x9f).contains(&cp) => Width::Zero,
        Width::Dropped => Width::One,
        width => width,
    }
}

/// Whether `cp` is in tmux 3.4's modifier table: it joins the character before it (when that
/// is not ASCII) and makes it two wide.
pub(crate) fn is_modifier(cp: u32) -> bool {
    tmux34::MODIFIERS.binary_search(&cp).is_ok()
}

/// The width of code point `cp` (tmux 3.3a on Debian 12: glibc 2.36 `wcwidth()`).
pub(crate) fn width(cp: u32) -> Width {
    if let Some(&width) = BMP.get(cp as usize) {
        return match width {
            1 => Width::One,
            0 => Width::Zero,
            2 => Width::Two,
            _ => Width::Dropped,
        };
    }
    let found = table::NOT_ONE.binary_search_by(|&(first, last, _)| {
        if last < cp {
            std::cmp::Ordering::Less
        } else if first > cp {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    match found {
        Ok(i) => match table::NOT_ONE[i].2 {
            0 => Width::Zero,
            2 => Width::Two,
            _ => Width::Dropped,
        },
        Err(_) if cp > 0x10ffff => Width::Dropped,
        Err(_) => Width::One,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_of_the_kinds_of_characters() {
        assert_eq!(width('a' as u32), Width::One);
        assert_eq!(width(0xe9), Width::One); // é
        assert_eq!(width(0x65e5), Width::Two); // 日
        assert_eq!(width(0x1f44d), Width::Two); // 👍
        assert_eq!(width(0x2139), Width::One); // ℹ (VS16 does not widen it in tmux 3.3a)
        assert_eq!(width(0xfe0f), Width::Zero); // VS16
        assert_eq!(width(0x200d), Width::Zero); // ZWJ
        assert_eq!(width(0x301), Width::Zero); // combining acute
        assert_eq!(width(0x85), Width::Dropped); // C1 control
        assert_eq!(width(0x378), Width::Dropped); // unassigned
        assert_eq!(width(0x110000), Width::Dropped);
    }

    #[test]
    fn tmux_3_4_widens_forced_emoji_and_prints_what_wcwidth_does_not_know() {
        let new = Dialect::V3_5;
        assert_eq!(width_in(0x261d, Dialect::V3_3), Width::One); // ☝
        assert_eq!(width_in(0x261d, new), Width::Two);
        assert_eq!(width_in(0x378, new), Width::One); // unassigned
        assert_eq!(width_in(0x85, new), Width::Zero); // C1 control
        assert_eq!(width_in(0x65e5, new), Width::Two);
        assert_eq!(width_in(0x301, new), Width::Zero);
        assert!(is_modifier(0x1f3fb) && is_modifier(0x1f1e6) && !is_modifier(0x1f44d));
        assert_eq!(width_in(0x1f1e6, new), Width::Two); // 🇦
        assert_eq!(width_in(0x1f1e6, Dialect::V3_6), Width::One);
        assert_eq!(width_in(0x1f3fb, Dialect::V3_6), Width::Two); // 🏻
    }

    #[test]
    fn the_plane_table_agrees_with_the_search() {
        for cp in (0..0x10000u32).step_by(7) {
            let searched = match table::NOT_ONE.iter().find(|r| r.0 <= cp && cp <= r.1) {
                Some((_, _, 0)) => Width::Zero,
                Some((_, _, 2)) => Width::Two,
                Some(_) => Width::Dropped,
                None if cp < 0x20 || cp == 0x7f => Width::Dropped,
                None => Width::One,
            };
            assert_eq!(width(cp), searched, "{cp:x}");
        }
    }

    #[test]
    fn the_table_is_sorted_and_disjoint() {
        for pair in table::NOT_ONE.windows(2) {
            assert!(pair[0].0 <= pair[0].1 && pair[0].1 < pair[1].0, "{pair:?}");
        }
    }
}
