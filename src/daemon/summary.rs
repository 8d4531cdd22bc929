//! The server option `@panectl_summary`: how many agents (not plain shells) are in each status,
//! for a status line (`#{@panectl_summary}`), e.g. `processing:2 completed:1
//! waiting_user_answer:1`. Written only when it changes, and removed at shutdown.
//!
//! How it reads is up to tmux options of the user's, read whenever the summary is computed (no
//! polling; a change shows at the next status change):
//!
//! | option | values |
//! |---|---|
//! | `@panectl-summary-format` | `words` (default, `processing:2`), `icons` (`⚙2`), `short` (`run:2`) |
//! | `@panectl-summary-colour` | `on`: each item in a colour of its status (`#[fg=...]`) |
//! | `@panectl-summary-empty` | the text when there is nothing to show (default: none) |
//! | `@panectl-summary-only` | the statuses to show, e.g. `waiting,error` (default: all) |
//! | `@panectl-seen` | `off`: completed agents stay in the summary once seen (default `on`) |
//! | `@panectl-summary-all` | `on`: count the agents of every server with a daemon on this machine (local and remote; [`super::peers`]), re-read every 2 seconds |
//!
//! Seen: a `completed` agent whose pane an attached (non-control) client has in view (the
//! active pane of the current window of the client's session) is *seen*: it drops out of the
//! summary, its pane's `seen` is true and a `seen` event says so, until its status changes.
//! What clients view is asked of tmux (`list-clients`) when a client attaches, detaches or
//! switches session, window or pane ([`EventKind::ViewChanged`]) and when an agent completes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::control::command::{Command, Format, Line};
use crate::events::{EventBus, EventKind};
use crate::ids::PaneId;
use crate::query;
use crate::status::Status;
use crate::tmux::ConnectionHandle;
use crate::tmux::Connections;

/// The server option's name.
pub const SUMMARY_OPTION: &str = "@panectl_summary";
/// The option choosing the summary's words.
pub const FORMAT_OPTION: &str = "@panectl-summary-format";
/// The option turning colours on.
pub const COLOUR_OPTION: &str = "@panectl-summary-colour";
/// The option holding the text shown when there is nothing to count.
pub const EMPTY_OPTION: &str = "@panectl-summary-empty";
/// The option narrowing the summary to some statuses.
pub const ONLY_OPTION: &str = "@panectl-summary-only";
/// The option that turns seen agents off (`off`).
pub const SEEN_OPTION: &str = "@panectl-seen";
/// The option that makes the summary count every server's agents (`on`).
pub const ALL_OPTION: &str = "@panectl-summary-all";

/// How often a summary over every server reads the other daemons' statuses.
const PEERS_EVERY: Duration = Duration::from_secs(2);

/// How each status is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryFormat {
    /// `processing:2`.
    #[default]
    Words,
    /// `⚙2`, with the glyphs of the plugin's window names.
    Icons,
    /// `run:2`.
    Short,
}

/// The user's summary options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryOptions {
    /// How each status is written.
    pub format: SummaryFormat,
    /// Each item in its status's colour.
    pub colour: bool,
    /// The text when nothing is shown.
    pub empty: String,
    /// Only these statuses (all when `None`).
    pub only: Option<BTreeSet<Status>>,
    /// Seen completed agents drop out.
    pub seen: bool,
    /// Count every server's agents, not only this one's.
    pub all: bool,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            format: SummaryFormat::Words,
            colour: false,
            empty: String::new(),
            only: None,
            seen: true,
            all: false,
        }
    }
}

/// A status from a word of `@panectl-summary-only`: the status word, its short word, or
/// `waiting`.
fn status_word(word: &str) -> Option<Status> {
    Status::parse(word).or_else(|| {
        Status::ALL.into_iter().find(|s| {
            s.short_word() == word || (word == "waiting" && *s == Status::WaitingUserAnswer)
        })
    })
}

