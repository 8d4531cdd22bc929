//! The accept loop of the API's listeners (the Unix socket and the optional TCP one), with
//! limits that keep one client from starving the others or the daemon:
//!
//! - each listener has its own cap on open connections, so a flood on the TCP port leaves the
//!   Unix socket served; a connection over the cap waits a moment for a place, then is answered
//!   `503 Service Unavailable` (never reset without an answer);
//! - requests that hold their connection (event streams, waits, hand-offs, launches) may take
//!   only the cap less a reserve, so short requests (`health`, `send`) always find a place: one
//!   more such request is answered 503 (see [`StreamSlots`]);
//! - every request carries the [`Peer`] the kernel says is at the other end (never what the
//!   request says), for the routes that trust only some processes (hooks);
//! - a request's head must arrive within a timeout (also on an idle kept-alive connection), so
//!   half-sent requests cannot hold connections, and their memory, for ever;
//! - refused connections and accept errors are logged at most once per [`LOG_EVERY`], with a
//!   count of the ones not logged, so a flood cannot fill the log;
//! - when the last connection of a burst closes, the allocator is asked to give freed memory
//!   back to the system (glibc keeps it otherwise).

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How often, at most, a listener logs refused connections and accept errors.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// How long connections may take to finish their requests once the daemon stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long a connection over the cap waits for a place before it is answered 503 (twice as
/// many connections as the cap may wait; more are closed at once).
const OVERFLOW_WAIT: Duration = Duration::from_secs(5);

/// The limits of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; more wait a moment for a place, then are answered 503.
    pub max_connections: usize,
    /// How long a request's head (request line and headers) may take to arrive, counted from
    /// when the connection waits for it (a new connection, or a kept-alive one after an
    /// answer).
    pub header_timeout: Duration,
}

impl Limits {
    /// The Unix socket's defaults: only the daemon's user can connect; event streams, waits
    /// and handoffs each hold a connection.
    pub const UNIX: Limits = Limits {
        max_connections: 512,
        header_timeout: Duration::from_secs(10),
    };
    /// The TCP listener's defaults: other local users can connect (without the token they get
    /// no answer but a 401, yet they hold a connection until then).
    pub const TCP: Limits = Limits {
        max_connections: 128,
        header_timeout: Duration::from_secs(10),
    };

    /// Connections kept for short requests: requests that hold their connection may take the
    /// rest (an eighth of the cap, at least one, when the cap allows it).
    pub fn reserve(&self) -> usize {
        if self.max_connections < 2 {
            0
        } else {
            (self.max_connections / 8).max(1)
        }
    }
}

/// Who is at the other end of an API connection, as the kernel says (`SO_PEERCRED` on the Unix
/// socket); what a request's body says of its sender is never taken for it. Every request
/// carries it as an extension.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peer {
    /// The peer's process (Unix socket only).
    pub pid: Option<u32>,
}

/// The places for requests that hold their connection (event streams, long waits): the cap
/// less the reserve kept for short requests. Every request carries it as an extension; a route
/// that holds its connection takes a place with [`StreamSlots::take`] for as long as it does.
#[derive(Debug, Clone)]
pub struct StreamSlots(Arc<Semaphore>);

impl StreamSlots {
    /// Places for `limits`.
    pub fn new(limits: &Limits) -> StreamSlots {
        let places = limits
            .max_connections
            .saturating_sub(limits.reserve())
            .max(1);
        StreamSlots(Arc::new(Semaphore::new(places)))
    }

    /// A place, held until dropped; `None` when all are taken.
    pub fn take(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.0).try_acquire_owned().ok()
    }
}

/// A source of connections: a bound socket that may refuse some peers.
pub trait Accept: Send + 'static {
    /// A connection.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection and its peer; `Ok(None)` when one was accepted and refused
    /// (already logged).
    fn accept(&mut self) -> impl Future<Output = io::Result<Option<(Self::Io, Peer)>>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;

    async fn accept(&mut self) -> io::Result<Option<(Self::Io, Peer)>> {
        let (stream, _) = tokio::net::TcpListener::accept(self).await?;
        // Answers are small and written whole: no need to wait for more to send.
        let _ = stream.set_nodelay(true);
        Ok(Some((stream, Peer::default())))
    }
}

/// A log line that is written at most once per period; the ones held back are counted and the
/// count is given with the next one written.
#[derive(Debug)]
pub struct RateLimitedLog {
    every: Duration,
    last: Option<Instant>,
    held_back: u64,
}

impl RateLimitedLog {
    /// At most one line per `every`.
    pub fn new(every: Duration) -> RateLimitedLog {
        RateLimitedLog {
            every,
            last: None,
            held_back: 0,
        }
    }

    /// Whether to write a line now: `Some(lines held back since the last one)`, or `None`
    /// (this one is counted instead).
    pub fn allow(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.duration_since(last) < self.every => {
                self.held_back += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.held_back))
            }
        }
    }
}

/// Gives memory freed by closed connections back to the system. glibc's allocator keeps freed
/// memory in its arenas (one per thread that allocated) until told otherwise, so a burst of
/// connections would leave the daemon's resident size at its peak.
pub fn return_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only walks the allocator's own lists, under its locks.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

/// What the connection tasks share.
struct Shared {
    name: &'static str,
    open: AtomicUsize,
    /// The most connections open at once since memory was last returned.
    peak: AtomicUsize,
}

