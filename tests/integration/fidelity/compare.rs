//! Screens as cells, from tmux's `capture-pane -e -N` and from panectl's [`PaneScreen`], and
//! the first difference between them.
//!
//! tmux writes a capture with `grid_string_cells` (grid.c): before each cell, the SGR that
//! changes the previous cell's style into this one's (`grid_string_cells_code`), then the
//! cell's bytes. Attributes come first, beginning with `0` when any was removed (a reset of the
//! colours too); codes of ten and above are written as `tens:units`, so double, curly, dotted and
//! dashed underlines come out as `4:2` to `4:5` and overline (53) as `5:3`. Colours follow, each
//! in its own sequence: `30`-`37`, `39`, `90`-`97`, `38;5;n`, `38;2;r;g;b`, the same for the
//! background and `58;...` for the underline colour. The line-drawing set is SO before a cell and
//! SI after it; a reset does not end it. The style carries from one line to the next within one
//! capture.
//!
//! A cell is a character and those of no width tmux joined to it (combining marks, variation
//! selectors, and anything after a ZWJ), so the capture's text is cut into cells with the C
//! library's `wcwidth` in a UTF-8 locale, as tmux 3.3a measures them. Cells are compared as (text,
//! style) sequences, after dropping trailing blank cells of the default style on both sides: `-N`
//! keeps the spaces tmux wrote up to the last used cell of a line, the mirror has every column.

use std::fmt::Write as _;

use panectl::screen::{Attrs, Colour, Dialect, Style, StyledCell};

use super::grammar::escape;

/// `wcwidth(c)` of the C library in the C.UTF-8 locale (tmux 3.3a's `utf8_width`, as it is built
/// here, without utf8proc): -1 for characters it cannot print.
pub fn wcwidth(c: char) -> i32 {
    use nix::libc;
    unsafe extern "C" {
        fn wcwidth(c: libc::wchar_t) -> libc::c_int;
    }
    thread_local! {
        static LOCALE: libc::locale_t = {
            // SAFETY: newlocale with a valid C string and no base locale.
            let locale = unsafe {
                libc::newlocale(libc::LC_CTYPE_MASK, c"C.UTF-8".as_ptr(), std::ptr::null_mut())
            };
            assert!(!locale.is_null(), "the C.UTF-8 locale is missing");
            locale
        };
    }
    LOCALE.with(|&locale| {
        // SAFETY: the locale is valid for the thread's lifetime; uselocale changes only this
        // thread's locale, and it is put back at once.
        unsafe {
            let old = libc::uselocale(locale);
            let width = wcwidth(c as libc::wchar_t);
            libc::uselocale(old);
            width
        }
    })
}

/// A screen as cells, the cursor and which screen is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// Visible rows, trailing blank cells of the default style removed.
    pub rows: Vec<Vec<StyledCell>>,
    /// Cursor (column, row), 0-based.
    pub cursor: (u16, u16),
    /// Whether the alternate screen is on.
    pub alternate: bool,
    /// The pane's width.
    pub width: u16,
}

/// What panectl's screen makes of `bytes` in a pane of `width` x `height`.
pub fn observe_mirror(width: u16, height: u16, bytes: &[u8]) -> Observed {
    let mut screen = super::oracle::model(width, height);
    screen.feed(bytes);
    // A cell whose cluster tmux 3.6 stores empty (32 bytes) prints nothing, so the capture
    // parser cannot see it.
    let rows = screen
        .styled_rows()
        .into_iter()
        .map(|row| {
            trim(
                row.into_iter()
                    .filter(|c| !c.text.is_empty())
                    .map(seen)
                    .collect(),
            )
        })
        .collect();
    Observed {
        rows,
        cursor: screen.cursor(),
        alternate: screen.alternate_screen(),
        width,
    }
}

