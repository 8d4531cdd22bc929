//! The control-mode stream decoder: bytes from `tmux -C` in, typed [`Event`]s out.
//!
//! The decoder is sans-IO. [`Decoder::feed`] takes chunks of the stream cut anywhere (in the
//! middle of a line, of an escape, of a UTF-8 character) and emits an event for every complete
//! line; the result does not depend on where the chunks were cut. It never decodes a line as
//! UTF-8 and never panics: a line it cannot decode becomes an [`Event::ParseError`] carrying the
//! raw line, and decoding goes on with the next line.
//!
//! Lines are of three kinds (protocol notes §1, §3):
//!
//! * guard lines `%begin T N F` ... `%end T N F` / `%error T N F` around the reply to a command.
//!   A block closes only on a closing line with exactly the same `T N F` as its `%begin`, so a
//!   body line such as `%end 1 2 3` (from `show-buffer`, say) stays in the body. Blocks with
//!   flags 0 come from hooks or the attach command, not from lines we sent, and are marked
//!   unsolicited.
//! * notifications (`%output`, `%window-add`, ...), see [`parse_notification`].
//! * bare lines outside blocks, which tmux 3.5+ prints for a waiting `run-shell`; they are
//!   reported as [`Event::Stray`] rather than treated as errors.
//!
//! tmux up to 3.7 writes `%pause`, `%continue` and `%message` *inside* the block of the command
//! that caused them (`refresh-client -A`, `display-message`). Such lines are delivered as
//! notifications when the reply is expected to carry them (see [`Decoder::expect_line`]) or,
//! for blocks nobody announced, when every line of the body is such a notification. A body that
//! also holds other text (a `capture-pane` of a screen showing `%pause %3`) stays a body.

use std::collections::VecDeque;

use memchr::{memchr, memchr_iter};

use super::notification::{LineError, Notification, parse_notification, split_output};
use crate::ids::PaneId;
use crate::raw::RawBytes;

/// Longest line accepted by default. `%output` lines are at most about 11 KB, but command
/// replies are unbounded (`capture-pane -J` joins wrapped lines), so the cap is generous.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// How much of an over-long line is kept in its [`ParseError`].
const TOO_LONG_PREFIX: usize = 256;

/// The DCS that starts a `-CC` stream (a tty control client); tolerated on the first line.
const DCS_START: &[u8] = b"\x1bP1000p";
/// The string terminator that ends a `-CC` stream after `%exit`.
const DCS_END: &[u8] = b"\x1b\\";

/// The `time number flags` triple of a `%begin`/`%end`/`%error` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    /// Seconds since the epoch when the command ran.
    pub time: u64,
    /// The server-global command number (neither predictable nor contiguous).
    pub number: u64,
    /// 1 if the command came from this client's input, 0 for hooks and the attach command.
    pub flags: u32,
}

/// A complete reply block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The triple shared by the opening and closing lines.
    pub guard: Guard,
    /// `true` for `%end`, `false` for `%error` (the body then holds the error message).
    pub success: bool,
    /// The body lines, raw, without line endings.
    pub body: Vec<RawBytes>,
    /// The tag given to [`Decoder::expect_line`] for the command this block answers; `None` for
    /// unsolicited blocks and for solicited blocks nobody announced.
    pub tag: Option<u64>,
    /// `true` if one or more body lines were longer than the line limit and left out (each was
    /// reported as an [`Event::ParseError`]).
    pub incomplete: bool,
}

impl Reply {
    /// Whether the block answers a line sent by this client (flags 1) rather than a hook or the
    /// attach command (flags 0).
    pub fn is_solicited(&self) -> bool {
        self.guard.flags != 0
    }

    /// The body as one byte string, lines joined with `\n` (no trailing newline).
    pub fn joined_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.iter().map(|l| l.len() + 1).sum());
        for (i, line) in self.body.iter().enumerate() {
            if i > 0 {
                out.push(b'\n');
            }
            out.extend_from_slice(line);
        }
        out
    }
}

