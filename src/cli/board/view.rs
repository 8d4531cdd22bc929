//! Draws the live board: a header, the agents' table (status in colour, how long it has
//! lasted), the selected agent's screen or the message being written, a notice and a help
//! line for the keys of the moment. Sized to what it has: an 80x24 popup shows a few rows and
//! the bottom of the screen, a large terminal more of both.

use std::time::Instant;

use panectl::status::Status;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row as TableRow, Table, TableState};
use unicode_width::UnicodeWidthStr;

use super::Row;
use super::model::{Board, Mode, waiting};
use crate::cli::agents::{location, short_duration};
use crate::cli::client::printable;

/// The colour of a status: waiting yellow, error red, completed green, processing cyan (as
/// the CLI's tables).
fn status_style(status: Status, colour: bool) -> Style {
    let style = match status {
        Status::WaitingUserAnswer => Style::default().add_modifier(Modifier::BOLD),
        _ => Style::default(),
    };
    if !colour {
        return style;
    }
    match status {
        Status::WaitingUserAnswer => style.fg(Color::Yellow),
        Status::Error => style.fg(Color::Red),
        Status::Completed => style.fg(Color::Green),
        Status::Processing => style.fg(Color::Cyan),
        _ => style,
    }
}

/// The width from which the preview goes beside the table rather than under it.
const SIDE_BY_SIDE: u16 = 160;

fn dim(colour: bool) -> Style {
    if colour {
        Style::default().fg(Color::DarkGray)
    } else {
        Style::default()
    }
}

/// Draws the board.
pub(super) fn draw(frame: &mut Frame, board: &Board, now: Instant, colour: bool) {
    let area = frame.area();
    let notice = notice(board);
    let [header, body, notice_area, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(u16::from(notice.is_some())),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(header_line(board)), header);

    let visible = board.visible();
    let lower = match &board.mode {
        Mode::Compose { .. } => true,
        _ => board.preview.is_some() && board.selected().is_some(),
    };
    let wanted = u16::try_from(visible.len() + 1).unwrap_or(u16::MAX);
    // Wide enough for a table and a screen side by side: the preview on the right, every row
    // in view; else the preview under the table, which keeps at most 2/5 of the height.
    let [table_area, lower_area] = if !lower {
        [body, Rect::default()]
    } else if body.width >= SIDE_BY_SIDE {
        Layout::horizontal([Constraint::Percentage(45), Constraint::Fill(1)]).areas(body)
    } else {
        let table_height = wanted.min((body.height * 2 / 5).max(4)).min(body.height);
        Layout::vertical([Constraint::Length(table_height), Constraint::Fill(1)]).areas(body)
    };
    if visible.is_empty() {
        let text = if board.all().is_empty() {
            "No agents."
        } else {
            "No agent matches the filter."
        };
        frame.render_widget(Paragraph::new(text), table_area);
    } else {
        draw_table(frame, board, &visible, table_area, now, colour);
    }
    match &board.mode {
        Mode::Compose { target, editor } => {
            let block = Block::default()
                .borders(Borders::ALL)
                .title(format!(" message to {target} "));
            let inner = block.inner(lower_area);
            frame.render_widget(block, lower_area);
            let (row, col) = editor.cursor();
            let scroll = u16::try_from(row.saturating_sub(usize::from(inner.height.max(1)) - 1))
                .unwrap_or(0);
            let lines: Vec<Line> = editor.shown_lines().into_iter().map(Line::from).collect();
            frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
            let y = u16::try_from(row)
                .unwrap_or(u16::MAX)
                .saturating_sub(scroll);
            let x = u16::try_from(col).unwrap_or(u16::MAX);
            if y < inner.height && x < inner.width {
                frame.set_cursor_position(Position::new(inner.x + x, inner.y + y));
            }
        }
        _ => {
            if let (Some(preview), Some(row)) = (&board.preview, board.selected_row())
                && preview.target == row.target()
                && lower_area.height > 1
            {
                let block = Block::default()
                    .borders(Borders::TOP)
                    .border_style(dim(colour))
                    .title(preview_title(row));
                let inner = block.inner(lower_area);
                frame.render_widget(block, lower_area);
                frame.render_widget(preview.widget(colour), inner);
            }
        }
    }
    if let Some((text, style)) = notice {
        let style = if colour { style } else { Style::default() };
        frame.render_widget(Paragraph::new(Span::styled(text, style)), notice_area);
    }
    frame.render_widget(Paragraph::new(help_line(board, help.width, colour)), help);
    if matches!(board.mode, Mode::Filter) {
        let x = u16::try_from(board.filter().width() + 1).unwrap_or(u16::MAX);
        if x < help.width {
            frame.set_cursor_position(Position::new(help.x + x, help.y));
        }
    }
}

