//! The live board's state and what its keys do, without a terminal or a daemon: keys in,
//! [`Action`]s out (jump, send, answer, cancel, quit), which the loop in `live` carries out.

use std::time::Instant;

use panectl::status::Status;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Row;
use super::editor::Editor;
use super::preview::Preview;
use crate::cli::agents::location;

/// What the board is doing with the keys.
#[derive(Debug)]
pub(super) enum Mode {
    /// Selecting and acting on agents.
    Board,
    /// Typing a filter after `/`.
    Filter,
    /// Writing a message to an agent.
    Compose {
        /// To whom.
        target: String,
        /// What.
        editor: Editor,
    },
    /// Keys go to a waiting agent's dialog.
    Answer {
        /// Which agent.
        target: String,
    },
}

/// What a key asks the loop to do.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Action {
    /// Switch the client to the agent and end.
    Jump(String),
    /// Queue a message.
    Send(String, Vec<u8>),
    /// Press keys in the agent's pane.
    Keys(String, Vec<String>),
    /// Answer the agent's dialog by option, through the daemon (which presses the keys that
    /// pick it, only while that dialog is there).
    Answer {
        /// Which agent.
        target: String,
        /// Which option.
        pick: Pick,
        /// The fingerprint of the dialog the board showed, when it read one.
        decision: Option<String>,
    },
    /// Cancel a pending message.
    Cancel(String, i64),
    /// Read the agents again.
    Refresh,
    /// End the board.
    Quit,
}

/// Which option of a dialog a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// The dialog's affirmative option, by its label.
    Yes,
    /// The dialog's negative option, by its label.
    No,
    /// The option with this number.
    Number(usize),
}

/// The board: the agents, the one selected, the filter, the mode and a notice.
pub(super) struct Board {
    rows: Vec<Row>,
    /// When `rows` was read (their durations run from there).
    read_at: Instant,
    /// Why the agents could not be read, if they could not.
    error: Option<String>,
    selected: Option<String>,
    filter: String,
    /// What the keys do.
    pub mode: Mode,
    /// A line for the user: what the last action did.
    pub notice: Option<String>,
    /// The selected agent's screen.
    pub preview: Option<Preview>,
    /// The dialog of the selected agent as last read (its target and fingerprint), so that an
    /// answer lands only on the dialog the user saw.
    pub decision: Option<(String, String)>,
}

impl Board {
    /// An empty board.
    pub fn new(now: Instant) -> Board {
        Board {
            rows: Vec::new(),
            read_at: now,
            error: None,
            selected: None,
            filter: String::new(),
            mode: Mode::Board,
            notice: None,
            preview: None,
            decision: None,
        }
    }

    /// The agents as just read (in board order), or why they could not be read.
    pub fn set_rows(&mut self, rows: anyhow::Result<Vec<Row>>, now: Instant) {
        match rows {
            Ok(rows) => {
                self.rows = super::sorted(rows);
                self.error = None;
            }
            Err(error) => {
                self.rows.clear();
                self.error = Some(format!("{error:#}"));
            }
        }
        self.read_at = now;
        self.keep_selection();
        if let Mode::Answer { target } = &self.mode
            && self.row(target).is_none_or(|row| !waiting(row))
        {
            self.notice = Some(format!("{target} is no longer waiting for an answer."));
            self.mode = Mode::Board;
        }
    }

    /// Why the agents could not be read.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Every agent, filtered or not.
    pub fn all(&self) -> &[Row] {
        &self.rows
    }

    /// When the rows were read.
    pub fn read_at(&self) -> Instant {
        self.read_at
    }

    /// The filter typed after `/`.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// The agents the filter lets through, in board order.
    pub fn visible(&self) -> Vec<&Row> {
        let wanted = self.filter.to_lowercase();
        self.rows
            .iter()
            .filter(|row| wanted.is_empty() || haystack(row).contains(&wanted))
            .collect()
    }

    /// The selected agent's target (`%N`, or `SERVER/%N`).
    pub fn selected(&self) -> Option<&str> {
        self.selected.as_deref()
    }

