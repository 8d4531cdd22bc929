//! One pane as panectl mirrors it: metadata, screen, recent output and sync state.
//!
//! Sans-IO: the connection task feeds it output and snapshots in stream order and asks it what
//! to do; nothing here sends a command.

use serde::{Deserialize, Serialize};

use super::asked::{Asked, Looks, snapshot_rows};
use super::journal::{DivergenceRecord, Journal, JournalStart, ScreenRecord};
use super::ring::{GapReason, OutputRing, RingRead};
use crate::ids::{PaneId, WindowId};
use crate::query::{PaneRow, PaneState, ShownScreen};
use crate::raw::RawBytes;
use crate::screen::{PaneScreen, Snapshot};

/// Lines of history a mirror keeps: what a taller pane takes back from tmux's history after a
/// resize must be there (tmux keeps `history-limit`, 2000 by default; a pane grows by far less
/// at once), and no more, for memory.
pub const MIRROR_HISTORY: usize = 500;

/// How far the mirrored screen can be trusted. `unseeded`: not seeded yet; `live`: equal to
/// tmux's; `stale`: a resync is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// Not seeded yet: the screen holds only what was printed since attach.
    Unseeded,
    /// Seeded and following every byte: the screen equals tmux's.
    Live,
    /// tmux paused the pane (or panectl saw a reason to doubt the screen); a resync is due.
    Stale,
}

/// Counters of one pane, summed into `panectl health`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PaneCounters {
    /// Output bytes received.
    pub bytes: u64,
    /// `%output` lines received.
    pub chunks: u64,
    /// Times the screen was rebuilt from a snapshot.
    pub resyncs: u64,
    /// Times tmux paused the pane.
    pub pauses: u64,
    /// Times the watchdog found the screen different from tmux's.
    pub divergences: u64,
    /// Checks whose reply showed the screen at an earlier point of the output than the mirror
    /// had reached (tmux may write output it read after a command before the command's
    /// reply): the mirror agreed with that point, so no divergence.
    #[serde(default)]
    pub early_answers: u64,
}

/// Sums counters: a connection's over its panes, the daemon's over its connections. A field
/// added later must be placed here before this compiles.
impl std::ops::AddAssign for PaneCounters {
    fn add_assign(&mut self, other: PaneCounters) {
        let PaneCounters {
            bytes,
            chunks,
            resyncs,
            pauses,
            divergences,
            early_answers,
        } = other;
        self.bytes += bytes;
        self.chunks += chunks;
        self.resyncs += resyncs;
        self.pauses += pauses;
        self.divergences += divergences;
        self.early_answers += early_answers;
    }
}

/// A pane being mirrored. See the module documentation.
#[derive(Debug)]
pub struct PaneMirror {
    /// Its metadata as last reported by tmux.
    pub row: PaneRow,
    screen: PaneScreen,
    ring: OutputRing,
    state: SyncState,
    /// Output that arrived while the replies of a seed line were coming in, applied after the
    /// snapshot (tmux does not interleave output there, but nothing is dropped if it does).
    held: Option<Vec<u8>>,
    /// Set when output arrived since the last watchdog check.
    changed_since_check: bool,
    /// Where a watchdog check found the screen different from tmux's, until the resync that
    /// followed confirms it (see [`PaneMirror::confirm_divergence`]).
    suspected: Option<Box<DivergenceRecord>>,
    /// What led the screen to where it is, for a divergence to be replayed.
    journal: Journal,
    /// Layout changes of its window seen so far (see [`PaneMirror::layouts_seen`]).
    layouts: u64,
    /// Checks sent and not answered, oldest first (see [`super::asked`]).
    checks: std::collections::VecDeque<Asked>,
    /// The seed line in flight, if any.
    seed_asked: Option<Asked>,
    /// Numbers the questions.
    questions: u64,
    /// The last seed's reply came after output that tmux may have read after capturing,
    /// and the mirror could not find where: what the mirror shows may miss some of it.
    unsure_seed: bool,
    /// The counters.
    pub counters: PaneCounters,
}

