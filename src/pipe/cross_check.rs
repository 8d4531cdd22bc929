//! Cross-check mode, without IO: one pane read by both transports, the pipe's bytes compared
//! with `%output`'s byte by byte.
//!
//! The control transport feeds the mirror; the pipe is only compared. The pipe starts later
//! than `%output` (at the moment tmux runs `pipe-pane`), so its stream is a suffix of the
//! control stream from some offset on: the first bytes the pipe delivers are looked for among
//! the control bytes kept since the pipe was armed, and from there on every byte must be
//! equal. A difference is reported with its position and both sides' bytes; the pipe's
//! unmatched bytes are dropped and its next ones are lined up again within the control bytes
//! from the difference on (whichever side was ahead). A pipe that falls further behind than
//! [`MAX_PENDING`] bytes, or delivers bytes that appear nowhere in the control stream, is
//! reported too.

use std::collections::VecDeque;

/// Most bytes one side may hold unmatched before it is reported as behind (or unaligned).
pub const MAX_PENDING: usize = 1 << 20;

/// Bytes of the pipe's stream looked for in the control stream to line the two up.
const ALIGN_BYTES: usize = 32;

/// Bytes of each side shown with a mismatch.
const SHOWN: usize = 16;

/// What the comparison found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The byte at control sequence number `seq` differs.
    Mismatch {
        /// Sequence number (in the pane's control stream) of the first differing byte.
        seq: u64,
        /// The control stream's bytes from there (a few).
        control: Vec<u8>,
        /// The pipe's bytes from there (a few).
        pipe: Vec<u8>,
    },
    /// The pipe delivered bytes that the control stream kept since arming does not contain.
    Unaligned {
        /// The first bytes the pipe delivered (a few).
        pipe: Vec<u8>,
    },
    /// The control stream is this many bytes ahead of the pipe (a stalled pipe, say).
    PipeBehind {
        /// Unmatched control bytes.
        bytes: usize,
    },
}

impl Finding {
    /// Every kind name [`Finding::kind`] gives, for the API's schema of the `cross_check` event.
    pub const KINDS: [&'static str; 3] = ["mismatch", "unaligned", "pipe_behind"];

    /// A short kind name for events: `mismatch`, `unaligned` or `pipe_behind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::Mismatch { .. } => "mismatch",
            Finding::Unaligned { .. } => "unaligned",
            Finding::PipeBehind { .. } => "pipe_behind",
        }
    }
}

/// The API's schema of a `cross_check` event's `finding`: one of [`Finding::KINDS`] (the event
/// carries the word as a string).
pub fn finding_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(Finding::KINDS))
        .description(Some(
            "`mismatch`: a byte differs; `unaligned`: the pipe delivered bytes the control \
             stream does not have; `pipe_behind`: the pipe fell more than 1 MiB behind.",
        ))
        .build()
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |bytes: &[u8]| {
            bytes
                .iter()
                .flat_map(|&b| std::ascii::escape_default(b))
                .map(char::from)
                .collect::<String>()
        };
        match self {
            Finding::Mismatch { seq, control, pipe } => write!(
                f,
                "byte {seq} differs: control \"{}\", pipe \"{}\"",
                shown(control),
                shown(pipe)
            ),
            Finding::Unaligned { pipe } => write!(
                f,
                "the pipe delivered bytes the control stream does not have: \"{}\"",
                shown(pipe)
            ),
            Finding::PipeBehind { bytes } => {
                write!(f, "the pipe is {bytes} bytes behind the control stream")
            }
        }
    }
}

/// The comparison of one pane's two streams.
#[derive(Debug, Clone)]
pub struct CrossCheck {
    /// Control bytes not matched yet; `control_seq` is the sequence number of the first.
    control: VecDeque<u8>,
    control_seq: u64,
    /// Pipe bytes not matched yet.
    pipe: VecDeque<u8>,
    /// The pipe's stream has been lined up with the control stream.
    aligned: bool,
    /// Bytes found equal on both sides.
    pub matched: u64,
    /// Findings so far.
    pub findings: u64,
}