    /// The selected agent's place among the visible ones.
    pub fn selected_index(&self) -> Option<usize> {
        let selected = self.selected.as_deref()?;
        self.visible()
            .iter()
            .position(|row| row.target() == selected)
    }

    /// The selected agent.
    pub fn selected_row(&self) -> Option<&Row> {
        self.row(self.selected.as_deref()?)
    }

    fn row(&self, target: &str) -> Option<&Row> {
        self.rows.iter().find(|row| row.target() == target)
    }

    /// Keeps the selected agent selected while it is visible, else selects the first one.
    fn keep_selection(&mut self) {
        if self.selected_index().is_none() {
            self.selected = self.visible().first().map(|row| row.target());
        }
    }

    fn select_index(&mut self, at: usize) -> bool {
        let target = self.visible().get(at).map(|row| row.target());
        match target {
            Some(target) => {
                self.selected = Some(target);
                true
            }
            None => false,
        }
    }

    fn step(&mut self, by: isize) {
        let count = self.visible().len();
        if count == 0 {
            return;
        }
        let at = self
            .selected_index()
            .map_or(0, |at| at.saturating_add_signed(by).min(count - 1));
        self.select_index(at);
    }

    /// A bracketed paste: into the message being written, or the filter.
    pub fn paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Compose { editor, .. } => editor.insert(text),
            Mode::Filter => {
                self.filter.extend(text.chars().filter(|c| !c.is_control()));
                self.keep_selection();
            }
            Mode::Board | Mode::Answer { .. } => {}
        }
    }

    /// What a key does.
    pub fn key(&mut self, key: KeyEvent) -> Option<Action> {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if control && key.code == KeyCode::Char('c') && matches!(self.mode, Mode::Board) {
            return Some(Action::Quit);
        }
        match &mut self.mode {
            Mode::Board => self.board_key(key),
            Mode::Filter => {
                match key.code {
                    KeyCode::Enter => self.mode = Mode::Board,
                    KeyCode::Esc => {
                        self.filter.clear();
                        self.mode = Mode::Board;
                    }
                    KeyCode::Backspace => {
                        self.filter.pop();
                    }
                    KeyCode::Char(c) if !control => self.filter.push(c),
                    _ => {}
                }
                self.keep_selection();
                None
            }
            Mode::Compose { target, editor } => match key.code {
                KeyCode::Char('d') if control => {
                    let target = target.clone();
                    let action = if editor.is_blank() {
                        self.notice = Some(format!("Nothing sent to {target}."));
                        None
                    } else {
                        Some(Action::Send(target, editor.text().into_bytes()))
                    };
                    self.mode = Mode::Board;
                    action
                }
                KeyCode::Esc => {
                    self.notice = Some(format!("Message to {target} dropped."));
                    self.mode = Mode::Board;
                    None
                }
                KeyCode::Char('c') if control => {
                    self.notice = Some(format!("Message to {target} dropped."));
                    self.mode = Mode::Board;
                    None
                }
                _ => {
                    editor.key(key);
                    None
                }
            },
            Mode::Answer { target } => {
                let target = target.clone();
                let key = match key.code {
                    KeyCode::Tab => {
                        self.mode = Mode::Board;
                        return None;
                    }
                    KeyCode::Char('c') if control => {
                        self.mode = Mode::Board;
                        return None;
                    }
                    KeyCode::Char('y') if !control => return Some(self.answer(target, Pick::Yes)),
                    KeyCode::Char('n') if !control => return Some(self.answer(target, Pick::No)),
                    KeyCode::Char(c @ '1'..='9') if !control => {
                        let number = c as usize - '0' as usize;
                        return Some(self.answer(target, Pick::Number(number)));
                    }
                    KeyCode::Char(c) if c.is_ascii_alphanumeric() && !control => c.to_string(),
                    KeyCode::Enter => "Enter".into(),
                    KeyCode::Esc => "Escape".into(),
                    KeyCode::Up => "Up".into(),
                    KeyCode::Down => "Down".into(),
                    KeyCode::Left => "Left".into(),
                    KeyCode::Right => "Right".into(),
                    _ => return None,
                };
                Some(Action::Keys(target, vec![key]))
            }
        }
    }

    fn board_key(&mut self, key: KeyEvent) -> Option<Action> {
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return Some(Action::Quit),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::PageUp => self.step(-10),
            KeyCode::PageDown => self.step(10),
            KeyCode::Home | KeyCode::Char('g') => self.step(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(isize::MAX / 2),
            KeyCode::Char(c @ '1'..='9') => {
                let n = c as usize - '0' as usize;
                if !self.select_index(n - 1) {
                    self.notice = Some(format!("There is no agent {n}."));
                }
            }
            KeyCode::Char('/') => self.mode = Mode::Filter,
            KeyCode::Char('r') => return Some(Action::Refresh),
            KeyCode::Enter => match self.selected() {
                Some(target) => return Some(Action::Jump(target.to_string())),
                None => self.notice = Some("No agent to jump to.".into()),
            },
            KeyCode::Char('s') => match self.selected() {
                Some(target) => {
                    self.mode = Mode::Compose {
                        target: target.to_string(),
                        editor: Editor::new(),
                    }
                }
                None => self.notice = Some("No agent to send to.".into()),
            },
            KeyCode::Char('c') => {
                let row = self.selected_row()?;
                match row.pending.last() {
                    Some(&id) => return Some(Action::Cancel(row.target(), id)),
                    None => {
                        self.notice = Some(format!("No message is pending for {}.", row.target()))
                    }
                }
            }
            KeyCode::Char(c @ ('y' | 'n' | 'a')) => {
                let row = self.selected_row()?;
                let target = row.target();
                if !waiting(row) {
                    self.notice = Some(format!("{target} is not waiting for an answer."));
                } else if c == 'a' {
                    self.mode = Mode::Answer { target };
                } else {
                    let pick = if c == 'y' { Pick::Yes } else { Pick::No };
                    return Some(self.answer(target, pick));
                }
            }
            _ => {}
        }
        None
    }
}

