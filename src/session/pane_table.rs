//! The session's panes and windows as the core knows them: each pane's mirror, which window
//! holds which panes, output that came before its pane was listed, and which panes have a
//! seed in flight.
//!
//! The table owns the rules of that state (a pane is seeded by one line at a time, a later
//! reason waiting behind it; output of an unlisted pane is kept up to a cap and fed to its
//! mirror once it is listed; a pane removed takes its seed and early output with it), so they
//! are tested here without a connection. What to send or publish stays with the core.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::events::ResyncReason;
use crate::ids::{PaneId, WindowId};
use crate::mirror::PaneMirror;
use crate::query::WindowRow;
use crate::raw::RawBytes;
use crate::screen::Dialect;

/// What the core knows of a window.
#[derive(Debug, Default)]
pub(super) struct WindowState {
    /// Its index in the session (0 until `list-windows` says).
    pub(super) index: u32,
    /// Its name (empty until `list-windows` says).
    pub(super) name: RawBytes,
    /// The panes its layout holds.
    pub(super) panes: BTreeSet<PaneId>,
}

/// The panes and windows of one session. See the module documentation.
pub(super) struct PaneTable {
    mirrors: BTreeMap<PaneId, PaneMirror>,
    windows: BTreeMap<WindowId, WindowState>,
    /// Output of panes not listed yet (they appear before `list-panes` answers).
    early_output: HashMap<PaneId, Vec<u8>>,
    /// Panes with a seed line in flight -> the reason for another seed due after it.
    seeding: HashMap<PaneId, Option<ResyncReason>>,
    /// The most early output kept per pane (its mirror's ring keeps no more either).
    early_cap: usize,
    /// The rules of the server's tmux, which every mirror follows.
    dialect: Dialect,
}

/// What [`PaneTable::seed`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SeedStart {
    /// Send the seed line now.
    Send,
    /// One is in flight; another follows it when it is answered.
    Queued,
    /// No such pane.
    Unknown,
}

impl PaneTable {
    /// An empty table keeping at most `early_cap` bytes of an unlisted pane's output.
    pub(super) fn new(early_cap: usize) -> PaneTable {
        PaneTable {
            mirrors: BTreeMap::new(),
            windows: BTreeMap::new(),
            early_output: HashMap::new(),
            seeding: HashMap::new(),
            early_cap,
            dialect: Dialect::default(),
        }
    }

    /// The server's tmux is known: every mirror, and every one added later, follows its rules.
    pub(super) fn set_dialect(&mut self, dialect: Dialect) {
        self.dialect = dialect;
        for mirror in self.mirrors.values_mut() {
            mirror.set_dialect(dialect);
        }
    }

    /// The rules the mirrors follow.
    pub(super) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// A pane's mirror.
    pub(super) fn get(&self, pane: PaneId) -> Option<&PaneMirror> {
        self.mirrors.get(&pane)
    }

    /// A pane's mirror, to change.
    pub(super) fn get_mut(&mut self, pane: PaneId) -> Option<&mut PaneMirror> {
        self.mirrors.get_mut(&pane)
    }

    /// Whether the pane is listed.
    pub(super) fn contains(&self, pane: PaneId) -> bool {
        self.mirrors.contains_key(&pane)
    }

    /// How many panes are listed.
    pub(super) fn len(&self) -> usize {
        self.mirrors.len()
    }

    /// The listed panes, in order.
    pub(super) fn ids(&self) -> Vec<PaneId> {
        self.mirrors.keys().copied().collect()
    }

    /// The mirrors, in pane order.
    pub(super) fn mirrors(&self) -> impl Iterator<Item = &PaneMirror> {
        self.mirrors.values()
    }

    /// The mirrors of the panes in `window`, to change.
    pub(super) fn in_window_mut(
        &mut self,
        window: WindowId,
    ) -> impl Iterator<Item = &mut PaneMirror> {
        self.mirrors
            .values_mut()
            .filter(move |m| m.window() == window)
    }

    /// The mirrors with no seed in flight (those a watchdog round may look at), to change.
    pub(super) fn settled_mut(&mut self) -> impl Iterator<Item = (PaneId, &mut PaneMirror)> {
        let seeding = &self.seeding;
        self.mirrors
            .iter_mut()
            .filter(|(id, _)| !seeding.contains_key(id))
            .map(|(id, mirror)| (*id, mirror))
    }

