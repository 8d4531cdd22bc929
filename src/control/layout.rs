//! Window layout strings, as carried by `%layout-change` and `#{window_layout}`.
//!
//! A layout is `csum,cell` where `csum` is four hex digits of a checksum over the rest and `cell`
//! is `WxH,X,Y` followed by a pane id (a leaf), `{cells}` (side by side) or `[cells]` (stacked).
//! tmux master (3.8-dev) may print negative offsets and a `<cells>` list of floating panes after
//! the tiled tree (or instead of it); both are accepted. The checksum is verified, so a corrupted
//! line is reported instead of resizing panes to nonsense.

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{char, i32 as dec_i32, u32 as dec_u32};
use nom::combinator::{opt, peek};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded, terminated};
use nom::{IResult, Parser};

use crate::ids::PaneId;

/// Deepest nesting of cells accepted, so hostile input cannot exhaust the stack.
const MAX_DEPTH: usize = 128;

/// A parsed window layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The tiled tree; absent only in master's layouts made of floating panes alone.
    pub root: Option<LayoutCell>,
    /// Floating panes (tmux master only), each a cell of its own.
    pub floating: Vec<LayoutCell>,
}

/// One rectangle of a layout: a pane or a split holding further cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutCell {
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
    /// Column of the left edge within the window (negative only for floating panes).
    pub x: i32,
    /// Row of the top edge within the window (negative only for floating panes).
    pub y: i32,
    /// What fills the rectangle.
    pub content: CellContent,
}

/// What a layout cell holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellContent {
    /// A single pane.
    Pane(PaneId),
    /// Cells side by side (`{...}`).
    LeftRight(Vec<LayoutCell>),
    /// Cells stacked top to bottom (`[...]`).
    TopBottom(Vec<LayoutCell>),
}

/// A pane's place in a layout, flattened out of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneGeometry {
    /// The pane.
    pub pane: PaneId,
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
}

/// Why a layout string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The string does not follow the layout grammar.
    #[error("malformed layout at byte {offset}")]
    Syntax {
        /// Where parsing stopped.
        offset: usize,
    },
    /// The checksum does not match the rest of the string.
    #[error("layout checksum {found:04x} does not match the computed {computed:04x}")]
    Checksum {
        /// The checksum written in the string.
        found: u16,
        /// The checksum of the text after it.
        computed: u16,
    },
}

/// The checksum tmux puts in front of a layout (`layout_checksum` in `layout-custom.c`).
pub fn checksum(text: &[u8]) -> u16 {
    text.iter().fold(0u16, |csum, &b| {
        let rotated = (csum >> 1) | ((csum & 1) << 15);
        rotated.wrapping_add(u16::from(b))
    })
}

impl Layout {
    /// Parses and verifies a layout string such as `b25d,80x24,0,0,0`.
    pub fn parse(text: &[u8]) -> Result<Layout, LayoutError> {
        let syntax = |rest: &[u8]| LayoutError::Syntax {
            offset: text.len() - rest.len(),
        };
        let (body, found) = parse_checksum(text).map_err(|_| syntax(text))?;
        let computed = checksum(body);
        if found != computed {
            return Err(LayoutError::Checksum { found, computed });
        }
        let (rest, (root, floating)) = (opt(|i| cell(i, 0)), opt(|i| floating_list(i)))
            .parse(body)
            .map_err(|e| match e {
                nom::Err::Error(e) | nom::Err::Failure(e) => syntax(e.input),
                nom::Err::Incomplete(_) => syntax(b""),
            })?;
        if !rest.is_empty() || (root.is_none() && floating.is_none()) {
            return Err(syntax(rest));
        }
        Ok(Layout {
            root,
            floating: floating.unwrap_or_default(),
        })
    }

    /// Every pane of the layout with its size and position, tiled panes first, in tree order.
    pub fn panes(&self) -> Vec<PaneGeometry> {
        let mut out = Vec::new();
        for cell in self.root.iter().chain(self.floating.iter()) {
            cell.collect_panes(&mut out);
        }
        out
    }

    /// The window size: the size of the tiled tree (or 0x0 when there is none).
    pub fn size(&self) -> (u32, u32) {
        self.root
            .as_ref()
            .map_or((0, 0), |cell| (cell.width, cell.height))
    }
}

impl LayoutCell {
    fn collect_panes(&self, out: &mut Vec<PaneGeometry>) {
        match &self.content {
            CellContent::Pane(pane) => out.push(PaneGeometry {
                pane: *pane,
                width: self.width,
                height: self.height,
                x: self.x,
                y: self.y,
            }),
            CellContent::LeftRight(cells) | CellContent::TopBottom(cells) => {
                for cell in cells {
                    cell.collect_panes(out);
                }
            }
        }
    }
}

type Res<'a, T> = IResult<&'a [u8], T>;

fn parse_checksum(text: &[u8]) -> Result<(&[u8], u16), ()> {
    let (hex, rest) = text.split_at_checked(4).ok_or(())?;
    let body = rest.strip_prefix(b",").ok_or(())?;
    let hex = std::str::from_utf8(hex).map_err(|_| ())?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(());
    }
    let value = u16::from_str_radix(hex, 16).map_err(|_| ())?;
    Ok((body, value))
}

