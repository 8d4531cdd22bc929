//! Which tmux a screen follows. tmux changed how it joins characters, how wide some of them
//! are and what `capture-pane` prints in each release from 3.2 to 3.6; a mirror follows the rules of the
//! server it reads, or the watchdog keeps repairing screens that were right all along.
//!
//! The session core decides the dialect once, from the version the server reports
//! (`TmuxVersion::dialect`), and passes it to every pane's screen. Each rule that differs is
//! read off that version's source (`screen-write.c`, `utf8.c`, `utf8-combined.c`, `grid.c`,
//! `cmd-capture-pane.c`) and checked against a real tmux of that version by the differential
//! tests (`tests/integration/fidelity.rs` with that tmux first on `PATH`).

use std::fmt;

/// The rules of one range of tmux versions. See the module documentation.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Default,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Dialect {
    /// tmux 3.2 (Ubuntu 22.04's 3.2a): a zero-width character (a joiner too) joins the cell
    /// before, and what follows a joiner does not; characters `wcwidth()` does not know take
    /// one column; `capture-pane` prints every allocated cell of a line and no underline
    /// colour.
    #[serde(rename = "3.2")]
    V3_2,
    /// tmux 3.3 (Debian 12's 3.3a): a joiner waits and the character after it joins the cell
    /// before; VS16 does not widen; characters `wcwidth()` does not know are dropped;
    /// `capture-pane` prints a line up to its last written cell. The rules of the model before
    /// it knew dialects, so the default.
    #[default]
    #[serde(rename = "3.3")]
    V3_3,
    /// tmux 3.4 (Ubuntu 24.04's): a joiner is kept in the cell it follows and joins what comes
    /// next; VS16 and the emoji modifiers (skin tones, regional indicators) make a character
    /// two wide; characters `wcwidth()` does not know take one column (C1 controls none);
    /// some emoji are always two wide; OSC 8 links are kept; `capture-pane` prints every
    /// allocated cell of a line (cleared cells and their background too, unless `-T`), and a
    /// style ending in the default colour is reset with `\e[0m` alone. A character VS16 widens
    /// leaves its padding cell one column too far right (fixed in 3.5); REP repeats only
    /// ASCII, as in 3.3.
    #[serde(rename = "3.4")]
    V3_4,
    /// tmux 3.5 (Debian 13's 3.5a): 3.4's rules, the widening padding in its place, and REP
    /// repeats any character (UTF-8 too) in the current style without line drawing.
    #[serde(rename = "3.5")]
    V3_5,
    /// tmux 3.6 (Debian's source of "3.6a" reports 3.6): 3.6a's rules, but a skin tone joins
    /// an emoji only when it comes first (3.6a fixed the other order).
    #[serde(rename = "3.6")]
    V3_6,
    /// tmux 3.6a (Homebrew's) and later: 3.5's rules, and a tab over blank
    /// cells kept as one tab cell (`capture-pane` prints `\t`); invalid UTF-8 written as
    /// U+FFFD; a regional indicator one wide, joining only another one (a flag); a skin tone
    /// joining only the emoji that take one (in either order); U+3164 ignored; a Hangul
    /// leading consonant never joining; cells of up to 32 bytes; REP keeping the line-drawing
    /// set; ASCII over the second column of a wide character at column 0 clearing it.
    #[serde(rename = "3.6a")]
    V3_6a,
}

impl Dialect {
    /// The newest dialect: for a server whose version says no number (`master`, a packager's
    /// own name), which is most likely newer than every release.
    pub const NEWEST: Dialect = Dialect::V3_6a;

    /// Every dialect, oldest first (for tests and tools that try each).
    pub const ALL: [Dialect; 6] = [
        Dialect::V3_2,
        Dialect::V3_3,
        Dialect::V3_4,
        Dialect::V3_5,
        Dialect::V3_6,
        Dialect::V3_6a,
    ];

    /// Whether tmux 3.4's joining applies (joiners kept, VS16 and modifiers widen).
    pub(crate) fn joins_like_3_4(self) -> bool {
        self >= Dialect::V3_4
    }