/// What the decoder found in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A notification line (or one that tmux wrote inside a reply block).
    Notification(Notification),
    /// A complete reply block.
    Reply(Reply),
    /// A command announced with [`Decoder::expect_line`] that produced no block because an
    /// earlier command on the same line failed (tmux drops the rest of the line).
    Abandoned {
        /// The command's tag.
        tag: u64,
    },
    /// A bare line outside any block (`run-shell` output on tmux 3.5+).
    Stray(RawBytes),
    /// A line that could not be decoded; decoding continued after it.
    ParseError(ParseError),
}

/// Output of a pane as the decoder lends it to a [`Sink`]: the data is unescaped into a buffer
/// the decoder reuses, valid until the call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output<'a> {
    /// The pane that produced the bytes.
    pub pane: PaneId,
    /// For `%extended-output`, how long the data waited in tmux, in milliseconds.
    pub age_ms: Option<u64>,
    /// The bytes, exactly as the program wrote them.
    pub data: &'a [u8],
}

impl Output<'_> {
    /// The notification it came as, with its own copy of the data.
    pub fn to_notification(&self) -> Notification {
        Notification::pane_output(self.pane, self.age_ms, RawBytes(self.data.to_vec()))
    }
}

/// Where [`Decoder::feed_to`] puts what it decodes, in stream order. Pane output, nearly every
/// byte of a busy stream, is lent rather than given, so the hot path copies and allocates
/// nothing per line; the daemon and the benchmark use this.
pub trait Sink {
    /// A `%output` or `%extended-output` line, unescaped.
    fn output(&mut self, output: Output<'_>);
    /// Every other event (never [`Notification::Output`] or [`Notification::ExtendedOutput`]).
    fn event(&mut self, event: Event);
}

/// The sink behind [`Decoder::feed`]: every event owned, output included.
struct Owned<'a, F>(&'a mut F);

impl<F: FnMut(Event)> Sink for Owned<'_, F> {
    fn output(&mut self, output: Output<'_>) {
        (self.0)(Event::Notification(output.to_notification()));
    }

    fn event(&mut self, event: Event) {
        (self.0)(event);
    }
}

/// A line the decoder could not make sense of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {line:?}")]
pub struct ParseError {
    /// The raw line (its first bytes only, for an over-long line).
    pub line: RawBytes,
    /// What is wrong with it.
    pub kind: ParseErrorKind,
}

/// The ways a line can be wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A `%` line whose arguments do not fit its grammar.
    #[error(transparent)]
    Line(#[from] LineError),
    /// A `%begin` whose triple is not three numbers.
    #[error("malformed %begin line")]
    BadBegin,
    /// A closing guard line with no block open.
    #[error("%end or %error outside a reply block")]
    UnexpectedClose,
    /// A line longer than the decoder's limit.
    #[error("line of {length} bytes exceeds the limit of {limit} bytes")]
    TooLong {
        /// The line's full length.
        length: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The stream ended in the middle of a line.
    #[error("stream ended in the middle of a line")]
    Truncated,
    /// The stream ended inside a reply block.
    #[error("stream ended inside the reply block {time} {number} {flags}")]
    UnterminatedBlock {
        /// The block's time.
        time: u64,
        /// The block's number.
        number: u64,
        /// The block's flags.
        flags: u32,
    },
}

/// How the body of an announced reply should be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// Output of the command, kept raw whatever it looks like (`capture-pane`, `list-*`, ...).
    Plain,
    /// Lines that are notifications tmux wrote inside the block (`refresh-client -A` writes
    /// `%pause`/`%continue`, `display-message` writes `%message`).
    Notifications,
}

/// One command of a line written to tmux, announced so its reply can be told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// Caller's identifier, returned in [`Reply::tag`] or [`Event::Abandoned`].
    pub tag: u64,
    /// How to read the reply's body.
    pub body: BodyKind,
}

#[derive(Debug)]
struct Pending {
    expected: Expected,
    /// Commands written on the same line share a group; a failure drops the rest of the group.
    group: u64,
}

