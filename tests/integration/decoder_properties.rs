//! Properties of the decoder over whole streams: the way a stream is cut into chunks never
//! changes the events, and random bytes never make it panic.

use panectl::control::{Decoder, Event};
use proptest::prelude::*;

use crate::transcripts::{FIXTURES, transcript};

fn decode_in_chunks(stream: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut decoder = Decoder::new();
    let mut events = Vec::new();
    let mut start = 0;
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    for cut in cuts {
        decoder.feed(&stream[start..cut], &mut |e| events.push(e));
        start = cut;
    }
    decoder.feed(&stream[start..], &mut |e| events.push(e));
    decoder.finish(&mut |e| events.push(e));
    events
}

/// A stream of every kind of line, including malformed ones and lines split inside escapes.
fn synthetic_stream() -> Vec<u8> {
    let mut stream = Vec::new();
    stream.extend_from_slice(b"\x1bP1000p%begin 1 260 0\r\n%end 1 260 0\r\n");
    for fixture in FIXTURES {
        // The first and last few kilobytes of each recording: attach, notifications, exit.
        let data = transcript(fixture);
        stream.extend_from_slice(&data[..data.len().min(4096)]);
        let tail = data.len().saturating_sub(4096);
        let line_start = data[tail..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(tail, |i| tail + i + 1);
        stream.extend_from_slice(&data[line_start..]);
    }
    stream.extend_from_slice(
        b"%begin 1 2 1\n%end not really\n%pause %3\n%end 1 2 1\n%output %1 bad\\9\nstray line\n\
%layout-change @1 0000,80x24,0,0,0 0000,80x24,0,0,0 *\n%subscription-changed s $0 @1 0 %1 : v : w\n\
%extended-output %4 12 : \\033[1mx\n%unknown-thing with args\n%end 1 1 1\n%begin 1 1\n\xff\xfe\x00\n",
    );
    stream
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chunking_never_changes_the_events(cuts in prop::collection::vec(any::<usize>(), 0..40)) {
        let stream = synthetic_stream();
        let whole = decode_in_chunks(&stream, &[]);
        prop_assert_eq!(decode_in_chunks(&stream, &cuts), whole);
    }

    #[test]
    fn random_bytes_never_panic_and_chunk_the_same(
        data in prop::collection::vec(any::<u8>(), 0..4096),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let whole = decode_in_chunks(&data, &[]);
        prop_assert_eq!(decode_in_chunks(&data, &cuts), whole);
    }

    #[test]
    fn random_control_like_lines_never_panic(
        lines in prop::collection::vec(
            prop::sample::select(vec![
                "%begin ", "%end ", "%error ", "%output %", "%extended-output %", "%layout-change @",
                "%window-renamed @", "%subscription-changed ", "%pause %", "%exit", "%", "1 ", "2 ",
                "\\0", "\\", ",", "x", "{", "}", "[", "]", " : ", "$", "-", "\n", "\r\n", "é", "日",
            ]),
            0..200,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let stream = lines.concat().into_bytes();
        let whole = decode_in_chunks(&stream, &[]);
        prop_assert_eq!(decode_in_chunks(&stream, &cuts), whole);
    }
}

#[test]
fn every_fixture_decodes_the_same_byte_by_byte() {
    for fixture in ["shell-utf8", "windows-and-panes", "session-killed"] {
        let stream = transcript(fixture);
        let cuts: Vec<usize> = (0..stream.len()).collect();
        assert_eq!(
            decode_in_chunks(&stream, &cuts),
            decode_in_chunks(&stream, &[]),
            "{fixture}"
        );
    }
}