    /// Whether a character follows a joiner into its cell (3.3 and later); in 3.2 only
    /// characters of no width join.
    pub(crate) fn joins_after_a_joiner(self) -> bool {
        self >= Dialect::V3_3
    }

    /// Whether a character `wcwidth()` does not know (-1) is printed (one column wide) rather
    /// than dropped, and with it code points past U+10FFFF: 3.3 drops them.
    pub(crate) fn prints_unknown_characters(self) -> bool {
        self != Dialect::V3_3
    }

    /// Whether code points past U+10FFFF (up to U+13FFFF) are kept, one column wide: every
    /// tmux but 3.3, which drops them.
    pub(crate) fn keeps_past_unicode(self) -> bool {
        self.prints_unknown_characters()
    }

    /// Whether tmux 3.6's rules apply: tabs kept, U+FFFD for invalid UTF-8, the joining of
    /// flags, skin tones and Hangul by 3.6's tables.
    pub(crate) fn follows_3_6(self) -> bool {
        self >= Dialect::V3_6
    }

    /// Whether a skin tone joins the emoji before it as well as the one after it (3.6a).
    pub(crate) fn joins_skin_tones_either_way(self) -> bool {
        self >= Dialect::V3_6a
    }

    /// The most bytes one cell holds (`UTF8_SIZE`): 21, and 32 from 3.6.
    pub(crate) fn cluster_bytes(self) -> usize {
        if self.follows_3_6() { 32 } else { 21 }
    }

    /// Whether `capture-pane` (without `-T`) prints every allocated cell of a line rather than
    /// up to the last written one: 3.2, and again from 3.4.
    pub(crate) fn captures_empty_cells(self) -> bool {
        self != Dialect::V3_3
    }

    /// Whether `capture-pane -e` prints underline colours (from 3.3).
    pub(crate) fn prints_underline_colour(self) -> bool {
        self >= Dialect::V3_3
    }

    /// Whether `capture-pane -e` leaves out a default colour right after a reset (`\e[0m`
    /// alone where 3.3 adds `\e[39m\e[49m`): from 3.4.
    pub(crate) fn resets_without_default_colours(self) -> bool {
        self >= Dialect::V3_4
    }

    /// Whether OSC 8 hyperlinks are kept in cells and printed by `capture-pane -e`.
    pub(crate) fn keeps_links(self) -> bool {
        self >= Dialect::V3_4
    }

    /// Whether REP repeats the last character whatever it was (UTF-8 too), in the current
    /// style without the line-drawing set (3.5), rather than printing the last ASCII character
    /// again (3.4 and before).
    pub(crate) fn repeats_any_character(self) -> bool {
        self >= Dialect::V3_5
    }

    /// Where tmux puts the padding cell of a character VS16 or a modifier widened: one column
    /// past the character's second one in 3.4, on it from 3.5.
    pub(crate) fn widened_padding_offset(self) -> usize {
        if self == Dialect::V3_4 { 1 } else { 0 }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::V3_2 => "3.2",
            Dialect::V3_3 => "3.3",
            Dialect::V3_4 => "3.4",
            Dialect::V3_5 => "3.5",
            Dialect::V3_6 => "3.6",
            Dialect::V3_6a => "3.6a",
        })
    }
}

/// A dialect name that is none of [`Dialect::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tmux dialect {0:?} (known: 3.2, 3.3, 3.4, 3.5, 3.6, 3.6a)")]
pub struct UnknownDialect(pub String);

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    /// `3.2`, `3.3`, `3.4`, `3.5`, `3.6`, `3.6a`: how a divergence record names it.
    fn from_str(text: &str) -> Result<Dialect, UnknownDialect> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.to_string() == text)
            .ok_or_else(|| UnknownDialect(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for dialect in Dialect::ALL {
            assert_eq!(dialect.to_string().parse::<Dialect>(), Ok(dialect));
        }
        assert!("3.1".parse::<Dialect>().is_err());
    }

    #[test]
    fn rules_switch_at_their_versions() {
        assert!(!Dialect::V3_3.joins_like_3_4() && !Dialect::V3_3.captures_empty_cells());
        assert!(Dialect::V3_2.captures_empty_cells() && !Dialect::V3_2.joins_after_a_joiner());
        assert!(Dialect::V3_4.joins_like_3_4() && Dialect::V3_5.captures_empty_cells());
        assert_eq!(Dialect::V3_4.widened_padding_offset(), 1);
        assert_eq!(Dialect::V3_5.widened_padding_offset(), 0);
        assert!(!Dialect::V3_4.repeats_any_character() && Dialect::V3_5.repeats_any_character());
    }
}

