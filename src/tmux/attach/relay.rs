//! The relay task: the client's messages through the identify gate to the server, then a plain
//! copy both ways, file descriptors included.

use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use tokio::io::Interest;
use tokio::net::UnixStream;
use tracing::warn;

use super::identify::{IdentifyError, IdentifyGate, Send};

/// Why the relay stopped early.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Talking to one side failed.
    #[error("{side}: {source}")]
    Io {
        /// Which side.
        side: &'static str,
        /// The failure.
        source: io::Error,
    },
    /// The client's messages cannot be read.
    #[error(transparent)]
    Identify(#[from] IdentifyError),
    /// The client went away while it was introducing itself.
    #[error("the tmux client closed its connection before it was attached")]
    ClientGone,
    /// The server did not read the client's messages.
    #[error("the tmux server did not read the client's messages within {0:?}")]
    ServerStalled(Duration),
}

fn client_error(source: io::Error) -> RelayError {
    RelayError::Io {
        side: "tmux client",
        source,
    }
}

fn server_error(source: io::Error) -> RelayError {
    RelayError::Io {
        side: "tmux server",
        source,
    }
}

/// How long a client may take to introduce itself (it sends everything at once).
const IDENTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server may take to read what was sent before the gated messages.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the system cannot say what the server has not read yet (neither Linux nor macOS),
/// how long the relay waits for it to read instead: tmux reads what arrives within one turn
/// of its event loop.
const UNKNOWN_DRAIN_PAUSE: Duration = Duration::from_millis(50);

/// Bytes read at a time (tmux's own read size).
const READ_SIZE: usize = 64 * 1024;

/// Relays between the client (already connected) and the server at `server`, until one side
/// closes.
pub async fn run(client: UnixStream, server: &Path) -> Result<(), RelayError> {
    let server = UnixStream::connect(server).await.map_err(server_error)?;
    let mut buffer = vec![0u8; READ_SIZE];
    let mut gate = IdentifyGate::new();
    let deadline = tokio::time::Instant::now() + IDENTIFY_TIMEOUT;
    while !gate.is_open() {
        let received = tokio::time::timeout_at(deadline, receive(&client, &mut buffer)).await;
        let Ok(received) = received else {
            // A client that never finishes: give up gating rather than hold it forever.
            warn!("the tmux client did not finish introducing itself; relaying it unchanged");
            let held = gate.give_up();
            send_all(&server, &held, &[]).await.map_err(server_error)?;
            break;
        };
        let (read, fds) = received.map_err(client_error)?;
        if read == 0 {
            return Err(RelayError::ClientGone);
        }
        for send in gate.push(&buffer[..read], fds)? {
            match send {
                Send::Forward(message) => {
                    let fds: Vec<OwnedFd> = message.fd.into_iter().collect();
                    send_all(&server, &message.bytes, &fds)
                        .await
                        .map_err(server_error)?;
                }
                Send::Release(bytes) => {
                    drained(&server).await?;
                    send_all(&server, &bytes, &[]).await.map_err(server_error)?;
                }
            }
        }
    }
    if let Some(version) = gate.unknown_protocol() {
        warn!(
            version,
            "the tmux client speaks a protocol panectl does not know; relaying it unchanged"
        );
    }
    // The client's command, usually; descriptors without bytes cannot be passed on.
    let (rest, fds) = gate.into_rest();
    if !rest.is_empty() {
        let fds: Vec<OwnedFd> = fds.into_iter().collect();
        send_all(&server, &rest, &fds).await.map_err(server_error)?;
    }
    tokio::select! {
        result = copy(&client, &server, client_error, server_error) => result,
        result = copy(&server, &client, server_error, client_error) => result,
    }
}

/// Waits until the server has read every byte sent to it, so that the next write arrives in a
/// read of its own. Where the system cannot say what the server has not read, a fixed pause.
async fn drained(server: &UnixStream) -> Result<(), RelayError> {
    let started = Instant::now();
    loop {
        match crate::os::socket::unread_bytes(server).map_err(server_error)? {
            Some(0) => return Ok(()),
            Some(_) => {}
            None => {
                tokio::time::sleep(UNKNOWN_DRAIN_PAUSE).await;
                return Ok(());
            }
        }
        if started.elapsed() > DRAIN_TIMEOUT {
            return Err(RelayError::ServerStalled(DRAIN_TIMEOUT));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Copies from one side to the other until `from` closes.
async fn copy(
    from: &UnixStream,
    to: &UnixStream,
    from_error: fn(io::Error) -> RelayError,
    to_error: fn(io::Error) -> RelayError,
) -> Result<(), RelayError> {
    let mut buffer = vec![0u8; READ_SIZE];
    loop {
        let (read, fds) = receive(from, &mut buffer).await.map_err(from_error)?;
        if read == 0 {
            return Ok(());
        }
        send_all(to, &buffer[..read], &fds)
            .await
            .map_err(to_error)?;
    }
}

/// Reads what the peer sent, with the descriptors that came with it.
async fn receive(stream: &UnixStream, buffer: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    loop {
        stream.readable().await?;
        match stream.try_io(Interest::READABLE, || {
            receive_now(stream.as_raw_fd(), buffer)
        }) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            result => return result,
        }
    }
}

fn receive_now(fd: RawFd, buffer: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    let mut space = nix::cmsg_space!([RawFd; 16]);
    let mut iov = [IoSliceMut::new(buffer)];
    let message = recvmsg::<()>(
        fd,
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC | MsgFlags::MSG_DONTWAIT,
    )
    .map_err(io::Error::from)?;
    let mut fds = Vec::new();
    for control in message.cmsgs().map_err(io::Error::from)? {
        if let ControlMessageOwned::ScmRights(received) = control {
            for raw in received {
                // SAFETY: the kernel has just installed `raw` in this process's descriptor
                // table for this message; nothing else holds it.
                fds.push(unsafe { OwnedFd::from_raw_fd(raw) });
            }
        }
    }
    Ok((message.bytes, fds))
}

/// Writes all of `bytes`, the descriptors with the first part.
async fn send_all(stream: &UnixStream, mut bytes: &[u8], fds: &[OwnedFd]) -> io::Result<()> {
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let mut pending_fds: &[RawFd] = &raw;
    while !bytes.is_empty() {
        stream.writable().await?;
        let sent = stream.try_io(Interest::WRITABLE, || {
            let iov = [IoSlice::new(bytes)];
            let control = [ControlMessage::ScmRights(pending_fds)];
            let control: &[ControlMessage] = if pending_fds.is_empty() {
                &[]
            } else {
                &control
            };
            sendmsg::<()>(
                stream.as_raw_fd(),
                &iov,
                control,
                MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL,
                None,
            )
            .map_err(io::Error::from)
        });
        match sent {
            Ok(sent) => {
                bytes = &bytes[sent..];
                pending_fds = &[];
            }
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
