//! Synchronized updates: a pane's status is read once a frame has ended, not half-way.

use super::*;
use crate::status::pane::{FRAME_HOLD, Timing};

#[test]
fn a_frame_begun_is_read_when_it_ends_not_when_its_output_pauses() {
    let (mut h, t0) = agent_pane();
    let quiet = Timing::default().quiet;
    // A redraw erases the screen inside a synchronized update and pauses (a loaded machine).
    h.output("%0", "\\033[?2026h\\033[2J\\033[Hhalf a fr");
    assert!(h.core.mirror(PaneId(0)).unwrap().screen().mid_frame());
    assert_eq!(h.core.next_wakeup(t0), Some(t0 + FRAME_HOLD));
    // The frame ends: the screen is read at once (its output began over `max_wait` ago).
    let end = t0 + Duration::from_millis(200);
    h.now = end;
    h.output("%0", "ame\\033[?2026l");
    assert!(!h.core.mirror(PaneId(0)).unwrap().screen().mid_frame());
    let due = h.core.next_wakeup(end).expect("an evaluation due");
    assert!(due <= end, "{:?} after the frame ended", due - end);
    h.core.wake(end);
    assert!(h.core.next_wakeup(end).is_none_or(|due| due > end));
    // A frame that ends while its output flows is read once the output goes quiet.
    let next = end + Duration::from_secs(1);
    h.now = next;
    h.output("%0", "\\033[?2026hwhole\\033[?2026l");
    assert_eq!(h.core.next_wakeup(next), Some(next + quiet));
}

#[test]
fn a_frame_that_never_ends_is_read_after_the_hold() {
    let (mut h, t0) = agent_pane();
    h.output("%0", "\\033[?2026hworking");
    h.now = t0 + Duration::from_millis(100);
    h.output("%0", " still");
    // The hold counts from the first output not yet read.
    assert_eq!(h.core.next_wakeup(h.now), Some(t0 + FRAME_HOLD));
    h.core.wake(t0 + FRAME_HOLD);
    assert!(
        h.core
            .next_wakeup(t0 + FRAME_HOLD)
            .is_none_or(|due| due > t0 + FRAME_HOLD)
    );
}

/// The `capture-pane` lines sent to read `%0`'s last answer.
fn answer_reads(h: &Harness) -> usize {
    h.sent_for(|p| matches!(p, Purpose::LastResponse(PaneId(0), _)))
        .len()
}

#[test]
fn a_last_answer_asked_for_mid_frame_is_read_when_the_frame_ends_or_after_the_hold() {
    let (mut h, t0) = agent_pane();
    h.core.last_response(ReplyId(1), PaneId(0), t0);
    h.collect();
    assert_eq!(answer_reads(&h), 1, "read at once between frames");
    h.output("%0", "\\033[?2026h\\033[2J");
    h.core.last_response(ReplyId(2), PaneId(0), t0);
    h.collect();
    assert_eq!(answer_reads(&h), 1, "held while the frame is half drawn");
    h.output("%0", "the answer\\033[?2026l");
    assert_eq!(answer_reads(&h), 2, "read as the frame ends");
    // A frame that never ends holds the read for FRAME_HOLD at most.
    h.output("%0", "\\033[?2026h");
    h.core.last_response(ReplyId(3), PaneId(0), t0);
    assert_eq!(h.core.next_wakeup(t0), Some(t0 + FRAME_HOLD));
    h.core.wake(t0 + FRAME_HOLD);
    h.collect();
    assert_eq!(answer_reads(&h), 3);
}