impl CrossCheck {
    /// A comparison starting at control sequence number `seq` (the end of the stream when the
    /// pipe was armed).
    pub fn new(seq: u64) -> CrossCheck {
        CrossCheck {
            control: VecDeque::new(),
            control_seq: seq,
            pipe: VecDeque::new(),
            aligned: false,
            matched: 0,
            findings: 0,
        }
    }

    /// Control bytes `seq .. seq + data.len()` arrived.
    pub fn control(&mut self, seq: u64, data: &[u8]) -> Option<Finding> {
        if self.control.is_empty() {
            self.control_seq = seq;
        }
        self.control.extend(data);
        self.settle()
    }

    /// Pipe bytes arrived.
    pub fn pipe(&mut self, data: &[u8]) -> Option<Finding> {
        self.pipe.extend(data);
        self.settle()
    }

    /// Matches what both sides hold.
    fn settle(&mut self) -> Option<Finding> {
        if !self.aligned && !self.align() {
            return self.too_much();
        }
        let common = self.control.len().min(self.pipe.len());
        let differ = (0..common).find(|&i| self.control[i] != self.pipe[i]);
        match differ {
            Some(at) => {
                let finding = Finding::Mismatch {
                    seq: self.control_seq + at as u64,
                    control: self.control.iter().skip(at).take(SHOWN).copied().collect(),
                    pipe: self.pipe.iter().skip(at).take(SHOWN).copied().collect(),
                };
                self.matched += at as u64;
                self.control.drain(..at);
                self.control_seq += at as u64;
                self.pipe.clear();
                self.aligned = false;
                self.findings += 1;
                Some(finding)
            }
            None => {
                self.control.drain(..common);
                self.pipe.drain(..common);
                self.control_seq += common as u64;
                self.matched += common as u64;
                self.too_much()
            }
        }
    }

    /// Looks for the pipe's first [`ALIGN_BYTES`] bytes in the control bytes; drops the control
    /// bytes before them. `false` while there is not enough to tell.
    fn align(&mut self) -> bool {
        let wanted = ALIGN_BYTES;
        if self.pipe.len() < wanted || self.control.len() < wanted {
            return false;
        }
        let control = self.control.make_contiguous();
        let needle: Vec<u8> = self.pipe.iter().take(wanted).copied().collect();
        match memchr::memmem::find(control, &needle) {
            Some(at) => {
                self.control.drain(..at);
                self.control_seq += at as u64;
                self.aligned = true;
                true
            }
            None => false,
        }
    }

    /// Reports a side that holds too much, and starts over.
    fn too_much(&mut self) -> Option<Finding> {
        let finding = if self.pipe.len() > MAX_PENDING {
            Finding::Unaligned {
                pipe: self.pipe.iter().take(SHOWN).copied().collect(),
            }
        } else if self.control.len() > MAX_PENDING {
            Finding::PipeBehind {
                bytes: self.control.len(),
            }
        } else {
            return None;
        };
        self.restart();
        self.findings += 1;
        Some(finding)
    }

    /// Forgets both sides' unmatched bytes; the next pipe bytes are lined up anew.
    fn restart(&mut self) {
        self.control_seq += self.control.len() as u64;
        self.control.clear();
        self.pipe.clear();
        self.aligned = false;
    }

