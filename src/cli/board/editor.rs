//! The live board's message editor: a few lines of text typed or pasted, kept exactly (tabs,
//! control characters and all), shown with control characters escaped as everywhere else in
//! the CLI. Enter starts a new line; the board sends with Ctrl-D and drops with Esc.

use std::borrow::Cow;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr;

/// Lines being written, and where the cursor is (a line, and a character in it).
#[derive(Debug, Default, Clone)]
pub(super) struct Editor {
    lines: Vec<Vec<char>>,
    row: usize,
    col: usize,
}

impl Editor {
    /// An empty editor.
    pub fn new() -> Editor {
        Editor {
            lines: vec![Vec::new()],
            row: 0,
            col: 0,
        }
    }

    /// The text: the lines joined by `\n`.
    pub fn text(&self) -> String {
        let lines: Vec<String> = self.lines.iter().map(|l| l.iter().collect()).collect();
        lines.join("\n")
    }

    /// Whether there is nothing but white space.
    pub fn is_blank(&self) -> bool {
        self.lines.iter().flatten().all(|c| c.is_whitespace())
    }

    /// The lines as shown (control characters escaped, a tab as one space).
    pub fn shown_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .map(|line| line.iter().map(|&c| shown(c)).collect())
            .collect()
    }

    /// The cursor as (line, display column) in [`Editor::shown_lines`].
    pub fn cursor(&self) -> (usize, usize) {
        let before: String = self.lines[self.row][..self.col]
            .iter()
            .map(|&c| shown(c))
            .collect();
        (self.row, before.width())
    }

    /// Inserts text where the cursor is (a paste: `\r\n` and `\r` end lines as `\n` does).
    pub fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        for c in text.chars() {
            if c == '\n' {
                self.newline();
            } else {
                self.lines[self.row].insert(self.col, c);
                self.col += 1;
            }
        }
    }

    fn newline(&mut self) {
        let rest = self.lines[self.row].split_off(self.col);
        self.row += 1;
        self.lines.insert(self.row, rest);
        self.col = 0;
    }

    /// Applies an editing key; `false` when the key is not one of the editor's.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('a') if control => self.col = 0,
            KeyCode::Char('e') if control => self.col = self.lines[self.row].len(),
            KeyCode::Char('u') if control => {
                self.lines[self.row].drain(..self.col);
                self.col = 0;
            }
            KeyCode::Char(_) if control => return false,
            KeyCode::Char(c) => self.insert(&c.to_string()),
            KeyCode::Tab => self.insert("\t"),
            KeyCode::Enter => self.newline(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => self.left(),
            KeyCode::Right => self.right(),
            KeyCode::Up => self.vertical(-1),
            KeyCode::Down => self.vertical(1),
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.lines[self.row].len(),
            _ => return false,
        }
        true
    }

    fn backspace(&mut self) {
        if self.col > 0 {
            self.col -= 1;
            self.lines[self.row].remove(self.col);
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.lines[self.row].len();
            self.lines[self.row].extend(line);
        }
    }

    fn delete(&mut self) {
        if self.col < self.lines[self.row].len() {
            self.lines[self.row].remove(self.col);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].extend(next);
        }
    }

    fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.lines[self.row].len();
        }
    }

    fn right(&mut self) {
        if self.col < self.lines[self.row].len() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    fn vertical(&mut self, by: isize) {
        let Some(row) = self.row.checked_add_signed(by) else {
            return;
        };
        if row < self.lines.len() {
            self.row = row;
            self.col = self.col.min(self.lines[row].len());
        }
    }
}

/// A character as the editor shows it.
fn shown(c: char) -> Cow<'static, str> {
    match c {
        '\t' => Cow::Borrowed(" "),
        c if c.is_control() => Cow::Owned(format!("\\x{:02x}", u32::from(c))),
        c => Cow::Owned(c.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(editor: &mut Editor, code: KeyCode) {
        assert!(
            editor.key(KeyEvent::new(code, KeyModifiers::NONE)),
            "{code:?}"
        );
    }

    fn typed(text: &str) -> Editor {
        let mut editor = Editor::new();
        for c in text.chars() {
            match c {
                '\n' => press(&mut editor, KeyCode::Enter),
                c => press(&mut editor, KeyCode::Char(c)),
            }
        }
        editor
    }

    #[test]
    fn lines_are_typed_joined_and_edited() {
        let mut editor = typed("first\nsecnd");
        assert_eq!(editor.text(), "first\nsecnd");
        for _ in 0..2 {
            press(&mut editor, KeyCode::Left);
        }
        press(&mut editor, KeyCode::Char('o'));
        assert_eq!(editor.text(), "first\nsecond");
        press(&mut editor, KeyCode::Home);
        press(&mut editor, KeyCode::Backspace);
        assert_eq!(editor.text(), "firstsecond");
        assert_eq!(editor.cursor(), (0, 5));
        press(&mut editor, KeyCode::Enter);
        press(&mut editor, KeyCode::Up);
        press(&mut editor, KeyCode::End);
        press(&mut editor, KeyCode::Delete);
        assert_eq!(editor.text(), "firstsecond");
        assert!(!editor.is_blank());
        assert!(typed(" \n\t").is_blank());
    }

    #[test]
    fn pastes_keep_their_bytes_and_show_them_escaped() {
        let mut editor = Editor::new();
        editor.insert("a\r\nb\rc\x1b[31m漢\t#{pane_id};");
        assert_eq!(editor.text(), "a\nb\nc\x1b[31m漢\t#{pane_id};");
        let shown = editor.shown_lines();
        assert_eq!(shown, ["a", "b", "c\\x1b[31m漢 #{pane_id};"]);
        // The cursor counts display columns: \x1b takes 4, 漢 2, the tab 1.
        assert_eq!(editor.cursor(), (2, "c\\x1b[31m漢 #{pane_id};".width()));
    }

    #[test]
    fn control_keys_other_than_its_own_are_left_to_the_board() {
        let mut editor = typed("abc");
        assert!(!editor.key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)));
        assert!(!editor.key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
        assert!(editor.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)));
        assert_eq!(editor.text(), "");
    }
}
