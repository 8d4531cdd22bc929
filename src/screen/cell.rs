//! What one cell of a pane holds, in the terms of tmux's grid (`grid.c`): the characters, how
//! many columns they take, and the style they were written with.
//!
//! These are the values `capture-pane -e` prints, so a screen of panectl's and tmux's own can be
//! compared cell by cell.

/// A colour as tmux's grid keeps it. `Ansi` and `Bright` are the eight colours of SGR 30–37 and
/// 90–97 (40–47 and 100–107 for the background); `Palette` is SGR 38;5;n, which tmux keeps apart
/// from them even for n below 16.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Colour {
    /// The terminal's default (SGR 39 or 49).
    #[default]
    Default,
    /// One of the eight basic colours, 0 to 7.
    Ansi(u8),
    /// One of the eight bright colours, 0 to 7 (SGR 90–97).
    Bright(u8),
    /// An entry of the 256-colour palette.
    Palette(u8),
    /// A direct colour.
    Rgb(u8, u8, u8),
}

impl Colour {
    /// The same colour with palette entries 0–15 told as the basic and bright colours they are
    /// drawn as: how two screens are compared when only what a person sees matters.
    pub fn as_seen(self) -> Colour {
        match self {
            Colour::Palette(n) if n < 8 => Colour::Ansi(n),
            Colour::Palette(n) if n < 16 => Colour::Bright(n - 8),
            other => other,
        }
    }
}

/// Text attributes, one bit each, as tmux's `GRID_ATTR_*`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Attrs(pub u16);

impl Attrs {
    /// SGR 1.
    pub const BOLD: Attrs = Attrs(0x1);
    /// SGR 2.
    pub const DIM: Attrs = Attrs(0x2);
    /// SGR 4 (or 4:1).
    pub const UNDERLINE: Attrs = Attrs(0x4);
    /// SGR 5.
    pub const BLINK: Attrs = Attrs(0x8);
    /// SGR 7.
    pub const REVERSE: Attrs = Attrs(0x10);
    /// SGR 8.
    pub const HIDDEN: Attrs = Attrs(0x20);
    /// SGR 3.
    pub const ITALIC: Attrs = Attrs(0x40);
    /// The line-drawing character set (SO, or `ESC ( 0`).
    pub const CHARSET: Attrs = Attrs(0x80);
    /// SGR 9.
    pub const STRIKETHROUGH: Attrs = Attrs(0x100);
    /// SGR 4:2 or 21.
    pub const DOUBLE_UNDERLINE: Attrs = Attrs(0x200);
    /// SGR 4:3.
    pub const CURLY_UNDERLINE: Attrs = Attrs(0x400);
    /// SGR 4:4.
    pub const DOTTED_UNDERLINE: Attrs = Attrs(0x800);
    /// SGR 4:5.
    pub const DASHED_UNDERLINE: Attrs = Attrs(0x1000);
    /// SGR 53.
    pub const OVERLINE: Attrs = Attrs(0x2000);
    /// Every kind of underline: setting one clears the others.
    pub const ALL_UNDERLINES: Attrs = Attrs(0x4 | 0x200 | 0x400 | 0x800 | 0x1000);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: Attrs) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets the bits of `other`.
    pub fn insert(&mut self, other: Attrs) {
        self.0 |= other.0;
    }

    /// Clears the bits of `other`.
    pub fn remove(&mut self, other: Attrs) {
        self.0 &= !other.0;
    }
}

/// The style a cell was written with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Style {
    /// Foreground colour.
    pub fg: Colour,
    /// Background colour.
    pub bg: Colour,
    /// Underline colour (SGR 58).
    pub underline: Colour,
    /// Attributes.
    pub attrs: Attrs,
    /// The OSC 8 hyperlink written with it: a number in the screen's table of links, 0 for
    /// none (tmux 3.4 and later keep links; 3.3 keeps none).
    pub link: u16,
}

impl Style {
    /// The style with colours told as they are drawn (see [`Colour::as_seen`]).
    pub fn as_seen(self) -> Style {
        Style {
            fg: self.fg.as_seen(),
            bg: self.bg.as_seen(),
            underline: self.underline.as_seen(),
            attrs: self.attrs,
            link: self.link,
        }
    }
}

/// One cell as `capture-pane -e` shows it: the columns a wide character covers after its first
/// are not cells of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct StyledCell {
    /// The character and any combining characters that joined it.
    pub text: String,
    /// Columns taken: 1, or 2 for a wide character.
    pub width: u8,
    /// How it was written.
    pub style: Style,
}
