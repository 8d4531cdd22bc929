//! What led a mirrored screen to where it is: the snapshot it started from and every output
//! and resize since, kept so that a divergence can be replayed and turned into a fixture.
//!
//! Sans-IO and bounded: past [`JOURNAL_BYTES`] of output the journal starts again from a
//! snapshot of the mirror's own screen (taken where nothing is half-read). No snapshot can be
//! taken while the screen is inside a sequence (an escape string a program never ends, say),
//! so past [`JOURNAL_MAX_BYTES`] the journal drops its steps and says it is truncated until
//! the screen is at rest again: it never holds more than that.

use serde::{Deserialize, Serialize};

use crate::screen::{Dialect, PaneScreen, Snapshot};

/// Output a journal keeps before it starts again from a snapshot of the screen: enough for
/// the seconds between two watchdog checks of a busy pane, small enough for many panes.
pub const JOURNAL_BYTES: usize = 1 << 20;

/// Output a journal keeps at most: past it, while the screen is mid-sequence and no checkpoint
/// can be taken, the steps are dropped and the journal is truncated. Twice [`JOURNAL_BYTES`],
/// so a long sequence a program does end (an image, a clipboard copy) is usually kept whole.
pub const JOURNAL_MAX_BYTES: usize = 2 * JOURNAL_BYTES;

/// Where a journal starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalStart {
    /// tmux's own screen, from a seed: replaying gives exactly the mirror's screen.
    Seed,
    /// A blank screen, the pane first seen before any seed.
    Blank,
    /// A snapshot of the mirror's own screen, taken when the journal grew too long: replaying
    /// gives the mirror's cells, but modes a reseed resets (the scroll region, say) may differ.
    Checkpoint,
}

/// One thing that happened to the screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Output bytes, as tmux sent them.
    Output(#[serde(with = "crate::raw::escaped")] Vec<u8>),
    /// A resize to `[width, height]`.
    Resize([u16; 2]),
}

/// The snapshot a journal starts from and what came after it.
#[derive(Debug, Clone)]
pub struct Journal {
    start: JournalStart,
    snapshot: Snapshot,
    steps: Vec<Step>,
    /// Output bytes kept in `steps`.
    bytes: usize,
    /// Steps were dropped since the start (see [`JOURNAL_MAX_BYTES`]): what is kept cannot be
    /// replayed, and nothing more is kept until a checkpoint can be taken.
    truncated: bool,
}

impl Journal {
    /// A journal from a blank screen of this size.
    pub fn blank(width: u16, height: u16) -> Journal {
        Journal::from(
            JournalStart::Blank,
            Snapshot {
                width,
                height,
                ..Snapshot::default()
            },
        )
    }

    /// A journal from a snapshot.
    pub fn from(start: JournalStart, snapshot: Snapshot) -> Journal {
        Journal {
            start,
            snapshot,
            steps: Vec::new(),
            bytes: 0,
            truncated: false,
        }
    }

    /// Records output the screen was just fed. Past [`JOURNAL_BYTES`] (or once truncated), and
    /// where the screen has nothing half-read, the journal starts again from the screen as it
    /// is now; past [`JOURNAL_MAX_BYTES`] with the screen mid-sequence, it is truncated.
    pub fn output(&mut self, data: &[u8], screen: &PaneScreen) {
        if !self.truncated {
            self.bytes += data.len();
            match self.steps.last_mut() {
                Some(Step::Output(last)) => last.extend_from_slice(data),
                _ => self.steps.push(Step::Output(data.to_vec())),
            }
        }
        if !self.truncated && self.bytes <= JOURNAL_BYTES {
            return;
        }
        if let Some(snapshot) = screen.snapshot() {
            *self = Journal::from(JournalStart::Checkpoint, snapshot);
        } else if self.bytes > JOURNAL_MAX_BYTES {
            self.truncate();
        }
    }

    /// Drops the steps: they are too long to keep, and the screen cannot be snapshot yet.
    fn truncate(&mut self) {
        self.steps = Vec::new();
        self.bytes = 0;
        self.truncated = true;
    }

    /// Records a resize (not kept once truncated: nothing before it could be replayed).
    pub fn resize(&mut self, width: u16, height: u16) {
        if !self.truncated {
            self.steps.push(Step::Resize([width, height]));
        }
    }

    /// Output bytes kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether steps were dropped since the start, so that it cannot be replayed.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Where it starts, the snapshot and the steps.
    pub fn parts(&self) -> (JournalStart, &Snapshot, &[Step]) {
        (self.start, &self.snapshot, &self.steps)
    }
}