fn header_line(board: &Board) -> Line<'static> {
    let rows = board.all();
    let waiting = rows.iter().filter(|row| waiting(row)).count();
    let pending: usize = rows.iter().map(|row| row.pending.len()).sum();
    let mut text = format!(
        "panectl · {} agent{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    );
    if waiting > 0 {
        text.push_str(&format!(" · {waiting} waiting"));
    }
    if pending > 0 {
        text.push_str(&format!(
            " · {pending} message{} pending",
            if pending == 1 { "" } else { "s" }
        ));
    }
    if !board.filter().is_empty() {
        text.push_str(&format!(" · filter: {}", printable(board.filter())));
    }
    Line::from(Span::styled(
        text,
        Style::default().add_modifier(Modifier::BOLD),
    ))
}

fn draw_table(
    frame: &mut Frame,
    board: &Board,
    visible: &[&Row],
    area: Rect,
    now: Instant,
    colour: bool,
) {
    let with_server = visible.iter().any(|row| row.server.is_some());
    let with_pending = visible.iter().any(|row| !row.pending.is_empty());
    let elapsed = now.saturating_duration_since(board.read_at()).as_secs_f64();
    let mut headers = vec!["#"];
    if with_server {
        headers.push("SERVER");
    }
    headers.extend(["STATUS", "FOR", "NAME", "PROVIDER"]);
    if with_pending {
        headers.push("MSGS");
    }
    headers.push("WHERE");
    let status_column = usize::from(with_server) + 1;
    let cells: Vec<Vec<String>> = visible
        .iter()
        .enumerate()
        .map(|(at, row)| {
            let mut cells = vec![(at + 1).to_string()];
            if with_server {
                cells.push(printable(row.server.as_deref().unwrap_or_default()));
            }
            cells.extend([
                row.pane.status.as_str().to_string(),
                short_duration(row.pane.status_seconds + elapsed),
                printable(&row.name),
                printable(row.pane.provider.as_deref().unwrap_or_default()),
            ]);
            if with_pending {
                cells.push(match row.pending.len() {
                    0 => String::new(),
                    n => n.to_string(),
                });
            }
            cells.push(printable(&location(&row.pane)));
            cells
        })
        .collect();
    let mut widths: Vec<u16> = headers.iter().map(|h| h.width() as u16).collect();
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(u16::try_from(cell.width()).unwrap_or(u16::MAX));
        }
    }
    let last = widths.len() - 1;
    let constraints: Vec<Constraint> = widths
        .iter()
        .enumerate()
        .map(|(at, &w)| {
            if at == last {
                Constraint::Fill(1)
            } else {
                Constraint::Length(w)
            }
        })
        .collect();
    let rows: Vec<TableRow> = cells
        .into_iter()
        .zip(visible)
        .map(|(cells, row)| {
            let status = status_style(row.pane.status, colour);
            TableRow::new(cells.into_iter().enumerate().map(|(at, cell)| {
                if at == status_column {
                    Span::styled(cell, status)
                } else {
                    Span::raw(cell)
                }
            }))
        })
        .collect();
    let table = Table::new(rows, constraints)
        .header(TableRow::new(headers).style(Style::default().add_modifier(Modifier::BOLD)))
        .column_spacing(if area.width < 70 { 1 } else { 2 })
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(board.selected_index());
    frame.render_stateful_widget(table, area, &mut state);
}

fn preview_title(row: &Row) -> String {
    let mut parts = vec![row.target()];
    if !row.name.is_empty() {
        parts.push(printable(&row.name));
    }
    parts.push(printable(row.pane.provider.as_deref().unwrap_or_default()));
    parts.push(printable(&location(&row.pane)));
    parts.push(row.pane.status.as_str().to_string());
    format!(" {} ", parts.join(" · "))
}

/// The notice line: an error reading the agents (red), else what the last action did.
fn notice(board: &Board) -> Option<(String, Style)> {
    if let Some(error) = board.error() {
        return Some((
            printable(&format!("panectl: {error}")),
            Style::default().fg(Color::Red),
        ));
    }
    board
        .notice
        .as_ref()
        .map(|text| (printable(text), Style::default().fg(Color::Yellow)))
}

