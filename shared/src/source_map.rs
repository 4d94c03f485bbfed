//! Positions in the original input (the per-chunk file format `sourcePosition`).
//!
//! Every offset of a chunk record refers to the normalized document. Seed
//! 002's per-chunk files point into the *original* file instead ("positions
//! in the original source text only", before any normalization), counted in
//! UTF-16 code units as the TypeScript consumers of that format slice
//! strings. Normalization (docs/contract.md#normalization) only ever deletes text (a byte-order
//! mark, the `\r` of `\r\n`, trailing or surplus whitespace) or replaces a
//! run by one character (a lone `\r` by `\n`, a whitespace run by one space),
//! so the normalized text aligns with the original in one greedy pass;
//! [`SourceMap`] keeps that alignment as segments and maps normalized byte
//! offsets back, [`Utf16Index`] turns byte offsets into UTF-16 offsets and
//! line numbers.

use crate::markdown::UnitIndex;
use crate::normalize::chars::{is_hspace, is_removed_control};

/// One stretch of the normalized text and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    /// Start in the normalized text (bytes).
    norm: usize,
    /// Start in the original text (bytes).
    orig: usize,
    /// Length in the normalized text (bytes).
    norm_len: usize,
    /// Length in the original text (bytes): equal to `norm_len` for a copy,
    /// the replaced run's length for a replacement.
    orig_len: usize,
    /// Copied byte for byte (else one character replacing a run).
    copy: bool,
}

/// The alignment of a normalized document with its original text.
#[derive(Debug, Clone)]
pub struct SourceMap {
    segments: Vec<Segment>,
    original_len: usize,
}

impl SourceMap {
    /// Aligns `normalized` with the `original` it was normalized from; `None`
    /// when the two do not align (the normalized text did not come from this
    /// original), which no output of [`crate::normalize::normalize`] does.
    pub fn new(original: &str, normalized: &str) -> Option<Self> {
        let mut segments: Vec<Segment> = Vec::new();
        let mut push = |seg: Segment| match segments.last_mut() {
            Some(last)
                if seg.copy
                    && last.copy
                    && last.norm + last.norm_len == seg.norm
                    && last.orig + last.orig_len == seg.orig =>
            {
                last.norm_len += seg.norm_len;
                last.orig_len += seg.orig_len;
            }
            _ => segments.push(seg),
        };
        let o = original.as_bytes();
        let n = normalized.as_bytes();
        let mut oi = if original.starts_with('\u{feff}') {
            3
        } else {
            0
        };
        let mut ni = 0;
        while ni < n.len() {
            // Long equal stretches are compared as bytes.
            let same = o[oi.min(o.len())..]
                .iter()
                .zip(&n[ni..])
                .take_while(|(a, b)| a == b)
                .count();
            if same > 0 {
                // Back off to a char boundary of both (they are equal there).
                let mut len = same;
                while !normalized.is_char_boundary(ni + len) || !original.is_char_boundary(oi + len)
                {
                    len -= 1;
                }
                if len > 0 {
                    push(Segment {
                        norm: ni,
                        orig: oi,
                        norm_len: len,
                        orig_len: len,
                        copy: true,
                    });
                    ni += len;
                    oi += len;
                    continue;
                }
            }
            let oc = original.get(oi..)?.chars().next()?;
            let nc = normalized[ni..].chars().next()?;
            if is_removed_control(oc) {
                oi += oc.len_utf8(); // removed by normalization
            } else if oc == '\r' {
                // Controls go before line endings are unified: `\r`, NEL,
                // `\n` is a `\r\n`.
                let next = original[oi + 1..].chars().find(|c| !is_removed_control(*c));
                if next == Some('\n') {
                    oi += 1; // the `\r` of `\r\n` is dropped
                } else if nc == '\n' {
                    push(Segment {
                        norm: ni,
                        orig: oi,
                        norm_len: 1,
                        orig_len: 1,
                        copy: false,
                    });
                    ni += 1;
                    oi += 1;
                } else {
                    return None;
                }
            } else if is_hspace(oc) {
                let run: usize = original[oi..]
                    .chars()
                    .take_while(|c| is_hspace(*c))
                    .map(char::len_utf8)
                    .sum();
                if nc == ' ' {
                    push(Segment {
                        norm: ni,
                        orig: oi,
                        norm_len: 1,
                        orig_len: run,
                        copy: false,
                    });
                    ni += 1;
                }
                oi += run;
            } else {
                return None;
            }
        }
        Some(Self {
            segments,
            original_len: original.len(),
        })
    }

    /// The segment holding normalized byte `pos`.
    fn segment(&self, pos: usize) -> Option<&Segment> {
        let k = self.segments.partition_point(|s| s.norm <= pos);
        self.segments.get(k.checked_sub(1)?)
    }

    /// Where the text starting at normalized byte `pos` starts in the
    /// original (the end of the original for the end of the text).
    pub fn start(&self, pos: usize) -> usize {
        match self.segment(pos) {
            Some(s) if pos < s.norm + s.norm_len => {
                if s.copy {
                    s.orig + (pos - s.norm)
                } else {
                    s.orig
                }
            }
            // At or past the end of the text.
            _ => self.original_len,
        }
    }