impl SummaryOptions {
    /// The options from the values of [`FORMAT_OPTION`], [`COLOUR_OPTION`], [`EMPTY_OPTION`],
    /// [`ONLY_OPTION`] and [`SEEN_OPTION`] (empty when unset). Unknown values mean the default.
    /// [`ALL_OPTION`] is set apart ([`SummaryOptions::with_all`]).
    pub fn parse(format: &str, colour: &str, empty: &str, only: &str, seen: &str) -> Self {
        let format = match format.trim() {
            "icons" => SummaryFormat::Icons,
            "short" => SummaryFormat::Short,
            _ => SummaryFormat::Words,
        };
        let only: BTreeSet<Status> = only
            .split([',', ' '])
            .filter_map(|w| status_word(w.trim()))
            .collect();
        SummaryOptions {
            format,
            colour: matches!(colour.trim(), "on" | "yes" | "1" | "true"),
            empty: empty.to_string(),
            only: (!only.is_empty()).then_some(only),
            seen: !matches!(seen.trim(), "off" | "no" | "0" | "false"),
            all: false,
        }
    }

    /// The same options, counting every server's agents when `all` (the value of
    /// [`ALL_OPTION`]) is on.
    #[must_use]
    pub fn with_all(self, all: &str) -> Self {
        SummaryOptions {
            all: matches!(all.trim(), "on" | "yes" | "1" | "true"),
            ..self
        }
    }
}

/// The summary text for some statuses: one item per status present, in a fixed order, as the
/// options say. Panes without an agent (`unknown`) are left out.
pub fn render(statuses: impl IntoIterator<Item = Status>, options: &SummaryOptions) -> String {
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    for status in statuses {
        if status.phase() != crate::status::Phase::Unknown {
            *counts.entry(status).or_default() += 1;
        }
    }
    let items: Vec<String> = Status::ALL
        .iter()
        .filter(|s| options.only.as_ref().is_none_or(|only| only.contains(s)))
        .filter_map(|status| {
            let n = counts.get(status)?;
            let item = match options.format {
                SummaryFormat::Words => format!("{status}:{n}"),
                SummaryFormat::Short => format!("{}:{n}", status.short_word()),
                SummaryFormat::Icons => format!("{}{n}", status.icon()),
            };
            Some(if options.colour {
                format!("{}{item}#[fg=default]", status.tmux_colour())
            } else {
                item
            })
        })
        .collect();
    if items.is_empty() {
        options.empty.clone()
    } else {
        items.join(" ")
    }
}

/// The summary text with the default options (`status:count`).
pub fn summary(statuses: impl IntoIterator<Item = Status>) -> String {
    render(statuses, &SummaryOptions::default())
}

/// Reads the options; the defaults when tmux cannot be asked.
async fn read_options(handle: &ConnectionHandle) -> SummaryOptions {
    let line = Line::new(crate::query::show_global_option(FORMAT_OPTION))
        .then(crate::query::show_global_option(COLOUR_OPTION))
        .then(crate::query::show_global_option(EMPTY_OPTION))
        .then(crate::query::show_global_option(ONLY_OPTION))
        .then(crate::query::show_global_option(SEEN_OPTION))
        .then(crate::query::show_global_option(ALL_OPTION));
    let Ok(replies) = handle.run(line).await else {
        return SummaryOptions::default();
    };
    let text = |i: usize| {
        replies
            .get(i)
            .map(|r| {
                String::from_utf8_lossy(&r.joined_body())
                    .trim_end_matches('\n')
                    .to_string()
            })
            .unwrap_or_default()
    };
    SummaryOptions::parse(&text(0), &text(1), &text(2), &text(3), &text(4)).with_all(&text(5))
}

/// The panes attached (non-control) clients have in view: the active pane of the current
/// window of each one's session. The daemon's own clients are control clients.
async fn viewed(handle: &ConnectionHandle) -> Option<BTreeSet<PaneId>> {
    const VIEW: Format = Format::new("#{client_control_mode} #{pane_id}");
    let list = Line::new(Command::new("list-clients").format_option("-F", VIEW));
    let replies = handle.run(list).await.ok()?;
    let body = replies
        .first()
        .map(|r| String::from_utf8_lossy(&r.joined_body()).into_owned())
        .unwrap_or_default();
    Some(
        body.lines()
            .filter_map(|row| row.strip_prefix("0 "))
            .filter_map(|pane| pane.trim().parse().ok())
            .collect(),
    )
}