fn cell(input: &[u8], depth: usize) -> Res<'_, LayoutCell> {
    if depth > MAX_DEPTH {
        return Err(nom::Err::Failure(nom::error::Error::new(
            input,
            nom::error::ErrorKind::TooLarge,
        )));
    }
    let (input, (width, _, height, _, x, _, y)) = (
        dec_u32,
        char('x'),
        dec_u32,
        char(','),
        dec_i32,
        char(','),
        dec_i32,
    )
        .parse(input)?;
    let children = |open: char, close: char| {
        delimited(
            char(open),
            separated_list1(char(','), move |i| cell(i, depth + 1)),
            char(close),
        )
    };
    let (input, content) = alt((
        // A leaf: ",ID" where the number is not the start of the next cell ("WxH").
        terminated(preceded(char(','), dec_u32), peek(not_x))
            .map(|id| CellContent::Pane(PaneId(id))),
        children('{', '}').map(CellContent::LeftRight),
        children('[', ']').map(CellContent::TopBottom),
    ))
    .parse(input)?;
    Ok((
        input,
        LayoutCell {
            width,
            height,
            x,
            y,
            content,
        },
    ))
}

/// Succeeds (consuming nothing) unless the next byte is `x`.
fn not_x(input: &[u8]) -> Res<'_, ()> {
    match input.first() {
        Some(b'x') => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Not,
        ))),
        _ => Ok((input, ())),
    }
}

fn floating_list(input: &[u8]) -> Res<'_, Vec<LayoutCell>> {
    delimited(
        tag(&b"<"[..]),
        separated_list1(char(','), |i| cell(i, 1)),
        tag(&b">"[..]),
    )
    .parse(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(width: u32, height: u32, x: i32, y: i32, pane: u32) -> LayoutCell {
        LayoutCell {
            width,
            height,
            x,
            y,
            content: CellContent::Pane(PaneId(pane)),
        }
    }

    fn with_checksum(body: &str) -> String {
        format!("{:04x},{body}", checksum(body.as_bytes()))
    }

    #[test]
    fn observed_layouts_parse() {
        let single = Layout::parse(b"b25d,80x24,0,0,0").unwrap();
        assert_eq!(single.root, Some(leaf(80, 24, 0, 0, 0)));
        assert_eq!(single.size(), (80, 24));

        let split = Layout::parse(b"020a,80x24,0,0{40x24,0,0,1,39x24,41,0,2}").unwrap();
        let root = split.root.unwrap();
        assert_eq!(
            root.content,
            CellContent::LeftRight(vec![leaf(40, 24, 0, 0, 1), leaf(39, 24, 41, 0, 2)])
        );
    }

    #[test]
    fn nested_layouts_flatten_in_tree_order() {
        // From wezterm's tests: V, H, V nesting.
        let body = "158x40,0,0[158x20,0,0,69,158x19,0,21{79x19,0,21,70,78x19,80,21[78x9,80,21,71,78x9,80,31,73]}]";
        let layout = Layout::parse(with_checksum(body).as_bytes()).unwrap();
        let ids: Vec<u32> = layout.panes().iter().map(|p| p.pane.0).collect();
        assert_eq!(ids, [69, 70, 71, 73]);
        let last = layout.panes()[3];
        assert_eq!((last.width, last.height, last.x, last.y), (78, 9, 80, 31));
    }

    #[test]
    fn checksum_mismatch_is_reported() {
        assert_eq!(
            Layout::parse(b"0000,80x24,0,0,0"),
            Err(LayoutError::Checksum {
                found: 0,
                computed: 0xb25d
            })
        );
    }

    #[test]
    fn malformed_layouts_are_syntax_errors() {
        for body in [
            "",
            "80x24",
            "80x24,0,0",
            "80x24,0,0{}",
            "80x24,0,0,1,",
            "80x24,0,0[1x1,0,0,1",
        ] {
            let text = with_checksum(body);
            assert!(
                matches!(
                    Layout::parse(text.as_bytes()),
                    Err(LayoutError::Syntax { .. })
                ),
                "{text} accepted"
            );
        }
        assert!(Layout::parse(b"zz").is_err());
        assert!(Layout::parse(b"b25d80x24,0,0,0").is_err());
    }

    #[test]
    fn master_floating_panes_and_negative_offsets_are_accepted() {
        let body = "80x24,0,0,0<20x10,-3,5,4,10x5,70,-1,5>";
        let layout = Layout::parse(with_checksum(body).as_bytes()).unwrap();
        assert_eq!(
            layout.floating,
            vec![leaf(20, 10, -3, 5, 4), leaf(10, 5, 70, -1, 5)]
        );
        let only_floating = Layout::parse(with_checksum("<20x10,1,1,7>").as_bytes()).unwrap();
        assert_eq!(only_floating.root, None);
        assert_eq!(only_floating.panes()[0].pane, PaneId(7));
    }

    #[test]
    fn hostile_nesting_is_refused_without_overflowing_the_stack() {
        let mut body = String::new();
        for _ in 0..100_000 {
            body.push_str("2x1,0,0{");
        }
        assert!(Layout::parse(with_checksum(&body).as_bytes()).is_err());
    }
}
