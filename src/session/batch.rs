//! What one read of the control client decoded, held until the decoder is done with the bytes.
//!
//! The connection cannot handle events while its decoder is lending them (handling one sends
//! commands, which the decoder must be told to expect), so a read is decoded into a [`Batch`]
//! first. Output is copied into one buffer that is reused from read to read: no allocation per
//! `%output` line.

use std::ops::Range;

use crate::control::{Event, Output, Sink};
use crate::ids::PaneId;

/// One decoded item, in stream order.
pub(super) enum Item {
    /// Output of a pane: its bytes are `data[range]` of the batch.
    Output { pane: PaneId, range: Range<usize> },
    /// Any other event.
    Event(Event),
}

/// The items of one read. See the module documentation.
#[derive(Default)]
pub(super) struct Batch {
    /// The output bytes of every [`Item::Output`], one after the other.
    pub data: Vec<u8>,
    /// The items, in stream order.
    pub items: Vec<Item>,
}

impl Batch {
    /// Empties it for the next read, keeping the memory.
    pub fn clear(&mut self) {
        self.data.clear();
        self.items.clear();
    }
}

impl Sink for Batch {
    fn output(&mut self, output: Output<'_>) {
        let start = self.data.len();
        self.data.extend_from_slice(output.data);
        self.items.push(Item::Output {
            pane: output.pane,
            range: start..self.data.len(),
        });
    }

    fn event(&mut self, event: Event) {
        self.items.push(Item::Event(event));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{Decoder, Notification};

    #[test]
    fn a_batch_keeps_output_and_events_in_stream_order_across_reads() {
        let mut decoder = Decoder::new();
        let mut batch = Batch::default();
        decoder.feed_to(b"%output %1 ab\n%window-add @2\n%output %3 c", &mut batch);
        decoder.feed_to(b"d\\012\n", &mut batch);
        let seen: Vec<String> = batch
            .items
            .iter()
            .map(|item| match item {
                Item::Output { pane, range } => {
                    format!(
                        "{pane} {:?}",
                        String::from_utf8_lossy(&batch.data[range.clone()])
                    )
                }
                Item::Event(Event::Notification(Notification::WindowAdd { window })) => {
                    format!("add {window}")
                }
                Item::Event(other) => format!("{other:?}"),
            })
            .collect();
        assert_eq!(seen, ["%1 \"ab\"", "add @2", "%3 \"cd\\n\""]);
        batch.clear();
        assert!(batch.items.is_empty() && batch.data.is_empty());
    }
}
