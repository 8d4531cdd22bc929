//! Rewrapping lines to a new width, as tmux's `grid_reflow` does when a pane is resized on the
//! primary screen: lines too long are split, lines that had wrapped take back what fits from
//! the lines after them, and the cursor keeps its place in the text.

use super::cell::Colour;
use super::grid::{Grid, Line};

/// The cursor as a position in unwrapped text: `(offset, logical line)`; the offset is `None`
/// when the cursor is past the line's written cells.
pub(crate) fn wrap_position(grid: &Grid, px: usize, py: usize) -> (Option<usize>, usize) {
    let (mut ax, mut ay) = (0, 0);
    for line in grid.lines.iter().take(py) {
        if line.wrapped {
            ax += line.used;
        } else {
            ax = 0;
            ay += 1;
        }
    }
    let used = grid.lines.get(py).map_or(0, |line| line.used);
    if px >= used {
        (None, ay)
    } else {
        (Some(ax + px), ay)
    }
}

/// The cursor back from [`wrap_position`] after the lines moved: `(column, absolute row)`.
pub(crate) fn unwrap_position(grid: &Grid, wx: Option<usize>, wy: usize) -> (usize, usize) {
    let last = grid.lines.len().saturating_sub(1);
    let mut yy = 0;
    let mut ay = 0;
    while yy < last {
        if ay == wy {
            break;
        }
        if !grid.lines[yy].wrapped {
            ay += 1;
        }
        yy += 1;
    }
    let wrapped = |yy: usize| grid.lines.get(yy).is_some_and(|line| line.wrapped) && yy < last;
    match wx {
        None => {
            while wrapped(yy) {
                yy += 1;
            }
            (grid.lines.get(yy).map_or(0, |line| line.used), yy)
        }
        Some(mut wx) => {
            while wrapped(yy) {
                let used = grid.lines[yy].used;
                if wx < used {
                    break;
                }
                wx -= used;
                yy += 1;
            }
            (wx, yy)
        }
    }
}

/// Rewraps every line of `grid` (whose `sx` is already the new width).
pub(crate) fn reflow(grid: &mut Grid) {
    let sx = grid.sx;
    let total = grid.hsize + grid.sy;
    let mut target = Grid {
        sx,
        sy: 0,
        hlimit: 0,
        history: false,
        hsize: 0,
        hscrolled: 0,
        lines: Vec::with_capacity(total),
    };
    let mut dead = vec![false; total];
    for yy in 0..total {
        if dead[yy] {
            continue;
        }
        let line = &grid.lines[yy];
        let (mut at, mut width) = (0, 0);
        for i in 0..line.used {
            let w = usize::from(line.cell(i).width);
            if at == 0 && width + w > sx {
                at = i;
            }
            width += w;
        }
        if width == sx {
            move_line(&mut target, grid, yy, &mut dead);
        } else if width > sx {
            split(&mut target, grid, yy, at, &mut dead);
        } else if line.wrapped {
            join(&mut target, grid, yy, width, false, &mut dead);
        } else {
            move_line(&mut target, grid, yy, &mut dead);
        }
    }
    if target.sy < grid.sy {
        let missing = grid.sy - target.sy;
        add(&mut target, missing);
    }
    grid.hsize = target.sy - grid.sy;
    grid.hscrolled = grid.hscrolled.min(grid.hsize);
    grid.lines = target.lines;
}

fn add(target: &mut Grid, n: usize) -> usize {
    let first = target.sy;
    target.lines.resize(first + n, Line::default());
    target.sy += n;
    first
}

fn move_line(target: &mut Grid, grid: &mut Grid, yy: usize, dead: &mut [bool]) -> usize {
    let to = add(target, 1);
    target.lines[to] = std::mem::take(&mut grid.lines[yy]);
    dead[yy] = true;
    to
}

/// tmux's `grid_reflow_join`: the lines after `yy` that continue it fill what is left of it.
fn join(
    target: &mut Grid,
    grid: &mut Grid,
    yy: usize,
    mut width: usize,
    already: bool,
    dead: &mut [bool],
) {
    let sx = target.sx;
    let total = grid.hsize + grid.sy;
    let to = if already {
        target.sy - 1
    } else {
        move_line(target, grid, yy, dead)
    };
    let mut at = target.lines[to].used;
    let mut lines = 0;
    let mut wrapped = true;
    let mut from = None;
    let mut want = 0;
    loop {
        if yy + 1 + lines == total {
            break;
        }
        let line = yy + 1 + lines;
        if !grid.lines[line].wrapped {
            wrapped = false;
        }
        if grid.lines[line].used == 0 {
            if !wrapped {
                break;
            }
            lines += 1;
            continue;
        }
        let cell = grid.lines[line].cell(0);
        if width + usize::from(cell.width) > sx {
            break;
        }
        width += usize::from(cell.width);
        target.set_cell(at, to, cell);
        at += 1;
        from = Some(line);
        want = 1;
        while want < grid.lines[line].used {
            let cell = grid.lines[line].cell(want);
            if width + usize::from(cell.width) > sx {
                break;
            }
            width += usize::from(cell.width);
            target.set_cell(at, to, cell);
            at += 1;
            want += 1;
        }
        lines += 1;
        if !wrapped || want != grid.lines[line].used || width == sx {
            break;
        }
    }
    if lines == 0 {
        return;
    }
    let left = from.map_or(0, |from| grid.lines[from].used - want);
    if left != 0 {
        let from_line = yy + lines;
        grid.move_cells(0, want, from_line, left, Colour::Default);
        let line = &mut grid.lines[from_line];
        line.cells.truncate(left);
        line.used = left;
        lines -= 1;
    } else if !wrapped {
        target.lines[to].wrapped = false;
    }
    for (line, dead) in grid.lines[yy + 1..yy + 1 + lines]
        .iter_mut()
        .zip(&mut dead[yy + 1..yy + 1 + lines])
    {
        *line = Line::default();
        *dead = true;
    }
    if grid.hscrolled > to + lines {
        grid.hscrolled -= lines;
    } else if grid.hscrolled > to {
        grid.hscrolled = to;
    }
}

/// tmux's `grid_reflow_split`: a line too wide becomes several.
fn split(target: &mut Grid, grid: &mut Grid, yy: usize, at: usize, dead: &mut [bool]) {
    let sx = target.sx;
    let used = grid.lines[yy].used;
    let was_wrapped = grid.lines[yy].wrapped;
    let mut lines = 2;
    let mut width = 0;
    for i in at..used {
        let w = usize::from(grid.lines[yy].cell(i).width);
        if width + w > sx {
            lines += 1;
            width = 0;
        }
        width += w;
    }
    let first = add(target, lines);
    let mut line = first + 1;
    width = 0;
    let mut xx = 0;
    for i in at..used {
        let cell = grid.lines[yy].cell(i);
        let w = usize::from(cell.width);
        if width + w > sx {
            target.lines[line].wrapped = true;
            line += 1;
            if line >= target.sy {
                add(target, 1);
            }
            width = 0;
            xx = 0;
        }
        width += w;
        target.set_cell(xx, line, cell);
        xx += 1;
    }
    if was_wrapped {
        target.lines[line].wrapped = true;
    }
    let mut rest = std::mem::take(&mut grid.lines[yy]);
    rest.cells.truncate(at);
    rest.used = at;
    rest.wrapped = true;
    target.lines[first] = rest;
    dead[yy] = true;
    if yy <= grid.hscrolled {
        grid.hscrolled += lines - 1;
    }
    if width < sx && was_wrapped {
        join(target, grid, yy, width, true, dead);
    }
}
