//! The identify gate: the one change panectl makes to what a `tmux -C` client says to its
//! server, without IO.
//!
//! A tmux client introduces itself with a run of `MSG_IDENTIFY_*` messages ending in
//! `MSG_IDENTIFY_DONE`. The first, `MSG_IDENTIFY_FLAGS` (and `MSG_IDENTIFY_LONGFLAGS`), marks
//! the client as a control client, but tmux only sets up its control state on
//! `MSG_IDENTIFY_DONE`. The messages that carry the client's stdin and stdout carry file
//! descriptors, so the server reads the run in several reads, and between them its event loop
//! runs queued notifications. In tmux 3.2 to 3.6a a notification sent to every control client
//! (`%sessions-changed`, `%window-pane-changed`, ...) then writes through the missing control
//! state and the server dies (docs/tmux-crashes.md).
//!
//! The gate holds the flags messages back and sends them together with `MSG_IDENTIFY_DONE` in
//! one write, once the server has read everything before them (the IO side waits for that), so
//! the server marks the client as a control client and sets up its control state in the same
//! read: no notification can come in between. Every other message passes unchanged and in
//! order; after `MSG_IDENTIFY_DONE` the gate lets everything through.
//!
//! The framing is tmux's `imsg`: a 16-byte header (`type` u32, length, flags, `peerid` u32,
//! `pid` u32, native byte order) and the payload. tmux up to 3.5a uses a u16 length and a u16
//! flags word whose bit 0 says a descriptor goes with the message; 3.6 uses a u32 length whose
//! top bit says so. Messages are at most 16 KiB, so both read the same here.

use std::collections::VecDeque;

/// `MSG_IDENTIFY_FLAGS` (tmux-protocol.h, the same from 3.0 to 3.6a).
pub const MSG_IDENTIFY_FLAGS: u32 = 100;
/// `MSG_IDENTIFY_DONE`.
pub const MSG_IDENTIFY_DONE: u32 = 106;
/// `MSG_IDENTIFY_LONGFLAGS`.
pub const MSG_IDENTIFY_LONGFLAGS: u32 = 111;

/// The client–server protocol whose message numbers these are (`PROTOCOL_VERSION`, 8 from
/// tmux 2.x to 3.8), carried in the low byte of each header's `peerid`.
pub const PROTOCOL_VERSION: u32 = 8;

/// Bytes of an imsg header.
pub const HEADER_LEN: usize = 16;

/// The largest message accepted (tmux's own limit is 16 KiB).
const MAX_MESSAGE: usize = 1 << 20;

/// Why the client's bytes cannot be relayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentifyError {
    /// A header gives a length that cannot be a message.
    #[error("tmux client sent a message of impossible length {0}")]
    BadLength(usize),
    /// A message that never carries a descriptor says one goes with it.
    #[error("tmux client sent message type {0} with a file descriptor")]
    UnexpectedDescriptor(u32),
    /// A message says a descriptor goes with it, and none came.
    #[error("tmux client sent message type {0} without the file descriptor it announces")]
    MissingDescriptor(u32),
}

/// One message of the client's, to pass on as it is.
#[derive(Debug, PartialEq, Eq)]
pub struct Message<F> {
    /// Its type.
    pub kind: u32,
    /// Header and payload.
    pub bytes: Vec<u8>,
    /// The descriptor that goes with it.
    pub fd: Option<F>,
}

/// What to send to the server, in this order.
#[derive(Debug, PartialEq, Eq)]
pub enum Send<F> {
    /// A message to pass on now.
    Forward(Message<F>),
    /// The held flags messages and `MSG_IDENTIFY_DONE`, to write in one piece once the server
    /// has read everything sent before.
    Release(Vec<u8>),
}

/// See the module documentation. `F` is a file descriptor (a generic so tests need no IO).
#[derive(Debug)]
pub struct IdentifyGate<F> {
    /// Bytes received and not yet framed.
    pending: Vec<u8>,
    /// Descriptors received and not yet paired with their message, in order.
    fds: VecDeque<F>,
    /// The flags messages held back.
    held: Vec<u8>,
    /// `MSG_IDENTIFY_DONE` has gone by, or the gate gave up: everything passes.
    open: bool,
    /// The client speaks a protocol version whose messages the gate does not know.
    unknown_protocol: Option<u32>,
}

impl<F> Default for IdentifyGate<F> {
    fn default() -> Self {
        IdentifyGate {
            pending: Vec::new(),
            fds: VecDeque::new(),
            held: Vec::new(),
            open: false,
            unknown_protocol: None,
        }
    }
}

/// A header's protocol version (the low byte of `peerid`).
fn protocol_version(header: &[u8; HEADER_LEN]) -> u32 {
    u32::from_ne_bytes([header[8], header[9], header[10], header[11]]) & 0xff
}