    /// The mirrors, taken apart (replay's end).
    pub(super) fn into_mirrors(self) -> BTreeMap<PaneId, PaneMirror> {
        self.mirrors
    }

    /// Puts `pane` in `window`'s layout. Answers true when the window was not known (its
    /// index and name are then to be asked for).
    pub(super) fn place(&mut self, pane: PaneId, window: WindowId) -> bool {
        match self.windows.get_mut(&window) {
            Some(state) => {
                state.panes.insert(pane);
                false
            }
            None => {
                self.windows.insert(
                    window,
                    WindowState {
                        panes: BTreeSet::from([pane]),
                        ..WindowState::default()
                    },
                );
                true
            }
        }
    }

    /// Lists a pane. Output it printed before, if any, goes into its mirror first: answers
    /// the sequence number of its first byte and its length, for the event that reports it.
    pub(super) fn insert(&mut self, mirror: PaneMirror) -> Option<(u64, u64)> {
        let id = mirror.id();
        let mut mirror = mirror;
        mirror.set_dialect(self.dialect);
        let early = self.early_output.remove(&id).map(|early| {
            let seq = mirror.output(&early);
            (seq, early.len() as u64)
        });
        self.mirrors.insert(id, mirror);
        early
    }

    /// Keeps output of a pane not listed yet (the newest `early_cap` bytes).
    pub(super) fn keep_early(&mut self, pane: PaneId, data: &[u8]) {
        let early = self.early_output.entry(pane).or_default();
        early.extend_from_slice(data);
        let excess = early.len().saturating_sub(self.early_cap);
        early.drain(..excess);
    }

    /// Forgets a pane, its seed and its early output. Answers whether it was listed.
    pub(super) fn remove(&mut self, pane: PaneId) -> bool {
        self.early_output.remove(&pane);
        let listed = self.mirrors.remove(&pane).is_some();
        if listed {
            self.seeding.remove(&pane);
        }
        listed
    }

    /// A seed for `reason` is wanted: sent now, or queued behind the one in flight (the later
    /// reason wins).
    pub(super) fn seed(&mut self, pane: PaneId, reason: ResyncReason) -> SeedStart {
        if let Some(again) = self.seeding.get_mut(&pane) {
            *again = Some(reason);
            return SeedStart::Queued;
        }
        let Some(mirror) = self.mirrors.get_mut(&pane) else {
            return SeedStart::Unknown;
        };
        mirror.seed_sent();
        self.seeding.insert(pane, None);
        SeedStart::Send
    }

    /// The seed in flight is over (answered or failed): answers the reason of the seed that
    /// waited behind it, if one did.
    pub(super) fn seed_over(&mut self, pane: PaneId) -> Option<ResyncReason> {
        self.seeding.remove(&pane).flatten()
    }

    /// Whether the pane has a seed in flight.
    pub(super) fn seeding(&self, pane: PaneId) -> bool {
        self.seeding.contains_key(&pane)
    }

    /// A window, if known.
    pub(super) fn window(&self, window: WindowId) -> Option<&WindowState> {
        self.windows.get(&window)
    }

    /// Renames a window; answers whether it was known.
    pub(super) fn rename_window(&mut self, window: WindowId, name: RawBytes) -> bool {
        match self.windows.get_mut(&window) {
            Some(state) => {
                state.name = name;
                true
            }
            None => false,
        }
    }

    /// A window closed: answers the panes it held (for the core to remove).
    pub(super) fn close_window(&mut self, window: WindowId) -> BTreeSet<PaneId> {
        self.windows
            .remove(&window)
            .map(|state| state.panes)
            .unwrap_or_default()
    }

    /// `list-windows` answered: the windows' indexes and names.
    pub(super) fn windows_listed(&mut self, rows: Vec<WindowRow>) {
        for row in rows {
            let window = self.windows.entry(row.id).or_default();
            window.index = row.index;
            window.name = row.name;
        }
    }