fn any_handle(connections: &watch::Receiver<Connections>) -> Option<ConnectionHandle> {
    connections.borrow().values().next().cloned()
}

async fn write(connections: &watch::Receiver<Connections>, value: Option<&str>) -> bool {
    let handles = connections.borrow().clone();
    let command = query::set_server_option(SUMMARY_OPTION, None);
    let command = match value {
        // The text is ours (counts, fixed words, glyphs and styles) or the user's own
        // `@panectl-summary-empty`: set as it is, expanded by nothing but the status line that
        // shows the option.
        Some(value) => match Command::new("set-option")
            .flag("-s")
            .option_name(SUMMARY_OPTION)
            .option_value(value.as_bytes())
        {
            Ok(command) => command,
            Err(error) => {
                debug!(%error, "cannot write the summary");
                return false;
            }
        },
        None => command,
    };
    for handle in handles.values() {
        if handle.command(Line::new(command.clone())).await.is_ok() {
            return true;
        }
    }
    false
}

/// What the summary task knows.
#[derive(Debug, Default)]
struct Agents {
    statuses: BTreeMap<PaneId, Status>,
    seen: BTreeSet<PaneId>,
}

impl Agents {
    /// Marks the completed agents in `viewed` seen; the newly seen ones.
    fn see(&mut self, viewed: &BTreeSet<PaneId>) -> Vec<PaneId> {
        let new: Vec<PaneId> = self
            .statuses
            .iter()
            .filter(|(pane, status)| {
                **status == Status::Completed && viewed.contains(pane) && !self.seen.contains(pane)
            })
            .map(|(pane, _)| *pane)
            .collect();
        self.seen.extend(new.iter().copied());
        new
    }

    /// The statuses the summary counts.
    fn counted(&self, options: &SummaryOptions) -> Vec<Status> {
        self.statuses
            .iter()
            .filter(|(pane, _)| !(options.seen && self.seen.contains(pane)))
            .map(|(_, status)| *status)
            .collect()
    }
}

/// How many waiting events are counted before the summary is written (so that a steady stream
/// still writes it now and then).
const DRAIN_AT_MOST: usize = 10_000;

/// What one event did to the counts.
enum Folded {
    /// The bus closed: the daemon is stopping.
    Closed,
    /// Nothing the summary counts (or events missed: the next status change corrects them).
    Nothing,
    /// A count changed; `look` when what clients view must be asked (an agent completed, a
    /// client moved).
    Changed { look: bool },
}

/// Why no event was received: [`broadcast::error::TryRecvError`] and
/// [`broadcast::error::RecvError`] as one.
enum Missed {
    Empty,
    Lagged,
    Closed,
}

impl From<broadcast::error::TryRecvError> for Missed {
    fn from(error: broadcast::error::TryRecvError) -> Self {
        match error {
            broadcast::error::TryRecvError::Empty => Missed::Empty,
            broadcast::error::TryRecvError::Lagged(_) => Missed::Lagged,
            broadcast::error::TryRecvError::Closed => Missed::Closed,
        }
    }
}

impl From<broadcast::error::RecvError> for Missed {
    fn from(error: broadcast::error::RecvError) -> Self {
        match error {
            broadcast::error::RecvError::Lagged(_) => Missed::Lagged,
            broadcast::error::RecvError::Closed => Missed::Closed,
        }
    }
}

impl Agents {
    /// Counts `first` and then every event already waiting in `events` (at most
    /// [`DRAIN_AT_MOST`]), so that tmux is asked for the options once for all of them: a start
    /// with 1000 panes publishes thousands of statuses at once, and a round trip each kept an
    /// idle tmux server busy for minutes (issue 39).
    fn fold_waiting(
        &mut self,
        first: Result<std::sync::Arc<crate::events::DaemonEvent>, broadcast::error::RecvError>,
        events: &mut broadcast::Receiver<std::sync::Arc<crate::events::DaemonEvent>>,
    ) -> Folded {
        // `Some(look)` once a count changed.
        let mut changed = None;
        let mut add = |folded: Folded| match folded {
            Folded::Closed => false,
            Folded::Nothing => true,
            Folded::Changed { look } => {
                changed = Some(changed.unwrap_or(false) || look);
                true
            }
        };
        if !add(self.fold(first)) {
            return Folded::Closed;
        }
        for _ in 0..DRAIN_AT_MOST {
            if events.is_empty() {
                break;
            }
            if !add(self.fold(events.try_recv())) {
                return Folded::Closed;
            }
        }
        match changed {
            Some(look) => Folded::Changed { look },
            None => Folded::Nothing,
        }
    }