impl PaneMirror {
    /// Follows the rules of tmux `dialect` (the server's, once the core knows it).
    pub fn set_dialect(&mut self, dialect: crate::screen::Dialect) {
        self.screen.set_dialect(dialect);
    }

    /// Starts mirroring a pane described by `list-panes`.
    pub fn new(row: PaneRow, ring_capacity: usize) -> PaneMirror {
        PaneMirror {
            journal: Journal::blank(row.width, row.height),
            screen: PaneScreen::with_scrollback(row.width, row.height, MIRROR_HISTORY),
            row,
            ring: OutputRing::new(ring_capacity),
            state: SyncState::Unseeded,
            held: None,
            changed_since_check: true,
            suspected: None,
            layouts: 0,
            checks: std::collections::VecDeque::new(),
            seed_asked: None,
            questions: 0,
            unsure_seed: false,
            counters: PaneCounters::default(),
        }
    }

    /// The pane id.
    pub fn id(&self) -> PaneId {
        self.row.id
    }

    /// The window it is in.
    pub fn window(&self) -> WindowId {
        self.row.window
    }

    /// The sync state.
    pub fn state(&self) -> SyncState {
        self.state
    }

    /// The screen.
    pub fn screen(&self) -> &PaneScreen {
        &self.screen
    }

    /// The screen, for a caller done with the mirror (replay's report).
    pub fn into_screen(self) -> PaneScreen {
        self.screen
    }

    /// Applies output; returns the sequence number of its first byte.
    pub fn output(&mut self, data: &[u8]) -> u64 {
        self.counters.bytes += data.len() as u64;
        self.counters.chunks += 1;
        self.changed_since_check = true;
        match &mut self.held {
            Some(held) => held.extend_from_slice(data),
            None => {
                self.screen.feed(data);
                self.journal.output(data, &self.screen);
            }
        }
        for asked in self.checks.iter_mut().chain(self.seed_asked.as_mut()) {
            asked.output(data);
        }
        self.ring.push(data)
    }

    /// tmux paused the pane: its output until the resync is lost. A difference a check found
    /// just before is no divergence: tmux pauses a pane by discarding output it had queued
    /// ahead of the check's reply, so the reply showed bytes that never came.
    pub fn paused(&mut self) {
        self.suspected = None;
        self.counters.pauses += 1;
        self.state = SyncState::Stale;
        self.ring.mark_gap(GapReason::Paused);
    }

    /// A layout change of the pane's window arrived. A difference a check found just before is
    /// no divergence: tmux resizes a pane at once but says so in a notification it sends
    /// later, with the layout of that moment, so a check may have seen a reflow (through a
    /// size shown to nobody) that the mirror could not do yet. The resync that follows the
    /// check still repairs the screen; the resize check this change brings looks again.
    pub fn layout_changed(&mut self) {
        self.suspected = None;
        self.layouts += 1;
    }

    /// How many layout changes of its window the mirror has seen: a check remembers it, and
    /// a change between the check and its reply means tmux may have reflowed the screen in
    /// ways the mirror could not (output parsed at the new size before the notification).
    pub fn layouts_seen(&self) -> u64 {
        self.layouts
    }

    /// Marks the screen as needing a resync (after a resize, say).
    pub fn mark_stale(&mut self) {
        if self.state == SyncState::Live {
            self.state = SyncState::Stale;
        }
    }

    /// Checks kept unanswered at most (a reply that finds its check gone cannot be placed,
    /// and is judged [`Verdict::Unsure`]). The watchdog asks one at a time
    /// ([`PaneMirror::checking`]); only resize checks come in numbers.
    const CHECKS_KEPT: usize = 4;

    /// A check is being sent: the screen now and the output until its reply are kept, for
    /// the reply to be placed ([`PaneMirror::judge`]). Returns its number; its reply (or its
    /// failure) hands the record back through [`PaneMirror::check_answered`].
    pub fn check_sent(&mut self) -> u64 {
        self.questions += 1;
        self.checks
            .push_back(Asked::new(self.questions, &self.screen));
        if self.checks.len() > Self::CHECKS_KEPT {
            self.checks.pop_front();
        }
        self.questions
    }

