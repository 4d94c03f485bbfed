//! Byte offset to Unicode code point offset conversion.

/// Answers "how many chars precede this byte offset" in O(1) plus a short
/// scan, using a checkpoint every [`STRIDE`] bytes.
#[derive(Debug)]
pub struct CharIndex<'a>(Option<UnitIndex<'a>>);

/// Bytes between checkpoints: small enough that the scan is cheap, large
/// enough that the table is ~3% of the text.
const STRIDE: usize = 256;

impl<'a> CharIndex<'a> {
    /// Indexes `text`. An ASCII text (half the English corpus) needs no
    /// table: its char offsets are its byte offsets.
    pub fn new(text: &'a str) -> Self {
        Self((!text.is_ascii()).then(|| UnitIndex::new(text, count_chars)))
    }

    /// The char offset of byte offset `byte` (a char boundary, at most the
    /// text's length).
    pub fn char_offset(&self, byte: usize) -> u64 {
        match &self.0 {
            Some(index) => index.units_before(byte),
            None => byte as u64,
        }
    }
}

/// Units (chars, UTF-16 code units, ...) before any byte offset of a text,
/// counted by `count` over raw bytes; a checkpoint every [`STRIDE`] bytes.
#[derive(Debug)]
pub(crate) struct UnitIndex<'a> {
    text: &'a str,
    /// checkpoints[k] = units in bytes[..k * STRIDE]; one extra entry so
    /// that the end offset has a checkpoint too.
    checkpoints: Vec<u64>,
    count: fn(&[u8]) -> u64,
}

impl<'a> UnitIndex<'a> {
    /// Indexes `text` with `count`, which must count any run of whole or
    /// split UTF-8 sequences additively.
    pub(crate) fn new(text: &'a str, count: fn(&[u8]) -> u64) -> Self {
        let bytes = text.as_bytes();
        let mut checkpoints = Vec::with_capacity(bytes.len() / STRIDE + 2);
        let mut units = 0u64;
        checkpoints.push(0);
        for block in bytes.chunks(STRIDE) {
            units += count(block);
            checkpoints.push(units);
        }
        Self {
            text,
            checkpoints,
            count,
        }
    }

    /// Units before byte offset `byte` (a char boundary, at most the text's
    /// length).
    pub(crate) fn units_before(&self, byte: usize) -> u64 {
        let byte = byte.min(self.text.len());
        let slot = byte / STRIDE;
        self.checkpoints[slot] + (self.count)(&self.text.as_bytes()[slot * STRIDE..byte])
    }
}

/// Counts UTF-8 chars: every byte that is not a continuation byte starts one.
fn count_chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_offsets_match_a_plain_count() {
        for text in [
            "aé€😀".repeat(200),
            "ascii only, ".repeat(100),
            String::new(),
        ] {
            let idx = CharIndex::new(&text);
            for (i, _) in text.char_indices().chain([(text.len(), ' ')]) {
                assert_eq!(
                    idx.char_offset(i),
                    text[..i].chars().count() as u64,
                    "at {i}"
                );
            }
        }
    }
}