/// What tmux shows: its capture, cursor and alternate flag.
pub fn observe_tmux(capture: &[u8], cursor: (u16, u16), alternate: bool, width: u16) -> Observed {
    let rows = match parse_capture(capture, super::oracle::dialect()) {
        Ok(rows) => rows,
        Err(error) => panic!("{error}\ncapture: {}", escape(capture)),
    };
    Observed {
        rows: rows
            .into_iter()
            .map(|row| trim(row.into_iter().map(seen).collect()))
            .collect(),
        cursor,
        alternate,
        width,
    }
}

/// A cell as the parser can read it from a capture: colours as they are drawn, no link (the
/// parser reads past OSC 8; links are compared in the capture's bytes), and no underline
/// colour where tmux prints none (3.2).
fn seen(cell: StyledCell) -> StyledCell {
    let seen = cell.style.as_seen();
    let underline = if super::oracle::dialect() >= Dialect::V3_3 {
        seen.underline
    } else {
        Colour::Default
    };
    StyledCell {
        style: Style {
            link: 0,
            underline,
            ..seen
        },
        ..cell
    }
}

fn is_blank(cell: &StyledCell) -> bool {
    cell.text == " " && cell.style == Style::default()
}

fn trim(mut row: Vec<StyledCell>) -> Vec<StyledCell> {
    while row.last().is_some_and(is_blank) {
        row.pop();
    }
    row
}

/// The style a capture's SGR sequences build, and the line-drawing set (SO/SI).
#[derive(Debug, Clone, Copy, Default)]
struct Pen {
    style: Style,
    charset: bool,
}

impl Pen {
    fn style(&self) -> Style {
        let mut style = self.style;
        if self.charset {
            style.attrs.insert(Attrs::CHARSET);
        }
        style
    }

