//! The status side of each pane, and what was last written to its tmux options.
//!
//! The table keeps the rule that a pane's options (`@panectl_status`, `@panectl_provider`) are
//! written only when they change, and unset for a pane that runs no known agent, so tmux
//! formats show status without the daemon writing on every evaluation. How the options are
//! written is the core's; which values are due is decided here, and tested without tmux.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use crate::ids::PaneId;
use crate::status::Status;
use crate::status::pane::{PaneAgent, Timing};

/// What a pane's options say: its status and its provider, both set, or both unset.
pub(super) type OptionValues = (Option<Status>, Option<Arc<str>>);

/// The agents of one session's panes. See the module documentation.
#[derive(Default)]
pub(super) struct AgentTable {
    agents: BTreeMap<PaneId, PaneAgent>,
    /// The values last written to each pane's options.
    published: BTreeMap<PaneId, OptionValues>,
}

impl AgentTable {
    /// A pane's agent.
    pub(super) fn get(&self, pane: PaneId) -> Option<&PaneAgent> {
        self.agents.get(&pane)
    }

    /// A pane's agent, to change.
    pub(super) fn get_mut(&mut self, pane: PaneId) -> Option<&mut PaneAgent> {
        self.agents.get_mut(&pane)
    }

    /// A pane's agent, made with `timing` if it has none yet.
    pub(super) fn get_or_new(
        &mut self,
        pane: PaneId,
        timing: Timing,
        now: Instant,
    ) -> &mut PaneAgent {
        self.agents
            .entry(pane)
            .or_insert_with(|| PaneAgent::new(timing, now))
    }

    /// Forgets a pane (its options went with it).
    pub(super) fn remove(&mut self, pane: PaneId) {
        self.agents.remove(&pane);
        self.published.remove(&pane);
    }

    /// The earliest time a pane needs evaluating.
    pub(super) fn next_due(&self, now: Instant) -> Option<Instant> {
        self.agents
            .values()
            .filter_map(|agent| agent.due(now))
            .min()
    }

    /// The panes due for evaluation at `now`.
    pub(super) fn due(&self, now: Instant) -> Vec<PaneId> {
        self.agents
            .iter()
            .filter(|(_, agent)| agent.due(now).is_some_and(|at| at <= now))
            .map(|(pane, _)| *pane)
            .collect()
    }

    /// The values a pane's options are to take, when they differ from what was last written;
    /// they count as written from here on. Status and provider are both set for a pane with a
    /// provider, both unset otherwise.
    pub(super) fn options_due(&mut self, pane: PaneId) -> Option<OptionValues> {
        let agent = self.agents.get(&pane)?;
        let provider: Option<Arc<str>> = agent.provider().map(|p| p.id.clone());
        let status = provider.as_ref().map(|_| agent.status());
        let wanted = (status, provider);
        if self.published.get(&pane) == Some(&wanted) {
            return None;
        }
        self.published.insert(pane, wanted.clone());
        Some(wanted)
    }

    /// The panes whose options show a status (to unset at shutdown).
    pub(super) fn showing_status(&self) -> Vec<PaneId> {
        self.published
            .iter()
            .filter(|(_, (status, _))| status.is_some())
            .map(|(pane, _)| *pane)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::pane::ProviderSource;
    use crate::status::providers::ProviderSet;

    #[test]
    fn options_are_written_once_per_change_and_unset_without_a_provider() {
        let providers = ProviderSet::builtin().expect("built-in rules");
        let claude = providers.get("claude_code").expect("claude_code").clone();
        let now = Instant::now();
        let mut table = AgentTable::default();
        let pane = PaneId(7);
        assert_eq!(table.options_due(pane), None, "no agent, nothing to write");
        table.get_or_new(pane, Timing::default(), now);
        assert_eq!(table.options_due(pane), Some((None, None)));
        assert_eq!(table.options_due(pane), None);
        assert!(table.showing_status().is_empty());
        let agent = table.get_mut(pane).expect("agent");
        agent.set_provider(Some(claude), Some(ProviderSource::Process), now);
        let status = agent.status();
        assert_eq!(
            table.options_due(pane),
            Some((Some(status), Some(Arc::from("claude_code"))))
        );
        assert_eq!(table.options_due(pane), None);
        assert_eq!(table.showing_status(), vec![pane]);
        table.remove(pane);
        assert!(table.showing_status().is_empty());
        assert!(table.get(pane).is_none());
    }

    #[test]
    fn a_pane_is_due_once_its_output_has_been_quiet_and_one_without_a_provider_never() {
        let providers = ProviderSet::builtin().expect("built-in rules");
        let claude = providers.get("claude_code").expect("claude_code").clone();
        let now = Instant::now();
        let timing = Timing::default();
        let mut table = AgentTable::default();
        assert_eq!(table.next_due(now), None);
        let agent = table.get_or_new(PaneId(1), timing, now);
        agent.set_provider(Some(claude), Some(ProviderSource::Process), now);
        agent.output_seen();
        agent.touched(now);
        table.get_or_new(PaneId(2), timing, now).touched(now);
        let quiet = now + timing.quiet;
        assert_eq!(table.next_due(now), Some(quiet));
        assert!(table.due(now).is_empty());
        assert_eq!(table.due(quiet), vec![PaneId(1)]);
    }
}
