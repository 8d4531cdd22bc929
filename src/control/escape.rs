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
/// This is the hot path of the daemon (every byte every pane prints goes through it). On x86-64
/// CPUs with AVX2 it decodes 64 bytes per step without a branch per escape (see the `avx2` module),
/// and with AVX-512 VBMI2 it packs each step with one compress instruction (the `avx512` module);
/// elsewhere it works eight bytes at a time with a SWAR search for backslashes, leaving the fast
/// loop only at escapes.
///
/// On error `out` is left as it was.
pub fn unescape_output_into(escaped: &[u8], out: &mut Vec<u8>) -> Result<(), BadEscape> {
    unescape_with(escaped, out, Kernel::detect())
}

/// The implementations of [`unescape_output_into`].
#[derive(Debug, Clone, Copy)]
enum Kernel {
    /// Safe Rust, any architecture.
    Portable,
    /// AVX2; the token proves that the CPU has the features.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Token),
    /// AVX-512 with VBMI2 (byte compression); the token proves that the CPU has the features.
    #[cfg(target_arch = "x86_64")]
    Avx512(avx512::Token),
}

impl Kernel {
    /// The fastest kernel the CPU supports.
    #[inline]
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(token) = avx512::Token::detect() {
                return Kernel::Avx512(token);
            }
            if let Some(token) = avx2::Token::detect() {
                return Kernel::Avx2(token);
            }
        }
        Kernel::Portable
    }
}

