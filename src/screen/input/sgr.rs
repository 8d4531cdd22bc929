//! SGR's parts that set a style: underline kinds, 256 and RGB colours, and the colon forms
//! (`38:2::R:G:B`), as tmux 3.3a reads them.

use super::super::cell::{Attrs, Colour, Style};
use super::number;

/// Sets one kind of underline, clearing the others.
pub(super) fn set_underline(attrs: &mut Attrs, kind: Attrs) {
    attrs.remove(Attrs::ALL_UNDERLINES);
    attrs.insert(kind);
}

/// SGR 38/48/58 `;5;n`.
pub(super) fn set_256(style: &mut Style, which: i32, c: Option<i32>) {
    match c {
        Some(c) if (0..=255).contains(&c) => {
            let colour = Colour::Palette(c as u8);
            match which {
                38 => style.fg = colour,
                48 => style.bg = colour,
                _ => style.underline = colour,
            }
        }
        _ => match which {
            38 => style.fg = Colour::Default,
            48 => style.bg = Colour::Default,
            _ => {}
        },
    }
}

/// SGR 38/48/58 `;2;r;g;b`; false (and nothing set) when a component is missing or too large.
pub(super) fn set_rgb(
    style: &mut Style,
    which: i32,
    r: Option<i32>,
    g: Option<i32>,
    b: Option<i32>,
) -> bool {
    let component = |c: Option<i32>| c.filter(|c| (0..=255).contains(c)).map(|c| c as u8);
    let (Some(r), Some(g), Some(b)) = (component(r), component(g), component(b)) else {
        return false;
    };
    let colour = Colour::Rgb(r, g, b);
    match which {
        38 => style.fg = colour,
        48 => style.bg = colour,
        _ => style.underline = colour,
    }
    true
}

/// An SGR parameter with colons (tmux's `input_csi_dispatch_sgr_colon`).
pub(super) fn sgr_colon(style: &mut Style, text: &[u8]) {
    let mut p = [-1i32; 8];
    let mut n = 0;
    for part in text.split(|&b| b == b':') {
        if !part.is_empty() {
            let Some(value) = number(part) else {
                return;
            };
            p[n] = value;
        }
        n += 1;
        if n == p.len() {
            return;
        }
    }
    if n == 0 {
        return;
    }
    if p[0] == 4 {
        if n != 2 {
            return;
        }
        let attrs = &mut style.attrs;
        match p[1] {
            0 => attrs.remove(Attrs::ALL_UNDERLINES),
            1 => set_underline(attrs, Attrs::UNDERLINE),
            2 => set_underline(attrs, Attrs::DOUBLE_UNDERLINE),
            3 => set_underline(attrs, Attrs::CURLY_UNDERLINE),
            4 => set_underline(attrs, Attrs::DOTTED_UNDERLINE),
            5 => set_underline(attrs, Attrs::DASHED_UNDERLINE),
            _ => {}
        }
        return;
    }
    if n < 2 || !matches!(p[0], 38 | 48 | 58) {
        return;
    }
    let value = |v: i32| (v != -1).then_some(v);
    match p[1] {
        2 => {
            if n < 3 {
                return;
            }
            let i = if n == 5 { 2 } else { 3 };
            if n < i + 3 {
                return;
            }
            set_rgb(style, p[0], value(p[i]), value(p[i + 1]), value(p[i + 2]));
        }
        5 => {
            if n < 3 {
                return;
            }
            set_256(style, p[0], value(p[2]));
        }
        _ => {}
    }
}