    /// Counts one event (or says why there was none).
    fn fold<E: Into<Missed>>(
        &mut self,
        event: Result<std::sync::Arc<crate::events::DaemonEvent>, E>,
    ) -> Folded {
        let event = match event.map_err(Into::into) {
            Ok(event) => event,
            Err(Missed::Closed) => return Folded::Closed,
            Err(Missed::Empty | Missed::Lagged) => return Folded::Nothing,
        };
        let look = match &event.kind {
            // Agents only: a plain shell is not an agent.
            EventKind::Status {
                pane,
                status,
                provider,
                ..
            } => {
                if provider.as_deref() == Some(crate::status::providers::SHELL) {
                    self.statuses.remove(pane);
                } else {
                    self.statuses.insert(*pane, *status);
                }
                if *status != Status::Completed {
                    self.seen.remove(pane);
                }
                *status == Status::Completed
            }
            EventKind::PaneRemoved { pane } => {
                self.statuses.remove(pane);
                self.seen.remove(pane);
                false
            }
            EventKind::ViewChanged {} => true,
            _ => return Folded::Nothing,
        };
        Folded::Changed { look }
    }
}

/// Keeps `@panectl_summary` current, and the set of seen panes in `seen`, until `cancel`
/// fires.
pub async fn run(
    bus: EventBus,
    connections: watch::Receiver<Connections>,
    seen: watch::Sender<BTreeSet<PaneId>>,
    peers: super::peers::Peers,
    cancel: CancellationToken,
) {
    let mut events = bus.subscribe();
    let mut agents = Agents::default();
    let mut written: Option<String> = None;
    let mut shared: Option<Vec<Status>> = None;
    let mut all = false;
    let mut peers_tick = tokio::time::interval(PEERS_EVERY);
    peers_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let event = tokio::select! {
            () = cancel.cancelled() => break,
            event = events.recv() => Some(event),
            // A summary over every server: the others' statuses change without an event here.
            _ = peers_tick.tick(), if all => None,
        };
        let mut look = false;
        if let Some(event) = event {
            match agents.fold_waiting(event, &mut events) {
                Folded::Closed => break,
                Folded::Nothing => continue,
                Folded::Changed { look: this } => look = this,
            }
        }
        let Some(handle) = any_handle(&connections) else {
            continue;
        };
        let options = read_options(&handle).await;
        let completed = agents.statuses.values().any(|s| *s == Status::Completed);
        if options.seen
            && look
            && completed
            && let Some(viewed) = viewed(&handle).await
        {
            for pane in agents.see(&viewed) {
                debug!(%pane, "a completed agent was seen");
                bus.publish(EventKind::Seen { pane });
            }
        }
        let shown: BTreeSet<PaneId> = if options.seen {
            agents.seen.clone()
        } else {
            BTreeSet::new()
        };
        seen.send_if_modified(|current| {
            let changed = *current != shown;
            *current = shown;
            changed
        });
        let mut counted = agents.counted(&options);
        if shared.as_ref() != Some(&counted) {
            match peers.write(&counted) {
                Ok(()) => shared = Some(counted.clone()),
                Err(error) => debug!(%error, "cannot share the statuses with other daemons"),
            }
        }
        all = options.all;
        if all {
            counted.extend(peers.others());
        }
        let text = render(counted, &options);
        if written.as_deref() != Some(text.as_str()) && write(&connections, Some(&text)).await {
            written = Some(text);
        }
    }
    peers.remove();
    if written.is_some() {
        // Best effort: the connections are closing too.
        let _ = tokio::time::timeout(Duration::from_millis(500), write(&connections, None)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Publishes a status of `provider` for pane `pane`.
    fn status(bus: &EventBus, pane: u32, status: Status, provider: &str) {
        bus.publish(EventKind::Status {
            pane: PaneId(pane),
            status,
            previous: Status::Unknown,
            rule: None,
            provider: Some(provider.into()),
            source: crate::status::signal::StatusSource::Screen,
            detail: None,
        });
    }

    #[tokio::test]
    async fn every_waiting_event_is_counted_before_tmux_is_asked_once() {
        let bus = EventBus::new();
        let mut events = bus.subscribe();
        // A start: a status for each of 1000 panes, half of them plain shells.
        for pane in 0..1000 {
            let provider = if pane % 2 == 0 {
                "claude_code"
            } else {
                "shell"
            };
            status(&bus, pane, Status::Idle, provider);
        }
        status(&bus, 2, Status::Completed, "claude_code");
        let mut agents = Agents::default();
        let first = events.recv().await;
        let folded = agents.fold_waiting(first, &mut events);
        assert!(matches!(folded, Folded::Changed { look: true }));
        assert!(events.is_empty(), "every waiting event was taken");
        assert_eq!(agents.statuses.len(), 500, "shells are not agents");
        assert_eq!(agents.statuses[&PaneId(2)], Status::Completed);
        // Events that change no count ask nothing; a closed bus ends the task.
        bus.publish(EventKind::Seen { pane: PaneId(4) });
        let first = events.recv().await;
        assert!(matches!(
            agents.fold_waiting(first, &mut events),
            Folded::Nothing
        ));
        status(&bus, 4, Status::Processing, "claude_code");
        drop(bus);
        let first = events.recv().await;
        assert!(matches!(
            agents.fold_waiting(first, &mut events),
            Folded::Changed { look: false }
        ));
        assert_eq!(agents.statuses[&PaneId(4)], Status::Processing);
        let first = events.recv().await;
        assert!(matches!(
            agents.fold_waiting(first, &mut events),
            Folded::Closed
        ));
    }

    #[test]
    fn summaries_count_statuses_in_a_fixed_order() {
        let text = summary([
            Status::Completed,
            Status::Processing,
            Status::Unknown,
            Status::Processing,
        ]);
        assert_eq!(text, "processing:2 completed:1");
        assert_eq!(summary([]), "");
    }

    #[test]
    fn the_options_choose_words_icons_colours_and_statuses() {
        let statuses = [
            Status::WaitingUserAnswer,
            Status::Processing,
            Status::Processing,
            Status::Completed,
            Status::Error,
        ];
        let icons = SummaryOptions::parse("icons", "", "", "", "");
        assert_eq!(render(statuses, &icons), "⚙2 ✔1 !1 ✖1");
        let short = SummaryOptions::parse("short", "off", "", "", "");
        assert_eq!(render(statuses, &short), "run:2 done:1 wait:1 err:1");
        let coloured = SummaryOptions::parse("icons", "on", "", "waiting, error", "");
        assert_eq!(
            render(statuses, &coloured),
            "#[fg=yellow]!1#[fg=default] #[fg=red]✖1#[fg=default]"
        );
        let only = SummaryOptions::parse("words", "", "all calm", "wait", "");
        assert_eq!(render(statuses, &only), "waiting_user_answer:1");
        assert_eq!(render([Status::Idle], &only), "all calm");
        assert_eq!(render([], &SummaryOptions::default()), "");
        let unknown = SummaryOptions::parse("fancy", "maybe", "", "nosuch", "");
        assert_eq!(unknown, SummaryOptions::default());
        assert!(!SummaryOptions::parse("", "", "", "", "off").seen);
    }

    #[test]
    fn seen_agents_drop_out_until_their_status_changes() {
        let (a, b): (PaneId, PaneId) = ("%1".parse().unwrap(), "%2".parse().unwrap());
        let mut agents = Agents::default();
        agents.statuses.insert(a, Status::Completed);
        agents.statuses.insert(b, Status::Processing);
        assert_eq!(agents.see(&BTreeSet::from([a, b])), [a]);
        assert!(agents.see(&BTreeSet::from([a])).is_empty(), "seen once");
        let options = SummaryOptions::default();
        assert_eq!(render(agents.counted(&options), &options), "processing:1");
        let off = SummaryOptions::parse("", "", "", "", "off");
        assert_eq!(
            render(agents.counted(&off), &off),
            "processing:1 completed:1"
        );
    }
}
