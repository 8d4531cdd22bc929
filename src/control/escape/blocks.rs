//! The loop shared by the SIMD decoders: 64-byte steps over the data, then over a zero-padded
//! copy of its last bytes, writing into the spare capacity of the output.
//!
//! A kernel supplies the step: it decodes `window[..64]` (the window holds three more bytes, the
//! digits of an escape at the block's end) into the front of a 64-byte target, deleting first
//! the leading digits that `carry` marks, and returns how many bytes it wrote and the digits to
//! delete at the start of the next block. A step never writes more than it reads, so the output
//! fits in the input's length plus one block.

use std::mem::MaybeUninit;

/// Bytes decoded per step.
pub(super) const BLOCK: usize = 64;
/// Bytes a step reads: the block and the digits of an escape at its end.
pub(super) const WINDOW: usize = BLOCK + 3;
/// Capacity reserved in the output buffer past the length of the input.
const SLACK: usize = BLOCK;
/// Room before the tail in the padded buffer, for copying it with fixed-size moves.
const FRONT: usize = 96;

/// Runs `step` over `src`, appending the decoded bytes to `out`.
///
/// The last 3 to 66 bytes (all of them for short data) are copied to a zero-padded buffer and
/// decoded the same way. Zero is not an octal digit, so a backslash too close to the end counts
/// as a wrong escape (the kernel flags it), and the padding bytes, which are output last, are
/// cut off. Inlined into each kernel, so that its step is inlined too.
#[inline(always)]
pub(super) fn drive(
    src: &[u8],
    out: &mut Vec<u8>,
    mut step: impl FnMut(&[u8; WINDOW], &mut [MaybeUninit<u8>; BLOCK], u64) -> (usize, u64),
) {
    out.reserve(src.len() + SLACK);
    let base = out.len();
    // At least `src.len() + BLOCK` long.
    let dst = out.spare_capacity_mut();
    // The steps whose window lies inside `src`, then the rest in a zero-padded copy, cut to the
    // windows of the one or two steps it needs.
    let full = src.len().saturating_sub(WINDOW - BLOCK) / BLOCK;
    let tail = src.get(full * BLOCK..).unwrap_or_default();
    let mut buffer = [0u8; FRONT + BLOCK + WINDOW];
    match src.len().checked_sub(FRONT) {
        // The tail holds 3 to 66 bytes: copy the last 96 bytes so that they end where the tail
        // does, which is cheaper than calling memcpy.
        Some(start) => {
            for chunk in 0..FRONT / 32 {
                let from = src.get(start + 32 * chunk..);
                let to = buffer.get_mut(tail.len() + 32 * chunk..);
                let from = from.and_then(<[u8]>::first_chunk::<32>);
                if let (Some(from), Some(to)) = (from, to.and_then(<[u8]>::first_chunk_mut)) {
                    *to = *from;
                }
            }
        }
        None => buffer
            .iter_mut()
            .skip(FRONT)
            .zip(tail)
            .for_each(|(to, &from)| *to = from),
    }
    let padded_steps = tail.len().div_ceil(BLOCK);
    let padded = buffer
        .get(FRONT..FRONT + padded_steps * BLOCK + WINDOW - BLOCK)
        .unwrap_or_default();

    // `dst[..write]` is initialised and holds the decoding of the input before the step, except
    // for the digits that `carry` marks at its start. A step outputs at most the 64 bytes it
    // reads, so `write` is at most the length of the input before the step (counted from the
    // start of `src`, padding included), which is less than `src.len()`; a step writes 64 bytes
    // from `write`, so the `get_mut`s below never fail.
    let (mut write, mut carry) = (0, 0);
    let mut at = 0;
    while let Some(window) = src.get(at..).and_then(<[u8]>::first_chunk::<WINDOW>) {
        let Some(target) = dst.get_mut(write..).and_then(<[_]>::first_chunk_mut) else {
            break;
        };
        let (written, next) = step(window, target, carry);
        (write, carry, at) = (write + written, next, at + BLOCK);
    }
    let mut at = 0;
    while let Some(window) = padded.get(at..).and_then(<[u8]>::first_chunk::<WINDOW>) {
        let Some(target) = dst.get_mut(write..).and_then(<[_]>::first_chunk_mut) else {
            break;
        };
        let (written, next) = step(window, target, carry);
        (write, carry, at) = (write + written, next, at + BLOCK);
    }
    // The padding bytes are not escapes, so (for good data) they were all output, last.
    let write = write.saturating_sub(padded_steps * BLOCK - tail.len());
    // SAFETY: `dst[..write]` is initialised (see the loop invariant; a step initialises the bytes
    // it says it wrote) and `dst` is the spare capacity of `out` after its `base` elements.
    unsafe { out.set_len(base + write) };
}