    /// Whether a check is unanswered: the watchdog asks no more until it is answered (a
    /// reply can come late, written behind other panes' output, and asking again meanwhile
    /// learns nothing; past [`PaneMirror::CHECKS_KEPT`] a reply could not be placed).
    pub fn checking(&self) -> bool {
        !self.checks.is_empty()
    }

    /// The check numbered `id` was answered, failed or timed out: it and older ones are done.
    /// Returns what was kept of it, for [`PaneMirror::judge`] or [`PaneMirror::showed`].
    pub fn check_answered(&mut self, id: u64) -> Option<Asked> {
        while let Some(first) = self.checks.front() {
            if first.id() > id {
                return None;
            }
            let first = self.checks.pop_front()?;
            if first.id() == id {
                return Some(first);
            }
        }
        None
    }

    /// A seed line is being sent: the screen now and the output until its reply are kept,
    /// to find where in that output tmux captured ([`PaneMirror::seeded`]).
    pub fn seed_sent(&mut self) {
        self.questions += 1;
        self.seed_asked = Some(Asked::new(self.questions, &self.screen));
    }

    /// The first reply of this pane's seed line arrived; output is held until the last.
    pub fn seed_started(&mut self) {
        if self.held.is_none() {
            self.held = Some(Vec::new());
        }
    }

    /// The seed line completed: rebuild the screen, then apply what arrived meanwhile.
    pub fn seeded(&mut self, snapshot: &Snapshot, reason: GapReason) {
        if self.state == SyncState::Unseeded || reason != GapReason::Paused {
            self.ring.mark_gap(reason);
        }
        // Where in the output since the seed line was sent tmux captured: what came after
        // is applied again. When the mirror was wrong, or too much came, no point is found
        // and what came after is missing until the next check repairs it.
        let after: Vec<u8> = match self.seed_asked.take() {
            Some(asked) if asked.output_came() => {
                let looks = Looks::new(
                    self.screen.dialect(),
                    snapshot_rows(snapshot),
                    (snapshot.width, snapshot.height),
                    snapshot.cursor,
                    snapshot.alternate.is_some(),
                );
                match asked.point_of(&looks) {
                    Some(point) => {
                        self.unsure_seed = false;
                        asked.after(point).to_vec()
                    }
                    None => {
                        self.unsure_seed = true;
                        Vec::new()
                    }
                }
            }
            _ => {
                self.unsure_seed = false;
                Vec::new()
            }
        };
        self.screen.reseed(snapshot);
        self.journal = Journal::from(JournalStart::Seed, snapshot.clone());
        self.row.width = snapshot.width;
        self.row.height = snapshot.height;
        if !after.is_empty() {
            self.screen.feed(&after);
            self.journal.output(&after, &self.screen);
        }
        if let Some(held) = self.held.take() {
            self.screen.feed(&held);
            self.journal.output(&held, &self.screen);
        }
        self.state = SyncState::Live;
        self.counters.resyncs += 1;
        self.changed_since_check = true;
    }

    /// The seed line failed (the pane went away, say); output flows to the screen again.
    pub fn seed_failed(&mut self) {
        self.suspected = None;
        self.seed_asked = None;
        if let Some(held) = self.held.take() {
            self.screen.feed(&held);
            self.journal.output(&held, &self.screen);
        }
    }

    /// New size from a layout change: the screen reflows as tmux's does. Returns `true` if the
    /// size changed; the caller then checks the screen against tmux's (see the session's
    /// `resize_checked`).
    pub fn resize(&mut self, width: u16, height: u16) -> bool {
        if (self.row.width, self.row.height) == (width, height) {
            return false;
        }
        self.row.width = width;
        self.row.height = height;
        self.screen.resize(width, height);
        self.journal.resize(width, height);
        // A question sent before cannot be placed in output parsed at two sizes.
        for asked in self.checks.iter_mut().chain(self.seed_asked.as_mut()) {
            asked.forget();
        }
        self.changed_since_check = true;
        true
    }

