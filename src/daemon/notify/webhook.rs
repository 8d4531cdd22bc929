//! The webhook: each notification as a JSON `POST` to a URL of the user's (ntfy, a chat bot's
//! relay, a script of theirs), from a queue of its own so that an endpoint that is slow, down or
//! hangs never holds the daemon up.
//!
//! One task posts the queued notifications in order. Each try has a timeout; a connection
//! error, a timeout or a 5xx answer is tried again after a backoff that doubles (three tries in
//! all); a 4xx answer is not (the endpoint refused it, and would again). A notification given up
//! on, or refused because the queue is full, is logged and counted
//! ([`crate::events::notifications_dropped`], in `panectl health`).
//!
//! Plain `http://` only: `https://` would need a TLS stack the daemon does not carry. For a
//! service on the internet, post to a relay on this machine or the local network (ntfy can be
//! self-hosted; a reverse proxy can add TLS).

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

/// Notifications waiting to be posted; more are dropped (and counted).
const QUEUE: usize = 32;

/// Tries per notification.
const TRIES: u32 = 3;

/// Why a webhook URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("not a URL: {0}")]
    Invalid(String),
    /// A scheme other than `http`.
    #[error(
        "only http:// webhooks are supported (no TLS in the daemon; post to a local relay): {0}"
    )]
    Scheme(String),
}

/// A webhook's address, checked: `http://HOST[:PORT][/PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    host: String,
    port: u16,
    authority: String,
    path: String,
}

impl WebhookUrl {
    /// Reads `text` as an `http://` URL.
    pub fn parse(text: &str) -> Result<WebhookUrl, UrlError> {
        let text = text.trim();
        let uri: hyper::Uri = text
            .parse()
            .map_err(|_| UrlError::Invalid(text.to_string()))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(_) => return Err(UrlError::Scheme(text.to_string())),
            None => return Err(UrlError::Invalid(text.to_string())),
        }
        let authority = uri
            .authority()
            .ok_or_else(|| UrlError::Invalid(text.to_string()))?;
        if authority.as_str().contains('@') {
            // Credentials in the URL would be sent nowhere (no Authorization header is made
            // from them): refuse rather than post without them.
            return Err(UrlError::Invalid(text.to_string()));
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if host.is_empty() {
            return Err(UrlError::Invalid(text.to_string()));
        }
        let path = uri
            .path_and_query()
            .map_or("/".to_string(), |p| p.as_str().to_string());
        Ok(WebhookUrl {
            host,
            port: authority.port_u16().unwrap_or(80),
            authority: authority.as_str().to_string(),
            path: if path.is_empty() { "/".into() } else { path },
        })
    }
}

impl std::fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority, self.path)
    }
}

/// How the webhook posts.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How long one try may take, from connecting to the answer's status.
    pub timeout: Duration,
    /// The wait before the second try; it doubles before each further one.
    pub backoff: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            timeout: Duration::from_secs(5),
            backoff: Duration::from_secs(1),
        }
    }
}

/// The queue in front of the posting task; cloning it shares the queue.
#[derive(Debug, Clone)]
pub struct Webhook {
    queue: mpsc::Sender<(WebhookUrl, Bytes)>,
}

/// What one try came to.
#[derive(Debug, PartialEq, Eq)]
enum Try {
    /// A 2xx (or 3xx: nothing is followed) answer.
    Delivered(u16),
    /// Worth another try: the connection failed, timed out, or the server failed (5xx).
    Again(String),
    /// Refused (4xx): another try would be refused too.
    Refused(u16),
}

impl Webhook {
    /// Starts the posting task on `tracker`; it ends with `cancel`.
    pub fn start(timing: Timing, tracker: &TaskTracker, cancel: CancellationToken) -> Webhook {
        let (queue, receiver) = mpsc::channel(QUEUE);
        tracker.spawn(post_all(receiver, timing, cancel));
        Webhook { queue }
    }

    /// Queues `body` (JSON) for `url`, at once: when the queue is full the notification is
    /// dropped, logged and counted.
    pub fn post(&self, url: WebhookUrl, body: Bytes) {
        match self.queue.try_send((url, body)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full((url, _))) => {
                crate::events::count_notification_dropped();
                warn!(%url, "the webhook's queue is full (its endpoint is slow or hangs): a notification is dropped");
            }
            Err(mpsc::error::TrySendError::Closed((url, _))) => {
                crate::events::count_notification_dropped();
                warn!(%url, "the webhook task has ended: a notification is dropped");
            }
        }
    }
}