/// [`unescape_output_into`] with the given kernel.
fn unescape_with(escaped: &[u8], out: &mut Vec<u8>, kernel: Kernel) -> Result<(), BadEscape> {
    let base = out.len();
    match kernel {
        Kernel::Portable => {}
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2(token) => {
            if token.unescape(escaped, out) {
                return Ok(());
            }
            // Some escape is wrong: the portable decoder finds the first one.
            out.truncate(base);
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512(token) => {
            if token.unescape(escaped, out) {
                return Ok(());
            }
            out.truncate(base);
        }
    }
    let Some(first) = memchr(b'\\', escaped) else {
        out.extend_from_slice(escaped);
        return Ok(());
    };
    let result = unescape_portable(escaped, out, first);
    if result.is_err() {
        out.truncate(base);
    }
    result
}

/// The SWAR decoder: copies `escaped` to `out` and unescapes it in place, starting at the
/// backslash at `first`. Writing never overtakes reading (an escape shrinks four bytes to one),
/// so the output fits in a buffer the size of the input.
///
/// On error `out` may hold part of the data.
fn unescape_portable(escaped: &[u8], out: &mut Vec<u8>, first: usize) -> Result<(), BadEscape> {
    let base = out.len();
    out.extend_from_slice(escaped);
    let written = unescape_in_place(escaped, &mut out[base..], first)?;
    out.truncate(base + written);
    Ok(())
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

/// The AVX2 decoder, the only `unsafe` code of the module.
///
/// It decodes steps of 64 bytes, reading a window of 67 (the block and the digits of an escape
/// at its end) and writing at most 64, with no branch per escape:
///
/// 1. Compare the block with `\` into a 64-bit mask of escape starts. A block without escapes,
///    and without digits of an escape of the previous block, is stored as it is.
/// 2. Decode every byte as if it started an escape, from the three bytes after it (loads at +1,
///    +2 and +3), and put the decoded bytes in place of the backslashes. Whether some escape
///    has a wrong digit is accumulated over the steps and checked at the end.
/// 3. Delete the three digits after each backslash: pack the bytes kept in each 16-byte lane to
///    its front with a `pshufb` from a table, and store the lanes one after the other.
///
/// The last 3 to 66 bytes (all of them for short data) are copied to a zero-padded buffer and
/// decoded the same way. Zero is not an octal digit, so a backslash too close to the end counts
/// as a wrong escape, and the padding bytes, which are output last, are cut off.
///
/// As every good escape is followed by three digits, which are not backslashes, the backslashes
/// of good data are at least four bytes apart, and the deletion masks of a lane take only a few
/// shapes ([`GROUPS`]). Bad data can give other masks, for which the packing is wrong (but
/// writes the same number of bytes); that does not matter, as the caller then decodes the data
/// again with the portable decoder to report the first wrong escape.
///
/// The tables take 149 KiB of read-only data: 128 KiB to map a lane's keep mask to its shuffle,
/// of which data touches only the few entries of the shapes it has, and 20 KiB of shuffles.
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod blocks;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use core::arch::x86_64::{
        __m128i, __m256i, _mm_loadu_si128, _mm_shuffle_epi8, _mm_storeu_si128, _mm256_adds_epu8,
        _mm256_and_si256, _mm256_blendv_epi8, _mm256_castsi256_si128, _mm256_cmpeq_epi8,
        _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8, _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_storeu_si256, _mm256_sub_epi8, _mm256_testz_si256,
    };
    use std::mem::MaybeUninit;

    use super::blocks::{BLOCK, WINDOW};

    /// Proof that the CPU supports the target features of this module.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Token(());

    impl Token {
        /// `Some` if the CPU supports AVX2, BMI1, BMI2 (a little faster code) and POPCNT.
        #[inline]
        pub(super) fn detect() -> Option<Self> {
            let supported = is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("bmi1")
                && is_x86_feature_detected!("bmi2")
                && is_x86_feature_detected!("popcnt");
            supported.then_some(Token(()))
        }

        /// Decodes `escaped`, appending to `out`, and returns `true` if it holds no wrong
        /// escape; otherwise returns `false`, with arbitrary bytes appended to `out`.
        #[inline]
        pub(super) fn unescape(self, escaped: &[u8], out: &mut Vec<u8>) -> bool {
            // SAFETY: a `Token` exists only if `detect` found the target features of `unescape`.
            unsafe { unescape(escaped, out) }
        }
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
    fn unescape(src: &[u8], out: &mut Vec<u8>) -> bool {
        let mut wrong = _mm256_setzero_si256();
        super::blocks::drive(src, out, |window, target, carry| {
            step(window, target, carry, &mut wrong)
        });
        // Only the five high bits of the bytes of `wrong` flag wrong digits.
        _mm256_testz_si256(wrong, _mm256_set1_epi8(!7)) == 1
    }

    /// Decodes `window[..64]` into `target`, deleting first the leading digits that `carry`
    /// marks. Returns the number of bytes written to the front of `target` (the rest holds
    /// arbitrary bytes) and the digits to delete at the start of the next block; sets one of the
    /// five high bits of a byte of `wrong` if an escape is wrong.
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
    #[inline]
    fn step(
        window: &[u8; WINDOW],
        target: &mut [MaybeUninit<u8>; BLOCK],
        carry: u64,
        wrong: &mut __m256i,
    ) -> (usize, u64) {
        let from = window.as_ptr();
        // SAFETY: 32-byte loads at offsets 0 and 32 of the 67-byte window.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(from.cast::<__m256i>()),
                _mm256_loadu_si256(from.add(32).cast::<__m256i>()),
            )
        };
        let backslash = _mm256_set1_epi8(b'\\' as i8);
        let (low_escapes, high_escapes) = (
            _mm256_cmpeq_epi8(low, backslash),
            _mm256_cmpeq_epi8(high, backslash),
        );
        let escapes = u64::from(_mm256_movemask_epi8(low_escapes).cast_unsigned())
            | (u64::from(_mm256_movemask_epi8(high_escapes).cast_unsigned()) << 32);
        if escapes | carry == 0 {
            let to = target.as_mut_ptr().cast::<u8>();
            // SAFETY: 32-byte stores at offsets 0 and 32 of the 64-byte target.
            unsafe {
                _mm256_storeu_si256(to.cast::<__m256i>(), low);
                _mm256_storeu_si256(to.add(32).cast::<__m256i>(), high);
            }
            return (BLOCK, 0);
        }
        // SAFETY: 32-byte loads at offsets 1 to 35 of the 67-byte window.
        let [d1, d2, d3, d4, d5, d6] = unsafe {
            [1, 2, 3, 33, 34, 35].map(|offset| _mm256_loadu_si256(from.add(offset).cast()))
        };
        let low = decode(low, low_escapes, [d1, d2, d3], wrong);
        let high = decode(high, high_escapes, [d4, d5, d6], wrong);
        // The digits after the escapes. Good escapes are at least four bytes apart, so the sum
        // of the shifted masks is their union.
        let deleted = u128::from(escapes) * 0b1110;
        let written = compact(low, high, !(deleted as u64 | carry), target);
        (written, (deleted >> 64) as u64)
    }

    /// Replaces the bytes of `data` marked in `escapes` with the byte their escape encodes, given
    /// the three bytes after each byte of `data`; flags wrong digits of escapes in `wrong`.
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
    #[inline]
    fn decode(
        data: __m256i,
        escapes: __m256i,
        after: [__m256i; 3],
        wrong: &mut __m256i,
    ) -> __m256i {
        let zero = _mm256_set1_epi8(b'0' as i8);
        let [first, second, third] = after.map(|digit| _mm256_sub_epi8(digit, zero));
        // The values of the digits (wrapping below '0') must fit in 3 bits, and twice the value
        // of the first one too.
        let doubled = _mm256_adds_epu8(first, first);
        let bits = _mm256_or_si256(_mm256_or_si256(doubled, second), third);
        *wrong = _mm256_or_si256(*wrong, _mm256_and_si256(bits, escapes));
        // `first << 6 | second << 3 | third` for good digits, the shifts by table lookups (the
        // bytes of the constants are `(i & 3) << 6` and `(i & 7) << 3` for `i` in 0..16).
        let times_64 = _mm256_set1_epi64x(0xc080_4000_c080_4000_u64.cast_signed());
        let times_8 = _mm256_set1_epi64x(0x3830_2820_1810_0800_u64.cast_signed());
        let value = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_shuffle_epi8(times_64, first),
                _mm256_shuffle_epi8(times_8, second),
            ),
            third,
        );
        _mm256_blendv_epi8(data, value, escapes)
    }

    /// Writes the bytes of `low` and `high` whose bits are set in `keep`, in order, to the
    /// front of `target`, whose other bytes get arbitrary values. Returns the number of bytes
    /// kept.
    ///
    /// The packing is right for the masks of good data (see [`GROUPS`]); for others, the bytes
    /// written are wrong but the number is right.
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
    #[inline]
    fn compact(
        low: __m256i,
        high: __m256i,
        keep: u64,
        target: &mut [MaybeUninit<u8>; BLOCK],
    ) -> usize {
        let to = target.as_mut_ptr().cast::<u8>();
        let lanes = [
            _mm256_castsi256_si128(low),
            _mm256_extracti128_si256::<1>(low),
            _mm256_castsi256_si128(high),
            _mm256_extracti128_si256::<1>(high),
        ];
        let mut at = 0;
        for (lane, data) in lanes.into_iter().enumerate() {
            let kept = (keep >> (16 * lane)) as u16;
            let offset = usize::from(LANE_SHUFFLE[usize::from(kept)]);
            // SAFETY: every entry of `LANE_SHUFFLE` is the offset of a 16-byte shuffle inside
            // `SHUFFLES` (asserted when the table is built, at compile time).
            let shuffle = unsafe { _mm_loadu_si128(SHUFFLES.0.as_ptr().add(offset).cast()) };
            let packed = _mm_shuffle_epi8(data, shuffle);
            // SAFETY: `at`, the number of bytes kept before the lane, is at most `16 * lane`, so
            // the store ends at most at byte 64 of the 64-byte target.
            unsafe { _mm_storeu_si128(to.add(at).cast::<__m128i>(), packed) };
            at += kept.count_ones() as usize;
        }
        at
    }

    /// The deletion masks that good data can give 8 bytes: runs of exactly three bytes (the
    /// digits of an escape), and runs of up to three at either end (of escapes cut by the ends).
    const GROUPS: [u8; GROUP_COUNT] = {
        let mut groups = [0; GROUP_COUNT];
        let (mut mask, mut count) = (0, 0);
        while mask < 256 {
            if is_group(mask as u8) {
                assert!(count < GROUP_COUNT);
                groups[count] = mask as u8;
                count += 1;
            }
            mask += 1;
        }
        assert!(count == GROUP_COUNT);
        groups
    };
    const GROUP_COUNT: usize = 36;

    const fn is_group(mask: u8) -> bool {
        let mut bit = 0;
        while bit < 8 {
            if mask >> bit & 1 == 0 {
                bit += 1;
                continue;
            }
            let start = bit;
            while bit < 8 && mask >> bit & 1 == 1 {
                bit += 1;
            }
            let (run, at_an_end) = (bit - start, start == 0 || bit == 8);
            if run > 3 || (run < 3 && !at_an_end) || (start == 0 && bit == 8) {
                return false;
            }
        }
        true
    }

    /// The index in [`GROUPS`] of the deletion mask of the 8 bytes whose keep mask is `keep`,
    /// or 0 (the mask deleting nothing) if it is not there.
    const fn group_index(keep: u8) -> usize {
        let mut index = 0;
        while index < GROUP_COUNT {
            if GROUPS[index] == !keep {
                return index;
            }
            index += 1;
        }
        0
    }

    /// For each keep mask of a 16-byte lane, the offset in [`SHUFFLES`] of its shuffle (that of
    /// the groups of its two halves).
    static LANE_SHUFFLE: [u16; 1 << 16] = {
        let mut group_indices = [0; 256];
        let mut keep = 0;
        while keep < 256 {
            group_indices[keep] = group_index(keep as u8);
            keep += 1;
        }
        let mut offsets = [0; 1 << 16];
        let mut keep = 0;
        while keep < 1 << 16 {
            let row = group_indices[keep & 0xff] + GROUP_COUNT * group_indices[keep >> 8];
            assert!(16 * row + 16 <= SHUFFLES.0.len());
            offsets[keep] = (16 * row) as u16;
            keep += 1;
        }
        offsets
    };

    /// 16-byte alignment for the shuffles.
    #[repr(align(16))]
    struct Shuffles([u8; 16 * GROUP_COUNT * GROUP_COUNT]);

    /// For each pair of [`GROUPS`] (low half, high half of a lane), the `pshufb` indices that
    /// pack the bytes of the lane the two masks keep to its front.
    static SHUFFLES: Shuffles = {
        let mut shuffles = [0; 16 * GROUP_COUNT * GROUP_COUNT];
        let mut row = 0;
        while row < GROUP_COUNT * GROUP_COUNT {
            let deleted =
                GROUPS[row % GROUP_COUNT] as u16 | (GROUPS[row / GROUP_COUNT] as u16) << 8;
            let (mut byte, mut kept) = (0, 0);
            while byte < 16 {
                if deleted >> byte & 1 == 0 {
                    shuffles[16 * row + kept] = byte as u8;
                    kept += 1;
                }
                byte += 1;
            }
            row += 1;
        }
        Shuffles(shuffles)
    };
}

