//! Fuzzes the control-mode decoder: any bytes, cut at fuzzer-chosen points, must decode without
//! panicking, and the events must not depend on the cuts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use panectl::control::{Decoder, Event};

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

fuzz_target!(|input: &[u8]| {
    // The first byte chooses a cut spacing, the rest is the stream.
    let Some((&spacing, data)) = input.split_first() else {
        return;
    };
    let step = usize::from(spacing).max(1);
    let cuts: Vec<usize> = (step..data.len()).step_by(step).collect();
    let whole = decode(data, &[]);
    assert_eq!(decode(data, &cuts), whole);
});