/// What the keys do now, as (key, what it does) pairs.
fn help_items(board: &Board) -> Vec<(String, String)> {
    let pair = |key: &str, what: &str| (key.to_string(), what.to_string());
    match &board.mode {
        Mode::Filter => vec![
            (format!("/{}", printable(board.filter())), String::new()),
            pair("Enter", "keep the filter"),
            pair("Esc", "clear it"),
        ],
        Mode::Compose { .. } => vec![
            pair("Enter", "new line"),
            pair("Ctrl-D", "send"),
            pair("Esc", "drop"),
        ],
        Mode::Answer { target } => vec![
            pair("y n 1-9", &format!("answer {target}'s dialog")),
            pair("Enter Esc ↑↓", "keys to it"),
            pair("Tab", "back to the board"),
        ],
        Mode::Board => {
            let mut items = Vec::new();
            let selected = board.selected_row();
            if selected.is_some_and(waiting) {
                items.extend([pair("y/n", "answer"), pair("a", "dialog")]);
            }
            items.extend([
                pair("↑↓/1-9", "select"),
                pair("Enter", "jump"),
                pair("s", "send"),
            ]);
            if selected.is_some_and(|row| !row.pending.is_empty()) {
                items.push(pair("c", "cancel"));
            }
            items.extend([pair("/", "filter"), pair("q", "quit")]);
            items
        }
    }
}

