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
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::{ApiError, ErrorBody};
use super::state::ApiState;
use crate::events::{DaemonEvent, EventBus, EventKind};

/// The route's query.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Only the events about this pane (`%N`, or any name a pane route takes); a pane that
    /// does not exist is a 404.
    pane: Option<String>,
    /// Only these event types, comma-separated (an unknown one is a 400 that lists the valid
    /// ones).
    #[serde(rename = "type")]
    types: Option<String>,
    /// Resume after this event, like `Last-Event-ID` (the header wins).
    last_event_id: Option<String>,
}

/// The `Last-Event-ID` header of the route (read from the headers; this type only describes
/// it in the OpenAPI document).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub(crate) struct ResumeHeader {
    /// Resume after this event (`EPOCH-N`, as the stream gave it).
    #[serde(rename = "Last-Event-ID")]
    #[expect(dead_code, reason = "read from the header map by name; described here")]
    last_event_id: Option<String>,
}

/// The events of a stream that are not the daemon's (they have no SSE `id:`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamNotice {
    /// The first event of every stream.
    Subscribed {
        /// The id of the last event published before the subscription: the stream's events
        /// follow it.
        last_event: u64,
        /// When the daemon started (ms since the Unix epoch): the first part of every event's
        /// SSE id.
        epoch: u64,
    },
    /// The reader missed events: it fell behind the daemon's buffer (16384 events), or it
    /// resumed from an event no longer kept or from another daemon's id. The missed events
    /// are not replayed.
    Lagged {
        /// How many events this reader missed (null: unknown, the id was not this daemon's).
        #[schema(required = true)]
        missed: Option<u64>,
    },
}

impl StreamNotice {
    fn sse(&self) -> SseEvent {
        let name = match self {
            StreamNotice::Subscribed { .. } => "subscribed",
            StreamNotice::Lagged { .. } => "lagged",
        };
        SseEvent::default()
            .event(name)
            .data(serde_json::to_string(self).unwrap_or_default())
    }
}

/// The `data:` of one Server-Sent Event of `GET /v1/events`: a daemon event (`DaemonEvent`,
/// with an SSE `id:`) or a notice of the stream (`StreamNotice`); the SSE `event:` field
/// repeats `type`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
#[expect(
    dead_code,
    reason = "describes what `sse_event` and `StreamNotice::sse` write, without copying events"
)]
pub(crate) enum Event {
    /// Something changed.
    Daemon(crate::events::DaemonEvent),
    /// About the stream itself.
    Notice(StreamNotice),
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
    StreamNotice::Lagged { missed }.sse()
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

/// Server-Sent Events: every change, numbered
///
/// An endless `text/event-stream`. Each event has `id:` (`EPOCH-N`: when the daemon started,
/// in ms since the Unix epoch, and the event's number from 1, increasing), `event:` (its type)
/// and one `data:` line holding the event as JSON (schema `Event`). The first event is
/// `subscribed` (`last_event`, `epoch`). A reader too slow for the daemon's buffer (16384
/// events) gets an event `lagged` whose data is `{"type": "lagged", "missed": N}` (no `id:`). A
/// client that reconnects with `Last-Event-ID` gets the events after it from the daemon's last
/// 4096, then the live ones; `lagged` first when some are no longer kept (`missed`: how many)
/// or when the id is not this daemon's (`missed`: null). Keep-alive comments are sent while
/// nothing happens. It ends when the daemon stops.
#[utoipa::path(
    get,
    path = "/v1/events",
    operation_id = "stream_events",
    tag = "events",
    params(EventsQuery, ResumeHeader),
    responses(
        (
            status = 200,
            description = "The event stream; each `data:` line is an `Event`.",
            content_type = "text/event-stream",
            body = String
        ),
        (
            status = 400,
            description = "An unknown event type (the message lists the valid ones).",
            body = ErrorBody
        ),
        (status = 404, response = super::responses::PaneNotFound),
        (status = 409, response = super::responses::PaneAmbiguous),
    )
)]
pub(crate) async fn events(
    State(state): State<ApiState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let mut filter = Filter::from_query(&query)?;
    // A pane is named as anywhere else (`%N`, `alpha`, `work:1.0`), and must exist: a
    // stream for a pane that is not there would wait for ever for nothing.
    if let Some(name) = filter.pane.take() {
        let (pane, _) = state.ctx.find(&name).await?;
        filter.pane = Some(pane.pane.to_string());
    }
    let bus = state.ctx.bus.clone();
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or(query.last_event_id);
    // Subscribed before anything is read: every later event follows.
    let resumed = bus.resume(last.as_deref().unwrap_or(""));
    let mut first = vec![
        StreamNotice::Subscribed {
            last_event: resumed.last_sent,
            epoch: bus.epoch(),
        }
        .sse(),
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
