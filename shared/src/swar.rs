//! Word-at-a-time byte tests (SWAR, issue 18): eight bytes of a slice read
//! as one `u64` and tested at once with the classic bit tricks. The scans
//! that use them (normalization's `normalize::scan`, the JSON line writer
//! `chunk::json`) hand a word that may hold a byte of interest back to
//! their byte-wise rules, which stay the definition.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// The little-endian word of the eight bytes at `i`, or `None` when fewer
/// than eight are left.
#[inline]
pub(crate) fn word(bytes: &[u8], i: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// The high bit of every byte of `w` that is zero, and no other bit.
#[inline]
fn zero_bytes(w: u64) -> u64 {
    !(((w & LOW7).wrapping_add(LOW7)) | w | LOW7)
}

/// The high bit of every byte of `w` equal to `b`, and no other bit.
#[inline]
pub(crate) fn bytes_equal(w: u64, b: u8) -> u64 {
    zero_bytes(w ^ (LO * u64::from(b)))
}

/// Whether some byte of `w` is below `n` (`n` <= 128). May say yes when
/// none is (the caller then looks closer); never says no when one is.
#[inline]
pub(crate) fn has_less(w: u64, n: u8) -> bool {
    w.wrapping_sub(LO * u64::from(n)) & !w & HI != 0
}

/// Whether some byte of `w` has its high bit set (a byte outside ASCII).
#[inline]
pub(crate) fn has_non_ascii(w: u64) -> bool {
    w & HI != 0
}