/// Replays a journal's start and steps through a fresh screen keeping `scrollback` lines and
/// following `dialect`.
pub fn replay(start: &Snapshot, steps: &[Step], scrollback: usize, dialect: Dialect) -> PaneScreen {
    let mut screen =
        PaneScreen::with_scrollback(start.width, start.height, scrollback).with_dialect(dialect);
    screen.reseed(start);
    for step in steps {
        match step {
            Step::Output(data) => screen.feed(data),
            Step::Resize([width, height]) => screen.resize(*width, *height),
        }
    }
    screen
}

/// A [`Snapshot`] as a record keeps it: bytes as escaped text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRecord {
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// History and visible rows of the primary screen (`capture-pane -p -e -N` lines).
    #[serde(with = "crate::raw::escaped_lines")]
    pub primary: Vec<Vec<u8>>,
    /// The visible alternate screen, when it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternate: Option<Lines>,
    /// Cursor column and row.
    pub cursor: [u16; 2],
    /// The primary screen's cursor saved under the alternate one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_cursor: Option<[u16; 2]>,
    /// A sequence tmux's parser held half-read.
    #[serde(default, with = "crate::raw::escaped")]
    pub pending: Vec<u8>,
}

/// Lines of exact bytes (for an optional field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Lines(#[serde(with = "crate::raw::escaped_lines")] pub Vec<Vec<u8>>);

impl From<&Snapshot> for SnapshotRecord {
    fn from(snapshot: &Snapshot) -> SnapshotRecord {
        SnapshotRecord {
            width: snapshot.width,
            height: snapshot.height,
            primary: snapshot.primary.clone(),
            alternate: snapshot.alternate.clone().map(Lines),
            cursor: [snapshot.cursor.0, snapshot.cursor.1],
            saved_cursor: snapshot.saved_cursor.map(|(x, y)| [x, y]),
            pending: snapshot.pending.clone(),
        }
    }
}

impl From<&SnapshotRecord> for Snapshot {
    fn from(record: &SnapshotRecord) -> Snapshot {
        Snapshot {
            width: record.width,
            height: record.height,
            primary: record.primary.clone(),
            alternate: record.alternate.clone().map(|lines| lines.0),
            cursor: (record.cursor[0], record.cursor[1]),
            saved_cursor: record.saved_cursor.map(|[x, y]| (x, y)),
            pending: record.pending.clone(),
        }
    }
}

/// A screen as a record shows it: the visible rows as `capture-pane -p -e` prints them, the
/// cursor and the alternate-screen flag (what the watchdog compares).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenRecord {
    /// The rows.
    #[serde(with = "crate::raw::escaped_lines")]
    pub rows: Vec<Vec<u8>>,
    /// Cursor column and row.
    pub cursor: [u16; 2],
    /// Alternate screen on.
    pub alternate: bool,
}

impl ScreenRecord {
    /// Where this screen (called `ours`) first differs from `theirs` (called `them`): the row
    /// and both texts of it, or the cursors and alternate-screen flags when every row agrees.
    /// `None` when they are the same.
    pub fn difference(&self, theirs: &ScreenRecord, them: &str) -> Option<String> {
        let row = |rows: &[Vec<u8>], at: usize| {
            rows.get(at)
                .map_or(String::new(), |r| String::from_utf8_lossy(r).into_owned())
        };
        let rows = self.rows.len().max(theirs.rows.len());
        if let Some(at) = (0..rows).find(|&at| self.rows.get(at) != theirs.rows.get(at)) {
            return Some(format!(
                "row {at}: ours {:?}, {them} {:?}",
                row(&self.rows, at),
                row(&theirs.rows, at)
            ));
        }
        (self.cursor != theirs.cursor || self.alternate != theirs.alternate).then(|| {
            let [x, y] = self.cursor;
            let [tx, ty] = theirs.cursor;
            format!(
                "cursor ours ({x}, {y}), {them} ({tx}, {ty}); alternate screen ours {}, {them} {}",
                self.alternate, theirs.alternate
            )
        })
    }

    /// The same screen in this model's encoding (see [`crate::screen::recapture`]), at a
    /// size of `width` x `height`, printed by a tmux of `dialect`.
    pub fn recaptured(&self, dialect: Dialect, width: u16, height: u16) -> ScreenRecord {
        ScreenRecord {
            rows: crate::screen::recapture(dialect, width, height, &self.rows),
            ..self.clone()
        }
    }

    /// How a screen shows.
    pub fn of(screen: &PaneScreen) -> ScreenRecord {
        let (x, y) = screen.cursor();
        ScreenRecord {
            rows: screen.ansi_rows(),
            cursor: [x, y],
            alternate: screen.alternate_screen(),
        }
    }
}