    /// Takes what tmux now says of the pane's program and options; returns which visible
    /// fields changed.
    pub fn update(&mut self, update: PaneState) -> MetaChange {
        let change = MetaChange {
            title: self.row.state.title != update.title,
            command: self.row.state.command != update.command,
            dead: self.row.state.dead != update.dead,
            provider: self.row.state.assigned_provider != update.assigned_provider,
            name: self.row.state.name != update.name,
            respawned: self.row.state.pid != update.pid && self.row.state.pid != 0,
        };
        self.row.state = update;
        change
    }

    /// Whether output arrived since the last check (and clears the flag).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed_since_check)
    }

    /// Judges the reply of a check (`asked`, from [`PaneMirror::check_answered`]): whether
    /// the mirror showed tmux's screen at some point between sending the check and reading
    /// its reply ([`super::asked`]). When it did not, the screen is marked stale: the caller
    /// resyncs, and for [`Verdict::Differs`] the resync confirms the divergence unless tmux
    /// paused the pane meanwhile.
    pub fn judge(&mut self, shown: &ShownScreen, asked: Option<&Asked>) -> Verdict {
        if self.state != SyncState::Live || self.held.is_some() {
            return Verdict::Same;
        }
        match self.place(shown, asked) {
            Placed::Now => return Verdict::Same,
            Placed::Earlier => {
                self.counters.early_answers += 1;
                return Verdict::Same;
            }
            Placed::Nowhere => {}
        }
        self.state = SyncState::Stale;
        // The last seed may have missed output tmux read after capturing: a difference then
        // is that, not the model's. Nor can a reply be placed whose points since its sending
        // were not kept, or whose check is gone: tmux may have answered from any of them.
        if self.unsure_seed || !asked.is_some_and(Asked::kept) {
            return Verdict::Unsure;
        }
        self.suspect(shown);
        Verdict::Differs
    }

    /// Whether the screen was tmux's at some point since a check (`asked`) was sent (the
    /// check after a resize: see [`PaneMirror::judge`]).
    pub fn showed(&self, shown: &ShownScreen, asked: Option<&Asked>) -> bool {
        self.place(shown, asked) != Placed::Nowhere
    }

    /// Where the mirror showed what a check's reply shows: now, at a point since the check
    /// was sent, or nowhere.
    fn place(&self, shown: &ShownScreen, asked: Option<&Asked>) -> Placed {
        if self.screen.cursor() == shown.cursor
            && self.screen.alternate_screen() == shown.alternate
            && self.screen.ansi_rows() == shown.styled
        {
            return Placed::Now;
        }
        let looks = self.looks(shown);
        if looks.matches(&self.screen) {
            Placed::Now
        } else if asked.is_some_and(|asked| asked.point_of(&looks).is_some()) {
            Placed::Earlier
        } else {
            Placed::Nowhere
        }
    }

    /// What tmux shows, for comparisons at the mirror's size.
    fn looks(&self, shown: &ShownScreen) -> Looks {
        Looks::new(
            self.screen.dialect(),
            &shown.styled,
            self.screen.size(),
            shown.cursor,
            shown.alternate,
        )
    }

    /// Records a difference from what tmux shows, for the resync that follows to confirm
    /// ([`PaneMirror::confirm_divergence`]). The pipe watchdog calls it when it judges the
    /// mirror wrong.
    pub fn suspect(&mut self, shown: &ShownScreen) {
        let (start, snapshot, steps) = self.journal.parts();
        self.suspected = Some(Box::new(DivergenceRecord {
            panectl: env!("CARGO_PKG_VERSION").to_string(),
            tmux: String::new(),
            dialect: self.screen.dialect(),
            pane: self.row.id.to_string(),
            difference: self.difference(shown),
            explained: None,
            scrollback: MIRROR_HISTORY,
            start,
            snapshot: snapshot.into(),
            steps: steps.to_vec(),
            truncated: self.journal.truncated(),
            tmux_screen: shown_record(shown),
            mirror_screen: ScreenRecord::of(&self.screen),
        }));
    }

    /// The resync after a difference is in: counts the divergence and gives where the screens
    /// differed with what led to it, or `None` if a pause or a layout change explained it (see
    /// [`PaneMirror::paused`]).
    pub fn confirm_divergence(&mut self) -> Option<Box<DivergenceRecord>> {
        let divergence = self.suspected.take()?;
        self.counters.divergences += 1;
        Some(divergence)
    }

    /// Whether the mirrored screen, cursor and alternate-screen flag are tmux's (no side
    /// effect: the pipe watchdog decides itself what a difference means).
    pub fn shows(&self, shown: &ShownScreen) -> bool {
        self.place(shown, None) == Placed::Now
    }

    /// Where the mirrored screen first differs from tmux's, for the log: the row and both
    /// texts of it, or the cursors and alternate-screen flags when every row agrees.
    pub fn difference(&self, shown: &ShownScreen) -> String {
        let (width, height) = self.screen.size();
        let dialect = self.screen.dialect();
        ScreenRecord::of(&self.screen)
            .recaptured(dialect, width, height)
            .difference(
                &shown_record(shown).recaptured(dialect, width, height),
                "tmux",
            )
            .unwrap_or_else(|| "none".to_string())
    }

    /// Reads recent output.
    pub fn read_output(&self, from: Option<u64>, limit: usize) -> RingRead {
        self.ring.read(from, limit)
    }

    /// Whether tmux's screen in a check has another size than the mirror's (a layout change
    /// tmux made and has not told yet): the check compares nothing then.
    pub fn other_size(&self, shown: &ShownScreen) -> bool {
        shown
            .size
            .is_some_and(|size| size != (self.row.width, self.row.height))
    }

    /// Sequence number the next output byte will get.
    pub fn output_end(&self) -> u64 {
        self.ring.end()
    }

    /// The title, as text.
    pub fn title(&self) -> RawBytes {
        self.row.state.title.clone()
    }
}