#[derive(Debug)]
struct OpenBlock {
    guard: Guard,
    /// The `T N F` text of the `%begin` line; the closing line must repeat it exactly.
    triple: Vec<u8>,
    body: Vec<RawBytes>,
    expected: Option<(Expected, u64)>,
    incomplete: bool,
}

/// An over-long line being skipped up to its end.
#[derive(Debug)]
struct Skipping {
    prefix: Vec<u8>,
    length: usize,
}

/// The streaming decoder. See the module documentation.
#[derive(Debug)]
pub struct Decoder {
    /// Bytes of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// Set while discarding a line that went over `max_line`.
    skipping: Option<Skipping>,
    max_line: usize,
    /// No line has been completed yet (a `-CC` DCS may prefix the first one).
    at_start: bool,
    block: Option<OpenBlock>,
    pending: VecDeque<Pending>,
    next_group: u64,
    /// Where `%output` data is unescaped before it is lent to the sink.
    unescaped: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder for a fresh stream, with the default line limit.
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A decoder that rejects lines longer than `max_line` bytes.
    pub fn with_max_line(max_line: usize) -> Self {
        Decoder {
            partial: Vec::new(),
            skipping: None,
            max_line,
            at_start: true,
            block: None,
            pending: VecDeque::new(),
            next_group: 0,
            unescaped: Vec::new(),
        }
    }

    /// Announces the commands of one line just written to tmux, in order. Their replies (flags
    /// 1 blocks) are matched to them first come, first served and carry their tags.
    pub fn expect_line(&mut self, commands: impl IntoIterator<Item = Expected>) {
        let group = self.next_group;
        self.next_group += 1;
        self.pending.extend(
            commands
                .into_iter()
                .map(|expected| Pending { expected, group }),
        );
    }

    /// Number of announced commands whose reply has not started yet.
    pub fn pending_replies(&self) -> usize {
        self.pending.len()
    }

    /// Whether a reply block is open (its `%begin` seen, its end not yet).
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// Feeds a chunk of the stream; `emit` receives each event in stream order, output as
    /// [`Notification::Output`] or [`Notification::ExtendedOutput`] with its own copy of the data.
    pub fn feed(&mut self, data: &[u8], emit: &mut impl FnMut(Event)) {
        self.feed_to(data, &mut Owned(emit));
    }

    /// Feeds a chunk of the stream to `sink`, in stream order. Pane output is lent from a
    /// buffer the decoder reuses, so decoding allocates nothing per `%output` line.
    pub fn feed_to(&mut self, mut data: &[u8], sink: &mut impl Sink) {
        if !self.partial.is_empty() || self.skipping.is_some() {
            let Some(newline) = memchr(b'\n', data) else {
                self.hold(data);
                return;
            };
            self.hold(&data[..newline]);
            data = &data[newline + 1..];
            if let Some(skipped) = self.skipping.take() {
                self.too_long(skipped.prefix, skipped.length, sink);
            } else {
                let line = std::mem::take(&mut self.partial);
                self.line(&line, sink);
                self.partial = line;
                self.partial.clear();
            }
        }
        let mut start = 0;
        for newline in memchr_iter(b'\n', data) {
            self.line(&data[start..newline], sink);
            start = newline + 1;
        }
        self.hold(&data[start..]);
    }

    /// Feeds a chunk and collects its events.
    pub fn feed_vec(&mut self, data: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        self.feed(data, &mut |event| events.push(event));
        events
    }

    /// Ends the stream: reports a line cut short and a block left open.
    pub fn finish(&mut self, emit: &mut impl FnMut(Event)) {
        self.finish_to(&mut Owned(emit));
    }

