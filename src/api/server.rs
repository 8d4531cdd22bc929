//! The local API: HTTP/1.1 and JSON over a Unix socket that only the daemon's user can use.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/health` | daemon, server and counter summary (JSON) |
//! | `GET /v1/panes` | every pane (JSON list) |
//! | `GET /v1/panes/{pane}` | one pane (JSON) |
//! | `GET /v1/panes/{pane}/screen[?format=ansi]` | the mirrored screen (text, or ANSI) |
//! | `GET /v1/panes/{pane}/output[?from=SEQ&limit=N]` | recent output bytes, headers say which |
//! | `GET /v1/panes/{pane}/explain` | which status rule fired and why the others did not (JSON) |
//! | `GET /v1/panes/{pane}/last-response` | the agent's last answer, without TUI chrome (text) |
//! | `POST /v1/panes/{pane}/provider` | `{"provider": "codex"}` assigns a provider, `null` unassigns |
//! | `POST /v1/panes/{pane}/hook` | an agent's hook event (from `panectl hook`): a status signal |
//! | `POST /v1/sessions/{session}/transport` | the same for every pane of a session (`$N` or its name), and its new panes |
//! | `POST /v1/panes/{pane}/transport` | `{"transport": "pipe"}` moves the pane's output to `pipe-pane`, `"control"` back |
//! | `GET /v1/providers` | the provider rules in force |
//! | `GET /v1/events` | Server-Sent Events: every change, numbered |
//!
//! and the orchestration routes (messages, input, keys, wait, agents, handoff, assign); the
//! whole list is the table of [`super::routes`], described in `docs/API.md` and served as OpenAPI at
//! `GET /v1/openapi.json` (generated from the handlers' and the wire types' annotations by
//! [`super::openapi`]). `{pane}` is any name [`crate::orchestration::names::resolve`] accepts, percent-encoded.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Instant;

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

/// A Unix listener that only hands out connections from the daemon's own user.
pub struct PeerCheckedListener {
    listener: UnixListener,
    uid: u32,
    refused_log: super::listen::RateLimitedLog,
}

impl PeerCheckedListener {
    /// Binds the socket (replacing a stale file) with mode 0600.
    pub fn bind(path: &Path) -> io::Result<PeerCheckedListener> {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(PeerCheckedListener {
            listener,
            uid: nix::unistd::getuid().as_raw(),
            refused_log: super::listen::RateLimitedLog::new(super::listen::LOG_EVERY),
        })
    }
}

impl super::listen::Accept for PeerCheckedListener {
    type Io = UnixStream;

    async fn accept(&mut self) -> io::Result<Option<(UnixStream, super::listen::Peer)>> {
        let (stream, _) = self.listener.accept().await?;
        let refused = match stream.peer_cred() {
            Ok(cred) if cred.uid() == self.uid => {
                let peer = super::listen::Peer {
                    pid: cred.pid().and_then(|pid| u32::try_from(pid).ok()),
                };
                return Ok(Some((stream, peer)));
            }
            Ok(cred) => format!("uid {}", cred.uid()),
            Err(error) => format!("unknown (cannot check: {error})"),
        };
        if let Some(held_back) = self.refused_log.allow(Instant::now()) {
            tracing::warn!(
                peer = refused,
                held_back,
                "refused an API connection from another user"
            );
        }
        Ok(None)
    }
}

/// Serves the API on the Unix socket within `limits` until `cancel` fires.
pub async fn serve(
    listener: PeerCheckedListener,
    state: ApiState,
    limits: super::listen::Limits,
    cancel: CancellationToken,
) {
    super::listen::serve(listener, router(state), limits, "unix", cancel).await;
}

/// The routes of [`super::routes`], each route that holds its connection behind a stream slot.
pub fn router(state: ApiState) -> Router {
    super::routes::served()
        .into_iter()
        .fold(Router::new(), |router, route| {
            let handler = if route.holds {
                route
                    .handler
                    .layer(axum::middleware::from_fn(take_stream_slot))
            } else {
                route.handler
            };
            router.route(&route.path, handler)
        })
        // A 1 MiB message sent as `body_hex` is 2 MiB of JSON.
        .layer(axum::extract::DefaultBodyLimit::max(4 << 20))
        .layer(axum::middleware::map_response(json_rejections))
        .with_state(state)
}

/// Gives a request that holds its connection one of the stream places for as long as its
/// answer lasts (an event stream's whole life), or answers 503 when none is left: the
/// places left are kept for short requests.
async fn take_stream_slot(
    slots: Option<axum::Extension<super::listen::StreamSlots>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use futures::StreamExt;
    let Some(axum::Extension(slots)) = slots else {
        return next.run(request).await;
    };
    let Some(place) = slots.take() else {
        let mut answer = ApiError(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "too many event streams and waits are open (the rest of the connections are kept \
             for short requests); close some and try again"
                .into(),
        )
        .into_response();
        // The connection is given back too: a client that never reads would keep it.
        answer.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        return answer;
    };
    let response = next.run(request).await;
    // An answer of known length is complete: the place is free again.
    if hyper::body::Body::size_hint(response.body())
        .exact()
        .is_some()
    {
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &place;
        chunk
    });
    Response::from_parts(parts, axum::body::Body::from_stream(body))
}

/// Gives the errors axum answers by itself (a body that is not the JSON a route takes, a bad
/// path or query value, a body too large) the same `{"error": ...}` form as the routes' own.
async fn json_rejections(response: Response) -> Response {
    let status = response.status();
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain"));
    if !status.is_client_error() || !plain {
        return response;
    }
    let text = match axum::body::to_bytes(response.into_body(), 64 * 1024).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => status
            .canonical_reason()
            .unwrap_or("bad request")
            .to_string(),
    };
    ApiError(status, text).into_response()
}

use super::error::ApiError;
use super::state::ApiState;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use axum::http::StatusCode;

    use super::*;

    #[tokio::test]
    async fn axum_rejections_are_json_errors_too() {
        let rejected = (StatusCode::UNPROCESSABLE_ENTITY, "missing field `text`").into_response();
        let answer = json_rejections(rejected).await;
        assert_eq!(answer.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let body = axum::body::to_bytes(answer.into_body(), 1024)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"], "missing field `text`");
        // The routes' own text answers pass untouched.
        let screen = (StatusCode::OK, "a screen").into_response();
        let body = axum::body::to_bytes(json_rejections(screen).await.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(&body[..], b"a screen");
    }

    #[test]
    fn the_openapi_document_lists_exactly_the_routes() {
        let document: serde_json::Value =
            serde_json::from_str(super::super::openapi::document()).expect("the document is JSON");
        assert!(
            document["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3."))
        );
        let mut documented = BTreeSet::new();
        let mut operation_ids = BTreeSet::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("path item") {
                if method == "parameters" {
                    continue;
                }
                documented.insert((method.clone(), path.clone()));
                let id = operation["operationId"].as_str().unwrap_or_default();
                assert!(
                    operation_ids.insert(id.to_string()) && !id.is_empty(),
                    "{method} {path}: operationId {id:?} missing or not unique"
                );
                assert!(
                    operation["responses"]
                        .as_object()
                        .is_some_and(|r| !r.is_empty()),
                    "{method} {path}: no responses"
                );
            }
        }
        let routes = super::super::routes::served();
        let served: BTreeSet<(String, String)> = routes
            .iter()
            .map(|r| (r.method.clone(), r.path.clone()))
            .collect();
        assert_eq!(routes.len(), served.len(), "a route is listed twice");
        let missing: Vec<_> = served.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&served).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "not documented: {missing:?}; documented but not served: {extra:?}"
        );
    }
}