/// What a check's reply says of the mirror ([`PaneMirror::judge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The mirror showed tmux's screen (now, or where tmux answered from).
    Same,
    /// The mirror never showed it: a divergence, if the resync confirms it.
    Differs,
    /// It differs, but the mirror may be missing output a seed raced, or the points since
    /// the check were not kept: resynced, not counted.
    Unsure,
}

/// Where the mirror showed what a check's reply shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placed {
    /// Now.
    Now,
    /// At a point of the output since the check was sent.
    Earlier,
    /// At no point.
    Nowhere,
}

/// What tmux shows, as a record keeps it.
fn shown_record(shown: &ShownScreen) -> ScreenRecord {
    ScreenRecord {
        rows: shown.styled.clone(),
        cursor: [shown.cursor.0, shown.cursor.1],
        alternate: shown.alternate,
    }
}

/// Which visible metadata fields a subscription update changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaChange {
    /// The title changed.
    pub title: bool,
    /// The current command changed.
    pub command: bool,
    /// The dead flag changed.
    pub dead: bool,
    /// The assigned provider changed.
    pub provider: bool,
    /// The agent's name changed.
    pub name: bool,
    /// The pane's process was replaced (`respawn-pane`): tmux reset its screen, and tmux before
    /// 3.8 says nothing about it in control mode.
    pub respawned: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check sent now and answered with `shown`: whether it differs.
    fn differs(pane: &mut PaneMirror, shown: &ShownScreen) -> bool {
        let id = pane.check_sent();
        let asked = pane.check_answered(id);
        pane.judge(shown, asked.as_ref()) == Verdict::Differs
    }

    fn row() -> PaneRow {
        PaneRow {
            id: PaneId(1),
            window: WindowId(0),
            index: 0,
            width: 20,
            height: 3,
            active: true,
            state: PaneState {
                dead: false,
                in_mode: false,
                pid: 1,
                command: "sh".into(),
                title: "t".into(),
                assigned_provider: None,
                name: None,
            },
        }
    }

    fn snapshot(lines: &[&str], cursor: (u16, u16)) -> Snapshot {
        Snapshot {
            width: 20,
            height: 3,
            primary: lines.iter().map(|l| l.as_bytes().to_vec()).collect(),
            cursor,
            ..Snapshot::default()
        }
    }

    #[test]
    fn output_during_a_seed_is_applied_after_the_snapshot() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.output(b"old text");
        pane.seed_started();
        pane.output(b" more");
        assert_eq!(pane.screen().text(), "old text");
        pane.seeded(&snapshot(&["$ ", "", ""], (2, 0)), GapReason::Seeded);
        assert_eq!(pane.screen().text(), "$  more");
        assert_eq!(pane.state(), SyncState::Live);
        // Every byte is in the ring, with the seed marked as a gap.
        let read = pane.read_output(None, 100);
        assert_eq!(read.data, b"old text more");
        assert_eq!(read.gaps.len(), 1);
    }

    #[test]
    fn watchdog_compares_text_cursor_and_alternate_screen() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["hello", "", ""], (5, 0)), GapReason::Seeded);
        let shown = ShownScreen::new(
            vec![b"hello".to_vec(), b"".to_vec(), b"".to_vec()],
            (5, 0),
            false,
            false,
        );
        assert!(!differs(&mut pane, &shown));
        let moved = ShownScreen {
            cursor: (0, 1),
            ..shown.clone()
        };
        assert!(differs(&mut pane, &moved));
        assert_eq!(pane.state(), SyncState::Stale);
        // Counted once the resync confirms it.
        assert_eq!(pane.counters.divergences, 0);
        let record = pane.confirm_divergence().expect("a divergence");
        let difference = &record.difference;
        assert!(
            difference.contains("cursor ours (5, 0), tmux (0, 1)"),
            "{difference}"
        );
        // The record replays to the mirror's screen from tmux's seed.
        assert_eq!(record.start, JournalStart::Seed);
        assert_eq!(ScreenRecord::of(&record.replay()), record.mirror_screen);
        assert_eq!(record.tmux_screen.cursor, [0, 1]);
        assert_eq!(pane.counters.divergences, 1);
        assert_eq!(pane.confirm_divergence(), None);
    }

    #[test]
    fn a_difference_the_pipe_watchdog_suspects_is_counted_by_the_resync() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["hello", "", ""], (5, 0)), GapReason::Seeded);
        let other = ShownScreen::new(
            vec![b"EEEEE".to_vec(), b"".to_vec(), b"".to_vec()],
            (5, 0),
            false,
            false,
        );
        pane.suspect(&other);
        assert_eq!(pane.counters.divergences, 0);
        let difference = pane.confirm_divergence().expect("a divergence").difference;
        assert!(difference.contains("EEEEE"), "{difference}");
        assert_eq!(pane.counters.divergences, 1);
    }

    #[test]
    fn a_divergence_inside_an_unterminated_escape_saves_a_small_truncated_record() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["hello", "", ""], (5, 0)), GapReason::Seeded);
        pane.output(b"\x1b]");
        let chunk = vec![b'A'; 64 << 10];
        for _ in 0..(20 << 20) / chunk.len() {
            pane.output(&chunk);
            assert!(pane.journal.bytes() <= super::super::journal::JOURNAL_MAX_BYTES);
        }
        let other = ShownScreen::new(
            vec![b"EEEEE".to_vec(), b"".to_vec(), b"".to_vec()],
            (5, 0),
            false,
            false,
        );
        pane.suspect(&other);
        let record = pane.confirm_divergence().expect("a divergence");
        assert!(record.truncated);
        assert!(record.steps.is_empty());
        let json = serde_json::to_vec_pretty(&record).unwrap();
        assert!(json.len() < 64 << 10, "{} bytes", json.len());
        assert!(String::from_utf8_lossy(&json).contains("\"truncated\": true"));
    }

    #[test]
    fn a_reply_whose_check_is_no_longer_kept_is_unsure_not_a_divergence() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["", "", ""], (0, 0)), GapReason::Seeded);
        // Checks sent faster than tmux answers them: past those kept, the oldest's points
        // are gone.
        let first = pane.check_sent();
        pane.output(b"a");
        let shown = ShownScreen::new(
            vec![b"a".to_vec(), b"".to_vec(), b"".to_vec()],
            (1, 0),
            false,
            false,
        );
        for _ in 0..PaneMirror::CHECKS_KEPT {
            assert!(pane.checking());
            pane.check_sent();
            pane.output(b"b");
        }
        // tmux answered the first from just after "a": the mirror showed it, but cannot
        // tell any more.
        let asked = pane.check_answered(first);
        assert!(asked.is_none());
        assert_eq!(pane.judge(&shown, asked.as_ref()), Verdict::Unsure);
        assert_eq!(pane.confirm_divergence(), None);
        assert_eq!(pane.counters.divergences, 0);
        // The others are still unanswered, then done.
        assert!(pane.checking());
        pane.check_answered(first + PaneMirror::CHECKS_KEPT as u64);
        assert!(!pane.checking());
    }

    #[test]
    fn a_pause_explains_a_difference_found_just_before_it() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["hello", "", ""], (5, 0)), GapReason::Seeded);
        let ahead = ShownScreen::new(
            vec![b"hello world".to_vec(), b"".to_vec(), b"".to_vec()],
            (11, 0),
            false,
            false,
        );
        assert!(differs(&mut pane, &ahead));
        pane.paused();
        assert_eq!(pane.confirm_divergence(), None);
        assert_eq!(pane.counters.divergences, 0);
        assert_eq!(pane.counters.pauses, 1);
    }

    #[test]
    fn a_screen_differing_only_in_colour_diverges() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&[""], (0, 0)), GapReason::Seeded);
        pane.output(b"\x1b[31mred\x1b[m");
        let same = ShownScreen::new(
            vec![b"\x1b[31mred".to_vec(), b"".to_vec(), b"".to_vec()],
            (3, 0),
            false,
            false,
        );
        assert!(pane.shows(&same));
        let plain = ShownScreen::new(
            vec![b"red".to_vec(), b"".to_vec(), b"".to_vec()],
            (3, 0),
            false,
            false,
        );
        assert!(!pane.shows(&plain));
        assert!(pane.difference(&plain).starts_with("row 0"));
    }

    #[test]
    fn a_difference_seen_before_a_layout_change_is_no_divergence() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&["hello"], (5, 0)), GapReason::Seeded);
        let other = ShownScreen::new(
            vec![b"hell".to_vec(), b"o".to_vec(), b"".to_vec()],
            (1, 1),
            false,
            false,
        );
        assert!(differs(&mut pane, &other));
        pane.layout_changed();
        assert_eq!(pane.confirm_divergence(), None);
        assert_eq!(pane.counters.divergences, 0);
    }

    #[test]
    fn resizes_reflow_the_screen_and_ask_for_a_check() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&[""], (0, 0)), GapReason::Seeded);
        pane.output(b"0123456789abcdef");
        pane.take_changed();
        assert!(!pane.resize(20, 3));
        assert!(pane.resize(10, 3));
        assert_eq!(pane.state(), SyncState::Live);
        assert_eq!(pane.screen().size(), (10, 3));
        // As in tmux: the empty rows below keep their place, the first half goes to history.
        assert_eq!(pane.screen().text(), "abcdef");
        assert!(pane.take_changed());
    }

    #[test]
    fn a_screen_printed_with_another_tmux_versions_codes_is_the_same_screen() {
        let mut pane = PaneMirror::new(row(), 1024);
        pane.seeded(&snapshot(&[""], (0, 0)), GapReason::Seeded);
        pane.output(b"\x1b[1mNAME\x1b[m \x1b]8;;http://x.y/\x1b\\link\x1b]8;;\x1b\\");
        // tmux 3.3a ends the bold with `\e[0m\e[39m\e[49m`; 3.4 and later with `\e[0m`
        // alone, and print the hyperlink.
        let newer = ShownScreen::new(
            vec![
                b"\x1b[1mNAME\x1b[0m \x1b]8;id=1;http://x.y/\x1b\\link\x1b]8;;\x1b\\".to_vec(),
                b"".to_vec(),
                b"".to_vec(),
            ],
            (9, 0),
            false,
            false,
        );
        assert_ne!(pane.screen().ansi_rows(), newer.styled);
        assert!(pane.shows(&newer));
        let other = ShownScreen::new(
            vec![
                b"\x1b[1mNAME\x1b[0m lonk".to_vec(),
                b"".to_vec(),
                b"".to_vec(),
            ],
            (9, 0),
            false,
            false,
        );
        assert!(!pane.shows(&other));
    }
}
