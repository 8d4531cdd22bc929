//! The escaping schemes of control-mode lines.
//!
//! tmux uses two schemes on the lines it sends (see the protocol notes, §2.2):
//!
//! * `%output` data: every byte below 0x20 and the backslash become `\` plus exactly three octal
//!   digits; every other byte, including DEL and all bytes from 0x80, is sent raw. The data is
//!   whatever the program in the pane wrote, so it is not UTF-8 in general and is cut at arbitrary
//!   byte offsets.
//! * names (windows, sessions, `show-buffer` bodies): vis(3) with octal and C-style escapes, a
//!   doubled backslash, and `\$` before something that looks like a variable.
//!
//! Both decoders work on bytes and never allocate more than one output buffer.

use memchr::memchr;

/// A `\` in `%output` data that is not followed by three octal digits (at most `\377`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("bad octal escape at byte {offset} of the output data")]
pub struct BadEscape {
    /// Offset of the backslash within the escaped data.
    pub offset: usize,
}

/// Decodes `%output` data, appending the raw bytes to `out`.
///
/// This is the hot path of the daemon (every byte every pane prints goes through it), so it
/// works eight bytes at a time: each block is copied optimistically and searched for a backslash
/// with a SWAR test; only escapes leave the fast loop. Writing never overtakes reading (an
/// escape shrinks four bytes to one), so the output fits in a buffer the size of the input.
///
/// On error `out` may hold part of the data; callers that need all-or-nothing truncate it.
pub fn unescape_output_into(escaped: &[u8], out: &mut Vec<u8>) -> Result<(), BadEscape> {
    let Some(first) = memchr(b'\\', escaped) else {
        out.extend_from_slice(escaped);
        return Ok(());
    };
    let base = out.len();
    out.extend_from_slice(escaped);
    let written = unescape_in_place(escaped, &mut out[base..], first);
    match written {
        Ok(written) => {
            out.truncate(base + written);
            Ok(())
        }
        Err(error) => {
            out.truncate(base);
            Err(error)
        }
    }
}

/// Byte `i` of the result has its high bit set where byte `i` of `block` is a backslash (and
/// possibly above the lowest one, which is all the caller looks at).
#[inline(always)]
fn backslash_bits(block: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let diff = block ^ (ONES * u64::from(b'\\'));
    diff.wrapping_sub(ONES) & !diff & HIGHS
}

/// Unescapes `src` into `dst` (same length, already holding a copy of `src`), starting at the
/// backslash at `first`. Returns the number of bytes of `dst` that hold the result.
fn unescape_in_place(src: &[u8], dst: &mut [u8], first: usize) -> Result<usize, BadEscape> {
    let (mut read, mut write) = (first, first);
    loop {
        // `src[read]` is a backslash.
        let bad = BadEscape { offset: read };
        let Some(&[_, high, mid, low]) = src.get(read..read + 4).and_then(|s| s.first_chunk::<4>())
        else {
            return Err(bad);
        };
        let (high, mid, low) = (
            high.wrapping_sub(b'0'),
            mid.wrapping_sub(b'0'),
            low.wrapping_sub(b'0'),
        );
        if high > 3 || mid > 7 || low > 7 {
            return Err(bad);
        }
        dst[write] = (high << 6) | (mid << 3) | low;
        read += 4;
        write += 1;
        // Copy up to the next backslash.
        loop {
            if let Some(block) = src.get(read..).and_then(|s| s.first_chunk::<8>()) {
                dst[write..write + 8].copy_from_slice(block);
                let bits = backslash_bits(u64::from_le_bytes(*block));
                if bits == 0 {
                    read += 8;
                    write += 8;
                    continue;
                }
                let skip = (bits.trailing_zeros() / 8) as usize;
                read += skip;
                write += skip;
                break;
            }
            let tail = &src[read..];
            match tail.iter().position(|&b| b == b'\\') {
                Some(skip) => {
                    dst[write..write + skip].copy_from_slice(&tail[..skip]);
                    read += skip;
                    write += skip;
                    break;
                }
                None => {
                    dst[write..write + tail.len()].copy_from_slice(tail);
                    return Ok(write + tail.len());
                }
            }
        }
    }
}

/// Decodes `%output` data into a new buffer.
pub fn unescape_output(escaped: &[u8]) -> Result<Vec<u8>, BadEscape> {
    let mut out = Vec::with_capacity(escaped.len());
    unescape_output_into(escaped, &mut out)?;
    Ok(out)
}

/// Encodes bytes the way tmux encodes `%output` data. Used to write transcripts in tests and
/// benchmarks; the daemon never needs it.
pub fn escape_output(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 4);
    for &b in raw {
        if b < 0x20 || b == b'\\' {
            out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]);
        } else {
            out.push(b);
        }
    }
    out
}