/// Each rule that differs, on a screen of each dialect: what tmux 3.3a, 3.4 and 3.5a print for
/// the same bytes (each expectation read off that tmux with `capture-pane -e -N`).
#[cfg(test)]
mod rules {
    use super::Dialect;
    use crate::screen::{Attrs, PaneScreen};

    fn screen(dialect: Dialect, width: u16, bytes: &[u8]) -> PaneScreen {
        let mut screen = PaneScreen::new(width, 2).with_dialect(dialect);
        screen.feed(bytes);
        screen
    }

    /// The first row as `capture-pane -e -N` prints it, and the cursor.
    fn row0(dialect: Dialect, bytes: &[u8]) -> (Vec<u8>, (u16, u16)) {
        let screen = screen(dialect, 10, bytes);
        (screen.capture_rows(false).remove(0), screen.cursor())
    }

    #[test]
    fn a_joiner_joins_after_any_character_from_3_4() {
        // 3.3: the joiner waits for a character to join the `g` with; 3.4 joins it at once.
        assert_eq!(row0(Dialect::V3_3, "g\u{200d}".as_bytes()).0, b"g");
        assert_eq!(
            row0(Dialect::V3_5, "g\u{200d}".as_bytes()).0,
            "g\u{200d} ".as_bytes()
        );
        // Then a character that is not ASCII joins the cell; ASCII does not.
        let (row, cursor) = row0(Dialect::V3_5, "g\u{200d}本x".as_bytes());
        assert_eq!(
            (row.as_slice(), cursor),
            ("g\u{200d}本x".as_bytes(), (2, 0))
        );
    }

    #[test]
    fn tmux_3_2_joins_only_what_has_no_width_and_prints_no_underline_colour() {
        // The joiner joins the `g`; 本 after it is a character of its own (read off 3.2a).
        let screen = screen(Dialect::V3_2, 10, "g\u{200d}本x".as_bytes());
        assert_eq!(screen.cursor(), (4, 0));
        assert_eq!(screen.rows()[0], "g\u{200d}本x");
        assert_eq!(row0(Dialect::V3_2, "a\u{378}".as_bytes()).1, (2, 0));
        assert_eq!(
            row0(Dialect::V3_2, b"\x1b[58;5;9mab\x1b[59mc").0,
            b"abc  ".to_vec()
        );
        assert_eq!(
            row0(Dialect::V3_3, b"\x1b[58;5;9mab\x1b[59mc").0,
            b"\x1b[58;5;9mab\x1b[0m\x1b[39m\x1b[49mc".to_vec()
        );
    }

    #[test]
    fn vs16_and_modifiers_widen_from_3_4() {
        assert_eq!(row0(Dialect::V3_3, "☺\u{fe0f}x".as_bytes()).1, (2, 0));
        let (row, cursor) = row0(Dialect::V3_5, "☺\u{fe0f}x".as_bytes());
        assert_eq!(
            (row.as_slice(), cursor),
            ("☺\u{fe0f}x  ".as_bytes(), (3, 0))
        );
        // A skin tone joins a character that is not ASCII and widens it; after ASCII it is
        // a character of its own.
        assert_eq!(row0(Dialect::V3_5, "✋🏽".as_bytes()).1, (2, 0));
        assert_eq!(row0(Dialect::V3_5, "a🏽".as_bytes()).1, (3, 0));
        // Forced wide whatever wcwidth says.
        assert_eq!(row0(Dialect::V3_3, "☝".as_bytes()).1, (1, 0));
        assert_eq!(row0(Dialect::V3_5, "☝".as_bytes()).1, (2, 0));
    }