    /// Applies the parameters of one SGR as tmux writes them.
    fn sgr(&mut self, params: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(params).map_err(|_| "SGR is not ASCII".to_string())?;
        let fields: Vec<&str> = text.split(';').collect();
        let number = |s: &str| -> Result<u8, String> {
            s.parse::<u8>()
                .map_err(|_| format!("bad SGR parameter {s:?} in {text:?}"))
        };
        let mut i = 0;
        while i < fields.len() {
            let field = fields[i];
            i += 1;
            let attrs = &mut self.style.attrs;
            match field {
                "0" | "" => self.style = Style::default(),
                "1" => attrs.insert(Attrs::BOLD),
                "2" => attrs.insert(Attrs::DIM),
                "3" => attrs.insert(Attrs::ITALIC),
                "4" => attrs.insert(Attrs::UNDERLINE),
                "5" => attrs.insert(Attrs::BLINK),
                "7" => attrs.insert(Attrs::REVERSE),
                "8" => attrs.insert(Attrs::HIDDEN),
                "9" => attrs.insert(Attrs::STRIKETHROUGH),
                "4:2" => attrs.insert(Attrs::DOUBLE_UNDERLINE),
                "4:3" => attrs.insert(Attrs::CURLY_UNDERLINE),
                "4:4" => attrs.insert(Attrs::DOTTED_UNDERLINE),
                "4:5" => attrs.insert(Attrs::DASHED_UNDERLINE),
                // 53 written as tens:units by grid_string_cells_code.
                "5:3" | "53" => attrs.insert(Attrs::OVERLINE),
                "39" => self.style.fg = Colour::Default,
                "49" => self.style.bg = Colour::Default,
                "38" | "48" | "58" => {
                    let colour = match fields.get(i).copied() {
                        Some("5") => {
                            let n = number(fields.get(i + 1).copied().unwrap_or("?"))?;
                            i += 2;
                            Colour::Palette(n)
                        }
                        Some("2") => {
                            let mut c = [0u8; 3];
                            for (k, value) in c.iter_mut().enumerate() {
                                *value = number(fields.get(i + 1 + k).copied().unwrap_or("?"))?;
                            }
                            i += 4;
                            Colour::Rgb(c[0], c[1], c[2])
                        }
                        _ => return Err(format!("bad extended colour in SGR {text:?}")),
                    };
                    match field {
                        "38" => self.style.fg = colour,
                        "48" => self.style.bg = colour,
                        _ => self.style.underline = colour,
                    }
                }
                other => {
                    let n: u8 = number(other)?;
                    match n {
                        30..=37 => self.style.fg = Colour::Ansi(n - 30),
                        40..=47 => self.style.bg = Colour::Ansi(n - 40),
                        90..=97 => self.style.fg = Colour::Bright(n - 90),
                        100..=107 => self.style.bg = Colour::Bright(n - 100),
                        _ => return Err(format!("unexpected SGR parameter {n} in {text:?}")),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Longest cell tmux keeps, in bytes (`UTF8_SIZE`): 21, and 32 from 3.6.
fn cluster_bytes(dialect: Dialect) -> usize {
    if dialect >= Dialect::V3_6 { 32 } else { 21 }
}

/// Whether `c` starts a new cell in tmux 3.3's grid (rather than joining the cell before it).
fn starts_cell(c: char) -> bool {
    c.is_ascii() || wcwidth(c) != 0
}

/// tmux 3.4's tables of always-wide emoji and of modifiers, as the model has them (copied from
/// tmux's source; the rules that use them are written again here, from the source).
#[path = "../../../src/screen/width_tmux34.rs"]
#[allow(dead_code)]
mod tmux34;

/// tmux 3.6's tables (skin tones, regional indicators, Hangul jamo), as the model has them.
#[path = "../../../src/screen/width_tmux36.rs"]
#[allow(dead_code)]
mod tmux36;

/// The width tmux 3.4 and later give a character that starts a cell (`utf8_width`): a
/// character of no width starts one only when it cannot join the cell before (that is full).
fn width_3_4(c: char) -> u8 {
    if super::oracle::dialect() >= Dialect::V3_6 && tmux36::is_regional_indicator(u32::from(c)) {
        return 1;
    }
    if tmux34::FORCE_WIDE.binary_search(&u32::from(c)).is_ok() {
        return 2;
    }
    match wcwidth(c) {
        _ if ('\u{80}'..='\u{9f}').contains(&c) => 0,
        0 => 0,
        2 => 2,
        _ => 1,
    }
}

/// How far tmux moves the cursor for `c` written after an `a`, by the rules this parser cuts
/// cells with for `dialect`'s tmux.
pub fn advance_after_ascii(c: char, dialect: Dialect) -> i32 {
    if dialect < Dialect::V3_4 {
        return wcwidth(c).max(0);
    }
    let a = StyledCell {
        text: "a".into(),
        width: 1,
        style: Style::default(),
    };
    let joins = if dialect >= Dialect::V3_6 {
        joins_3_6(&a, c)
    } else {
        joins_3_4(&a, c)
    };
    match joins {
        Some(widen) => i32::from(widen),
        None => i32::from(width_3_4(c)),
    }
}

/// What 3.4 and later decide for `c` whatever the cell before: ASCII never joins, and a
/// character of no width (a joiner, VS16, a C1 control) joins, VS16 widening. None when the
/// cell before decides.
fn joins_any_non_ascii(c: char) -> Option<Option<bool>> {
    if c.is_ascii() {
        return Some(None);
    }
    let zero_width =
        c == '\u{200d}' || c == '\u{fe0f}' || wcwidth(c) == 0 || ('\u{80}'..='\u{9f}').contains(&c);
    zero_width.then_some(Some(c == '\u{fe0f}'))
}

/// Whether tmux 3.4 and later join `c` to `cell` (`screen_write_combine`), and make it two
/// wide when they do.
fn joins_3_4(cell: &StyledCell, c: char) -> Option<bool> {
    if let Some(joins) = joins_any_non_ascii(c) {
        return joins;
    }
    if tmux34::MODIFIERS.binary_search(&u32::from(c)).is_ok() {
        return (cell.text.len() >= 2).then_some(true);
    }
    cell.text.ends_with('\u{200d}').then_some(false)
}

/// Whether tmux 3.6a joins `c` to `cell`, and makes it two wide when it does: 3.4's rules
/// with skin tones joining only the emoji that take one (either way round), two regional
/// indicators joining, and a Hangul leading consonant starting a cell.
fn joins_3_6(cell: &StyledCell, c: char) -> Option<bool> {
    if let Some(joins) = joins_any_non_ascii(c) {
        return joins;
    }
    if tmux36::jamo_class(u32::from(c)) == Some(tmux36::JamoClass::Leading) {
        return None;
    }
    let first = cell.text.chars().next().map_or(0, u32::from);
    let either_way = super::oracle::dialect() >= Dialect::V3_6a;
    if tmux36::should_combine(first, u32::from(c))
        || (either_way && tmux36::should_combine(u32::from(c), first))
    {
        return Some(true);
    }
    cell.text.ends_with('\u{200d}').then_some(false)
}

/// Parses the output of `capture-pane -e -N` (one line per row, each ended by `\n`) into
/// rows of cells, split into cells by the rules of `dialect`'s tmux.
pub fn parse_capture(bytes: &[u8], dialect: Dialect) -> Result<Vec<Vec<StyledCell>>, String> {
    let mut rows = Vec::new();
    let mut row: Vec<StyledCell> = Vec::new();
    let mut pen = Pen::default();
    // After a ZWJ, the next character joins the cell as well (screen_write_cell).
    let mut joined = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                rows.push(std::mem::take(&mut row));
                joined = false;
                i += 1;
            }
            0x0e => {
                pen.charset = true;
                i += 1;
            }
            0x0f => {
                pen.charset = false;
                i += 1;
            }
            // An OSC 8 hyperlink, which tmux 3.4 and later keep and print with `-e`: the
            // mirror keeps no links, so the cells are compared without them.
            0x1b if bytes.get(i + 1) == Some(&b']') => {
                let end = bytes[i..]
                    .windows(2)
                    .position(|w| w == b"\x1b\\")
                    .ok_or_else(|| format!("unterminated OSC at byte {i}"))?;
                i += end + 2;
            }
            0x1b => {
                if bytes.get(i + 1) != Some(&b'[') {
                    return Err(format!("ESC not followed by [ at byte {i}"));
                }
                let start = i + 2;
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == b'm')
                    .map(|n| start + n)
                    .ok_or_else(|| format!("unterminated SGR at byte {i}"))?;
                pen.sgr(&bytes[start..end])?;
                i = end + 1;
            }
            // A tab tmux 3.6 keeps as a cell: as wide as to the next tab stop at the default
            // stops (a guess for the report's columns; widths are not compared).
            b'\t' if dialect >= Dialect::V3_6 => {
                let column: usize = row.iter().map(|c| usize::from(c.width)).sum();
                row.push(StyledCell {
                    text: "\t".into(),
                    width: (8 - column % 8) as u8,
                    style: pen.style(),
                });
                joined = false;
                i += 1;
            }
            byte if byte < 0x20 || byte == 0x7f => {
                return Err(format!("control byte {byte:#04x} in a cell at byte {i}"));
            }
            _ => {
                let len = utf8_len(bytes[i]);
                // tmux 3.4 keeps code points past U+10FFFF (up to U+13FFFF) and prints them
                // as they came; the model shows them as U+FFFD.
                let past_unicode = dialect != Dialect::V3_3
                    && bytes[i] == 0xf4
                    && bytes.get(i + 1).is_some_and(|b| (0x90..=0xbf).contains(b))
                    && bytes
                        .get(i + 2..i + 4)
                        .is_some_and(|rest| rest.iter().all(|b| b & 0xc0 == 0x80));
                let Some(c) = bytes
                    .get(i..i + len)
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .and_then(|s| s.chars().next())
                    .or(past_unicode.then_some(char::REPLACEMENT_CHARACTER))
                else {
                    return Err(format!("invalid UTF-8 at byte {i}"));
                };
                i += len;
                if dialect >= Dialect::V3_4 {
                    let joins = |cell: &StyledCell| {
                        if cell.text == "\t" {
                            None
                        } else if dialect >= Dialect::V3_6 {
                            joins_3_6(cell, c)
                        } else {
                            joins_3_4(cell, c)
                        }
                    };
                    match row.last_mut().map(|cell| (joins(cell), cell)) {
                        Some((Some(widen), cell))
                            if cell.text.len() + c.len_utf8() <= cluster_bytes(dialect) =>
                        {
                            cell.text.push(c);
                            if widen {
                                cell.width = 2;
                            }
                        }
                        _ => row.push(StyledCell {
                            text: c.to_string(),
                            width: width_3_4(c),
                            style: pen.style(),
                        }),
                    }
                    continue;
                }
                match row.last_mut() {
                    // tmux drops a character that would make a cell longer than 21 bytes
                    // (UTF8_SIZE), so one that would is the start of the next cell.
                    Some(cell)
                        if (joined || !starts_cell(c))
                            && cell.text.len() + c.len_utf8() <= cluster_bytes(dialect) =>
                    {
                        cell.text.push(c)
                    }
                    _ => row.push(StyledCell {
                        text: c.to_string(),
                        width: wcwidth(c).clamp(1, 2) as u8,
                        style: pen.style(),
                    }),
                }
                // tmux 3.2 joins only characters of no width.
                joined = c == '\u{200d}' && dialect >= Dialect::V3_3;
            }
        }
    }
    if !row.is_empty() {
        rows.push(row);
    }
    Ok(rows)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

/// The first way two screens differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// A short class for grouping: `text`, `style:fg`, `style:attrs+BLINK`, `cursor`, ...
    pub class: String,
    /// What differs, both sides shown.
    pub detail: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.class, self.detail)
    }
}

