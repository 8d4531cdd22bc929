//! Where in a pane's output tmux answered a question about its screen.
//!
//! tmux captures a pane when it runs the command, and writes the reply after every `%output`
//! it queued before, but not only those: output of the pane read after the command can be
//! written first. tmux 3.3a's `control_write_pending` writes a pane's queued blocks in one go,
//! while a reply line waits until the blocks ahead of it in the client's queue are written,
//! which may include another pane's older block. So the screen in a reply is the mirror's
//! screen at some point between sending the question and reading the reply: any byte, since
//! tmux writes the blocks of several reads in one `%output` line. [`Asked`] keeps the screen
//! at the sending and the output since, to find that point.

use crate::screen::{Dialect, PaneScreen, Snapshot};

/// Output kept after a question before the points cannot be replayed any more (a pane
/// flooding faster than tmux answers).
pub const ASKED_BYTES: usize = 1 << 20;

/// The last bytes searched first: tmux's answer is rarely further back than the few reads
/// another pane's output held it behind.
const RECENT_BYTES: usize = 64 << 10;

/// The mirrored screen when a question was sent, and the pane's output since.
#[derive(Debug, Clone)]
pub struct Asked {
    id: u64,
    base: PaneScreen,
    output: Vec<u8>,
    lost: bool,
}

/// What tmux showed, as comparisons need it: the visible rows (`capture-pane -e` lines) in
/// the model's own encoding ([`crate::screen::recapture`], so any tmux version compares),
/// the cursor, the alternate-screen flag, and the cursor row's text for a cheap first look.
#[derive(Debug, Clone)]
pub struct Looks {
    rows: Vec<Vec<u8>>,
    cursor: (u16, u16),
    alternate: bool,
    cursor_row: Option<String>,
}

impl Looks {
    /// tmux's `rows` of a `width` x `height` screen, its cursor and alternate flag, printed by
    /// a tmux of `dialect`.
    pub fn new(
        dialect: Dialect,
        rows: &[Vec<u8>],
        (width, height): (u16, u16),
        cursor: (u16, u16),
        alternate: bool,
    ) -> Looks {
        let rows = crate::screen::recapture(dialect, width, height, rows);
        let cursor_row = rows
            .get(usize::from(cursor.1))
            .and_then(|row| strip_codes(row))
            .map(|text| text.trim_end_matches(' ').to_string());
        Looks {
            rows,
            cursor,
            alternate,
            cursor_row,
        }
    }

    /// Whether `screen` looks like this.
    pub fn matches(&self, screen: &PaneScreen) -> bool {
        if screen.cursor() != self.cursor || screen.alternate_screen() != self.alternate {
            return false;
        }
        let rows = screen.capture_rows(true);
        if rows == self.rows {
            return true;
        }
        let (width, height) = screen.size();
        crate::screen::recapture(screen.dialect(), width, height, &rows) == self.rows
    }

    /// [`Looks::matches`], first comparing what is cheap: the cursor, then its row's text.
    fn quickly_matches(&self, screen: &PaneScreen) -> bool {
        screen.cursor() == self.cursor
            && self.cursor_row.as_ref().is_none_or(|text| {
                screen
                    .row(usize::from(self.cursor.1))
                    .is_some_and(|row| row.trim_end_matches(' ') == text)
            })
            && self.matches(screen)
    }
}