/// A divergence as the daemon saves it: where the mirror's screen started, every output and
/// resize since, and both screens when the watchdog compared them. `panectl replay
/// --divergence` replays it; copied into `fixtures/divergences/` it becomes a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DivergenceRecord {
    /// The panectl version that saved it.
    pub panectl: String,
    /// The tmux version of the server (`tmux -V`'s words, as the connection learnt them).
    pub tmux: String,
    /// The rules the mirror followed (those of `tmux`); records older than the field were
    /// made by the 3.2 rules.
    #[serde(default)]
    pub dialect: Dialect,
    /// The pane.
    pub pane: String,
    /// Where the screens first differed, as the log said.
    pub difference: String,
    /// Why tmux's screen cannot follow from these bytes, when someone has found out (set by
    /// hand in a fixture: its replay must then give the mirror's screen, not tmux's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<String>,
    /// Lines of history the mirror kept.
    pub scrollback: usize,
    /// What the start is.
    pub start: JournalStart,
    /// The screen at the start.
    pub snapshot: SnapshotRecord,
    /// Output and resizes since, in order.
    pub steps: Vec<Step>,
    /// The daemon dropped steps (the screen stayed mid-sequence past
    /// [`JOURNAL_MAX_BYTES`] of output): the record cannot be replayed from its start, and
    /// says only what the two screens were. Absent in records older than the field.
    #[serde(default)]
    pub truncated: bool,
    /// What tmux showed.
    pub tmux_screen: ScreenRecord,
    /// What the mirror showed.
    pub mirror_screen: ScreenRecord,
}

impl DivergenceRecord {
    /// Replays the record through a fresh screen model (meaningless for a
    /// [`DivergenceRecord::truncated`] one: steps are missing).
    pub fn replay(&self) -> PaneScreen {
        replay(
            &Snapshot::from(&self.snapshot),
            &self.steps,
            self.scrollback,
            self.dialect,
        )
    }