/// Names of attribute bits, as in [`Attrs`].
const ATTR_NAMES: &[(Attrs, &str)] = &[
    (Attrs::BOLD, "BOLD"),
    (Attrs::DIM, "DIM"),
    (Attrs::UNDERLINE, "UNDERLINE"),
    (Attrs::BLINK, "BLINK"),
    (Attrs::REVERSE, "REVERSE"),
    (Attrs::HIDDEN, "HIDDEN"),
    (Attrs::ITALIC, "ITALIC"),
    (Attrs::CHARSET, "CHARSET"),
    (Attrs::STRIKETHROUGH, "STRIKETHROUGH"),
    (Attrs::DOUBLE_UNDERLINE, "DOUBLE_UNDERLINE"),
    (Attrs::CURLY_UNDERLINE, "CURLY_UNDERLINE"),
    (Attrs::DOTTED_UNDERLINE, "DOTTED_UNDERLINE"),
    (Attrs::DASHED_UNDERLINE, "DASHED_UNDERLINE"),
    (Attrs::OVERLINE, "OVERLINE"),
];

fn attr_names(attrs: Attrs) -> String {
    let mut names: Vec<&str> = ATTR_NAMES
        .iter()
        .filter(|(bit, _)| attrs.contains(*bit))
        .map(|(_, name)| *name)
        .collect();
    let known = ATTR_NAMES.iter().fold(0, |all, (bit, _)| all | bit.0);
    let unknown = format!("{:#x}", attrs.0 & !known);
    if attrs.0 & !known != 0 {
        names.push(&unknown);
    }
    if names.is_empty() {
        "-".to_string()
    } else {
        names.join("|")
    }
}

