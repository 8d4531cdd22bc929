//! `GET /v1/events`: the event bus as Server-Sent Events, numbered, with a `lagged` event where
//! a slow reader missed some.

use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::stream::{Stream, StreamExt};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::state::ApiState;
use crate::events::DaemonEvent;

fn sse_event(event: &DaemonEvent) -> SseEvent {
    let kind = serde_json::to_value(&event.kind)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "event".into());
    SseEvent::default()
        .id(event.id.to_string())
        .event(kind)
        .data(serde_json::to_string(event).unwrap_or_default())
}

fn event_stream(
    receiver: broadcast::Receiver<Arc<DaemonEvent>>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Result<SseEvent, std::convert::Infallible>> {
    futures::stream::unfold(
        (receiver, shutdown),
        |(mut receiver, shutdown)| async move {
            let next = tokio::select! {
                () = shutdown.cancelled() => return None,
                next = receiver.recv() => next,
            };
            let event = match next {
                Ok(event) => sse_event(&event),
                Err(broadcast::error::RecvError::Lagged(missed)) => SseEvent::default()
                    .event("lagged")
                    .data(serde_json::json!({ "type": "lagged", "missed": missed }).to_string()),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((Ok(event), (receiver, shutdown)))
        },
    )
}

pub(crate) async fn events(State(state): State<ApiState>) -> impl IntoResponse {
    // Subscribed before the last id is read: every event with a larger id follows.
    let receiver = state.ctx.bus.subscribe();
    let subscribed = SseEvent::default().event("subscribed").data(
        serde_json::json!({ "type": "subscribed", "last_event": state.ctx.bus.last_id() })
            .to_string(),
    );
    let stream = futures::stream::once(async move { Ok(subscribed) })
        .chain(event_stream(receiver, state.ctx.shutdown.clone()));
    Sse::new(stream).keep_alive(KeepAlive::default())
}
