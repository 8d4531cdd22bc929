//! The line board: the agents numbered, those waiting for the user first, and commands read
//! one per line: `N` jumps to agent N, `s N` sends it a message, `r` redraws, `q` quits. No raw
//! mode: it is what `panectl board` runs when stdin or stdout is not a terminal (a script, a
//! pipe) or with `--lines`, and it ends at the end of input. A jump ends the board; a jump that
//! fails ends it too, with the reason as the error, so that later lines do not land in a
//! forgotten prompt.

use std::io::{BufRead, Write};

use super::{Backend, Row, sorted};
use crate::cli::agents::{location, short_duration};
use crate::cli::client::printable;
use crate::cli::table::Table;

/// A command typed on the board.
#[derive(Debug, PartialEq, Eq)]
enum Input {
    /// An empty line.
    Enter,
    /// `r`.
    Redraw,
    /// `q`.
    Quit,
    /// `N`.
    Jump(usize),
    /// `s N`, or `s` alone.
    Send(Option<usize>),
    /// Anything else.
    Unknown(String),
}

fn parse(line: &str) -> Input {
    let line = line.trim();
    match line {
        "" => Input::Enter,
        "r" => Input::Redraw,
        "q" | "quit" => Input::Quit,
        _ => {
            if let Ok(n) = line.parse() {
                return Input::Jump(n);
            }
            match line.strip_prefix('s').map(str::trim) {
                Some("") => Input::Send(None),
                Some(n) => match n.parse() {
                    Ok(n) => Input::Send(Some(n)),
                    Err(_) => Input::Unknown(line.to_string()),
                },
                None => Input::Unknown(line.to_string()),
            }
        }
    }
}

/// Reads a line without its end; `None` at end of input. Bytes that are not UTF-8 are kept.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    if input.read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    if line.ends_with(b"\n") {
        line.pop();
        if line.ends_with(b"\r") {
            line.pop();
        }
    }
    Ok(Some(line))
}

/// Draws the board (below a `notice`, if any) and returns the rows as numbered.
fn draw(
    backend: &impl Backend,
    out: &mut impl Write,
    clear: bool,
    notice: Option<String>,
) -> std::io::Result<Vec<Row>> {
    // A terminal gets the screen cleared and colour (unless NO_COLOR).
    if clear {
        write!(out, "\x1b[H\x1b[2J")?;
    }
    let rows = match backend.agents() {
        Ok(rows) => sorted(rows),
        Err(error) => {
            writeln!(out, "panectl: {error:#}")?;
            Vec::new()
        }
    };
    if rows.is_empty() {
        writeln!(out, "No agents.")?;
    } else {
        write_table(out, &rows, clear && crate::cli::table::colour_allowed())?;
    }
    if let Some(notice) = notice {
        writeln!(out, "{notice}")?;
    }
    if rows.is_empty() {
        writeln!(out, "Enter or q: close   r: redraw")?;
    } else if rows.len() == 1 {
        writeln!(
            out,
            "Enter or 1: jump   s 1: send a message   r: redraw   q: quit"
        )?;
    } else {
        writeln!(out, "N: jump   s N: send a message   r: redraw   q: quit")?;
    }
    Ok(rows)
}

fn write_table(out: &mut impl Write, rows: &[Row], colour: bool) -> std::io::Result<()> {
    let with_server = rows.iter().any(|row| row.server.is_some());
    let mut headers = vec!["#", "STATUS", "PROVIDER", "WHERE", "NAME", "FOR"];
    if with_server {
        headers.insert(1, "SERVER");
    }
    let status_column = usize::from(with_server) + 1;
    let mut table = Table::new(&headers)
        .right_aligned(0)
        .right_aligned(headers.len() - 1)
        .status_column(status_column);
    for (at, row) in rows.iter().enumerate() {
        let mut cells = vec![(at + 1).to_string()];
        if with_server {
            cells.push(printable(row.server.as_deref().unwrap_or_default()));
        }
        cells.extend([
            printable(row.pane.status.as_str()),
            printable(&row.pane.provider.clone().unwrap_or_default()),
            printable(&location(&row.pane)),
            printable(&row.name),
            short_duration(row.pane.status_seconds),
        ]);
        table.row(cells);
    }
    out.write_all(table.render(colour).as_bytes())
}

/// What a command leads to.
enum Step {
    /// The board is done (a jump, `q`, the end of input).
    Done,
    /// The board ends because an action failed, for this reason.
    Failed(String),
    /// Draw the board again, with this notice under it.
    Redraw(Option<String>),
}