    #[test]
    fn what_wcwidth_does_not_know_is_printed_from_3_4() {
        // Unassigned U+0378, and a code point past U+10FFFF printed as it came.
        assert_eq!(row0(Dialect::V3_3, "a\u{378}".as_bytes()).1, (1, 0));
        assert_eq!(row0(Dialect::V3_5, "a\u{378}".as_bytes()).1, (2, 0));
        assert_eq!(
            row0(Dialect::V3_3, b"\xf4\x90\x80\x80"),
            (Vec::new(), (0, 0))
        );
        assert_eq!(
            row0(Dialect::V3_5, b"\xf4\x90\x80\x80"),
            (b"\xf4\x90\x80\x80 ".to_vec(), (1, 0))
        );
        let screen = screen(Dialect::V3_5, 10, b"\xf4\x90\x80\x80");
        assert_eq!(screen.rows()[0], "\u{fffd}");
    }

    #[test]
    fn captures_print_every_allocated_cell_from_3_4() {
        // Three cells erased with a background, then `H`: 3.3 prints what was written, 3.4
        // every cell the line holds (a quarter of the width at least), backgrounds too.
        let bytes = b"\x1b[106m\x1b[3X\x1b[mH";
        let capture = |dialect| screen(dialect, 40, bytes).capture_rows(false).remove(0);
        assert_eq!(capture(Dialect::V3_3), b"H");
        assert_eq!(capture(Dialect::V3_5), b"H\x1b[106m  \x1b[49m       ");
        // The same cells, one encoding: both read back to what the model prints.
        let rows = vec![capture(Dialect::V3_5)];
        assert_eq!(
            crate::screen::recapture(Dialect::V3_5, 40, 1, &rows),
            [b"H\x1b[106m  \x1b[49m".to_vec()]
        );
    }

    #[test]
    fn rep_repeats_utf8_without_line_drawing_from_3_5() {
        assert_eq!(row0(Dialect::V3_4, "中\x1b[b".as_bytes()).1, (2, 0));
        assert_eq!(row0(Dialect::V3_5, "中\x1b[b".as_bytes()).1, (4, 0));
        assert_eq!(row0(Dialect::V3_4, b"\x1b(0q\x1b[b").0, b"\x0eqq");
        assert_eq!(row0(Dialect::V3_5, b"\x1b(0q\x1b[b").0, b"\x0eq\x0fq");
        let second = screen(Dialect::V3_5, 10, b"\x1b(0q\x1b[b").styled_rows()[0][1].clone();
        assert!(!second.style.attrs.contains(Attrs::CHARSET));
    }

    #[test]
    fn links_are_kept_and_printed_from_3_4() {
        let bytes = b"\x1b]8;id=a;http://x/\x1b\\ab\x1b]8;;\x07cd";
        assert_eq!(row0(Dialect::V3_3, bytes).0, b"abcd");
        assert_eq!(
            row0(Dialect::V3_5, bytes).0,
            b"\x1b]8;id=a;http://x/\x1b\\ab\x1b]8;;\x1b\\cd "
        );
        // `\e[0m` keeps the link, `\e[m` ends it.
        assert_eq!(
            row0(
                Dialect::V3_5,
                b"\x1b]8;;u\x07\x1b[31mab\x1b[0mc\x1b[md\x1b[0m"
            )
            .0,
            b"\x1b[31m\x1b]8;;u\x1b\\ab\x1b[39mc\x1b]8;;\x1b\\d "
        );
        // A link open at the end of the line is ended there, after the last cell's codes
        // again (tmux appends to the buffer they are still in).
        assert_eq!(
            row0(Dialect::V3_5, b"\x1b[9C\x1b]8;;u\x07\x1b[31mz").0,
            b"         \x1b[31m\x1b]8;;u\x1b\\z\x1b[31m\x1b]8;;u\x1b\\\x1b]8;;\x1b\\"
        );
    }
}
