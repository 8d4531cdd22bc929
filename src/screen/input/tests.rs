//! The parser's own tests.

use super::utf8::decode;
use super::*;

#[test]
fn utf8_is_decoded_as_glibc_accepts_it() {
    assert_eq!(decode("é".as_bytes(), false), Some(0xe9));
    assert_eq!(decode("日".as_bytes(), false), Some(0x65e5));
    assert_eq!(decode("👍".as_bytes(), false), Some(0x1f44d));
    assert_eq!(decode(b"\xe0\x80\xaf", true), None); // overlong
    assert_eq!(decode(b"\xed\xa0\x80", true), None); // surrogate
    assert_eq!(decode(b"\xf4\x90\x80\x80", false), None); // past U+10FFFF
    assert_eq!(decode(b"\xf4\x90\x80\x80", true), Some(0x110000));
    assert_eq!(decode(b"\xf0\x80\x80\xaf", true), None); // overlong
}

#[test]
fn params_that_tmux_refuses_are_refused() {
    let mut terminal = Terminal::new(10, 2, 0);
    terminal.params = b"1;99999999999".to_vec();
    assert_eq!(terminal.split_params(), None);
    terminal.params = "1;".repeat(24).into_bytes();
    assert_eq!(terminal.split_params(), None);
    terminal.params = b"4:3;;7".to_vec();
    assert_eq!(
        terminal.split_params(),
        Some(vec![
            Param::Sub(b"4:3".to_vec()),
            Param::Missing,
            Param::Number(7)
        ])
    );
}
