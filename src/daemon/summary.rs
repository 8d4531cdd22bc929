//! The server option `@panectl_summary`: how many agents (not plain shells) are in each status,
//! for a status line
//! (`#{@panectl_summary}`), e.g. `processing:2 completed:1 waiting_user_answer:1`. Written only
//! when it changes, and removed at shutdown.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::events::{EventBus, EventKind};
use super::supervisor::Connections;
use crate::control::command::{Line, SafeValue};
use crate::ids::PaneId;
use crate::status::Status;
use crate::tmux::query;

/// The server option's name.
pub const SUMMARY_OPTION: &str = "@panectl_summary";

/// The summary text for some statuses: `status:count` for every status present, in a fixed
/// order. Panes without an agent (`unknown`) are left out.
pub fn summary(statuses: impl IntoIterator<Item = Status>) -> String {
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    for status in statuses {
        if status != Status::Unknown {
            *counts.entry(status).or_default() += 1;
        }
    }
    Status::ALL
        .iter()
        .filter_map(|status| counts.get(status).map(|n| format!("{status}:{n}")))
        .collect::<Vec<_>>()
        .join(" ")
}

async fn write(connections: &watch::Receiver<Connections>, value: Option<&str>) -> bool {
    let value = value.and_then(|v| SafeValue::new(v).ok());
    let handles = connections.borrow().clone();
    for handle in handles.values() {
        let line = Line::new(query::set_server_option(SUMMARY_OPTION, value.as_ref()));
        if handle.command(line).await.is_ok() {
            return true;
        }
    }
    false
}

/// Keeps `@panectl_summary` current until `cancel` fires.
pub async fn run(
    bus: EventBus,
    connections: watch::Receiver<Connections>,
    cancel: CancellationToken,
) {
    let mut events = bus.subscribe();
    let mut statuses: BTreeMap<PaneId, Status> = BTreeMap::new();
    let mut written: Option<String> = None;
    loop {
        let event = tokio::select! {
            () = cancel.cancelled() => break,
            event = events.recv() => event,
        };
        match event {
            Ok(event) => match &event.kind {
                // Agents only: a plain shell is not an agent.
                EventKind::Status {
                    pane,
                    status,
                    provider,
                    ..
                } => {
                    if provider.as_deref() == Some(crate::status::providers::SHELL) {
                        statuses.remove(pane);
                    } else {
                        statuses.insert(*pane, *status);
                    }
                }
                EventKind::PaneRemoved { pane } => {
                    statuses.remove(pane);
                }
                _ => continue,
            },
            // Missed events cannot be replayed; the next status change corrects the counts.
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => break,
        }
        let text = summary(statuses.values().copied());
        if written.as_deref() != Some(text.as_str()) && write(&connections, Some(&text)).await {
            written = Some(text);
        }
    }
    if written.is_some() {
        // Best effort: the connections are closing too.
        let _ = tokio::time::timeout(Duration::from_millis(500), write(&connections, None)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(SafeValue::new(summary(Status::ALL)).is_ok());
    }
}