    /// A window's layout now holds `present`: answers the panes gone from it and the panes
    /// new to it.
    pub(super) fn relayout(
        &mut self,
        window: WindowId,
        present: BTreeSet<PaneId>,
    ) -> (Vec<PaneId>, Vec<PaneId>) {
        let state = self.windows.entry(window).or_default();
        let gone = state.panes.difference(&present).copied().collect();
        let new = present.difference(&state.panes).copied().collect();
        state.panes = present;
        (gone, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::PaneRow;

    fn mirror(pane: u32, window: u32) -> PaneMirror {
        PaneMirror::new(
            PaneRow::unlisted(PaneId(pane), WindowId(window), 20, 5),
            1024,
        )
    }

    #[test]
    fn one_seed_at_a_time_and_the_latest_reason_follows_it() {
        let mut table = PaneTable::new(16);
        let pane = PaneId(1);
        assert_eq!(table.seed(pane, ResyncReason::Attach), SeedStart::Unknown);
        table.insert(mirror(1, 1));
        assert_eq!(table.seed(pane, ResyncReason::Attach), SeedStart::Send);
        assert!(table.seeding(pane));
        assert_eq!(table.seed(pane, ResyncReason::Pause), SeedStart::Queued);
        assert_eq!(table.seed(pane, ResyncReason::Resize), SeedStart::Queued);
        assert_eq!(table.settled_mut().count(), 0);
        assert_eq!(table.seed_over(pane), Some(ResyncReason::Resize));
        assert!(!table.seeding(pane));
        assert_eq!(table.seed_over(pane), None);
        assert_eq!(table.settled_mut().count(), 1);
    }

    #[test]
    fn output_before_the_pane_is_listed_goes_into_its_mirror_up_to_the_cap() {
        let mut table = PaneTable::new(8);
        let pane = PaneId(3);
        table.keep_early(pane, b"0123456");
        table.keep_early(pane, b"789ab");
        let (seq, len) = table.insert(mirror(3, 1)).expect("early output");
        assert_eq!((seq, len), (0, 8));
        let read = table.get(pane).expect("listed").read_output(Some(0), 100);
        assert_eq!(read.data, b"456789ab");
        // Nothing is kept for a pane removed before it was listed.
        table.keep_early(PaneId(4), b"x");
        assert!(!table.remove(PaneId(4)));
        assert_eq!(table.insert(mirror(4, 1)), None);
    }

    #[test]
    fn a_removed_pane_takes_its_seed_with_it() {
        let mut table = PaneTable::new(8);
        table.insert(mirror(1, 1));
        assert_eq!(table.seed(PaneId(1), ResyncReason::Attach), SeedStart::Send);
        assert!(table.remove(PaneId(1)));
        assert!(!table.seeding(PaneId(1)));
        table.insert(mirror(1, 1));
        assert_eq!(table.seed(PaneId(1), ResyncReason::Attach), SeedStart::Send);
    }

    #[test]
    fn windows_learn_their_panes_from_layouts_and_their_names_from_list_windows() {
        let mut table = PaneTable::new(8);
        assert!(table.place(PaneId(1), WindowId(2)));
        assert!(!table.place(PaneId(2), WindowId(2)));
        let (gone, new) = table.relayout(WindowId(2), BTreeSet::from([PaneId(2), PaneId(5)]));
        assert_eq!((gone, new), (vec![PaneId(1)], vec![PaneId(5)]));
        table.windows_listed(vec![WindowRow {
            id: WindowId(2),
            index: 4,
            active: true,
            name: RawBytes::from("work"),
        }]);
        let window = table.window(WindowId(2)).expect("known");
        assert_eq!((window.index, window.name.to_string()), (4, "work".into()));
        assert!(table.rename_window(WindowId(2), RawBytes::from("w2")));
        assert!(!table.rename_window(WindowId(9), RawBytes::default()));
        assert_eq!(
            table.close_window(WindowId(2)),
            BTreeSet::from([PaneId(2), PaneId(5)])
        );
        assert!(table.close_window(WindowId(2)).is_empty());
    }

    #[test]
    fn the_panes_of_a_window_are_found_by_their_mirrors_window() {
        let mut table = PaneTable::new(8);
        table.insert(mirror(1, 1));
        table.insert(mirror(2, 2));
        table.insert(mirror(3, 1));
        let ids: Vec<PaneId> = table.in_window_mut(WindowId(1)).map(|m| m.id()).collect();
        assert_eq!(ids, vec![PaneId(1), PaneId(3)]);
        assert_eq!(table.ids(), vec![PaneId(1), PaneId(2), PaneId(3)]);
        assert_eq!(table.len(), 3);
    }
}
