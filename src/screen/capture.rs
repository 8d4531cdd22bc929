//! Lines of a grid as `capture-pane -p` and `capture-pane -p -e` print them (tmux's
//! `grid_string_cells`): cells up to the last one written, wide characters once, and with `-e`
//! the SGR codes tmux writes when the style changes from one cell to the next (carried from one
//! line to the next).

use std::fmt::Write as _;

use super::cell::{Attrs, Colour, Style, StyledCell};
use super::dialect::Dialect;
use super::grid::{Clusters, Grid, Line};
use super::links::{Links, osc8};

/// One past the last cell of `line` that `capture-pane` prints: the last written one, or from
/// tmux 3.4 every allocated one (`GRID_STRING_EMPTY_CELLS`, which cleared cells with a
/// background colour show in).
fn printed_end(grid: &Grid, line: &Line, dialect: Dialect) -> usize {
    let end = if dialect.captures_empty_cells() {
        line.cells.len()
    } else {
        line.used
    };
    end.min(grid.sx).min(line.cells.len())
}

/// The printed cells of absolute line `py`, wide characters once.
pub(crate) fn cells(
    grid: &Grid,
    clusters: &Clusters,
    py: usize,
    dialect: Dialect,
) -> Vec<StyledCell> {
    let Some(line) = grid.line(py) else {
        return Vec::new();
    };
    let end = printed_end(grid, line, dialect);
    let mut out = Vec::with_capacity(end);
    for x in 0..end {
        let cell = line.cell(x);
        if cell.is_padding() {
            continue;
        }
        let mut text = String::new();
        clusters.push_text(cell.ch, &mut text);
        out.push(StyledCell {
            text,
            width: cell.width,
            style: cell.style,
        });
    }
    out
}

/// Line `py` as `capture-pane -p` prints it: trailing spaces removed.
pub(crate) fn text(grid: &Grid, clusters: &Clusters, py: usize, dialect: Dialect) -> String {
    let mut out = String::new();
    if let Some(line) = grid.line(py) {
        let end = printed_end(grid, line, dialect);
        for cell in &line.cells[..end] {
            if !cell.is_padding() {
                clusters.push_text(cell.ch, &mut out);
            }
        }
    }
    out.truncate(out.trim_end_matches(' ').len());
    out
}

/// What a line's capture reads besides the grid: the clusters and links its cells name, and
/// the rules of the tmux it prints like.
#[derive(Clone, Copy)]
pub(crate) struct Printer<'a> {
    pub(crate) clusters: &'a Clusters,
    pub(crate) links: &'a Links,
    pub(crate) dialect: Dialect,
}

/// Line `py` as `capture-pane -p -e` prints it (with `-N` when `trim` is false: trailing
/// spaces kept, up to the last cell written), given the style the previous line ended in
/// (updated to the style this one ends in). From tmux 3.4 a link is printed where it starts
/// and ended where the line leaves it (or at the line's end); a link carried on from the line
/// before is not printed again (tmux's quirk).
pub(crate) fn with_codes(
    grid: &Grid,
    printer: Printer<'_>,
    py: usize,
    last: &mut Style,
    trim: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    let Some(line) = grid.line(py) else {
        return out;
    };
    let end = printed_end(grid, line, printer.dialect);
    let mut link_open = false;
    // Where the codes written before the last printed cell are in `out`.
    let mut last_codes = 0..0;
    for cell in &line.cells[..end] {
        if cell.is_padding() {
            continue;
        }
        let codes_start = out.len();
        if cell.style != *last {
            codes(last, &cell.style, &mut out, printer.dialect);
            if cell.style.link != last.link && printer.dialect.keeps_links() {
                match printer.links.get(cell.style.link) {
                    Some((uri, id)) => {
                        osc8(uri, id, &mut out);
                        link_open = true;
                    }
                    None if link_open => {
                        osc8("", "", &mut out);
                        link_open = false;
                    }
                    None => {}
                }
            }
            *last = cell.style;
        }
        last_codes = codes_start..out.len();
        printer.clusters.push_bytes(cell.ch, &mut out);
    }
    if link_open {
        // tmux appends the end of the link to the buffer the last cell's codes are still in
        // (`grid_string_cells`), so those codes come again before it.
        out.extend_from_within(last_codes);
        osc8("", "", &mut out);
    }
    while trim && out.last() == Some(&b' ') {
        out.pop();
    }
    out
}

