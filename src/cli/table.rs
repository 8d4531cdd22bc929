//! One renderer for the tables the CLI prints (`ls`, `providers`, `inbox`, `assignments`,
//! `explain`, the line board): a header row, columns padded to their widest cell by display
//! width (a CJK character or an emoji takes two columns of a terminal, a combining mark none),
//! the last column unpadded, and colour (a bold header, statuses by kind) only on a terminal,
//! and never with `NO_COLOR`.
//!
//! Cells are text already made printable (`client::printable`): the renderer measures and pads,
//! it does not escape.

use std::io::{IsTerminal, Write};

use unicode_width::UnicodeWidthStr;

/// Columns and rows, rendered at once so that every column fits its widest cell.
#[derive(Debug)]
pub struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
    status: Option<usize>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&'static str]) -> Table {
        Table {
            headers: headers.to_vec(),
            rows: Vec::new(),
            right: vec![false; headers.len()],
            status: None,
        }
    }

    /// Aligns a column to the right (numbers).
    pub fn right_aligned(mut self, column: usize) -> Table {
        if let Some(right) = self.right.get_mut(column) {
            *right = true;
        }
        self
    }

    /// Colours a column's cells as agent statuses, on a terminal.
    pub fn status_column(mut self, column: usize) -> Table {
        self.status = Some(column);
        self
    }

    /// Adds a row (missing cells are empty, extra ones are dropped).
    pub fn row(&mut self, mut cells: Vec<String>) {
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// The table as text, with or without colour.
    pub fn render(&self, colour: bool) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.width());
            }
        }
        let last = self.headers.len().saturating_sub(1);
        let line = |cells: &[&str], header: bool| -> String {
            let mut line = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let pad = " ".repeat(widths[i].saturating_sub(cell.width()));
                let styled = style(cell, colour, header, self.status == Some(i));
                if self.right[i] {
                    line.push_str(&pad);
                    line.push_str(&styled);
                } else {
                    line.push_str(&styled);
                    if i < last {
                        line.push_str(&pad);
                    }
                }
                if i < last {
                    line.push_str("  ");
                }
            }
            let trimmed = line.trim_end().len();
            line.truncate(trimmed);
            line.push('\n');
            line
        };
        let mut text = line(&self.headers, true);
        for row in &self.rows {
            let cells: Vec<&str> = row.iter().map(String::as_str).collect();
            text.push_str(&line(&cells, false));
        }
        text
    }

    /// Prints the table on stdout, in colour where [`colour_wanted`] says so.
    pub fn print(&self) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(self.render(colour_wanted()).as_bytes())?;
        out.flush()
    }
}

/// Whether stdout is a terminal and `NO_COLOR` is not set (<https://no-color.org>).
pub fn colour_wanted() -> bool {
    colour_allowed() && std::io::stdout().is_terminal()
}

/// Whether `NO_COLOR` leaves colour allowed (it is unset or empty).
pub fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The SGR colour of a status: waiting yellow, error red, completed green, processing cyan,
/// idle and the others plain.
fn status_colour(status: &str) -> Option<&'static str> {
    match status {
        "waiting_user_answer" => Some("33"),
        "error" => Some("31"),
        "completed" => Some("32"),
        "processing" => Some("36"),
        _ => None,
    }
}

fn style(cell: &str, colour: bool, header: bool, status: bool) -> String {
    if !colour || cell.is_empty() {
        return cell.to_string();
    }
    if header {
        return format!("\u{1b}[1m{cell}\u{1b}[0m");
    }
    match status.then(|| status_colour(cell)).flatten() {
        Some(code) => format!("\u{1b}[{code}m{cell}\u{1b}[0m"),
        None => cell.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_by_display_width() {
        let mut table = Table::new(&["ID", "NAME", "NOTE"]).right_aligned(0);
        table.row(vec!["7".into(), "漢字".into(), "wide".into()]);
        table.row(vec!["12".into(), "ab".into(), "narrow".into()]);
        table.row(vec!["3".into(), "🤖x".into()]);
        assert_eq!(
            table.render(false),
            "ID  NAME  NOTE\n 7  漢字  wide\n12  ab    narrow\n 3  🤖x\n"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let mut table = Table::new(&["PANE", "STATUS"]).status_column(1);
        table.row(vec!["%1".into(), "error".into()]);
        table.row(vec!["%2".into(), "idle".into()]);
        let plain = table.render(false);
        assert!(!plain.contains('\u{1b}'), "{plain:?}");
        let coloured = table.render(true);
        assert!(
            coloured.contains("\u{1b}[31merror\u{1b}[0m"),
            "{coloured:?}"
        );
        assert!(coloured.contains("\u{1b}[1mPANE\u{1b}[0m"), "{coloured:?}");
        assert!(coloured.contains("%2    idle"), "{coloured:?}");
    }
}
