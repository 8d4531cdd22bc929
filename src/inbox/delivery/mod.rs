//! Delivers queued messages: per receiver, in order, one at a time, only while the receiver is
//! ready (`idle` or `completed`), never while it works or waits on a dialog.
//!
//! One delivery: the message is marked `delivering` (committed) before anything reaches the
//! pane; its text goes into a named paste buffer (`set-buffer`, which expands nothing, in lines
//! of bounded length) and is pasted with `paste-buffer -p`; after the submit delay the `Enter`
//! key is sent; then the turn must be seen to start: the status leaves ready, or the pasted text
//! leaves the input. Otherwise `Enter` is sent once more, but only while the status is still
//! ready and the pasted text still sits in the input, so that a submit key can never answer a
//! dialog. Before a message is given up the pane is looked at again (a tmux round trip first, so
//! that the daemon's copy of the screen has caught up): a turn seen, or the text gone from the
//! input and in the pane's history, makes it `delivered`; the text still in the input of a
//! receiver that answers promptly makes it `failed`; anything else is `uncertain` (never retried
//! automatically: the receiver may have taken it, and a retry would deliver it twice).
//!
//! A turn too short to be seen busy (a shell running `echo`) is recognised by its end: the text
//! left the input and is on the screen above it, the input is the cursor's row (no input box)
//! and a ready rule matches the screen as it is now (the prompt is back). Then the next message
//! may go at once; otherwise the next one waits up to the settle time for the status to say busy.
//!
//! The paste and a mark of it go to tmux in one command line: `paste-buffer` then `set-option
//! -p @panectl_pasted ID:ATTEMPT_AT`; tmux runs both or neither. After a crash a message can be
//! left `delivering`. Before anything else is sent to its pane the mark is read back: a pane
//! without this message's mark never got its text (whatever text like it the pane shows), and the
//! message goes back to `pending` once the pane is ready. With the mark, its text still in the
//! input (pasted, not submitted) is submitted; its text in the pane's history means it was
//! delivered; otherwise it is `uncertain`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::{InboxHandle, now_ms};
use crate::events::{DaemonEvent, EventBus, EventKind};
use crate::ids::PaneId;
use crate::status::providers::ProviderSet;
use crate::tmux::Connections;

mod task;

pub use task::probe;
pub use task::{DeliveryError, DeliveryOptions, agent_identity};
use task::{Next, Receiver, Task};

/// The first pause after a receiver's task failed on an error (the inbox database, tmux);
/// doubled on each failure in a row, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// The longest pause between attempts at a receiver whose tasks keep failing.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

async fn find(connections: &Connections, pane: PaneId) -> Option<Receiver> {
    for handle in connections.values() {
        if let Ok(panes) = handle.panes().await
            && let Some(summary) = panes.into_iter().find(|p| p.pane == pane)
        {
            return Some(Receiver {
                handle: handle.clone(),
                summary,
            });
        }
    }
    None
}