    /// [`Decoder::finish`] for a [`Sink`].
    pub fn finish_to(&mut self, sink: &mut impl Sink) {
        if let Some(skipped) = self.skipping.take() {
            self.too_long(skipped.prefix, skipped.length, sink);
        }
        let partial = std::mem::take(&mut self.partial);
        let partial = partial.strip_suffix(b"\r").unwrap_or(&partial);
        if !partial.is_empty() && partial != DCS_END {
            sink.event(Event::ParseError(ParseError {
                line: partial.into(),
                kind: ParseErrorKind::Truncated,
            }));
        }
        if let Some(block) = self.block.take() {
            let Guard {
                time,
                number,
                flags,
            } = block.guard;
            let mut line = b"%begin ".to_vec();
            line.extend_from_slice(&block.triple);
            sink.event(Event::ParseError(ParseError {
                line: RawBytes(line),
                kind: ParseErrorKind::UnterminatedBlock {
                    time,
                    number,
                    flags,
                },
            }));
        }
    }

    /// Keeps the start of a line whose end has not arrived.
    fn hold(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.skipping.is_none() && self.partial.len() + data.len() > self.max_line {
            let mut prefix = std::mem::take(&mut self.partial);
            let length = prefix.len();
            prefix.truncate(TOO_LONG_PREFIX);
            self.skipping = Some(Skipping { prefix, length });
        }
        match &mut self.skipping {
            Some(skipping) => {
                skipping.length += data.len();
                let wanted = TOO_LONG_PREFIX
                    .saturating_sub(skipping.prefix.len())
                    .min(data.len());
                skipping.prefix.extend_from_slice(&data[..wanted]);
            }
            None => self.partial.extend_from_slice(data),
        }
    }

    fn too_long(&mut self, prefix: Vec<u8>, length: usize, sink: &mut impl Sink) {
        self.at_start = false;
        if let Some(block) = &mut self.block {
            block.incomplete = true;
        }
        sink.event(Event::ParseError(ParseError {
            line: RawBytes(prefix),
            kind: ParseErrorKind::TooLong {
                length,
                limit: self.max_line,
            },
        }));
    }

    /// Handles one complete line (without its `\n`).
    fn line(&mut self, line: &[u8], sink: &mut impl Sink) {
        if line.len() > self.max_line {
            let prefix = line[..TOO_LONG_PREFIX.min(line.len())].to_vec();
            self.too_long(prefix, line.len(), sink);
            return;
        }
        let mut line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(DCS_START).unwrap_or(line);
        }
        if self.block.is_some() {
            self.block_line(line, sink);
        } else {
            self.top_level_line(line, sink);
        }
    }

    fn top_level_line(&mut self, line: &[u8], sink: &mut impl Sink) {
        if line.first() != Some(&b'%') {
            // `ESC \` closes a -CC stream; an empty line can follow `%exit` with wait-exit.
            if !line.is_empty() && line != DCS_END {
                sink.event(Event::Stray(line.into()));
            }
            return;
        }
        if let Some(triple) = line.strip_prefix(b"%begin ") {
            match parse_triple(triple) {
                Some(guard) => self.open_block(guard, triple),
                None => sink.event(parse_error(line, ParseErrorKind::BadBegin)),
            }
            return;
        }
        if line.starts_with(b"%end ") || line.starts_with(b"%error ") {
            sink.event(parse_error(line, ParseErrorKind::UnexpectedClose));
            return;
        }
        if let Some(split) = split_output(line) {
            self.unescaped.clear();
            let unescaped = split.and_then(|output| {
                output.unescape_into(&mut self.unescaped)?;
                Ok(output)
            });
            match unescaped {
                Ok(output) => sink.output(Output {
                    pane: output.pane,
                    age_ms: output.age_ms,
                    data: &self.unescaped,
                }),
                Err(error) => sink.event(parse_error(line, error.into())),
            }
            return;
        }
        // Odd output lines the split leaves to the full parser still reach `Sink::output`.
        match parse_notification(line) {
            Ok(Notification::Output { pane, data }) => sink.output(Output {
                pane,
                age_ms: None,
                data: &data,
            }),
            Ok(notification) => sink.event(Event::Notification(notification)),
            Err(error) => sink.event(parse_error(line, error.into())),
        }
    }

    fn open_block(&mut self, guard: Guard, triple: &[u8]) {
        let expected = if guard.flags != 0 {
            self.pending.pop_front().map(|p| (p.expected, p.group))
        } else {
            None
        };
        self.block = Some(OpenBlock {
            guard,
            triple: triple.to_vec(),
            body: Vec::new(),
            expected,
            incomplete: false,
        });
    }

    fn block_line(&mut self, line: &[u8], sink: &mut impl Sink) {
        let Some(block) = &mut self.block else {
            return;
        };
        let closing = line
            .strip_prefix(b"%end ")
            .map(|t| (t, true))
            .or_else(|| line.strip_prefix(b"%error ").map(|t| (t, false)));
        if let Some((triple, success)) = closing
            && triple == block.triple.as_slice()
        {
            self.close_block(success, sink);
            return;
        }
        if let Some((
            Expected {
                body: BodyKind::Notifications,
                ..
            },
            _,
        )) = block.expected
            && let Some(notification) = inline_notification(line)
        {
            sink.event(Event::Notification(notification));
            return;
        }
        block.body.push(line.into());
    }

    fn close_block(&mut self, success: bool, sink: &mut impl Sink) {
        let Some(mut block) = self.block.take() else {
            return;
        };
        if block.expected.is_none() {
            // Nobody said what this block holds: lift out notifications tmux wrote into it, but
            // only when the body is made of nothing else.
            let inline: Option<Vec<Notification>> =
                block.body.iter().map(|l| inline_notification(l)).collect();
            if let Some(notifications) = inline {
                block.body.clear();
                for notification in notifications {
                    sink.event(Event::Notification(notification));
                }
            }
        }
        let tag = block.expected.map(|(expected, _)| expected.tag);
        sink.event(Event::Reply(Reply {
            guard: block.guard,
            success,
            body: block.body,
            tag,
            incomplete: block.incomplete,
        }));
        if !success && let Some((_, group)) = block.expected {
            while self.pending.front().is_some_and(|p| p.group == group) {
                if let Some(dropped) = self.pending.pop_front() {
                    sink.event(Event::Abandoned {
                        tag: dropped.expected.tag,
                    });
                }
            }
        }
    }
}