/// Decodes `%output` data into a new buffer.
pub fn unescape_output(escaped: &[u8]) -> Result<Vec<u8>, BadEscape> {
    // The decoders reserve what they need, which for the AVX2 one is a bit more than the input.
    let mut out = Vec::new();
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
    use proptest::prelude::*;

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

    /// The decoding rule, a byte at a time.
    fn reference_unescape(escaped: &[u8]) -> Result<Vec<u8>, BadEscape> {
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(&byte) = escaped.get(at) {
            if byte != b'\\' {
                out.push(byte);
                at += 1;
                continue;
            }
            match escaped.get(at + 1..at + 4) {
                Some(&[a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7']) => {
                    out.push(((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'));
                    at += 4;
                }
                _ => return Err(BadEscape { offset: at }),
            }
        }
        Ok(out)
    }

    /// Every kernel this CPU can run.
    fn kernels() -> Vec<Kernel> {
        #[cfg(target_arch = "x86_64")]
        let fast = [
            avx2::Token::detect().map(Kernel::Avx2),
            avx512::Token::detect().map(Kernel::Avx512),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        let fast: [Option<Kernel>; 0] = [];
        [Kernel::Portable]
            .into_iter()
            .chain(fast.into_iter().flatten())
            .collect()
    }

    /// Checks every kernel against the reference on `escaped` placed at every offset of a
    /// 64-byte aligned buffer, appending to a buffer that already holds bytes.
    fn check_kernels(escaped: &[u8]) -> Result<(), TestCaseError> {
        let expected = reference_unescape(escaped);
        let mut placed = Vec::with_capacity(escaped.len() + 64);
        for alignment in 0..64 {
            placed.clear();
            placed.resize(alignment, b'\\');
            placed.extend_from_slice(escaped);
            let escaped = &placed[alignment..];
            for kernel in kernels() {
                let mut out = b"kept".to_vec();
                let result = unescape_with(escaped, &mut out, kernel);
                prop_assert_eq!(result, expected.as_ref().map(|_| ()).map_err(|e| *e));
                let mut wanted = b"kept".to_vec();
                wanted.extend_from_slice(expected.as_deref().unwrap_or_default());
                prop_assert_eq!(&out, &wanted, "{:?} at alignment {}", kernel, alignment);
            }
        }
        Ok(())
    }

    /// Bytes that make escapes, good and bad, likely.
    fn escape_soup() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            4 => any::<u8>(),
            3 => Just(b'\\'),
            4 => b'0'..=b'3',
            2 => b'4'..=b'9',
            1 => Just(0u8),
        ];
        prop::collection::vec(byte, 0..300)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn kernels_decode_escaped_bytes(raw in prop::collection::vec(any::<u8>(), 0..300)) {
            let escaped = escape_output(&raw);
            prop_assert_eq!(reference_unescape(&escaped), Ok(raw));
            check_kernels(&escaped)?;
        }

        #[test]
        fn kernels_decode_control_heavy_bytes(
            raw in prop::collection::vec(prop_oneof![0u8..0x20, Just(b'\\'), any::<u8>()], 0..300)
        ) {
            check_kernels(&escape_output(&raw))?;
        }

        #[test]
        fn kernels_match_the_reference_on_any_bytes(escaped in escape_soup()) {
            check_kernels(&escaped)?;
        }

        #[test]
        fn kernels_find_the_first_bad_escape_in_long_data(
            raw in prop::collection::vec(any::<u8>(), 0..300),
            edits in prop::collection::vec(
                (any::<prop::sample::Index>(), any::<u8>(), 0..3u8),
                1..4,
            ),
        ) {
            // Mostly good data with a few bytes replaced, inserted or removed.
            let mut escaped = escape_output(&raw);
            for (index, byte, kind) in edits {
                let at = index.index(escaped.len() + 1);
                match kind {
                    0 if at < escaped.len() => escaped[at] = byte,
                    1 if at < escaped.len() => {
                        escaped.remove(at);
                    }
                    _ => escaped.insert(at, byte),
                }
            }
            check_kernels(&escaped)?;
        }
    }

    #[test]
    fn escapes_straddling_block_boundaries_decode() {
        // One or two escapes at every position around the 8-, 16-, 32- and 64-byte boundaries
        // of the first blocks, in data of every length up to three blocks.
        for length in 0..200_usize {
            for at in 0..length.saturating_sub(3) {
                let mut escaped = vec![b'a'; length];
                escaped[at..at + 4].copy_from_slice(b"\\033");
                check_kernels(&escaped).unwrap();
                if at + 8 <= length {
                    escaped[at + 4..at + 8].copy_from_slice(b"\\377");
                    check_kernels(&escaped).unwrap();
                }
            }
        }
    }

    #[test]
    fn bad_escapes_straddling_block_boundaries_are_found() {
        for length in 0..200 {
            for at in 0..length {
                for bad in [&b"\\4"[..], b"\\08", b"\\0\\0", b"\\00/", b"\\"] {
                    let mut escaped = vec![b'a'; length];
                    let end = (at + bad.len()).min(length);
                    escaped[at..end].copy_from_slice(&bad[..end - at]);
                    // A good escape before it, when there is room, to make the offset matter.
                    if at >= 8 {
                        escaped[at - 8..at - 4].copy_from_slice(b"\\012");
                    }
                    check_kernels(&escaped).unwrap();
                }
            }
        }
    }

    #[test]
    fn dense_escapes_decode() {
        // Nothing but escapes, with every possible carry into the next block.
        for length in 0..100 {
            let raw: Vec<u8> = (0..length).map(|i| (i * 7 % 32) as u8).collect();
            let escaped = escape_output(&raw);
            assert_eq!(escaped.len(), 4 * length);
            check_kernels(&escaped).unwrap();
            for lead in 1..4 {
                let mut shifted = vec![b'x'; lead];
                shifted.extend_from_slice(&escaped);
                check_kernels(&shifted).unwrap();
            }
        }
    }

    #[test]
    fn errors_leave_the_output_as_it_was() {
        let mut out = b"before".to_vec();
        let long_then_bad = [&b"\\033[1m"[..], &[b'x'; 150], b"\\9"].concat();
        assert_eq!(
            unescape_output_into(&long_then_bad, &mut out),
            Err(BadEscape { offset: 157 })
        );
        assert_eq!(out, b"before");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_fastest_kernel_is_used_where_available() {
        let has = |features: &[&str]| {
            features.iter().all(|f| match *f {
                "avx2" => is_x86_feature_detected!("avx2"),
                "avx512f" => is_x86_feature_detected!("avx512f"),
                "avx512bw" => is_x86_feature_detected!("avx512bw"),
                "avx512vbmi2" => is_x86_feature_detected!("avx512vbmi2"),
                "bmi1" => is_x86_feature_detected!("bmi1"),
                "bmi2" => is_x86_feature_detected!("bmi2"),
                _ => is_x86_feature_detected!("popcnt"),
            })
        };
        let has_avx512 = has(&[
            "avx512f",
            "avx512bw",
            "avx512vbmi2",
            "bmi1",
            "bmi2",
            "popcnt",
        ]);
        let has_avx2 = has(&["avx2", "bmi1", "bmi2", "popcnt"]);
        match Kernel::detect() {
            Kernel::Avx512(_) => assert!(has_avx512),
            Kernel::Avx2(_) => assert!(has_avx2 && !has_avx512),
            Kernel::Portable => assert!(!has_avx2 && !has_avx512),
        }
        if !has_avx512 {
            eprintln!("no AVX-512 VBMI2 on this CPU: its kernel is not tested here");
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