    /// The last point of the replay, in bytes of output, at which it showed tmux's screen:
    /// a divergence whose tmux screen is an earlier point of the output was tmux answering
    /// from there (see [`super::asked`]), not the model going wrong. Byte by byte: slow, for
    /// replaying a record by hand.
    pub fn tmux_point(&self) -> Option<usize> {
        let start = Snapshot::from(&self.snapshot);
        let mut screen = PaneScreen::with_scrollback(start.width, start.height, self.scrollback)
            .with_dialect(self.dialect);
        screen.reseed(&start);
        // Compared at the size the replay ends with.
        let size = self
            .steps
            .iter()
            .rev()
            .find_map(|step| match step {
                Step::Resize([width, height]) => Some((*width, *height)),
                Step::Output(_) => None,
            })
            .unwrap_or((start.width, start.height));
        let [x, y] = self.tmux_screen.cursor;
        let tmux = super::asked::Looks::new(
            self.dialect,
            &self.tmux_screen.rows,
            size,
            (x, y),
            self.tmux_screen.alternate,
        );
        let shows_tmux = |screen: &PaneScreen| tmux.matches(screen);
        let mut fed = 0;
        let mut found = shows_tmux(&screen).then_some(0);
        for step in &self.steps {
            match step {
                Step::Output(data) => {
                    for byte in data {
                        screen.feed(std::slice::from_ref(byte));
                        fed += 1;
                        if shows_tmux(&screen) {
                            found = Some(fed);
                        }
                    }
                }
                Step::Resize([width, height]) => screen.resize(*width, *height),
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds a screen and its journal alike.
    fn feed(screen: &mut PaneScreen, journal: &mut Journal, data: &[u8]) {
        screen.feed(data);
        journal.output(data, screen);
    }

    #[test]
    fn replaying_a_journal_gives_the_screen_it_followed() {
        let mut screen = PaneScreen::with_scrollback(20, 4, 50);
        let mut journal = Journal::blank(20, 4);
        feed(
            &mut screen,
            &mut journal,
            b"\x1b[32mgreen\x1b[m and a long line that wraps",
        );
        screen.resize(12, 5);
        journal.resize(12, 5);
        feed(&mut screen, &mut journal, b"\r\n\xe4\xb8\xad\x1b[1mbold");
        let (start, snapshot, steps) = journal.parts();
        assert_eq!(start, JournalStart::Blank);
        assert_eq!(steps.len(), 3);
        let again = replay(snapshot, steps, 50, Dialect::default());
        assert_eq!(again.capture_rows(false), screen.capture_rows(false));
        assert_eq!(again.cursor(), screen.cursor());
    }

    #[test]
    fn a_long_journal_starts_again_from_the_screen_where_nothing_is_half_read() {
        let mut screen = PaneScreen::with_scrollback(30, 5, 50);
        let mut journal = Journal::blank(30, 5);
        let line = b"\x1b[33mline\x1b[m of output\r\n".repeat(1000);
        while journal.bytes() + line.len() <= JOURNAL_BYTES {
            feed(&mut screen, &mut journal, &line);
        }
        // Over the limit in the middle of a sequence: kept until it is read whole.
        feed(&mut screen, &mut journal, &[&line[..], b"\x1b[3"].concat());
        assert_eq!(journal.parts().0, JournalStart::Blank);
        feed(&mut screen, &mut journal, b"1mred");
        let (start, snapshot, steps) = journal.parts();
        assert_eq!(start, JournalStart::Checkpoint);
        assert!(steps.is_empty());
        let snapshot = snapshot.clone();
        feed(&mut screen, &mut journal, b" more");
        let (_, snapshot_after, steps) = journal.parts();
        assert_eq!(*snapshot_after, snapshot);
        let again = replay(&snapshot, steps, 50, Dialect::default());
        assert_eq!(again.capture_rows(false), screen.capture_rows(false));
        assert_eq!(again.cursor(), screen.cursor());
    }

    #[test]
    fn an_unterminated_escape_string_truncates_the_journal_at_its_cap() {
        let mut screen = PaneScreen::with_scrollback(30, 5, 50);
        let mut journal = Journal::blank(30, 5);
        feed(&mut screen, &mut journal, b"before\r\n\x1b]");
        // 20 MB of a string never ended, in the chunks tmux reads.
        let chunk = vec![b'A'; 64 << 10];
        for _ in 0..(20 << 20) / chunk.len() {
            feed(&mut screen, &mut journal, &chunk);
            assert!(journal.bytes() <= JOURNAL_MAX_BYTES, "{}", journal.bytes());
        }
        assert!(journal.truncated());
        let (start, _, steps) = journal.parts();
        assert_eq!(start, JournalStart::Blank);
        assert!(steps.is_empty());
        // Nor are resizes kept while nothing before them can be replayed.
        screen.resize(31, 5);
        journal.resize(31, 5);
        assert!(journal.parts().2.is_empty());
        // The string ends: the journal starts again from the screen, whole.
        feed(&mut screen, &mut journal, b"\x07after");
        assert!(!journal.truncated());
        let (start, snapshot, steps) = journal.parts();
        assert_eq!(start, JournalStart::Checkpoint);
        let snapshot = snapshot.clone();
        assert!(steps.is_empty());
        feed(&mut screen, &mut journal, b" more");
        let again = replay(&snapshot, journal.parts().2, 50, Dialect::default());
        assert_eq!(again.capture_rows(false), screen.capture_rows(false));
        assert_eq!(screen.text(), "before\nafter more");
    }

    #[test]
    fn a_long_string_that_ends_before_the_cap_is_kept_whole() {
        let mut screen = PaneScreen::with_scrollback(30, 5, 50);
        let mut journal = Journal::blank(30, 5);
        let image = [
            &b"\x1bPq"[..],
            &vec![b'~'; JOURNAL_BYTES * 3 / 2],
            b"\x1b\\",
        ]
        .concat();
        feed(&mut screen, &mut journal, &image[..JOURNAL_BYTES + 10]);
        assert!(!journal.truncated());
        assert_eq!(journal.parts().0, JournalStart::Blank);
        feed(&mut screen, &mut journal, &image[JOURNAL_BYTES + 10..]);
        assert!(!journal.truncated());
        assert_eq!(journal.parts().0, JournalStart::Checkpoint);
    }

    #[test]
    fn records_without_the_truncated_field_read_as_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/divergences");
        let text = std::fs::read_to_string(dir.join("early-answer-unicode-cat.json")).unwrap();
        assert!(!text.contains("\"truncated\""));
        let record: DivergenceRecord = serde_json::from_str(&text).unwrap();
        assert!(!record.truncated);
    }

    #[test]
    fn steps_are_written_as_readable_exact_text() {
        let steps = vec![
            Step::Output(b"a\x1b[m\xff".to_vec()),
            Step::Resize([80, 24]),
        ];
        let json = serde_json::to_string(&steps).unwrap();
        assert_eq!(json, r#"[{"output":"a\\x1b[m\\xff"},{"resize":[80,24]}]"#);
        let back: Vec<Step> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, steps);
    }
}