/// One cell, readably: its text escaped and every part of its style.
pub fn describe_cell(cell: &StyledCell) -> String {
    let style = cell.style;
    format!(
        "\"{}\" fg={:?} bg={:?} ul={:?} attrs={}",
        escape(cell.text.as_bytes()),
        style.fg,
        style.bg,
        style.underline,
        attr_names(style.attrs)
    )
}

/// A row's text with the cell boundaries marked by `|` where a style changes.
pub fn describe_row(row: &[StyledCell]) -> String {
    let mut out = String::new();
    let mut last = Style::default();
    for cell in row {
        if cell.style != last {
            out.push('\u{2039}');
            last = cell.style;
        }
        out.push_str(&escape(cell.text.as_bytes()));
    }
    out
}

/// Both screens' text, row by row, for a failure report.
pub fn describe_screens(tmux: &Observed, mirror: &Observed) -> String {
    let mut out = String::new();
    let rows = tmux.rows.len().max(mirror.rows.len());
    let _ = writeln!(
        out,
        "       tmux (cursor {:?}, alternate {})  |  mirror (cursor {:?}, alternate {})",
        tmux.cursor, tmux.alternate, mirror.cursor, mirror.alternate
    );
    let mut hidden = 0;
    for r in 0..rows {
        let blank = |o: &Observed| o.rows.get(r).is_some_and(|row| row.is_empty());
        if blank(tmux) && blank(mirror) {
            hidden += 1;
            continue;
        }
        let a = tmux
            .rows
            .get(r)
            .map_or("<none>".into(), |row| describe_row(row));
        let b = mirror
            .rows
            .get(r)
            .map_or("<none>".into(), |row| describe_row(row));
        let same = match (tmux.rows.get(r), mirror.rows.get(r)) {
            (Some(a), Some(b)) => same_row(a, b),
            _ => false,
        };
        let mark = if same { ' ' } else { '*' };
        let _ = writeln!(out, "  {mark}{r:>3} \"{a}\"");
        if mark == '*' {
            let _ = writeln!(out, "       \"{b}\"");
        }
    }
    let _ = writeln!(
        out,
        "  (\u{2039} marks a change of style; * rows differ, the mirror's below; {hidden} rows blank on both sides not shown)"
    );
    out
}