/// Runs deliveries until `cancel` fires.
pub async fn run(
    inbox: InboxHandle,
    mut connections: watch::Receiver<Connections>,
    providers: watch::Receiver<Arc<ProviderSet>>,
    bus: EventBus,
    options: DeliveryOptions,
    tracker: tokio_util::task::TaskTracker,
    cancel: CancellationToken,
) {
    let mut events = bus.subscribe();
    let (done_sender, mut done) = mpsc::unbounded_channel::<(PaneId, Next)>();
    let mut in_flight: BTreeSet<PaneId> = BTreeSet::new();
    let mut missing_since: BTreeMap<PaneId, Instant> = BTreeMap::new();
    // Receivers not started again until news of them (`None`) or until a time (after errors).
    let mut parked: BTreeMap<PaneId, Option<Instant>> = BTreeMap::new();
    let mut failures: BTreeMap<PaneId, u32> = BTreeMap::new();
    // Receivers in flight that had news meanwhile: looked at again when their task ends.
    let mut stirred: BTreeSet<PaneId> = BTreeSet::new();
    let mut store_backoff = Duration::ZERO;
    let mut connections_open = true;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            () = inbox.queued() => unpark_all(&mut parked),
            Some((pane, next)) = done.recv() => {
                in_flight.remove(&pane);
                let news = stirred.remove(&pane);
                match next {
                    Next::Again => {
                        failures.remove(&pane);
                    }
                    Next::Wait => {
                        failures.remove(&pane);
                        if !news {
                            parked.insert(pane, None);
                            continue;
                        }
                    }
                    Next::Error => {
                        let count = failures.entry(pane).or_default();
                        *count = count.saturating_add(1);
                        parked.insert(pane, Some(Instant::now() + backoff(*count)));
                        continue;
                    }
                }
            }
            event = events.recv() => match event {
                Ok(event) => match event_pane(&event) {
                    Some(pane) => {
                        if parked.get(&pane).is_some_and(Option::is_none) {
                            parked.remove(&pane);
                        }
                        if in_flight.contains(&pane) {
                            stirred.insert(pane);
                        }
                    }
                    None => continue,
                },
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    unpark_all(&mut parked);
                    stirred.extend(in_flight.iter().copied());
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            changed = connections.changed(), if connections_open => {
                // A closed channel would answer at once forever: stop listening to it.
                if changed.is_err() {
                    connections_open = false;
                    continue;
                }
                unpark_all(&mut parked);
            }
            _ = tick.tick() => unpark_all(&mut parked),
        }
        if !store_backoff.is_zero() {
            // The database failed last time: do not hammer it.
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(store_backoff) => {}
            }
        }
        // A damaged database was reported once (and is in health): nothing is delivered from
        // it, and the warnings of every pass would only repeat that.
        if inbox.damage().is_some() {
            continue;
        }
        let current = connections.borrow().clone();
        if let Err(error) = inbox.call(|store| store.expire(now_ms())).await {
            warn!(%error, "cannot expire messages");
            store_backoff = next_backoff(store_backoff);
            continue;
        }
        let receivers = match inbox
            .call(|store| {
                let mut panes = store.receivers()?;
                for m in store.list(None, Some(super::State::Delivering))? {
                    if !panes.contains(&m.pane) {
                        panes.push(m.pane);
                    }
                }
                Ok(panes)
            })
            .await
        {
            Ok(receivers) => {
                store_backoff = Duration::ZERO;
                receivers
            }
            Err(error) => {
                warn!(%error, "cannot read the inbox");
                store_backoff = next_backoff(store_backoff);
                continue;
            }
        };
        for name in receivers {
            let Ok(pane) = name.parse::<PaneId>() else {
                fail_all(&inbox, &name, "not a pane id").await;
                continue;
            };
            if in_flight.contains(&pane) || parked.contains_key(&pane) {
                continue;
            }
            let Some(receiver) = find(&current, pane).await else {
                let since = *missing_since.entry(pane).or_insert_with(Instant::now);
                if since.elapsed() >= options.missing_grace {
                    fail_all(&inbox, &name, "the pane is gone").await;
                    missing_since.remove(&pane);
                }
                continue;
            };
            missing_since.remove(&pane);
            in_flight.insert(pane);
            let settings = receiver
                .summary
                .provider
                .as_deref()
                .and_then(|id| providers.borrow().get(id).map(|p| p.delivery.clone()))
                .unwrap_or_default();
            let task = Task {
                inbox: inbox.clone(),
                bus: bus.clone(),
                options: options.clone(),
                settings,
                receiver,
            };
            let done = done_sender.clone();
            let cancel = cancel.clone();
            // At shutdown a delivery stops at its next await, as a crash would stop it: what it
            // committed is recovered at the next start (see `recover`).
            tracker.spawn(async move {
                tokio::select! {
                    () = cancel.cancelled() => {}
                    next = task.serve() => {
                        let _ = done.send((pane, next));
                    }
                }
            });
        }
    }
}

/// The pane an event brings news of, for the events that can make a receiver ready or gone.
fn event_pane(event: &DaemonEvent) -> Option<PaneId> {
    match &event.kind {
        EventKind::Status { pane, .. }
        | EventKind::PaneRemoved { pane }
        | EventKind::PaneAdded { pane, .. } => Some(*pane),
        _ => None,
    }
}

/// Lets every receiver parked until news be started again (those pausing after errors wait out
/// their pause).
fn unpark_all(parked: &mut BTreeMap<PaneId, Option<Instant>>) {
    let now = Instant::now();
    parked.retain(|_, until| until.is_some_and(|until| until > now));
}

/// The pause after `failures` errors in a row.
fn backoff(failures: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1u32 << failures.saturating_sub(1).min(16))
        .min(MAX_BACKOFF)
}

/// The pause after one more error in a row than `previous` was for.
fn next_backoff(previous: Duration) -> Duration {
    (previous * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF)
}

/// Fails every pending or delivering message of a receiver (holds those that wait for their
/// agent: [`super::held`]).
async fn fail_all(inbox: &InboxHandle, pane: &str, reason: &'static str) {
    let pane = pane.to_string();
    let result = inbox
        .call(move |store| {
            let (mut failed, mut held) = (Vec::new(), Vec::new());
            for m in store.list(Some(&pane), Some(super::State::Delivering))? {
                failed.push(store.failed(m.id, reason)?.id);
            }
            // A pending message for a named agent restore knows waits for it instead.
            for m in store.list(Some(&pane), Some(super::State::Pending))? {
                let after = store.fail_or_hold(m.id, reason)?;
                match after.state {
                    super::State::Held => held.push(after.id),
                    _ => failed.push(after.id),
                }
            }
            Ok((failed, held))
        })
        .await;
    match result {
        Ok((failed, held)) => {
            if !failed.is_empty() {
                warn!(ids = ?failed, reason, "messages failed");
            }
            if !held.is_empty() {
                tracing::info!(ids = ?held, reason, "messages held for their agent");
            }
        }
        Err(error) => warn!(%error, "cannot fail messages"),
    }
}