/// A header's type, length and whether a descriptor goes with the message, in either framing.
fn parse_header(header: &[u8; HEADER_LEN]) -> (u32, usize, bool) {
    let kind = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
    let word = u32::from_ne_bytes([header[4], header[5], header[6], header[7]]);
    // 3.6: `len` is a u32 whose top bit marks a descriptor.
    const FD_MARK: u32 = 0x8000_0000;
    if word & FD_MARK != 0 {
        return (kind, (word & !FD_MARK) as usize, true);
    }
    // Up to 3.5a: a u16 `len`, then a u16 `flags` whose bit 0 (IMSGF_HASFD) marks one.
    let len = u16::from_ne_bytes([header[4], header[5]]);
    let flags = u16::from_ne_bytes([header[6], header[7]]);
    if flags & !1 == 0 {
        return (kind, usize::from(len), flags & 1 != 0);
    }
    // Otherwise a 3.6 length of 64 KiB or more: not a message tmux sends.
    (kind, word as usize, false)
}

impl<F> IdentifyGate<F> {
    /// A gate that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `MSG_IDENTIFY_DONE` has gone by (or the gate gave up), after which bytes are
    /// relayed as they come.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The protocol version of a client the gate let through unchanged because it does not
    /// know that protocol's messages.
    pub fn unknown_protocol(&self) -> Option<u32> {
        self.unknown_protocol
    }

    /// Stops holding anything back (for a client that never finishes introducing itself):
    /// the held messages are to be sent first, then the rest as it is.
    pub fn give_up(&mut self) -> Vec<u8> {
        self.open = true;
        std::mem::take(&mut self.held)
    }

    /// Takes bytes and descriptors the client sent; answers what to send to the server now.
    /// Once the gate is open, the rest (bytes after `MSG_IDENTIFY_DONE`) is in
    /// [`IdentifyGate::into_rest`].
    pub fn push(
        &mut self,
        bytes: &[u8],
        fds: impl IntoIterator<Item = F>,
    ) -> Result<Vec<Send<F>>, IdentifyError> {
        self.pending.extend_from_slice(bytes);
        self.fds.extend(fds);
        let mut sends = Vec::new();
        while !self.open && self.pending.len() >= HEADER_LEN {
            let mut header = [0u8; HEADER_LEN];
            header.copy_from_slice(&self.pending[..HEADER_LEN]);
            if protocol_version(&header) != PROTOCOL_VERSION {
                // Another protocol: its message numbers may mean something else. Pass it on
                // unchanged (nothing has been held back before a first message).
                self.unknown_protocol = Some(protocol_version(&header));
                sends.push(Send::Release(std::mem::take(&mut self.held)));
                self.open = true;
                break;
            }
            let (kind, len, has_fd) = parse_header(&header);
            if !(HEADER_LEN..=MAX_MESSAGE).contains(&len) {
                return Err(IdentifyError::BadLength(len));
            }
            if self.pending.len() < len {
                break;
            }
            let message: Vec<u8> = self.pending.drain(..len).collect();
            let fd = if has_fd {
                Some(
                    self.fds
                        .pop_front()
                        .ok_or(IdentifyError::MissingDescriptor(kind))?,
                )
            } else {
                None
            };
            match kind {
                MSG_IDENTIFY_FLAGS | MSG_IDENTIFY_LONGFLAGS if fd.is_none() => {
                    self.held.extend_from_slice(&message);
                }
                MSG_IDENTIFY_DONE if fd.is_none() => {
                    let mut release = std::mem::take(&mut self.held);
                    release.extend_from_slice(&message);
                    sends.push(Send::Release(release));
                    self.open = true;
                }
                MSG_IDENTIFY_DONE => return Err(IdentifyError::UnexpectedDescriptor(kind)),
                _ => sends.push(Send::Forward(Message {
                    kind,
                    bytes: message,
                    fd,
                })),
            }
        }
        Ok(sends)
    }