/// Decodes a vis(3)-encoded name as tmux writes window and session names and `show-buffer`
/// bodies (`VIS_OCTAL | VIS_CSTYLE | VIS_TAB | VIS_NL`).
///
/// Handles `\\`, `\n \r \t \a \b \v \f \s \0`, `\ooo` and `\$`. A backslash followed by anything
/// else is kept as it is, so text that was never encoded survives unchanged.
pub fn unvis(encoded: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(pos) = memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (byte, used) = match after {
            [a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] => {
                (((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'), 3)
            }
            [b'\\', ..] => (b'\\', 1),
            [b'n', ..] => (b'\n', 1),
            [b'r', ..] => (b'\r', 1),
            [b't', ..] => (b'\t', 1),
            [b'a', ..] => (0x07, 1),
            [b'b', ..] => (0x08, 1),
            [b'v', ..] => (0x0b, 1),
            [b'f', ..] => (0x0c, 1),
            [b's', ..] => (b' ', 1),
            [b'0', ..] => (0, 1),
            [b'$', ..] => (b'$', 1),
            _ => (b'\\', 0),
        };
        out.push(byte);
        rest = &after[used..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_escapes_decode_to_raw_bytes() {
        // Observed on tmux 3.3a: raw DEL, raw UTF-8 and raw 0xff next to octal escapes.
        let line = b"A\\011B\\134C\x7fD\xc3\xa9E\xf0\x9f\x98\x80F\xffG\\015\\015\\012# ";
        let expected = b"A\tB\\C\x7fD\xc3\xa9E\xf0\x9f\x98\x80F\xffG\r\r\n# ";
        assert_eq!(unescape_output(line).unwrap(), expected);
    }

    #[test]
    fn bad_output_escapes_are_errors_with_offsets() {
        assert_eq!(unescape_output(b"ab\\01"), Err(BadEscape { offset: 2 }));
        assert_eq!(unescape_output(b"\\400"), Err(BadEscape { offset: 0 }));
        assert_eq!(unescape_output(b"x\\08x"), Err(BadEscape { offset: 1 }));
        assert_eq!(unescape_output(b"\\"), Err(BadEscape { offset: 0 }));
    }

    #[test]
    fn output_escaping_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let escaped = escape_output(&all);
        assert!(escaped.iter().all(|&b| b >= 0x20));
        assert_eq!(unescape_output(&escaped).unwrap(), all);
    }

    #[test]
    fn escapes_at_every_alignment_decode() {
        // Exercise the eight-byte blocks: escapes at every offset, runs of every length.
        for run in 0..20 {
            for lead in 0..10 {
                let mut raw = vec![b'a'; lead];
                for i in 0..run {
                    raw.push(if i % 3 == 0 {
                        b'\\'
                    } else {
                        b'0' + (i % 10) as u8
                    });
                    raw.extend(std::iter::repeat_n(b'x', i % 11));
                    raw.push(0x1b);
                }
                assert_eq!(
                    unescape_output(&escape_output(&raw)).unwrap(),
                    raw,
                    "run {run} lead {lead}"
                );
            }
        }
    }

    #[test]
    fn swar_finds_the_first_backslash_of_a_block() {
        for position in 0..8 {
            let mut block = *b"abcdefgh";
            block[position] = b'\\';
            let bits = backslash_bits(u64::from_le_bytes(block));
            assert_eq!(bits.trailing_zeros() / 8, position as u32);
        }
        assert_eq!(
            backslash_bits(u64::from_le_bytes(*b"\xdc\x5b\x5d\x7c\xff\x00\x5c\x01"))
                .trailing_zeros()
                / 8,
            6
        );
        assert_eq!(backslash_bits(u64::from_le_bytes(*b"no slash")), 0);
    }

    #[test]
    fn vis_names_decode_as_tmux_encodes_them() {
        // Observed: rename-window '$HOME ${x} $1 a\b "q"' and a name with tab, newline and ESC.
        assert_eq!(
            unvis(br#"\$HOME \${x} $1 a\\b "q" "#),
            br#"$HOME ${x} $1 a\b "q" "#
        );
        assert_eq!(
            unvis(b"nl\\nhere \xc3\xa9 \\033x\\t"),
            b"nl\nhere \xc3\xa9 \x1bx\t"
        );
        assert_eq!(unvis(b"\\0 \\000 \\377 \\s"), b"\0 \0 \xff  ");
    }

    #[test]
    fn vis_keeps_unknown_escapes_and_trailing_backslash() {
        assert_eq!(unvis(b"a\\qb\\"), b"a\\qb\\");
        assert_eq!(unvis(b"\\9"), b"\\9");
    }
}