/// The help line for a width: `key: what` spaced out where it fits, `key what` packed closer
/// where it does not; the keys bold.
fn help_line(board: &Board, width: u16, colour: bool) -> Line<'static> {
    let items = help_items(board);
    let layouts = [(": ", "   "), (" ", "  "), (" ", " ")];
    let fits = |(colon, gap): (&str, &str)| {
        let text: usize = items
            .iter()
            .map(|(key, what)| {
                key.width()
                    + if what.is_empty() {
                        0
                    } else {
                        colon.len() + what.width()
                    }
            })
            .sum();
        text + gap.len() * items.len().saturating_sub(1) <= usize::from(width)
    };
    let (colon, gap) = layouts
        .into_iter()
        .find(|&layout| fits(layout))
        .unwrap_or(layouts[2]);
    let mut spans = Vec::new();
    for (at, (key, what)) in items.into_iter().enumerate() {
        if at > 0 {
            spans.push(Span::raw(gap));
        }
        spans.push(Span::styled(
            key,
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if !what.is_empty() {
            spans.push(Span::styled(format!("{colon}{what}"), dim(colour)));
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::*;
    use crate::cli::agents::tests::pane;
    use crate::cli::board::preview::{Preview, Screen};

    fn row(id: u32, status: &str, name: &str, seconds: f64) -> Row {
        let mut pane = pane(id, "work", id, 0, status);
        pane.status_seconds = seconds;
        Row {
            pane,
            name: name.into(),
            server: None,
            pending: Vec::new(),
        }
    }

    fn board(now: Instant) -> Board {
        let mut board = Board::new(now);
        let mut busy = row(1, "processing", "builder", 65.0);
        busy.pending = vec![3];
        board.set_rows(
            Ok(vec![
                row(0, "idle", "漢字-agent", 5.0),
                busy,
                row(2, "waiting_user_answer", "asker", 12.0),
            ]),
            now,
        );
        board.preview = Some(Preview::new(
            "%2".into(),
            &Screen {
                ansi: b"Allow edit?\x1b[m\n\x1b[33m> 1. Yes\x1b[m\n  2. No\x1b[m".to_vec(),
                width: 40,
                height: 3,
                cursor_row: 2,
            },
        ));
        board
    }

    fn render(board: &Board, width: u16, height: u16, colour: bool) -> TestBackend {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a terminal");
        let now = board.read_at() + std::time::Duration::from_secs(2);
        terminal
            .draw(|frame| draw(frame, board, now, colour))
            .expect("drawn");
        terminal.backend().clone()
    }

    fn lines(backend: &TestBackend) -> Vec<String> {
        let buffer = backend.buffer();
        (0..buffer.area.height)
            .map(|y| {
                let mut line = String::new();
                let mut x = 0;
                while x < buffer.area.width {
                    let symbol = buffer[(x, y)].symbol();
                    line.push_str(symbol);
                    x += u16::try_from(symbol.width().max(1)).unwrap_or(1);
                }
                line.trim_end().to_string()
            })
            .collect()
    }

    #[test]
    fn an_80x24_popup_shows_the_table_the_preview_and_the_keys() {
        let board = board(Instant::now());
        let backend = render(&board, 80, 24, true);
        let shown = lines(&backend);
        let text = shown.join("\n");
        assert_eq!(
            shown[0],
            "panectl · 3 agents · 1 waiting · 1 message pending"
        );
        assert!(shown[1].starts_with("#  STATUS"), "{text}");
        // Waiting first, with its duration counted on since it was read.
        assert!(
            shown[2].starts_with("1  waiting_user_answer  14s"),
            "{text}"
        );
        assert!(
            shown[3].contains("processing") && shown[3].contains("1m"),
            "{text}"
        );
        assert!(
            shown[4].contains("漢字-agent") && shown[4].contains("work:w0.0"),
            "{text}"
        );
        // The preview of the selected agent, under its title.
        assert!(
            text.contains("%2 · asker · codex · work:w2.0 · waiting_user_answer"),
            "{text}"
        );
        assert!(text.contains("> 1. Yes"), "{text}");
        // The keys of the moment, packed to fit 80 columns.
        assert_eq!(
            shown[23],
            "y/n answer  a dialog  ↑↓/1-9 select  Enter jump  s send  / filter  q quit"
        );
        // Spaced out where there is room.
        let wide = lines(&render(&board, 120, 24, true));
        assert!(wide[23].starts_with("y/n: answer   a: dialog   ↑↓/1-9: select"));
        // With a pending message too, closer still: every key in 80 columns.
        let mut with_pending = self::board(Instant::now());
        let mut rows: Vec<Row> = with_pending.all().to_vec();
        rows[0].pending = vec![5];
        with_pending.set_rows(Ok(rows), Instant::now());
        assert_eq!(
            lines(&render(&with_pending, 80, 24, true))[23],
            "y/n answer a dialog ↑↓/1-9 select Enter jump s send c cancel / filter q quit"
        );
        // Colours: the waiting status yellow and bold, the dialog's line as the pane had it.
        let buffer = backend.buffer();
        assert_eq!(buffer[(3, 2)].fg, Color::Yellow);
        assert!(buffer[(3, 2)].modifier.contains(Modifier::BOLD));
        let yes_row = shown
            .iter()
            .position(|l| l.contains("> 1. Yes"))
            .expect("row");
        assert_eq!(buffer[(0, yes_row as u16)].fg, Color::Indexed(3));
        // The selected row is reversed.
        assert!(buffer[(0, 2)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn no_colour_keeps_the_attributes_only() {
        let board = board(Instant::now());
        let backend = render(&board, 80, 24, false);
        let buffer = backend.buffer();
        for y in 0..24 {
            for x in 0..80 {
                assert_eq!(buffer[(x, y)].fg, Color::Reset, "({x},{y})");
                assert_eq!(buffer[(x, y)].bg, Color::Reset, "({x},{y})");
            }
        }
        assert!(buffer[(3, 2)].modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn a_large_terminal_shows_every_row_and_the_whole_screen() {
        let mut board = board(Instant::now());
        let rows: Vec<Row> = (0..30)
            .map(|id| row(id, "idle", &format!("agent-{id}"), 1.0))
            .collect();
        board.set_rows(Ok(rows), Instant::now());
        let shown = lines(&render(&board, 200, 60, true));
        let text = shown.join("\n");
        assert!(text.contains("agent-29"), "{text}");
        // The screen beside the table, from the first row.
        assert!(
            shown[2].contains("agent-0 ") && shown[2].ends_with("Allow edit?"),
            "{text}"
        );
        // In a small one the table scrolls to keep the selection in view.
        for _ in 0..25 {
            board.key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
        }
        let text = lines(&render(&board, 80, 24, true)).join("\n");
        assert!(text.contains("agent-25"), "{text}");
        assert!(!text.contains("agent-0 "), "{text}");
    }

    #[test]
    fn writing_a_message_shows_the_editor_and_its_keys() {
        let mut board = board(Instant::now());
        board.key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE));
        board.paste("line one\nline two");
        let shown = lines(&render(&board, 80, 24, true));
        let text = shown.join("\n");
        assert!(text.contains("message to %2"), "{text}");
        assert!(
            text.contains("│line one") && text.contains("│line two"),
            "{text}"
        );
        assert_eq!(shown[23], "Enter: new line   Ctrl-D: send   Esc: drop");
    }

    #[test]
    fn an_error_and_an_empty_filter_say_so() {
        let mut board = board(Instant::now());
        board.key(KeyEvent::new(KeyCode::Char('/'), KeyModifiers::NONE));
        board.paste("nothing-like-it");
        let text = lines(&render(&board, 80, 24, true)).join("\n");
        assert!(text.contains("No agent matches the filter."), "{text}");
        assert!(
            text.contains("/nothing-like-it   Enter: keep the filter"),
            "{text}"
        );
        board.set_rows(Err(anyhow::anyhow!("no daemon\x1b[2J")), Instant::now());
        let text = lines(&render(&board, 80, 24, true)).join("\n");
        assert!(text.contains("panectl: no daemon\\x1b[2J"), "{text}");
        assert!(text.contains("No agents."), "{text}");
    }
}
