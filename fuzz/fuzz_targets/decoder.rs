//! Fuzzes the control-mode decoder: any bytes, cut at fuzzer-chosen points, must decode without
//! panicking, the events must not depend on the cuts, and output lent to a `Sink` must be what
//! the owned events carry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use panectl::control::{Decoder, Event, Output, Sink};

fn decode(data: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut decoder = Decoder::with_max_line(4096);
    let mut events = Vec::new();
    let mut start = 0;
    for &cut in cuts {
        decoder.feed(&data[start..cut], &mut |e| events.push(e));
        start = cut;
    }
    decoder.feed(&data[start..], &mut |e| events.push(e));
    decoder.finish(&mut |e| events.push(e));
    events
}

/// Copies what it is lent into owned events.
struct Lent(Vec<Event>);

impl Sink for Lent {
    fn output(&mut self, output: Output<'_>) {
        self.0.push(Event::Notification(output.to_notification()));
    }

    fn event(&mut self, event: Event) {
        self.0.push(event);
    }
}

fn decode_lent(data: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut decoder = Decoder::with_max_line(4096);
    let mut sink = Lent(Vec::new());
    let mut start = 0;
    for &cut in cuts {
        decoder.feed_to(&data[start..cut], &mut sink);
        start = cut;
    }
    decoder.feed_to(&data[start..], &mut sink);
    decoder.finish_to(&mut sink);
    sink.0
}

fuzz_target!(|input: &[u8]| {
    // The first byte chooses a cut spacing, the rest is the stream.
    let Some((&spacing, data)) = input.split_first() else {
        return;
    };
    let step = usize::from(spacing).max(1);
    let cuts: Vec<usize> = (step..data.len()).step_by(step).collect();
    let whole = decode(data, &[]);
    assert_eq!(decode(data, &cuts), whole);
    assert_eq!(decode_lent(data, &cuts), whole);
});
