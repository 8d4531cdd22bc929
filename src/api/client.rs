//! The CLI's side of the local API: HTTP/1.1 over the daemon's Unix socket.

use std::path::PathBuf;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::UnixStream;

use super::wire::PaneSummary;

/// Why a request to the daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens on the socket.
    #[error("no panectl daemon is running for the tmux server {server}; {start}")]
    NoDaemon {
        /// The tmux server.
        server: String,
        /// What to do: `start one with: COMMAND`, or why no daemon can start there.
        start: String,
    },
    /// The socket, its directory or the process behind it is not this user's: nothing was
    /// sent.
    #[error("refusing the daemon's API socket: {0}")]
    Untrusted(#[source] crate::trust::TrustError),
    /// The connection failed midway.
    #[error("talking to the daemon: {0}")]
    Transport(String),
    /// The daemon answered with an error.
    #[error("{message}")]
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The daemon's message.
        message: String,
    },
    /// The answer was not what the client expects.
    #[error("unexpected answer from the daemon: {0}")]
    Protocol(String),
}

/// An answer: status, headers and body.
#[derive(Debug)]
pub struct Answer {
    /// Headers.
    pub headers: hyper::HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Answer {
    /// A header as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A successful answer's body, parsed as the route's answer type.
async fn read_json<T: DeserializeOwned>(
    response: hyper::Response<hyper::body::Incoming>,
) -> Result<T, ClientError> {
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| ClientError::Transport(e.to_string()))?
        .to_bytes();
    serde_json::from_slice(&bytes).map_err(|e| ClientError::Protocol(e.to_string()))
}

/// A request body as JSON bytes.
fn json_bytes(body: &impl Serialize) -> Result<Vec<u8>, ClientError> {
    serde_json::to_vec(body).map_err(|e| ClientError::Protocol(e.to_string()))
}

/// A client of one daemon's API.
#[derive(Debug, Clone)]
pub struct ApiClient {
    socket: PathBuf,
    server: String,
    start: String,
    /// The value of [`crate::orchestration::shell_guard::CLIENT_HEADER`] sent with every request.
    kind: Option<&'static str>,
}

impl ApiClient {
    /// A client for the daemon listening on `socket`. `server` and `start` only go into the
    /// message shown when no daemon runs.
    pub fn new(socket: PathBuf, server: String, start: String) -> ApiClient {
        ApiClient {
            socket,
            server,
            start,
            kind: None,
        }
    }

    /// The same client, naming itself as `kind` to the daemon with every request (`panectl
    /// mcp` says `mcp`: the daemon applies its MCP policy to such requests).
    pub fn with_kind(mut self, kind: &'static str) -> ApiClient {
        self.kind = Some(kind);
        self
    }

    /// Connects after checking the socket (ours, in a private directory of ours) and, before
    /// anything is written, the process behind it (`SO_PEERCRED`: ours).
    async fn connect(
        &self,
    ) -> Result<hyper::client::conn::http1::SendRequest<Full<Bytes>>, ClientError> {
        if let Err(error) = crate::trust::check_socket(&self.socket) {
            return Err(if crate::trust::is_missing(&error) {
                ClientError::NoDaemon {
                    server: self.server.clone(),
                    start: self.start.clone(),
                }
            } else {
                ClientError::Untrusted(error)
            });
        }
        let stream =
            UnixStream::connect(&self.socket)
                .await
                .map_err(|error| match error.kind() {
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                        ClientError::NoDaemon {
                            server: self.server.clone(),
                            start: self.start.clone(),
                        }
                    }
                    _ => ClientError::Transport(format!("{}: {error}", self.socket.display())),
                })?;
        crate::trust::check_peer(&self.socket, &stream).map_err(ClientError::Untrusted)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    async fn send(
        &self,
        path: &str,
    ) -> Result<hyper::Response<hyper::body::Incoming>, ClientError> {
        self.send_body(hyper::Method::GET, path, None).await
    }

    async fn send_body(
        &self,
        method: hyper::Method,
        path: &str,
        json: Option<Vec<u8>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, ClientError> {
        let mut sender = self.connect().await?;
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "panectl");
        if json.is_some() {
            request = request.header("content-type", "application/json");
        }
        if let Some(kind) = self.kind {
            request = request.header(crate::orchestration::shell_guard::CLIENT_HEADER, kind);
        }
        let request = request
            .body(Full::new(Bytes::from(json.unwrap_or_default())))
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let message = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
            .unwrap_or_else(|| format!("{status}: {}", String::from_utf8_lossy(&body)));
        Err(ClientError::Status { status, message })
    }

    /// GET a path; the whole answer.
    pub async fn get(&self, path: &str) -> Result<Answer, ClientError> {
        let response = self.send(path).await?;
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?
            .to_bytes();
        Ok(Answer { headers, body })
    }

    /// GET a path and parse the JSON answer.
    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let answer = self.get(path).await?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// POST a body (one of the [`super::wire`] request types) as JSON and parse the JSON
    /// answer (the route's answer type).
    pub async fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        let response = self
            .send_body(hyper::Method::POST, path, Some(json_bytes(body)?))
            .await?;
        read_json(response).await
    }

    /// DELETE a path (with its query) and parse the JSON answer.
    pub async fn delete_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let response = self.send_body(hyper::Method::DELETE, path, None).await?;
        read_json(response).await
    }

    /// POST a body as JSON to a path whose answer has no body (204).
    pub async fn post_empty(&self, path: &str, body: &impl Serialize) -> Result<(), ClientError> {
        self.send_body(hyper::Method::POST, path, Some(json_bytes(body)?))
            .await?;
        Ok(())
    }

    /// `GET /v1/panes`: every pane the daemon mirrors.
    pub async fn panes(&self) -> Result<Vec<PaneSummary>, ClientError> {
        self.get_json(&super::routes::Route::Panes {}.path()).await
    }

    /// `GET /v1/panes/{pane}`: one pane, by any pane name.
    pub async fn pane(&self, name: &str) -> Result<PaneSummary, ClientError> {
        self.get_json(&super::routes::Route::Pane { pane: name }.path())
            .await
    }

    /// GET a streaming path; `chunk` gets each piece of the body until it returns `false` or
    /// the daemon ends the stream.
    pub async fn stream(
        &self,
        path: &str,
        mut chunk: impl FnMut(&[u8]) -> bool,
    ) -> Result<(), ClientError> {
        let mut body = self.send(path).await?.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| ClientError::Transport(e.to_string()))?;
            if let Some(data) = frame.data_ref()
                && !chunk(data)
            {
                break;
            }
        }
        Ok(())
    }
}