/// Runs the board on `input` and `out` until `q`, a jump or the end of input (`None`), or a
/// jump that failed (`Some` reason). `clear` clears the screen before each drawing (for a
/// terminal).
pub(super) fn run(
    backend: &impl Backend,
    input: &mut impl BufRead,
    out: &mut impl Write,
    clear: bool,
) -> std::io::Result<Option<String>> {
    let mut rows = draw(backend, out, clear, None)?;
    loop {
        write!(out, "> ")?;
        out.flush()?;
        let Some(line) = read_line(input)? else {
            return Ok(None);
        };
        let step = match parse(&String::from_utf8_lossy(&line)) {
            Input::Quit => Step::Done,
            Input::Enter if rows.is_empty() => Step::Done,
            Input::Enter if rows.len() > 1 => Step::Redraw(None),
            Input::Redraw => Step::Redraw(None),
            Input::Enter => jump(backend, &rows, 1),
            Input::Jump(n) => jump(backend, &rows, n),
            Input::Send(Some(n)) => send(backend, &rows, n, input, out)?,
            Input::Send(None) if rows.len() == 1 => send(backend, &rows, 1, input, out)?,
            Input::Send(None) => Step::Redraw(Some("Which agent? s N sends to agent N.".into())),
            Input::Unknown(text) => Step::Redraw(Some(format!(
                "Unknown command {text:?}: N jumps, s N sends a message, r redraws, q quits."
            ))),
        };
        match step {
            Step::Done => return Ok(None),
            Step::Failed(reason) => {
                writeln!(out, "{reason}")?;
                out.flush()?;
                return Ok(Some(reason));
            }
            Step::Redraw(notice) => rows = draw(backend, out, clear, notice)?,
        }
    }
}

/// Row `n` (counting from 1).
fn pick(rows: &[Row], n: usize) -> Option<&Row> {
    n.checked_sub(1).and_then(|at| rows.get(at))
}

/// Switches to agent `n`'s pane; the board ends, with the reason, if that fails.
fn jump(backend: &impl Backend, rows: &[Row], n: usize) -> Step {
    let Some(row) = pick(rows, n) else {
        return Step::Redraw(Some(format!("There is no agent {n}.")));
    };
    match backend.jump(&row.target()) {
        Ok(()) => Step::Done,
        Err(error) => Step::Failed(format!("cannot switch to {}: {error:#}", row.target())),
    }
}

