//! The AVX-512 decoder (AVX512-BW and VBMI2): the AVX2 decoder's steps with mask registers and
//! `vpcompressb`, which packs the kept bytes of a whole 64-byte block in one instruction instead
//! of four table-driven lane shuffles.
//!
//! A step compares the block with `\` into a 64-bit mask; a block without escapes, and without
//! digits of an escape of the previous block, is stored as it is. Otherwise every byte is decoded
//! as if it started an escape (from the loads at +1, +2 and +3), the decoded bytes replace the
//! backslashes, and the three digits after each backslash are compressed away. Wrong digits are
//! accumulated in a mask over the steps and checked once at the end, as in the AVX2 decoder.

use core::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_cmpeq_epi8_mask, _mm512_cmpgt_epu8_mask, _mm512_loadu_si512,
    _mm512_mask_blend_epi8, _mm512_maskz_compress_epi8, _mm512_or_si512, _mm512_set1_epi8,
    _mm512_slli_epi16, _mm512_storeu_si512, _mm512_sub_epi8,
};
use std::mem::MaybeUninit;

use super::blocks::{BLOCK, WINDOW};

/// Proof that the CPU supports the target features of this module.
#[derive(Debug, Clone, Copy)]
pub(super) struct Token(());

impl Token {
    /// `Some` if the CPU supports AVX512-F, AVX512-BW, AVX512-VBMI2, BMI1, BMI2 and POPCNT.
    #[inline]
    pub(super) fn detect() -> Option<Self> {
        let supported = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi2")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2")
            && is_x86_feature_detected!("popcnt");
        supported.then_some(Token(()))
    }

    /// Decodes `escaped`, appending to `out`, and returns `true` if it holds no wrong escape;
    /// otherwise returns `false`, with arbitrary bytes appended to `out`.
    #[inline]
    pub(super) fn unescape(self, escaped: &[u8], out: &mut Vec<u8>) -> bool {
        // SAFETY: a `Token` exists only if `detect` found the target features of `unescape`.
        unsafe { unescape(escaped, out) }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,bmi1,bmi2,popcnt")]
fn unescape(src: &[u8], out: &mut Vec<u8>) -> bool {
    let mut wrong = 0u64;
    super::blocks::drive(src, out, |window, target, carry| {
        step(window, target, carry, &mut wrong)
    });
    wrong == 0
}

/// Decodes `window[..64]` into `target`, deleting first the leading digits that `carry` marks.
/// Returns the number of bytes written to the front of `target` and the digits to delete at the
/// start of the next block; sets bits of `wrong` where an escape has a wrong digit.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,bmi1,bmi2,popcnt")]
#[inline]
fn step(
    window: &[u8; WINDOW],
    target: &mut [MaybeUninit<u8>; BLOCK],
    carry: u64,
    wrong: &mut u64,
) -> (usize, u64) {
    let from = window.as_ptr();
    let to = target.as_mut_ptr().cast::<u8>();
    // SAFETY: a 64-byte load at offset 0 of the 67-byte window.
    let data = unsafe { _mm512_loadu_si512(from.cast::<__m512i>()) };
    let escapes = _mm512_cmpeq_epi8_mask(data, _mm512_set1_epi8(b'\\' as i8));
    if escapes | carry == 0 {
        // SAFETY: a 64-byte store to the 64-byte target.
        unsafe { _mm512_storeu_si512(to.cast::<__m512i>(), data) };
        return (BLOCK, 0);
    }
    // SAFETY: 64-byte loads at offsets 1 to 3 of the 67-byte window.
    let [first, second, third] =
        unsafe { [1, 2, 3].map(|offset| _mm512_loadu_si512(from.add(offset).cast::<__m512i>())) }
            .map(|digit| _mm512_sub_epi8(digit, _mm512_set1_epi8(b'0' as i8)));
    // Digit values wrap below '0', so one unsigned comparison each finds every wrong digit.
    let bad = _mm512_cmpgt_epu8_mask(first, _mm512_set1_epi8(3))
        | _mm512_cmpgt_epu8_mask(second, _mm512_set1_epi8(7))
        | _mm512_cmpgt_epu8_mask(third, _mm512_set1_epi8(7));
    *wrong |= bad & escapes;
    // `first << 6 | second << 3 | third` for good digits. There is no byte shift: the 16-bit
    // shifts carry bits into the neighbouring byte only below the bits each mask keeps.
    let value = _mm512_or_si512(
        _mm512_or_si512(
            _mm512_and_si512(
                _mm512_slli_epi16::<6>(first),
                _mm512_set1_epi8(0xc0_u8 as i8),
            ),
            _mm512_and_si512(_mm512_slli_epi16::<3>(second), _mm512_set1_epi8(0x38)),
        ),
        third,
    );
    let decoded = _mm512_mask_blend_epi8(escapes, data, value);
    // The digits after the escapes. Good escapes are at least four bytes apart, so the sum of
    // the shifted masks is their union (for bad data the count may be off; it is decoded again).
    let deleted = u128::from(escapes) * 0b1110;
    let keep = !(deleted as u64 | carry);
    let packed = _mm512_maskz_compress_epi8(keep, decoded);
    // SAFETY: a 64-byte store to the 64-byte target; the bytes past the kept ones are arbitrary.
    unsafe { _mm512_storeu_si512(to.cast::<__m512i>(), packed) };
    (keep.count_ones() as usize, (deleted >> 64) as u64)
}
