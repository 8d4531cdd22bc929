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

/// The width of code point `cp` (tmux 3.3a on Debian 12: glibc 2.36 `wcwidth()`).
pub(crate) fn width(cp: u32) -> Width {
    if (0x20..0x7f).contains(&cp) {
        return Width::One;
    }
    if cp < 0x20 || cp == 0x7f {
        return Width::Dropped;
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
    fn the_table_is_sorted_and_disjoint() {
        for pair in table::NOT_ONE.windows(2) {
            assert!(pair[0].0 <= pair[0].1 && pair[0].1 < pair[1].0, "{pair:?}");
        }
    }
}