/// Posts what is queued, one at a time, until `cancel`.
async fn post_all(
    mut receiver: mpsc::Receiver<(WebhookUrl, Bytes)>,
    timing: Timing,
    cancel: CancellationToken,
) {
    loop {
        let next = tokio::select! {
            () = cancel.cancelled() => break,
            next = receiver.recv() => next,
        };
        let Some((url, body)) = next else { break };
        tokio::select! {
            () = cancel.cancelled() => {
                crate::events::count_notification_dropped();
                warn!(%url, "the daemon stops: a webhook notification being posted is dropped");
                break;
            }
            () = post(&url, body, timing) => {}
        }
    }
    receiver.close();
    let mut left = 0;
    while receiver.try_recv().is_ok() {
        crate::events::count_notification_dropped();
        left += 1;
    }
    if left > 0 {
        warn!(
            left,
            "the daemon stops: queued webhook notifications are dropped"
        );
    }
}

/// Posts one notification, trying again after failures that may pass.
async fn post(url: &WebhookUrl, body: Bytes, timing: Timing) {
    let mut backoff = timing.backoff;
    for attempt in 1..=TRIES {
        match try_once(url, body.clone(), timing.timeout).await {
            Try::Delivered(status) => {
                info!(%url, status, attempt, "posted the notification to the webhook");
                return;
            }
            Try::Refused(status) => {
                crate::events::count_notification_dropped();
                warn!(%url, status, "the webhook refused the notification (not tried again)");
                return;
            }
            Try::Again(reason) if attempt < TRIES => {
                debug!(%url, attempt, %reason, ?backoff, "the webhook failed; trying again");
                tokio::time::sleep(backoff).await;
                backoff = backoff.saturating_mul(2);
            }
            Try::Again(reason) => {
                crate::events::count_notification_dropped();
                warn!(%url, tries = TRIES, %reason, "the webhook failed every try: a notification is dropped");
            }
        }
    }
}

/// One `POST`, within `timeout`.
async fn try_once(url: &WebhookUrl, body: Bytes, timeout: Duration) -> Try {
    match tokio::time::timeout(timeout, request(url, body)).await {
        Ok(Ok(status)) if status >= 500 => Try::Again(format!("answered {status}")),
        Ok(Ok(status)) if status >= 400 => Try::Refused(status),
        Ok(Ok(status)) => Try::Delivered(status),
        Ok(Err(reason)) => Try::Again(reason.to_string()),
        Err(_) => Try::Again(format!("no answer within {timeout:?}")),
    }
}

/// Why one `POST` to the webhook failed (it is tried again).
#[derive(Debug, thiserror::Error)]
enum PostError {
    /// No connection to the webhook's host.
    #[error("cannot connect: {0}")]
    Connect(std::io::Error),
    /// The HTTP exchange failed.
    #[error(transparent)]
    Http(#[from] hyper::Error),
    /// The request could not be built.
    #[error(transparent)]
    Request(#[from] hyper::http::Error),
}

/// Connects, posts and reads the answer's status (and drains its body, a little of it).
async fn request(url: &WebhookUrl, body: Bytes) -> Result<u16, PostError> {
    let stream = tokio::net::TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(PostError::Connect)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The connection is driven beside the request and dropped with it (on a timeout too).
    let request = hyper::Request::post(url.path.as_str())
        .header(hyper::header::HOST, url.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(
            hyper::header::USER_AGENT,
            concat!("panectl/", env!("CARGO_PKG_VERSION")),
        )
        .body(Full::new(body))?;
    let exchange = async {
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        // Read the answer's body (ignored) so that the exchange ends cleanly.
        let _ = response.into_body().collect().await;
        Ok::<u16, PostError>(status)
    };
    tokio::pin!(connection);
    tokio::pin!(exchange);
    tokio::select! {
        result = &mut exchange => result,
        done = &mut connection => match done {
            Err(error) => Err(error.into()),
            // The connection ended; the exchange finishes (or fails) on its own.
            Ok(()) => exchange.await,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_urls_are_taken() {
        let url = WebhookUrl::parse("http://127.0.0.1:8080/topic?x=1").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 8080));
        assert_eq!(url.path, "/topic?x=1");
        assert_eq!(url.to_string(), "http://127.0.0.1:8080/topic?x=1");
        let url = WebhookUrl::parse("http://ntfy.lan").unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.path.as_str()),
            ("ntfy.lan", 80, "/")
        );
        let url = WebhookUrl::parse("http://[::1]:9/x").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("::1", 9));
        assert!(matches!(
            WebhookUrl::parse("https://ntfy.sh/x"),
            Err(UrlError::Scheme(_))
        ));
        for bad in [
            "",
            "ntfy.sh/x",
            "http://user:pw@host/",
            "http:///x",
            "not a url",
        ] {
            assert!(WebhookUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_closed_port_is_tried_again_and_counted_once() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = WebhookUrl::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        assert!(matches!(
            try_once(&url, Bytes::from_static(b"{}"), Duration::from_secs(2)).await,
            Try::Again(_)
        ));
        let before = crate::events::notifications_dropped();
        let timing = Timing {
            timeout: Duration::from_secs(1),
            backoff: Duration::from_millis(10),
        };
        post(&url, Bytes::from_static(b"{}"), timing).await;
        assert!(crate::events::notifications_dropped() > before);
    }
}
