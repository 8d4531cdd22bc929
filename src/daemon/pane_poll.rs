//! The once-a-second look at every pane of the server: titles, programs, pids, dead panes and
//! panectl's pane options.
//!
//! One `list-panes -a` through one control client, its rows handed to each session's
//! connection. A `refresh-client -B` subscription per client would report only changes, but
//! tmux's subscription timer crashes a server that is being killed (docs/tmux-crashes.md).
//! One command for the whole server costs tmux one turn of its event loop a second, where a
//! command per connection cost one turn per session (measured in BENCHMARKS.md).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::control::command::Line;
use crate::ids::{PaneId, SessionId};
use crate::query::{self, PaneState};
use crate::tmux::Connections;

/// How often the panes are looked at.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// Polls until `cancel` fires.
pub async fn run(connections: watch::Receiver<Connections>, cancel: CancellationToken) {
    let mut ticker = tokio::time::interval(INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let handles = connections.borrow().clone();
        let Some(rows) = poll(&handles).await else {
            continue;
        };
        let mut by_session: BTreeMap<SessionId, Vec<(PaneId, PaneState)>> = BTreeMap::new();
        for (session, pane, update) in rows {
            by_session.entry(session).or_default().push((pane, update));
        }
        for (session, updates) in by_session {
            if let Some(handle) = handles.get(&session)
                && let Err(error) = handle.pane_updates(updates).await
            {
                debug!(%session, %error, "pane poll not delivered");
            }
        }
    }
}

/// Asks through the first connection that answers.
async fn poll(handles: &Connections) -> Option<Vec<(SessionId, PaneId, PaneState)>> {
    for handle in handles.values() {
        if let Ok(replies) = handle.command(Line::new(query::poll_panes())).await
            && let Some(Some(reply)) = replies.first()
            && reply.success
        {
            return Some(query::parse_pane_poll(reply));
        }
    }
    None
}