/// Whether two rows have the same cells: the same text in the same style. Widths are not
/// compared: the capture's are the parser's guess from `wcwidth`, not something tmux says.
fn same_row(a: &[StyledCell], b: &[StyledCell]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.text == y.text && x.style == y.style)
}

/// The class of a difference of text: a blank on one side, a character that is not ASCII, or
/// just another character.
fn text_class(a: &str, b: &str) -> String {
    if a == " " {
        "text: blank in tmux".into()
    } else if b == " " {
        "text: blank in the mirror".into()
    } else if !a.is_ascii() || !b.is_ascii() {
        "text: not ASCII".into()
    } else {
        "text".into()
    }
}

/// The class of a difference of style: the first attribute that only one side has (in the
/// order of [`ATTR_NAMES`]), else the first colour that differs. One cause per class, so that
/// a shrunk case keeps that cause and nothing else.
fn style_class(a: Style, b: Style) -> String {
    for (bit, name) in ATTR_NAMES {
        match (a.attrs.contains(*bit), b.attrs.contains(*bit)) {
            (true, false) => return format!("attr {name} only in tmux"),
            (false, true) => return format!("attr {name} only in the mirror"),
            _ => {}
        }
    }
    if a.attrs != b.attrs {
        return "attrs".into();
    }
    if a.fg != b.fg {
        "fg".into()
    } else if a.bg != b.bg {
        "bg".into()
    } else {
        "underline colour".into()
    }
}