/// The text of a `capture-pane -e` row: its SGR codes and SO/SI removed. `None` if it holds
/// another escape sequence or is not UTF-8.
fn strip_codes(row: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(row.len());
    let mut at = 0;
    while at < row.len() {
        match row[at] {
            0x1b => {
                if row.get(at + 1) != Some(&b'[') {
                    return None;
                }
                let end = row[at + 2..]
                    .iter()
                    .position(|b| !(b.is_ascii_digit() || *b == b';' || *b == b':'))?;
                if row[at + 2 + end] != b'm' {
                    return None;
                }
                at += end + 3;
            }
            0x0e | 0x0f => at += 1,
            byte => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The visible rows of a seed's snapshot.
pub fn snapshot_rows(snapshot: &Snapshot) -> &[Vec<u8>] {
    let lines = snapshot.alternate.as_ref().unwrap_or(&snapshot.primary);
    &lines[lines.len().saturating_sub(usize::from(snapshot.height))..]
}

impl Asked {
    /// A question numbered `id` about `screen`, sent now.
    pub fn new(id: u64, screen: &PaneScreen) -> Asked {
        Asked {
            id,
            base: screen.without_history(),
            output: Vec::new(),
            lost: false,
        }
    }

    /// Its number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Output that arrived after it was sent.
    pub fn output(&mut self, data: &[u8]) {
        if self.lost {
            return;
        }
        if self.output.len() + data.len() > ASKED_BYTES {
            self.forget();
        } else {
            self.output.extend_from_slice(data);
        }
    }

    /// The points since the sending cannot be replayed (too much output, a resize).
    pub fn forget(&mut self) {
        self.lost = true;
        self.output = Vec::new();
    }

    /// Whether output came after the sending (then the reply may show any point of it).
    pub fn output_came(&self) -> bool {
        self.lost || !self.output.is_empty()
    }

    /// Whether the points can be replayed.
    pub fn kept(&self) -> bool {
        !self.lost
    }

    /// The latest point at which the screen looked as `looks` says: how many bytes of the
    /// output since the sending came before it. `None` if at no point (or the points were not
    /// kept). Byte by byte, comparing the rows only where the cursor agrees.
    pub fn point_of(&self, looks: &Looks) -> Option<usize> {
        if self.lost {
            return None;
        }
        // The last bytes first, fed at once up to them; the rest only if no point is there.
        let recent = self.output.len().saturating_sub(RECENT_BYTES);
        let search = |from: usize, to: usize| {
            let mut screen = self.base.clone();
            screen.feed(&self.output[..from]);
            let mut found = looks.quickly_matches(&screen).then_some(from);
            for at in from..to {
                screen.feed(&self.output[at..=at]);
                if looks.quickly_matches(&screen) {
                    found = Some(at + 1);
                }
            }
            found
        };
        search(recent, self.output.len()).or_else(|| search(0, recent))
    }

    /// The output after the first `point` bytes.
    pub fn after(&self, point: usize) -> &[u8] {
        self.output.get(point..).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How `screen` looks to tmux's capture.
    fn looks(screen: &PaneScreen) -> Looks {
        Looks::new(
            Dialect::default(),
            &screen.capture_rows(true),
            screen.size(),
            screen.cursor(),
            screen.alternate_screen(),
        )
    }

    #[test]
    fn the_point_a_reply_showed_is_found_among_the_output_since_the_question() {
        let mut screen = PaneScreen::with_scrollback(20, 3, 100);
        screen.feed(b"before\r\n");
        let mut asked = Asked::new(1, &screen);
        let mut seen = Vec::new();
        for chunk in [&b"one\r\n"[..], b"\x1b[31mtwo", b"\r\nthree\r\nfour"] {
            screen.feed(chunk);
            asked.output(chunk);
            seen.push(looks(&screen));
        }
        // tmux captured after the second chunk.
        let shown = &seen[1];
        assert!(!shown.matches(&screen));
        assert_eq!(asked.point_of(shown), Some(13));
        assert_eq!(asked.after(13), b"\r\nthree\r\nfour");
        // And inside a chunk: tmux writes several reads in one `%output` line.
        let mut within = PaneScreen::with_scrollback(20, 3, 100);
        within.feed(b"before\r\none\r\n\x1b[31mtw");
        assert_eq!(asked.point_of(&looks(&within)), Some(12));
        // A screen at no point of it.
        let other = vec![b"two".to_vec(), b"one".to_vec(), Vec::new()];
        let wrong = Looks::new(Dialect::default(), &other, (20, 3), screen.cursor(), false);
        assert_eq!(asked.point_of(&wrong), None);
    }

    #[test]
    fn a_point_far_back_is_found_after_the_recent_bytes() {
        let mut screen = PaneScreen::with_scrollback(20, 3, 100);
        let mut asked = Asked::new(1, &screen);
        let first = b"\x1b[32mfar back\x1b[m\r\n";
        screen.feed(first);
        asked.output(first);
        let shown = looks(&screen);
        let rest = b"0123456789\r\n".repeat(RECENT_BYTES / 8);
        asked.output(&rest);
        assert_eq!(asked.point_of(&shown), Some(first.len()));
    }

    #[test]
    fn rows_lose_their_codes_for_the_first_comparison() {
        assert_eq!(
            strip_codes(b"\x1b[1;31mred\x1b[39m \x0eqq\x0f ok").as_deref(),
            Some("red qq ok")
        );
        assert_eq!(strip_codes(b"\x1b]8;;x\x1b\\link"), None);
        assert_eq!(strip_codes(b"\x1b[2Jcleared"), None);
    }

    #[test]
    fn too_much_output_forgets_the_points() {
        let screen = PaneScreen::new(20, 3);
        let mut asked = Asked::new(1, &screen);
        asked.output(&vec![b'x'; ASKED_BYTES]);
        assert!(asked.kept());
        asked.output(b"y");
        assert!(!asked.kept());
        assert!(asked.output_came());
        assert_eq!(asked.point_of(&looks(&screen)), None);
    }
}
