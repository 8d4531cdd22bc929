//! `GET /v1/events`: the event bus as Server-Sent Events, numbered, with a `lagged` event where
//! a client missed some.
//!
//! - **Resuming.** Each event's SSE id is `EPOCH-ID` ([`EventBus::stream_id`]). A client that
//!   reconnects with `Last-Event-ID` (or `?last_event_id=`) gets the events it missed from the
//!   daemon's recent history ([`crate::events::HISTORY`] events), then the live ones; when some
//!   are no longer kept, or the id is not this daemon's (it restarted), a `lagged` event says so
//!   first (`missed`: how many, or `null` when unknown).
//! - **Filters.** `?pane=%1` keeps the events about that pane; `?type=status,message` those
//!   types (an unknown type is a 400 that lists the valid ones).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::stream::{Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::ApiError;
use super::state::ApiState;
use crate::events::{DaemonEvent, EventBus, EventKind};

/// The route's query.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct EventsQuery {
    /// Only events about this pane.
    pane: Option<String>,
    /// Only these types, comma-separated.
    #[serde(rename = "type")]
    types: Option<String>,
    /// Resume after this event (as `Last-Event-ID`, which wins).
    last_event_id: Option<String>,
}

/// Which events a client asked for.
#[derive(Debug, Default)]
struct Filter {
    pane: Option<String>,
    types: Option<BTreeSet<&'static str>>,
}

impl Filter {
    fn from_query(query: &EventsQuery) -> Result<Filter, ApiError> {
        let types = match query.types.as_deref().filter(|t| !t.is_empty()) {
            None => None,
            Some(list) => {
                let mut types = BTreeSet::new();
                for name in list.split(',').map(str::trim) {
                    let Some(known) = EventKind::TYPES.iter().find(|t| **t == name) else {
                        return Err(ApiError(
                            axum::http::StatusCode::BAD_REQUEST,
                            format!(
                                "unknown event type {name:?} ({})",
                                EventKind::TYPES.join(", ")
                            ),
                        ));
                    };
                    types.insert(*known);
                }
                Some(types)
            }
        };
        Ok(Filter {
            pane: query.pane.clone().filter(|p| !p.is_empty()),
            types,
        })
    }

    fn keeps(&self, event: &DaemonEvent) -> bool {
        self.types
            .as_ref()
            .is_none_or(|types| types.contains(event.kind.type_name()))
            && self
                .pane
                .as_ref()
                .is_none_or(|pane| event.kind.pane().as_deref() == Some(pane.as_str()))
    }
}

fn sse_event(bus: &EventBus, event: &DaemonEvent) -> SseEvent {
    SseEvent::default()
        .id(bus.stream_id(event))
        .event(event.kind.type_name())
        .data(serde_json::to_string(event).unwrap_or_default())
}

fn lagged(missed: Option<u64>) -> SseEvent {
    SseEvent::default()
        .event("lagged")
        .data(serde_json::json!({ "type": "lagged", "missed": missed }).to_string())
}

/// Live events after `last_sent` (earlier ones were sent from the history), filtered.
fn event_stream(
    bus: EventBus,
    receiver: broadcast::Receiver<Arc<DaemonEvent>>,
    last_sent: u64,
    filter: Filter,
    shutdown: CancellationToken,
) -> impl Stream<Item = Result<SseEvent, std::convert::Infallible>> {
    futures::stream::unfold(
        (bus, receiver, shutdown, filter),
        move |(bus, mut receiver, shutdown, filter)| async move {
            loop {
                let next = tokio::select! {
                    () = shutdown.cancelled() => return None,
                    next = receiver.recv() => next,
                };
                let event = match next {
                    Ok(event) if event.id <= last_sent || !filter.keeps(&event) => continue,
                    Ok(event) => sse_event(&bus, &event),
                    Err(broadcast::error::RecvError::Lagged(missed)) => lagged(Some(missed)),
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                return Some((Ok(event), (bus, receiver, shutdown, filter)));
            }
        },
    )
}

pub(crate) async fn events(
    State(state): State<ApiState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let filter = Filter::from_query(&query)?;
    let bus = state.ctx.bus.clone();
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or(query.last_event_id);
    // Subscribed before anything is read: every later event follows.
    let resumed = bus.resume(last.as_deref().unwrap_or(""));
    let mut first = vec![
        SseEvent::default().event("subscribed").data(
            serde_json::json!({
                "type": "subscribed",
                "last_event": resumed.last_sent,
                "epoch": bus.epoch(),
            })
            .to_string(),
        ),
    ];
    if last.is_some() {
        if resumed.missed != Some(0) {
            first.push(lagged(resumed.missed));
        }
        first.extend(
            resumed
                .kept
                .iter()
                .filter(|event| filter.keeps(event))
                .map(|event| sse_event(&bus, event)),
        );
    }
    let live = event_stream(
        bus,
        resumed.receiver,
        resumed.last_sent,
        filter,
        state.ctx.shutdown.clone(),
    );
    let stream = futures::stream::iter(first.into_iter().map(Ok)).chain(live);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