impl Board {
    /// The answer `pick` for `target`'s dialog, naming the dialog the board read for it.
    fn answer(&self, target: String, pick: Pick) -> Action {
        let decision = self
            .decision
            .as_ref()
            .filter(|(shown, _)| *shown == target)
            .map(|(_, fingerprint)| fingerprint.clone());
        Action::Answer {
            target,
            pick,
            decision,
        }
    }
}

/// Whether an agent waits for the user's answer.
pub(super) fn waiting(row: &Row) -> bool {
    row.pane.status == Status::WaitingUserAnswer
}

/// What `/` searches in a row, lower case.
fn haystack(row: &Row) -> String {
    format!(
        "{} {} {} {} {} {}",
        row.target(),
        row.name,
        row.pane.provider.as_deref().unwrap_or_default(),
        location(&row.pane),
        row.pane.status.as_str(),
        row.server.as_deref().unwrap_or_default()
    )
    .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::agents::tests::pane;

    fn row(id: u32, status: &str, name: &str, pending: &[i64]) -> Row {
        Row {
            pane: pane(id, "s", id, 0, status),
            name: name.into(),
            server: None,
            pending: pending.to_vec(),
        }
    }

    fn board() -> Board {
        let now = Instant::now();
        let mut board = Board::new(now);
        board.set_rows(
            Ok(vec![
                row(0, "idle", "zero", &[]),
                row(1, "processing", "one", &[4, 9]),
                row(2, "waiting_user_answer", "two", &[]),
                row(3, "completed", "three", &[]),
            ]),
            now,
        );
        board
    }

    fn press(board: &mut Board, code: KeyCode) -> Option<Action> {
        board.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn ctrl(board: &mut Board, c: char) -> Option<Action> {
        board.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    #[test]
    fn selection_moves_by_number_arrow_and_letter_and_follows_the_agent() {
        let mut board = board();
        // Board order: waiting, completed, processing, idle.
        let order: Vec<String> = board.visible().iter().map(|r| r.target()).collect();
        assert_eq!(order, ["%2", "%3", "%1", "%0"]);
        assert_eq!(board.selected(), Some("%2"));
        press(&mut board, KeyCode::Char('3'));
        assert_eq!(board.selected(), Some("%1"));
        press(&mut board, KeyCode::Down);
        press(&mut board, KeyCode::Down);
        assert_eq!(board.selected(), Some("%0"));
        press(&mut board, KeyCode::Char('k'));
        press(&mut board, KeyCode::Char('k'));
        assert_eq!(board.selected(), Some("%3"));
        press(&mut board, KeyCode::Char('9'));
        assert_eq!(board.notice.as_deref(), Some("There is no agent 9."));
        assert_eq!(board.selected(), Some("%3"));
        // A new reading reorders the rows; the selection stays on the agent.
        let now = Instant::now();
        board.set_rows(
            Ok(vec![
                row(3, "idle", "three", &[]),
                row(2, "idle", "two", &[]),
            ]),
            now,
        );
        assert_eq!(board.selected(), Some("%3"));
        assert_eq!(board.selected_index(), Some(1));
        // Its agent gone: the first one.
        board.set_rows(Ok(vec![row(2, "idle", "two", &[])]), now);
        assert_eq!(board.selected(), Some("%2"));
        board.set_rows(Err(anyhow::anyhow!("no daemon")), now);
        assert_eq!((board.selected(), board.error()), (None, Some("no daemon")));
        assert_eq!(press(&mut board, KeyCode::Enter), None);
        assert_eq!(board.notice.as_deref(), Some("No agent to jump to."));
    }

    #[test]
    fn enter_jumps_q_and_esc_quit() {
        let mut board = board();
        press(&mut board, KeyCode::Char('2'));
        assert_eq!(
            press(&mut board, KeyCode::Enter),
            Some(Action::Jump("%3".into()))
        );
        assert_eq!(press(&mut board, KeyCode::Char('q')), Some(Action::Quit));
        assert_eq!(press(&mut board, KeyCode::Esc), Some(Action::Quit));
        assert_eq!(ctrl(&mut board, 'c'), Some(Action::Quit));
        assert_eq!(press(&mut board, KeyCode::Char('r')), Some(Action::Refresh));
    }

    #[test]
    fn a_message_is_written_over_lines_and_sent_with_ctrl_d() {
        let mut board = board();
        press(&mut board, KeyCode::Char('3'));
        assert_eq!(press(&mut board, KeyCode::Char('s')), None);
        for c in "fix it".chars() {
            press(&mut board, KeyCode::Char(c));
        }
        // q, Esc's neighbours and digits are text while writing.
        press(&mut board, KeyCode::Enter);
        board.paste("q 1 #{pane_id}");
        assert_eq!(
            ctrl(&mut board, 'd'),
            Some(Action::Send(
                "%1".into(),
                b"fix it\nq 1 #{pane_id}".to_vec()
            ))
        );
        assert!(matches!(board.mode, Mode::Board));
        // Blank: nothing is sent; Esc drops the message.
        press(&mut board, KeyCode::Char('s'));
        press(&mut board, KeyCode::Enter);
        assert_eq!(ctrl(&mut board, 'd'), None);
        assert_eq!(board.notice.as_deref(), Some("Nothing sent to %1."));
        press(&mut board, KeyCode::Char('s'));
        press(&mut board, KeyCode::Char('x'));
        assert_eq!(press(&mut board, KeyCode::Esc), None);
        assert_eq!(board.notice.as_deref(), Some("Message to %1 dropped."));
        assert!(matches!(board.mode, Mode::Board));
    }

    #[test]
    fn a_waiting_dialog_is_answered_only_when_waiting() {
        let mut board = board();
        assert_eq!(board.selected(), Some("%2"));
        // y and n answer by the dialog's own labels, naming no dialog until one was read.
        assert_eq!(
            press(&mut board, KeyCode::Char('y')),
            Some(Action::Answer {
                target: "%2".into(),
                pick: Pick::Yes,
                decision: None
            })
        );
        board.decision = Some(("%2".into(), "00ff00ff00ff00ff".into()));
        assert_eq!(
            press(&mut board, KeyCode::Char('n')),
            Some(Action::Answer {
                target: "%2".into(),
                pick: Pick::No,
                decision: Some("00ff00ff00ff00ff".into())
            })
        );
        // A dialog read for another agent is not named.
        board.decision = Some(("%1".into(), "1111111111111111".into()));
        assert_eq!(
            press(&mut board, KeyCode::Char('y')),
            Some(Action::Answer {
                target: "%2".into(),
                pick: Pick::Yes,
                decision: None
            })
        );
        // `a`: digits answer by number, y and n by label; Enter, Esc and the arrows go to the
        // dialog as keys until Tab.
        press(&mut board, KeyCode::Char('a'));
        assert_eq!(
            press(&mut board, KeyCode::Char('3')),
            Some(Action::Answer {
                target: "%2".into(),
                pick: Pick::Number(3),
                decision: None
            })
        );
        assert_eq!(
            press(&mut board, KeyCode::Char('n')),
            Some(Action::Answer {
                target: "%2".into(),
                pick: Pick::No,
                decision: None
            })
        );
        for (code, key) in [
            (KeyCode::Char('0'), "0"),
            (KeyCode::Char('x'), "x"),
            (KeyCode::Esc, "Escape"),
            (KeyCode::Enter, "Enter"),
            (KeyCode::Down, "Down"),
        ] {
            assert_eq!(
                press(&mut board, code),
                Some(Action::Keys("%2".into(), vec![key.into()]))
            );
        }
        assert_eq!(press(&mut board, KeyCode::Tab), None);
        assert!(matches!(board.mode, Mode::Board));
        // Once the agent stops waiting, the dialog mode ends by itself.
        press(&mut board, KeyCode::Char('a'));
        board.set_rows(Ok(vec![row(2, "processing", "two", &[])]), Instant::now());
        assert!(matches!(board.mode, Mode::Board));
        assert_eq!(
            board.notice.as_deref(),
            Some("%2 is no longer waiting for an answer.")
        );
        // Not waiting: y says so, and nothing is pressed.
        assert_eq!(press(&mut board, KeyCode::Char('y')), None);
        assert_eq!(
            board.notice.as_deref(),
            Some("%2 is not waiting for an answer.")
        );
    }

    #[test]
    fn c_cancels_the_latest_pending_message() {
        let mut board = board();
        press(&mut board, KeyCode::Char('3'));
        assert_eq!(
            press(&mut board, KeyCode::Char('c')),
            Some(Action::Cancel("%1".into(), 9))
        );
        press(&mut board, KeyCode::Char('1'));
        assert_eq!(press(&mut board, KeyCode::Char('c')), None);
        assert_eq!(
            board.notice.as_deref(),
            Some("No message is pending for %2.")
        );
    }

    #[test]
    fn slash_filters_and_esc_clears() {
        let mut board = board();
        press(&mut board, KeyCode::Char('/'));
        for c in "THR".chars() {
            press(&mut board, KeyCode::Char(c));
        }
        let shown: Vec<String> = board.visible().iter().map(|r| r.target()).collect();
        assert_eq!(shown, ["%3"]);
        assert_eq!(board.selected(), Some("%3"));
        // q is text in the filter, Enter keeps the filter.
        press(&mut board, KeyCode::Char('q'));
        assert!(board.visible().is_empty());
        press(&mut board, KeyCode::Backspace);
        press(&mut board, KeyCode::Enter);
        assert_eq!((board.filter(), board.visible().len()), ("THR", 1));
        press(&mut board, KeyCode::Char('/'));
        press(&mut board, KeyCode::Esc);
        assert_eq!((board.filter(), board.visible().len()), ("", 4));
        // By status and provider too.
        press(&mut board, KeyCode::Char('/'));
        board.paste("process");
        let shown: Vec<String> = board.visible().iter().map(|r| r.target()).collect();
        assert_eq!(shown, ["%1"]);
    }
}
