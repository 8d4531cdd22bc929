//! How many columns a character takes, the way tmux decides it.

#[path = "width_table.rs"]
mod table;

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