fn parse_error(line: &[u8], kind: ParseErrorKind) -> Event {
    Event::ParseError(ParseError {
        line: line.into(),
        kind,
    })
}

/// The notifications tmux up to 3.7 writes inside reply blocks.
fn inline_notification(line: &[u8]) -> Option<Notification> {
    if !(line.starts_with(b"%pause ")
        || line.starts_with(b"%continue ")
        || line.starts_with(b"%message"))
    {
        return None;
    }
    parse_notification(line).ok()
}

/// Parses `T N F`: three decimal numbers separated by single spaces, nothing else.
fn parse_triple(text: &[u8]) -> Option<Guard> {
    let mut fields = text.split(|&b| b == b' ');
    let time = parse_decimal(fields.next()?)?;
    let number = parse_decimal(fields.next()?)?;
    let flags = u32::try_from(parse_decimal(fields.next()?)?).ok()?;
    if fields.next().is_some() {
        return None;
    }
    Some(Guard {
        time,
        number,
        flags,
    })
}

fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PaneId;

    fn decode(stream: &[u8]) -> Vec<Event> {
        let mut decoder = Decoder::new();
        let mut events = decoder.feed_vec(stream);
        decoder.finish(&mut |e| events.push(e));
        events
    }

    fn body(event: &Event) -> Vec<u8> {
        match event {
            Event::Reply(reply) => reply.joined_body(),
            other => panic!("not a reply: {other:?}"),
        }
    }

    /// Records what a [`Sink`] is lent.
    #[derive(Default)]
    struct Recorder {
        outputs: Vec<(PaneId, Option<u64>, Vec<u8>)>,
        events: Vec<Event>,
    }

    impl Sink for Recorder {
        fn output(&mut self, output: Output<'_>) {
            self.outputs
                .push((output.pane, output.age_ms, output.data.to_vec()));
        }

        fn event(&mut self, event: Event) {
            self.events.push(event);
        }
    }

    #[test]
    fn a_sink_is_lent_each_lines_output_and_nothing_of_the_line_before() {
        let mut decoder = Decoder::new();
        let mut sink = Recorder::default();
        decoder.feed_to(
            b"%output %1 long line\\012\n%output %2 x\n%output %3 bad\\9\n\
              %extended-output %4 12 : y\\033\n%output %5 \n%window-add @1\n",
            &mut sink,
        );
        decoder.finish_to(&mut sink);
        assert_eq!(
            sink.outputs,
            [
                (PaneId(1), None, b"long line\n".to_vec()),
                (PaneId(2), None, b"x".to_vec()),
                (PaneId(4), Some(12), b"y\x1b".to_vec()),
                (PaneId(5), None, Vec::new()),
            ]
        );
        assert_eq!(sink.events.len(), 2, "{:?}", sink.events);
        assert!(
            matches!(&sink.events[0], Event::ParseError(e) if e.line.0 == b"%output %3 bad\\9")
        );
        assert!(matches!(
            sink.events[1],
            Event::Notification(Notification::WindowAdd { .. })
        ));
    }

    #[test]
    fn blocks_close_only_on_their_exact_triple() {
        // From ghostty's tests: fake closers stay in the body.
        let events = decode(
            b"%begin 1 1 1\n%end not really\nhello\n%end 1 1 1 trailing\n%end 1 1 2\n%end 1 1 1\n",
        );
        assert_eq!(events.len(), 1);
        assert_eq!(
            body(&events[0]),
            b"%end not really\nhello\n%end 1 1 1 trailing\n%end 1 1 2"
        );

        let events = decode(b"%begin 5 6 1\n%error not really\n%error 5 6 1\n");
        let Event::Reply(reply) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(!reply.success);
        assert_eq!(reply.joined_body(), b"%error not really");
    }

    #[test]
    fn flags_zero_blocks_are_unsolicited() {
        let events = decode(b"%begin 1795989209 260 0\n%end 1795989209 260 0\n");
        let Event::Reply(reply) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(!reply.is_solicited());
        assert_eq!(reply.guard.number, 260);
        assert_eq!(reply.tag, None);
    }

    #[test]
    fn announced_replies_carry_tags_and_failures_abandon_the_rest_of_the_line() {
        let mut decoder = Decoder::new();
        let plain = |tag| Expected {
            tag,
            body: BodyKind::Plain,
        };
        decoder.expect_line([plain(1), plain(2), plain(3)]);
        decoder.expect_line([plain(4)]);
        let events = decoder.feed_vec(
            b"%begin 9 10 0\nhook\n%end 9 10 0\n%begin 9 11 1\n%end 9 11 1\n%begin 9 12 1\ncan't find pane: %99\n%error 9 12 1\n%begin 9 13 1\nb\n%end 9 13 1\n",
        );
        let summary: Vec<String> = events
            .iter()
            .map(|e| match e {
                Event::Reply(r) => format!("reply {:?} {}", r.tag, r.success),
                Event::Abandoned { tag } => format!("abandoned {tag}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "reply None true",
                "reply Some(1) true",
                "reply Some(2) false",
                "abandoned 3",
                "reply Some(4) true"
            ]
        );
        assert_eq!(decoder.pending_replies(), 0);
    }

    #[test]
    fn inline_notifications_in_announced_blocks() {
        let mut decoder = Decoder::new();
        decoder.expect_line([
            Expected {
                tag: 7,
                body: BodyKind::Notifications,
            },
            Expected {
                tag: 8,
                body: BodyKind::Plain,
            },
        ]);
        let events = decoder.feed_vec(
            b"%begin 1 2 1\n%continue %7\n%end 1 2 1\n%begin 1 3 1\n%pause %3\n%end 1 3 1\n",
        );
        assert_eq!(
            events[0],
            Event::Notification(Notification::Continue { pane: PaneId(7) })
        );
        assert!(matches!(&events[1], Event::Reply(r) if r.tag == Some(7) && r.body.is_empty()));
        // The capture of a screen that shows "%pause %3" is output, not a notification.
        assert_eq!(body(&events[2]), b"%pause %3");
    }

    #[test]
    fn inline_notifications_in_unannounced_blocks_need_a_body_of_nothing_else() {
        let events = decode(
            b"%begin 1 2 1\n%pause %0\n%end 1 2 1\n%begin 1 3 1\n%pause %0\nprompt$\n%end 1 3 1\n",
        );
        assert_eq!(
            events[0],
            Event::Notification(Notification::Pause { pane: PaneId(0) })
        );
        assert_eq!(body(&events[1]), b"");
        assert_eq!(body(&events[2]), b"%pause %0\nprompt$");
    }

    #[test]
    fn stray_lines_and_dcs_framing_are_tolerated() {
        let events =
            decode(b"\x1bP1000p%begin 1 2 0\r\n%end 1 2 0\r\nfrom-run-shell\r\n%exit\r\n\x1b\\");
        assert!(matches!(&events[0], Event::Reply(_)));
        assert_eq!(events[1], Event::Stray("from-run-shell".into()));
        assert_eq!(
            events[2],
            Event::Notification(Notification::Exit { reason: None })
        );
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn malformed_lines_are_reported_and_decoding_continues() {
        let events =
            decode(b"%begin x y z\n%end 1 2 3\n%output %1 \\9\n%sessions-changed\n%output %1 ok");
        let kinds: Vec<_> = events
            .iter()
            .map(|e| match e {
                Event::ParseError(p) => format!("error {}", p.kind),
                Event::Notification(n) => n.name().to_string(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "error malformed %begin line",
                "error %end or %error outside a reply block",
                "error malformed %output line: bad octal escape at byte 0 of the output data",
                "sessions-changed",
                "error stream ended in the middle of a line",
            ]
        );
        let Event::ParseError(error) = &events[2] else {
            unreachable!()
        };
        assert_eq!(error.line, "%output %1 \\9");
    }

    #[test]
    fn over_long_lines_are_skipped_whole_however_they_arrive() {
        let mut stream = b"%output %1 ".to_vec();
        stream.extend(std::iter::repeat_n(b'a', 1000));
        stream.extend_from_slice(b"\n%sessions-changed\n");
        let whole = {
            let mut d = Decoder::with_max_line(100);
            d.feed_vec(&stream)
        };
        let bytewise = {
            let mut d = Decoder::with_max_line(100);
            stream
                .iter()
                .flat_map(|b| d.feed_vec(std::slice::from_ref(b)))
                .collect::<Vec<_>>()
        };
        assert_eq!(whole, bytewise);
        let Event::ParseError(error) = &whole[0] else {
            panic!("{whole:?}")
        };
        assert_eq!(
            error.kind,
            ParseErrorKind::TooLong {
                length: 1011,
                limit: 100
            }
        );
        assert_eq!(error.line.len(), TOO_LONG_PREFIX);
        assert_eq!(whole[1], Event::Notification(Notification::SessionsChanged));
    }

    #[test]
    fn over_long_body_lines_mark_the_reply_incomplete() {
        let mut decoder = Decoder::with_max_line(20);
        let events =
            decoder.feed_vec(b"%begin 1 2 1\nshort\nmuch too long for the limit\n%end 1 2 1\n");
        assert!(matches!(&events[0], Event::ParseError(_)));
        let Event::Reply(reply) = &events[1] else {
            panic!("{events:?}")
        };
        assert!(reply.incomplete);
        assert_eq!(reply.joined_body(), b"short");
    }

    #[test]
    fn end_of_stream_inside_a_block_is_reported() {
        let events = decode(b"%begin 1 2 1\nbody\n");
        assert!(matches!(
            &events[0],
            Event::ParseError(ParseError {
                kind: ParseErrorKind::UnterminatedBlock { number: 2, .. },
                ..
            })
        ));
    }
}