/// The first difference between tmux's screen and the mirror's: rows top to bottom, cells left
/// to right, then the cursor, then the alternate screen flag.
pub fn first_difference(tmux: &Observed, mirror: &Observed) -> Option<Difference> {
    if tmux.rows.len() != mirror.rows.len() {
        return Some(Difference {
            class: "rows".into(),
            detail: format!(
                "tmux has {} rows, the mirror {}",
                tmux.rows.len(),
                mirror.rows.len()
            ),
        });
    }
    for (r, (a, b)) in tmux.rows.iter().zip(&mirror.rows).enumerate() {
        if same_row(a, b) {
            continue;
        }
        let cell = a
            .iter()
            .zip(b)
            .position(|(x, y)| x.text != y.text || x.style != y.style);
        let row_text = format!(
            "\n  tmux   row {r}: \"{}\"\n  mirror row {r}: \"{}\"",
            describe_row(a),
            describe_row(b)
        );
        return Some(match cell {
            Some(c) => {
                let column: usize = a[..c].iter().map(|x| usize::from(x.width)).sum();
                let (x, y) = (&a[c], &b[c]);
                let class = if x.text != y.text {
                    text_class(&x.text, &y.text)
                } else {
                    style_class(x.style, y.style)
                };
                Difference {
                    class,
                    detail: format!(
                        "row {r}, cell {c} (column {column} by tmux's widths):\n  tmux   {}\n  mirror {}{row_text}",
                        describe_cell(x),
                        describe_cell(y)
                    ),
                }
            }
            None => {
                let (longer, extra, who) = if a.len() > b.len() {
                    (a, b.len(), "tmux")
                } else {
                    (b, a.len(), "the mirror")
                };
                Difference {
                    class: format!("row longer in {who}"),
                    detail: format!(
                        "row {r}, cell {extra}: only {who} has {}{row_text}",
                        describe_cell(&longer[extra])
                    ),
                }
            }
        });
    }
    if tmux.cursor != mirror.cursor {
        let pending_wrap = tmux.cursor.0 == tmux.width;
        return Some(Difference {
            class: if pending_wrap {
                "cursor: pending wrap".into()
            } else {
                "cursor".into()
            },
            detail: format!(
                "cursor: tmux {:?}, mirror {:?} (column, row){}",
                tmux.cursor,
                mirror.cursor,
                if pending_wrap {
                    " (tmux's cursor_x is the width: the last column was written, the wrap is pending)"
                } else {
                    ""
                }
            ),
        });
    }
    if tmux.alternate != mirror.alternate {
        return Some(Difference {
            class: "alternate screen".into(),
            detail: format!(
                "alternate screen: tmux {}, mirror {}",
                tmux.alternate, mirror.alternate
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(text: &str, style: Style) -> StyledCell {
        StyledCell {
            text: text.to_string(),
            width: 1,
            style,
        }
    }

    fn red_bold() -> Style {
        Style {
            fg: Colour::Ansi(1),
            attrs: Attrs::BOLD,
            ..Style::default()
        }
    }

    #[test]
    fn sgr_applies_to_the_cells_after_it() {
        let rows = parse_capture(
            b"\x1b[1m\x1b[31mab\x1b[0m\x1b[39m\x1b[49m c\n",
            Dialect::V3_3,
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![vec![
                cell("a", red_bold()),
                cell("b", red_bold()),
                cell(" ", Style::default()),
                cell("c", Style::default()),
            ]]
        );
        // The same with the parameters in one sequence, as another writer would put them.
        let rows = parse_capture(b"\x1b[1;31mab\x1b[0m c\n", Dialect::V3_3).unwrap();
        assert_eq!(rows[0][1], cell("b", red_bold()));
        assert_eq!(rows[0][3], cell("c", Style::default()));
    }

    #[test]
    fn style_carries_over_to_the_next_line() {
        let rows = parse_capture(b"\x1b[44mx\ny\n\x1b[49mz\n", Dialect::V3_3).unwrap();
        let blue = Style {
            bg: Colour::Ansi(4),
            ..Style::default()
        };
        assert_eq!(rows[0], vec![cell("x", blue)]);
        assert_eq!(rows[1], vec![cell("y", blue)]);
        assert_eq!(rows[2], vec![cell("z", Style::default())]);
    }

    #[test]
    fn every_code_tmux_writes_is_understood() {
        let rows = parse_capture(
            b"\x1b[2;3;4:3;5;7;8;9;5:3m\x1b[38;5;100m\x1b[48;2;1;2;3m\x1b[58;5;9ma\
              \x1b[0m\x1b[91m\x1b[104m\x1b[58;2;7;8;9mb\x0eq\x1b[0m\x1b[39m\x1b[49mq\x0fq\n",
            Dialect::V3_3,
        )
        .unwrap();
        let row = &rows[0];
        assert_eq!(
            row[0].style,
            Style {
                fg: Colour::Palette(100),
                bg: Colour::Rgb(1, 2, 3),
                underline: Colour::Palette(9),
                attrs: Attrs(
                    Attrs::DIM.0
                        | Attrs::ITALIC.0
                        | Attrs::CURLY_UNDERLINE.0
                        | Attrs::BLINK.0
                        | Attrs::REVERSE.0
                        | Attrs::HIDDEN.0
                        | Attrs::STRIKETHROUGH.0
                        | Attrs::OVERLINE.0
                ),
                link: 0,
            }
        );
        let bright = Style {
            fg: Colour::Bright(1),
            bg: Colour::Bright(4),
            underline: Colour::Rgb(7, 8, 9),
            attrs: Attrs::default(),
            link: 0,
        };
        assert_eq!(row[1], cell("b", bright));
        let mut charset = bright;
        charset.attrs = Attrs::CHARSET;
        assert_eq!(row[2], cell("q", charset));
        // A reset keeps the line-drawing set; SI ends it.
        assert_eq!(
            row[3],
            cell(
                "q",
                Style {
                    attrs: Attrs::CHARSET,
                    ..Style::default()
                }
            )
        );
        assert_eq!(row[4], cell("q", Style::default()));
        assert!(parse_capture(b"\x1b[6mx\n", Dialect::V3_3).is_err());
    }

    #[test]
    fn characters_of_no_width_join_the_cell_before() {
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        let text = format!("e\u{301}\u{65e5}{family}\u{2764}\u{fe0f}x\n");
        let rows = parse_capture(text.as_bytes(), Dialect::V3_3).unwrap();
        let texts: Vec<&str> = rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            ["e\u{301}", "\u{65e5}", family, "\u{2764}\u{fe0f}", "x"]
        );
        assert_eq!(rows[0][1].width, 2);
    }

    #[test]
    fn blank_cells_at_the_end_of_a_row_are_not_compared() {
        let tmux = observe_tmux(b"ab  \n\x1b[41m \n", (2, 0), false, 10);
        assert_eq!(tmux.rows[0].len(), 2);
        assert_eq!(tmux.rows[1].len(), 1, "a coloured blank is kept");
        let mirror = Observed {
            rows: vec![
                vec![cell("a", Style::default()), cell("b", Style::default())],
                vec![cell(
                    " ",
                    Style {
                        bg: Colour::Ansi(1),
                        ..Style::default()
                    },
                )],
            ],
            cursor: (2, 0),
            alternate: false,
            width: 10,
        };
        assert_eq!(first_difference(&tmux, &mirror), None);
        let mut other = mirror.clone();
        other.rows[0][1].style.attrs = Attrs::BLINK;
        let difference = first_difference(&tmux, &other).unwrap();
        assert_eq!(difference.class, "attr BLINK only in the mirror");
        assert!(difference.detail.contains("row 0, cell 1"), "{difference}");
        other = mirror.clone();
        other.cursor = (1, 0);
        assert_eq!(first_difference(&tmux, &other).unwrap().class, "cursor");
    }

    #[test]
    fn palette_colours_below_16_compare_as_the_basic_ones() {
        let tmux = observe_tmux(b"\x1b[38;5;9mx\n", (1, 0), false, 10);
        let mirror = Observed {
            rows: vec![vec![cell(
                "x",
                Style {
                    fg: Colour::Bright(1),
                    ..Style::default()
                },
            )]],
            cursor: (1, 0),
            alternate: false,
            width: 10,
        };
        assert_eq!(first_difference(&tmux, &mirror), None);
    }
}