    /// Unmatched control bytes (how far the pipe is behind).
    pub fn pending_control(&self) -> usize {
        self.control.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_finding_kind_is_in_the_api_schema() {
        let findings = [
            Finding::Mismatch {
                seq: 1,
                control: b"a".to_vec(),
                pipe: b"b".to_vec(),
            },
            Finding::Unaligned {
                pipe: b"x".to_vec(),
            },
            Finding::PipeBehind { bytes: 9 },
        ];
        let kinds: Vec<&str> = findings.iter().map(Finding::kind).collect();
        assert_eq!(kinds, Finding::KINDS);
        let schema = serde_json::to_value(finding_schema()).expect("serializes");
        assert_eq!(schema["enum"], serde_json::json!(Finding::KINDS));
    }

    #[test]
    fn a_pipe_that_starts_late_is_lined_up_and_matches() {
        let mut check = CrossCheck::new(100);
        assert_eq!(check.control(100, b"before the pipe; "), None);
        assert_eq!(
            check.control(117, b"after the pipe started, bytes go both ways"),
            None
        );
        assert_eq!(check.pipe(b"after the pipe started,"), None);
        // Not lined up yet: too few bytes to tell where the pipe starts.
        assert_eq!(check.matched, 0);
        assert_eq!(check.pipe(b" bytes go both ways"), None);
        assert_eq!(check.matched, 42);
        assert_eq!(check.pending_control(), 0);
    }

    #[test]
    fn a_pipe_ahead_of_the_control_stream_waits_for_it() {
        let mut check = CrossCheck::new(0);
        assert_eq!(check.pipe(b"early bytes from the pipe, and then"), None);
        assert_eq!(check.control(0, b"xx early bytes from "), None);
        assert_eq!(check.control(20, b"the pipe, and then more"), None);
        assert_eq!(check.matched, 35);
        assert_eq!(check.pending_control(), 5);
        assert_eq!(check.pipe(b" more"), None);
        assert_eq!(check.pending_control(), 0);
    }

    #[test]
    fn a_differing_byte_is_reported_where_it_is_and_the_streams_line_up_again() {
        let mut check = CrossCheck::new(0);
        let line = b"0123456789abcdefghijklmnopqrstuvwxyz";
        check.control(0, line);
        assert_eq!(check.pipe(line), None);
        check.control(36, b"hello world, and on");
        let finding = check.pipe(b"hello wXrld").expect("a mismatch");
        assert_eq!(
            finding,
            Finding::Mismatch {
                seq: 43,
                control: b"orld, and on".to_vec(),
                pipe: b"Xrld".to_vec(),
            }
        );
        assert_eq!(
            finding.to_string(),
            "byte 43 differs: control \"orld, and on\", pipe \"Xrld\""
        );
        assert_eq!(check.findings, 1);
        // The control side was ahead: the pipe's next bytes line up within what it kept.
        let matched = check.matched;
        check.control(55, b" and then a long line of further output");
        assert_eq!(
            check.pipe(b", and on and then a long line of further output"),
            None
        );
        assert_eq!(check.matched, matched + 47);
        assert_eq!(check.findings, 1);
    }

    #[test]
    fn bytes_the_control_stream_never_had_are_reported_as_unaligned() {
        let mut check = CrossCheck::new(0);
        check.control(0, b"abc");
        let junk = vec![b'z'; MAX_PENDING + 1];
        let finding = check.pipe(&junk).expect("unaligned");
        assert_eq!(finding.kind(), "unaligned");
    }

    #[test]
    fn a_stalled_pipe_is_reported_as_behind() {
        let mut check = CrossCheck::new(0);
        let line = b"0123456789abcdefghijklmnopqrstuvwxyz";
        check.control(0, line);
        assert_eq!(check.pipe(line), None);
        let flood = vec![b'y'; MAX_PENDING + 1];
        let finding = check.control(36, &flood).expect("behind");
        assert_eq!(
            finding,
            Finding::PipeBehind {
                bytes: MAX_PENDING + 1
            }
        );
    }

    proptest! {
        /// Equal streams cut anywhere never give a finding, and every pipe byte is matched.
        #[test]
        fn equal_streams_cut_anywhere_match(
            head in prop::collection::vec(any::<u8>(), 0..200),
            tail in prop::collection::vec(any::<u8>(), 40..600),
            control_cuts in prop::collection::vec(1usize..64, 1..40),
            pipe_cuts in prop::collection::vec(1usize..64, 1..40),
        ) {
            let stream: Vec<u8> = head.iter().chain(&tail).copied().collect();
            let mut check = CrossCheck::new(0);
            let (mut c, mut p, mut seq) = (0, 0, 0u64);
            let (mut ci, mut pi) = (0, 0);
            while c < stream.len() || p < tail.len() {
                if c < stream.len() {
                    let n = control_cuts[ci % control_cuts.len()].min(stream.len() - c);
                    prop_assert_eq!(check.control(seq, &stream[c..c + n]), None);
                    c += n;
                    seq += n as u64;
                    ci += 1;
                }
                if p < tail.len() {
                    let n = pipe_cuts[pi % pipe_cuts.len()].min(tail.len() - p);
                    prop_assert_eq!(check.pipe(&tail[p..p + n]), None);
                    p += n;
                    pi += 1;
                }
            }
            prop_assert_eq!(check.findings, 0);
        }
    }
}