    /// Where original byte `pos` lands in the normalized text: its own place
    /// when normalization kept it, else the place of the first byte after
    /// it that was kept (the end of the text when none was).
    pub fn normalized_at(&self, pos: usize) -> usize {
        let k = self
            .segments
            .partition_point(|s| s.orig + s.orig_len <= pos);
        match self.segments.get(k) {
            Some(s) if s.copy && s.orig <= pos => s.norm + (pos - s.orig),
            Some(s) => s.norm,
            None => self.segments.last().map_or(0, |s| s.norm + s.norm_len),
        }
    }

    /// Where the text ending at normalized byte `pos` (exclusive) ends in
    /// the original: right after the original of the character before
    /// `pos`, so text normalization dropped after it (trailing whitespace)
    /// stays outside.
    pub fn end(&self, pos: usize) -> usize {
        let Some(before) = pos.checked_sub(1) else {
            return self.segments.first().map_or(0, |s| s.orig);
        };
        match self.segment(before) {
            Some(s) if s.copy => s.orig + (pos - s.norm),
            Some(s) => s.orig + s.orig_len,
            None => 0,
        }
    }
}

/// Byte offsets of a text to UTF-16 offsets and 1-based line numbers.
#[derive(Debug)]
pub struct Utf16Index<'a> {
    units: UnitIndex<'a>,
    len: usize,
    /// Byte offsets where lines start (`\n`, `\r\n` and a lone `\r` end one).
    line_starts: Vec<usize>,
}

/// UTF-16 units of UTF-8 bytes: one per char, two for a 4-byte char.
fn utf16_units(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .map(|&b| u64::from((b as i8) >= -0x40) + u64::from(b >= 0xF0))
        .sum()
}

impl<'a> Utf16Index<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            let ends_line = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if ends_line {
                line_starts.push(i + 1);
            }
        }
        Self {
            units: UnitIndex::new(text, utf16_units),
            len: text.len(),
            line_starts,
        }
    }

    /// UTF-16 units before byte offset `byte` (a char boundary).
    pub fn utf16(&self, byte: usize) -> usize {
        usize::try_from(self.units.units_before(byte)).unwrap_or(usize::MAX)
    }

    /// The text's length in UTF-16 units.
    pub fn len_utf16(&self) -> usize {
        self.utf16(self.len)
    }

    /// The 1-based line holding byte offset `byte`.
    pub fn line(&self, byte: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= byte).max(1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::normalize::normalize;

    fn map(original: &str) -> (String, SourceMap) {
        let norm = normalize(original.as_bytes()).unwrap().text;
        let map = SourceMap::new(original, &norm).unwrap();
        (norm, map)
    }

    #[test]
    fn crlf_bom_and_whitespace_runs_map_back() {
        let original = "\u{feff}# Title\r\n\r\nSome  \t text   \r\nnext\rline\n";
        let (norm, m) = map(original);
        assert_eq!(norm, "# Title\n\nSome text\nnext\nline\n");
        let find = |s: &str| norm.find(s).unwrap();
        // "Title" sits after the BOM (3 bytes) and "# ".
        assert_eq!(m.start(find("Title")), 5);
        let text = find("text");
        assert_eq!(&original[m.start(text)..m.end(text + 4)], "text");
        // The whole "Some text" line maps to its original, runs included and
        // the trailing spaces left out.
        let line = find("Some");
        assert_eq!(
            &original[m.start(line)..m.end(line + "Some text".len())],
            "Some  \t text"
        );
        assert_eq!(
            &original[m.start(find("next"))..m.end(norm.len())],
            "next\rline\n"
        );
        assert_eq!(m.start(norm.len()), original.len());
    }

    #[test]
    fn removed_control_characters_stay_outside_the_mapped_text() {
        let original = "a\u{1b}[1mb\u{202e}c\u{0}\n\u{7f}d";
        let (norm, m) = map(original);
        assert_eq!(norm, "a[1mbc\nd");
        let b = norm.find('b').unwrap();
        assert_eq!(&original[m.start(b)..m.end(b + 1)], "b");
        assert_eq!(&original[m.start(0)..m.end(norm.len())], original);
        let d = norm.find('d').unwrap();
        assert_eq!(&original[m.start(d)..], "d");
    }

    #[test]
    fn a_control_between_cr_and_lf_leaves_one_line_ending() {
        // Found by the property test: the NEL goes first, then `\r\n` is one.
        let original = "\r\u{85}\n#";
        let (norm, m) = map(original);
        assert_eq!(norm, "\n#");
        assert_eq!(&original[m.start(1)..], "#");
        assert_eq!(m.normalized_at(original.find('#').unwrap()), 1);
    }

    #[test]
    fn text_that_did_not_come_from_the_original_does_not_align() {
        assert!(SourceMap::new("abc", "abd").is_none());
        assert!(SourceMap::new("a", "ab").is_none());
    }

    #[test]
    fn utf16_counts_surrogate_pairs_and_lines() {
        let text = "aé😀\r\nб\rc\n";
        let idx = Utf16Index::new(text);
        for (i, _) in text.char_indices().chain([(text.len(), ' ')]) {
            assert_eq!(idx.utf16(i), text[..i].encode_utf16().count(), "at {i}");
        }
        assert_eq!(idx.len_utf16(), text.encode_utf16().count());
        assert_eq!(idx.line(0), 1);
        assert_eq!(idx.line(text.find('б').unwrap()), 2);
        assert_eq!(idx.line(text.find('c').unwrap()), 3);
    }
}