/// Connections open at once after which closing the last one returns memory.
const RETURN_MEMORY_AFTER: usize = 16;

/// Serves `app` on `listener` within `limits` until `cancel` fires; `name` says which listener
/// in the log.
pub async fn serve<L: Accept>(
    mut listener: L,
    app: Router,
    limits: Limits,
    name: &'static str,
    cancel: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Connections over the cap waiting for a place (or being answered 503): twice the cap;
    // past that a connection is closed at once, which bounds the descriptors a flood can hold
    // (the other listener shares them).
    let waiting = Arc::new(Semaphore::new(limits.max_connections.max(1) * 2));
    let slots = StreamSlots::new(&limits);
    let shared = Arc::new(Shared {
        name,
        open: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let connections = TaskTracker::new();
    let mut refused_log = RateLimitedLog::new(LOG_EVERY);
    let mut error_log = RateLimitedLog::new(LOG_EVERY);
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (io, peer) = match accepted {
            Ok(Some(accepted)) => accepted,
            Ok(None) => continue,
            Err(error) => {
                if let Some(held_back) = error_log.allow(Instant::now()) {
                    tracing::warn!(
                        listener = name,
                        %error,
                        held_back,
                        "accepting an API connection failed"
                    );
                }
                // Out of file descriptors: give the open connections time to end.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let app = with_extensions(app.clone(), peer, slots.clone());
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                if let Some(held_back) = refused_log.allow(Instant::now()) {
                    tracing::warn!(
                        listener = name,
                        max = limits.max_connections,
                        held_back,
                        "API connections over the cap: waiting for a place, else answered 503 \
                         (a client holding connections?)"
                    );
                }
                None
            }
        };
        let shared = Arc::clone(&shared);
        let cancel = cancel.clone();
        match permit {
            Some(permit) => {
                connections.spawn(serve_counted(io, app, limits, cancel, permit, shared));
            }
            None => {
                let permits = Arc::clone(&permits);
                let Ok(waiting) = Arc::clone(&waiting).try_acquire_owned() else {
                    drop(io);
                    continue;
                };
                connections.spawn(async move {
                    let place = tokio::time::timeout(OVERFLOW_WAIT, permits.acquire_owned())
                        .await
                        .ok()
                        .and_then(Result::ok);
                    match place {
                        Some(permit) => {
                            drop(waiting);
                            serve_counted(io, app, limits, cancel, permit, shared).await;
                        }
                        None => {
                            serve_connection(io, overloaded(), limits, &cancel).await;
                            drop(waiting);
                        }
                    }
                });
            }
        }
    }
    connections.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, connections.wait())
        .await
        .is_err()
    {
        tracing::debug!(
            listener = name,
            "connections still open at shutdown; dropped"
        );
    }
}

/// The app with what every request of one connection carries: its peer and the stream places.
fn with_extensions(app: Router, peer: Peer, slots: StreamSlots) -> Router {
    app.layer(axum::Extension(peer))
        .layer(axum::Extension(slots))
}

/// The app of a connection that found no place: every request is answered 503 and the
/// connection closed.
fn overloaded() -> Router {
    use axum::response::IntoResponse;
    Router::new().fallback(|| async {
        let mut answer = super::error::ApiError(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "the daemon has too many API connections open; try again".into(),
        )
        .into_response();
        let headers = answer.headers_mut();
        headers.insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        headers.insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from_static("1"),
        );
        answer
    })
}

/// Serves a connection that holds a place, and gives the place back.
async fn serve_counted<I>(
    io: I,
    app: Router,
    limits: Limits,
    cancel: CancellationToken,
    permit: tokio::sync::OwnedSemaphorePermit,
    shared: Arc<Shared>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let open = shared.open.fetch_add(1, Ordering::Relaxed) + 1;
    shared.peak.fetch_max(open, Ordering::Relaxed);
    serve_connection(io, app, limits, &cancel).await;
    drop(permit);
    if shared.open.fetch_sub(1, Ordering::Relaxed) == 1
        && shared.peak.swap(0, Ordering::Relaxed) >= RETURN_MEMORY_AFTER
    {
        tracing::debug!(listener = shared.name, "returning memory after a burst");
        return_memory();
    }
}

/// Serves one connection: HTTP/1.1 with the head timeout; ends it gracefully when `cancel`
/// fires (an answer being written is finished).
async fn serve_connection<I>(io: I, app: Router, limits: Limits, cancel: &CancellationToken)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let connection = builder
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(app))
        .with_upgrades();
    tokio::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => ended,
        () = cancel.cancelled() => {
            connection.as_mut().graceful_shutdown();
            match tokio::time::timeout(SHUTDOWN_GRACE, connection.as_mut()).await {
                Ok(ended) => ended,
                Err(_) => Ok(()),
            }
        }
    };
    if let Err(error) = ended {
        // Timeouts, resets and malformed requests: the client's doing, not worth a warning.
        tracing::trace!(%error, "an API connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_written_once_per_period_with_a_count() {
        let mut log = RateLimitedLog::new(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(log.allow(start), Some(0));
        for i in 1..=100 {
            assert_eq!(log.allow(start + Duration::from_millis(i)), None);
        }
        assert_eq!(log.allow(start + Duration::from_secs(10)), Some(100));
        assert_eq!(log.allow(start + Duration::from_secs(11)), None);
    }
}
