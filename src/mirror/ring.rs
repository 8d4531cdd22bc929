//! A bounded ring of a pane's recent output, addressed by sequence numbers.
//!
//! Every byte a pane prints gets a sequence number: its offset in everything the pane printed
//! since the daemon started mirroring it. The ring keeps the most recent bytes; a consumer that
//! remembers the number after the last byte it read can resume exactly there, or learn exactly
//! which range it missed (fell out of the ring), and which gaps the stream itself has (output
//! tmux dropped while the pane was paused, or while panectl was not attached).

use std::collections::VecDeque;
use std::ops::Range;

use serde::Serialize;

/// Why the stream of a pane has a hole that no consumer can fill: `paused` (tmux discarded
/// output while the pane was paused), `reconnected` (the connection was re-established),
/// `seeded` (the screen was reseeded from a snapshot), `pipe_stalled` (the pane's pipe
/// stalled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GapReason {
    /// tmux paused the pane (`pause-after`) and discarded its output until it continued.
    Paused,
    /// The control connection was lost and re-established.
    Reconnected,
    /// The pane was mirrored from a snapshot; what it printed before is not in the stream.
    Seeded,
    /// The pane's pipe stalled; what it printed meanwhile is replaced by a snapshot.
    PipeStalled,
}

/// A hole in a pane's stream, just before the byte numbered `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Gap {
    /// Sequence number of the first byte after the hole.
    pub seq: u64,
    /// Why the hole is there.
    pub reason: GapReason,
}

/// What a read from the ring returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingRead {
    /// Bytes that were asked for but have already left the ring.
    pub missed: Option<Range<u64>>,
    /// Sequence number of the first byte of `data`.
    pub from: u64,
    /// The bytes.
    pub data: Vec<u8>,
    /// Sequence number to ask for next time.
    pub next: u64,
    /// Holes in the stream within the returned range (and at its start).
    pub gaps: Vec<Gap>,
}

/// Recent output of one pane. See the module documentation.
#[derive(Debug, Clone)]
pub struct OutputRing {
    capacity: usize,
    bytes: VecDeque<u8>,
    /// Sequence number of `bytes[0]`.
    start: u64,
    gaps: VecDeque<Gap>,
}

/// Gaps remembered per pane (older ones are forgotten with the bytes they precede).
const MAX_GAPS: usize = 64;

impl OutputRing {
    /// An empty ring keeping at most `capacity` bytes.
    pub fn new(capacity: usize) -> OutputRing {
        OutputRing {
            capacity: capacity.max(1),
            bytes: VecDeque::new(),
            start: 0,
            gaps: VecDeque::new(),
        }
    }

    /// Sequence number the next byte will get.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Sequence number of the oldest byte still held.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Appends output; returns the sequence number of its first byte.
    pub fn push(&mut self, data: &[u8]) -> u64 {
        let seq = self.end();
        if data.len() >= self.capacity {
            let keep = &data[data.len() - self.capacity..];
            self.start = seq + (data.len() - self.capacity) as u64;
            self.bytes.clear();
            self.bytes.extend(keep);
        } else {
            let overflow = (self.bytes.len() + data.len()).saturating_sub(self.capacity);
            self.bytes.drain(..overflow);
            self.start += overflow as u64;
            self.bytes.extend(data);
        }
        while self.gaps.front().is_some_and(|g| g.seq < self.start) || self.gaps.len() > MAX_GAPS {
            self.gaps.pop_front();
        }
        seq
    }

    /// Records a hole at the current end of the stream.
    pub fn mark_gap(&mut self, reason: GapReason) {
        let seq = self.end();
        if self.gaps.back().is_some_and(|g| g.seq == seq) {
            return;
        }
        self.gaps.push_back(Gap { seq, reason });
        if self.gaps.len() > MAX_GAPS {
            self.gaps.pop_front();
        }
    }

    /// Reads from `from` (or from the oldest byte held when `None`) to the end, at most `limit`
    /// bytes.
    pub fn read(&self, from: Option<u64>, limit: usize) -> RingRead {
        let end = self.end();
        let wanted = from.unwrap_or(self.start).min(end);
        let missed = (wanted < self.start).then_some(wanted..self.start);
        let first = wanted.max(self.start);
        let offset = (first - self.start) as usize;
        let take = (self.bytes.len() - offset).min(limit);
        let data: Vec<u8> = self.bytes.range(offset..offset + take).copied().collect();
        let next = first + take as u64;
        let gaps = self
            .gaps
            .iter()
            .filter(|g| g.seq >= wanted && g.seq <= next)
            .copied()
            .collect();
        RingRead {
            missed,
            from: first,
            data,
            next,
            gaps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_count_every_byte() {
        let mut ring = OutputRing::new(8);
        assert_eq!(ring.push(b"abc"), 0);
        assert_eq!(ring.push(b"def"), 3);
        let read = ring.read(Some(2), usize::MAX);
        assert_eq!(
            (read.missed, read.from, read.data.as_slice(), read.next),
            (None, 2, &b"cdef"[..], 6)
        );
    }

    #[test]
    fn readers_learn_exactly_what_left_the_ring() {
        let mut ring = OutputRing::new(4);
        ring.push(b"0123");
        ring.push(b"45");
        let read = ring.read(Some(1), usize::MAX);
        assert_eq!(read.missed, Some(1..2));
        assert_eq!(
            (read.from, read.data.as_slice(), read.next),
            (2, &b"2345"[..], 6)
        );
        // A chunk bigger than the ring keeps its tail.
        ring.push(b"abcdefgh");
        let read = ring.read(Some(6), usize::MAX);
        assert_eq!(read.missed, Some(6..10));
        assert_eq!(read.data, b"efgh");
        assert_eq!(ring.end(), 14);
    }

    #[test]
    fn reads_resume_in_pieces_and_report_gaps() {
        let mut ring = OutputRing::new(100);
        ring.push(b"hello ");
        ring.mark_gap(GapReason::Paused);
        ring.push(b"world");
        let first = ring.read(None, 4);
        assert_eq!((first.data.as_slice(), first.next), (&b"hell"[..], 4));
        assert!(first.gaps.is_empty());
        let second = ring.read(Some(first.next), 100);
        assert_eq!(second.data, b"o world");
        assert_eq!(
            second.gaps,
            vec![Gap {
                seq: 6,
                reason: GapReason::Paused
            }]
        );
        // Asking past the end returns nothing and the end.
        let third = ring.read(Some(999), 10);
        assert_eq!((third.data.len(), third.next, third.missed), (0, 11, None));
    }
}