    /// What the client sent after `MSG_IDENTIFY_DONE` (its command, usually), with the
    /// descriptors not yet paired: to pass on as they are.
    pub fn into_rest(self) -> (Vec<u8>, VecDeque<F>) {
        (self.pending, self.fds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message in the framing of tmux up to 3.5a.
    fn old(kind: u32, payload: &[u8], has_fd: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&((HEADER_LEN + payload.len()) as u16).to_ne_bytes());
        bytes.extend_from_slice(&u16::from(has_fd).to_ne_bytes());
        bytes.extend_from_slice(&8u32.to_ne_bytes()); // peerid: the protocol version
        bytes.extend_from_slice(&4242u32.to_ne_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    /// A message in the framing of tmux 3.6.
    fn new(kind: u32, payload: &[u8], has_fd: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&kind.to_ne_bytes());
        let mark = if has_fd { 0x8000_0000u32 } else { 0 };
        bytes.extend_from_slice(&((HEADER_LEN + payload.len()) as u32 | mark).to_ne_bytes());
        bytes.extend_from_slice(&8u32.to_ne_bytes());
        bytes.extend_from_slice(&4242u32.to_ne_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    const TERM: u32 = 101;
    const STDIN: u32 = 104;
    const ENVIRON: u32 = 105;
    const STDOUT: u32 = 110;
    const COMMAND: u32 = 200;

    /// The messages `client_send_identify` sends, in its order, and a command after.
    fn identify(frame: fn(u32, &[u8], bool) -> Vec<u8>) -> Vec<Vec<u8>> {
        vec![
            frame(MSG_IDENTIFY_FLAGS, &0x2000i32.to_ne_bytes(), false),
            frame(MSG_IDENTIFY_LONGFLAGS, &0x2000u64.to_ne_bytes(), false),
            frame(TERM, b"xterm\0", false),
            frame(STDIN, b"", true),
            frame(STDOUT, b"", true),
            frame(ENVIRON, b"HOME=/root\0", false),
            frame(MSG_IDENTIFY_DONE, b"", false),
            frame(COMMAND, b"\x02\0\0\0attach\0-t\0", false),
        ]
    }

    /// Feeds the messages in the given chunks (descriptors with the chunk holding their
    /// message); returns the sends and the rest.
    fn run(chunks: &[(Vec<u8>, Vec<i32>)]) -> (Vec<Send<i32>>, Vec<u8>) {
        let mut gate = IdentifyGate::new();
        let mut sends = Vec::new();
        for (bytes, fds) in chunks {
            sends.extend(gate.push(bytes, fds.clone()).unwrap());
        }
        assert!(gate.is_open());
        let (rest, fds) = gate.into_rest();
        assert!(fds.is_empty());
        (sends, rest)
    }

    fn kinds(sends: &[Send<i32>]) -> Vec<String> {
        sends
            .iter()
            .map(|send| match send {
                Send::Forward(m) => format!(
                    "{}{}",
                    m.kind,
                    m.fd.map(|fd| format!("+fd{fd}")).unwrap_or_default()
                ),
                Send::Release(bytes) => format!("release({}B)", bytes.len()),
            })
            .collect()
    }

    #[test]
    fn the_flags_go_with_done_and_everything_else_passes_in_order() {
        for frame in [old as fn(u32, &[u8], bool) -> Vec<u8>, new] {
            let messages = identify(frame);
            let chunks = vec![
                (messages[..4].concat(), vec![7]),
                (messages[4].clone(), vec![8]),
                (messages[5..].concat(), vec![]),
            ];
            let (sends, rest) = run(&chunks);
            assert_eq!(
                kinds(&sends),
                ["101", "104+fd7", "110+fd8", "105", "release(60B)"]
            );
            let Send::Release(release) = &sends[4] else {
                unreachable!()
            };
            assert_eq!(
                release,
                &[
                    messages[0].clone(),
                    messages[1].clone(),
                    messages[6].clone()
                ]
                .concat()
            );
            assert_eq!(rest, messages[7]);
        }
    }

    #[test]
    fn any_split_of_the_bytes_gives_the_same_sends() {
        let messages = identify(old);
        let all = messages.concat();
        let whole = run(&[(all.clone(), vec![7, 8])]);
        for cut in 1..all.len() {
            let split = run(&[
                (all[..cut].to_vec(), vec![7, 8]),
                (all[cut..].to_vec(), vec![]),
            ]);
            assert_eq!(kinds(&split.0), kinds(&whole.0), "cut at {cut}");
            assert_eq!(split.1, whole.1, "cut at {cut}");
        }
    }

    #[test]
    fn nothing_is_released_before_done() {
        let messages = identify(new);
        let mut gate = IdentifyGate::new();
        let sends = gate.push(&messages[..6].concat(), vec![7, 8]).unwrap();
        assert_eq!(kinds(&sends), ["101", "104+fd7", "110+fd8", "105"]);
        assert!(!gate.is_open());
    }

    #[test]
    fn another_protocol_version_passes_unchanged() {
        let mut messages = identify(old);
        for message in &mut messages {
            message[8] = 9; // peerid: protocol version 9
        }
        let all = messages.concat();
        let mut gate = IdentifyGate::new();
        let sends = gate.push(&all, vec![7, 8]).unwrap();
        assert_eq!(kinds(&sends), ["release(0B)"]);
        assert!(gate.is_open());
        assert_eq!(gate.unknown_protocol(), Some(9));
        let (rest, fds) = gate.into_rest();
        assert_eq!(rest, all);
        assert_eq!(fds, [7, 8]);
    }

    #[test]
    fn giving_up_hands_back_what_was_held() {
        let messages = identify(old);
        let mut gate = IdentifyGate::new();
        gate.push(&messages[..3].concat(), Vec::<i32>::new())
            .unwrap();
        let held = gate.give_up();
        assert_eq!(held, [messages[0].clone(), messages[1].clone()].concat());
        assert!(gate.is_open());
    }

    #[test]
    fn a_missing_descriptor_or_impossible_length_is_an_error() {
        let mut gate = IdentifyGate::<i32>::new();
        assert_eq!(
            gate.push(&old(STDIN, b"", true), vec![]),
            Err(IdentifyError::MissingDescriptor(STDIN))
        );
        let mut short = old(TERM, b"", false);
        short[4] = 3;
        assert_eq!(
            IdentifyGate::<i32>::new().push(&short, vec![]),
            Err(IdentifyError::BadLength(3))
        );
    }
}