/// SGR numbers for a foreground (`base` 30), background (40) or underline colour (58).
fn colour_values(colour: Colour, base: u16, out: &mut Vec<u16>) {
    let extended = match base {
        30 => 38,
        40 => 48,
        _ => 58,
    };
    match colour {
        Colour::Palette(n) => out.extend([extended, 5, u16::from(n)]),
        Colour::Rgb(r, g, b) => out.extend([extended, 2, u16::from(r), u16::from(g), u16::from(b)]),
        _ if base == 58 => {}
        Colour::Default => out.push(base + 9),
        Colour::Ansi(n) => out.push(base + u16::from(n)),
        Colour::Bright(n) => out.push(base + 60 + u16::from(n)),
    }
}

const ATTR_CODES: [(Attrs, u16); 13] = [
    (Attrs::BOLD, 1),
    (Attrs::DIM, 2),
    (Attrs::ITALIC, 3),
    (Attrs::UNDERLINE, 4),
    (Attrs::BLINK, 5),
    (Attrs::REVERSE, 7),
    (Attrs::HIDDEN, 8),
    (Attrs::STRIKETHROUGH, 9),
    (Attrs::DOUBLE_UNDERLINE, 42),
    (Attrs::CURLY_UNDERLINE, 43),
    (Attrs::DOTTED_UNDERLINE, 44),
    (Attrs::DASHED_UNDERLINE, 45),
    (Attrs::OVERLINE, 53),
];

/// The codes that set `style` from the default one.
pub(crate) fn codes_for(style: &Style) -> Vec<u8> {
    let mut out = Vec::new();
    codes(&Style::default(), style, &mut out, Dialect::default());
    out
}

/// The codes tmux writes to go from style `last` to `now` (`grid_string_cells_code`).
fn codes(last: &Style, now: &Style, out: &mut Vec<u8>, dialect: Dialect) {
    let attr = now.attrs;
    let mut last_attr = last.attrs;
    let mut s: Vec<u16> = Vec::new();
    for (mask, _) in ATTR_CODES {
        let removed = !attr.contains(mask) && last_attr.contains(mask);
        let underline_gone = dialect.prints_underline_colour()
            && last.underline != Colour::Default
            && now.underline == Colour::Default;
        if removed || underline_gone {
            s.push(0);
            last_attr = Attrs(last_attr.0 & Attrs::CHARSET.0);
            break;
        }
    }
    for (mask, code) in ATTR_CODES {
        if attr.contains(mask) && !last_attr.contains(mask) {
            s.push(code);
        }
    }
    let mut text = String::new();
    if !s.is_empty() {
        text.push_str("\x1b[");
        for (i, code) in s.iter().enumerate() {
            if *code < 10 {
                let _ = write!(text, "{code}");
            } else {
                let _ = write!(text, "{}:{}", code / 10, code % 10);
            }
            if i + 1 < s.len() {
                text.push(';');
            }
        }
        text.push('m');
    }
    let reset = !s.is_empty() && s[0] == 0;
    let colours = [
        (30, now.fg, last.fg),
        (40, now.bg, last.bg),
        (58, now.underline, last.underline),
    ];
    // tmux 3.2 prints no underline colour.
    let printed = if dialect.prints_underline_colour() {
        3
    } else {
        2
    };
    for (base, new, old) in colours.into_iter().take(printed) {
        let (mut newc, mut oldc) = (Vec::new(), Vec::new());
        colour_values(new, base, &mut newc);
        colour_values(old, base, &mut oldc);
        // From 3.4 a reset already gave the default colour: tmux writes no code for it.
        let reset_to_default = reset
            && dialect.resets_without_default_colours()
            && matches!(newc.first(), Some(39 | 49));
        if !newc.is_empty() && (newc != oldc || reset) && !reset_to_default {
            text.push_str("\x1b[");
            let joined: Vec<String> = newc.iter().map(u16::to_string).collect();
            text.push_str(&joined.join(";"));
            text.push('m');
        }
    }
    if attr.contains(Attrs::CHARSET) && !last_attr.contains(Attrs::CHARSET) {
        text.push('\x0e');
    }
    if !attr.contains(Attrs::CHARSET) && last_attr.contains(Attrs::CHARSET) {
        text.push('\x0f');
    }
    out.extend_from_slice(text.as_bytes());
}
