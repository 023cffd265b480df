//! The wide pass: one sweep over a batch's bytes, sixteen at a time,
//! that marks every byte a string's fast path stops at (`"`, `\`, a
//! control, the line's `\n`, anything over 0x7F). The walk then finds
//! where a plain string ends by reading a bit, not by scanning again,
//! and the end of a line costs it nothing special (docs/contract.md §8.1).

use wide::i8x16;

/// Bytes that end the fast part of a string: `"`, `\`, controls, and any
/// byte over 0x7F (UTF-8 is checked there).
#[inline(always)]
pub(super) fn stops_string(x: u8) -> bool {
    x == b'"' || x == b'\\' || !(0x20..=0x7f).contains(&x)
}

/// The bytes of `chunk` that `stops_string` names, one bit each (bit k
/// for byte k). As signed bytes, the controls and everything over 0x7F are
/// exactly those under 0x20; flipping bit 1 first moves `"` (0x22) to
/// 0x20 and keeps that set where it was, so one compare under 0x21 takes
/// all three, and a second takes `\`.
#[inline(always)]
pub(super) fn stops16(chunk: &[u8; 16]) -> u32 {
    let v = i8x16::new(chunk.map(|x| x as i8));
    let stop =
        (v ^ i8x16::splat(0x02)).simd_lt(i8x16::splat(0x21)) | v.simd_eq(i8x16::splat(b'\\' as i8));
    stop.to_bitmask()
}

/// One bit per byte of a batch: set where `stops_string` is true.
#[derive(Default)]
pub struct Stops {
    words: Vec<u64>,
}

impl Stops {
    /// Mark `bytes` (what was marked before is forgotten).
    pub fn mark(&mut self, bytes: &[u8]) {
        self.words.clear();
        let blocks = bytes.chunks_exact(64);
        let rest = blocks.remainder();
        // One extend of known length: no room check a word.
        self.words.extend(blocks.map(|block| {
            let mut word = 0;
            for (k, chunk) in block.chunks_exact(16).enumerate() {
                let chunk = chunk.try_into().expect("16 bytes");
                word |= u64::from(stops16(chunk)) << (16 * k);
            }
            word
        }));
        if !rest.is_empty() {
            let word = rest
                .iter()
                .enumerate()
                .filter(|(_, x)| stops_string(**x))
                .fold(0, |w, (k, _)| w | 1 << k);
            self.words.push(word);
        }
    }

    /// The first marked byte at or after `i`, if any.
    #[inline(always)]
    pub(super) fn next(&self, i: usize) -> Option<usize> {
        let mut k = i / 64;
        let mut word = self.words.get(k)? & (u64::MAX << (i % 64));
        while word == 0 {
            k += 1;
            word = *self.words.get(k)?;
        }
        Some(k * 64 + word.trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 16-byte test stops at exactly the bytes the byte-wise test
    /// names, in every lane.
    #[test]
    fn stops16_matches_stops_string() {
        for x in 0..=255u8 {
            for k in 0..16 {
                let mut chunk = [b'a'; 16];
                chunk[k] = x;
                let want = if stops_string(x) { 1 << k } else { 0 };
                assert_eq!(stops16(&chunk), want, "byte {x:#04x} in lane {k}");
            }
        }
    }

    /// `next` finds every marked byte from every place, over blocks and
    /// the remainder, as a byte-wise search does.
    #[test]
    fn next_is_the_bytewise_search() {
        let mut bytes = Vec::new();
        for n in 0..300u32 {
            bytes.push(match n % 37 {
                0 => b'"',
                5 => b'\\',
                11 => b'\n',
                17 => 0xc3,
                _ => b'a' + (n % 26) as u8,
            });
        }
        for len in [0, 1, 15, 16, 63, 64, 65, 128, 200, 300] {
            let mut stops = Stops::default();
            stops.mark(&bytes[..len]);
            for i in 0..=len + 70 {
                let want = (i..len).find(|&j| stops_string(bytes[j]));
                assert_eq!(stops.next(i), want, "from {i} of {len}");
            }
        }
    }
}