/// Asks for a message for agent `n` and queues it.
fn send(
    backend: &impl Backend,
    rows: &[Row],
    n: usize,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<Step> {
    let Some(row) = pick(rows, n) else {
        return Ok(Step::Redraw(Some(format!("There is no agent {n}."))));
    };
    write!(out, "message: ")?;
    out.flush()?;
    let Some(body) = read_line(input)? else {
        return Ok(Step::Done);
    };
    let target = format!("{} ({})", row.target(), location(&row.pane));
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Step::Redraw(Some(format!("Nothing sent to {target}."))));
    }
    Ok(Step::Redraw(Some(
        match backend.send(&row.target(), &body) {
            Ok(id) => format!("Message {id} queued for {target}."),
            Err(error) => format!("Not sent to {target}: {error:#}"),
        },
    )))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::cli::agents::tests::pane;

    #[derive(Default)]
    struct Fake {
        rows: Vec<Row>,
        jumped: RefCell<Vec<String>>,
        sent: RefCell<Vec<(String, Vec<u8>)>>,
        fail: bool,
        fail_jump: bool,
    }

    impl Backend for Fake {
        fn agents(&self) -> anyhow::Result<Vec<Row>> {
            if self.fail {
                anyhow::bail!("no daemon");
            }
            Ok(self.rows.clone())
        }
        fn jump(&self, pane: &str) -> anyhow::Result<()> {
            self.jumped.borrow_mut().push(pane.to_string());
            if self.fail_jump {
                anyhow::bail!("tmux switch-client: can't find pane: {pane}");
            }
            Ok(())
        }
        fn send(&self, pane: &str, body: &[u8]) -> anyhow::Result<String> {
            self.sent
                .borrow_mut()
                .push((pane.to_string(), body.to_vec()));
            Ok("7".into())
        }
    }

    fn row(id: u32, status: &str, seconds: f64) -> Row {
        let mut pane = pane(id, "s", id, 0, status);
        pane.status_seconds = seconds;
        Row {
            pane,
            name: format!("agent-{id}"),
            server: None,
            pending: Vec::new(),
        }
    }

    fn board(fake: &Fake, input: &[u8]) -> String {
        let mut out = Vec::new();
        run(fake, &mut &input[..], &mut out, false).expect("the board runs");
        String::from_utf8(out).expect("text")
    }

    fn fake() -> Fake {
        Fake {
            rows: vec![
                row(0, "idle", 5.0),
                row(1, "processing", 65.0),
                row(2, "completed", 7300.0),
                row(3, "exited", 1.0),
                row(4, "waiting_user_answer", 12.0),
                row(5, "error", 3.0),
            ],
            ..Fake::default()
        }
    }

    #[test]
    fn waiting_agents_are_listed_first_with_durations() {
        let shown = board(&fake(), b"q\n");
        let table: Vec<&str> = shown.lines().take(7).collect();
        assert!(table[0].starts_with("#  STATUS"), "{shown}");
        let order: Vec<(&str, &str)> = table[1..]
            .iter()
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                (words[1], words[words.len() - 1])
            })
            .collect();
        assert_eq!(
            order,
            [
                ("waiting_user_answer", "12s"),
                ("completed", "2h"),
                ("error", "3s"),
                ("processing", "1m"),
                ("idle", "5s"),
                ("exited", "1s"),
            ]
        );
        assert!(table[1].contains("s:w4.0") && table[1].contains("agent-4"));
    }

    #[test]
    fn a_number_jumps_and_ends_the_board() {
        let fake = fake();
        board(&fake, b"9\nx\n2\nr\n");
        assert_eq!(*fake.jumped.borrow(), ["%2"]);
        let shown = board(&fake, b"0\n");
        assert!(shown.contains("There is no agent 0."), "{shown}");
    }

    #[test]
    fn a_failed_jump_ends_the_board_with_the_reason() {
        let fake = Fake {
            fail_jump: true,
            ..fake()
        };
        let mut out = Vec::new();
        let failed = run(&fake, &mut &b"1\n2\nq\n"[..], &mut out, false).expect("runs");
        assert_eq!(
            failed.as_deref(),
            Some("cannot switch to %4: tmux switch-client: can't find pane: %4")
        );
        // The lines after the failure are not read as board commands.
        assert_eq!(*fake.jumped.borrow(), ["%4"]);
        let shown = String::from_utf8(out).expect("text");
        assert!(shown.ends_with("can't find pane: %4\n"), "{shown}");
        assert_eq!(shown.matches("> ").count(), 1, "{shown}");
    }

    #[test]
    fn send_asks_for_the_text_and_redraws() {
        let fake = fake();
        let shown = board(&fake, b"s 1\nhello #{pane_id}\xff\r\ns2\n  \ns 42\nq\n");
        assert_eq!(
            *fake.sent.borrow(),
            [("%4".to_string(), b"hello #{pane_id}\xff".to_vec())]
        );
        assert!(
            shown.contains("Message 7 queued for %4 (s:w4.0)."),
            "{shown}"
        );
        assert!(shown.contains("Nothing sent to %2"), "{shown}");
        assert!(shown.contains("There is no agent 42."), "{shown}");
        assert_eq!(shown.matches("message: ").count(), 2);
        assert!(fake.jumped.borrow().is_empty());
    }

    #[test]
    fn enter_jumps_to_a_lone_agent_and_closes_an_empty_board() {
        let lone = Fake {
            rows: vec![row(3, "idle", 1.0)],
            ..Fake::default()
        };
        board(&lone, b"\n");
        assert_eq!(*lone.jumped.borrow(), ["%3"]);
        let empty = Fake::default();
        let shown = board(&empty, b"\n1\n");
        assert!(shown.starts_with("No agents."), "{shown}");
        assert_eq!(shown.matches("> ").count(), 1);
        // Several agents: Enter redraws.
        let several = fake();
        let shown = board(&several, b"\n");
        assert_eq!(shown.matches("#  STATUS").count(), 2);
        assert!(several.jumped.borrow().is_empty());
    }

    #[test]
    fn end_of_input_and_errors_end_nothing_badly() {
        let fake = fake();
        board(&fake, b"");
        board(&fake, b"s 1\n");
        assert!(fake.sent.borrow().is_empty());
        let failing = Fake {
            fail: true,
            ..Fake::default()
        };
        let shown = board(&failing, b"r\nq\n");
        assert_eq!(shown.matches("panectl: no daemon").count(), 2, "{shown}");
    }

    #[test]
    fn commands_parse() {
        assert_eq!(parse(" 12 "), Input::Jump(12));
        assert_eq!(parse("s 3"), Input::Send(Some(3)));
        assert_eq!(parse("s3"), Input::Send(Some(3)));
        assert_eq!(parse("s"), Input::Send(None));
        assert_eq!(parse("sx"), Input::Unknown("sx".into()));
        assert_eq!(parse("-1"), Input::Unknown("-1".into()));
        assert_eq!(parse(""), Input::Enter);
    }
}
