//! Offsets in a document file as given → offsets in its normalized text.
//!
//! Gold data (question excerpts, boundaries) and peers' chunks are given in
//! code points of the file as it is; our chunks are in code points of the
//! normalized document. Normalization (docs/contract.md#normalization) only removes characters
//! (a byte-order mark, control characters, `\r` before `\n`, trailing and
//! repeated horizontal whitespace) and replaces some (a lone `\r` by `\n`, a run of horizontal
//! whitespace by one space), so the normalized text is aligned with the
//! file greedily, character by character.

/// For every code point offset of the raw text (0..=len), the offset in the
/// normalized text where that character went (or where the next kept one
/// went, for a removed character).
#[derive(Debug, Clone)]
pub struct OffsetMap {
    map: Vec<u32>,
}

/// What normalization may drop: whitespace, a byte-order mark, and the
/// control characters it removes (a PDF export's NUL or form feed).
fn removable(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}' || shared::normalize::is_removed_control(c)
}

impl OffsetMap {
    /// Aligns `raw` with `normalized`; `None` when they do not align (the
    /// normalized text is not a normalization of `raw`).
    pub fn new(raw: &str, normalized: &str) -> Option<Self> {
        let raw: Vec<char> = raw.chars().collect();
        let norm: Vec<char> = normalized.chars().collect();
        let mut map = Vec::with_capacity(raw.len() + 1);
        let mut j = 0usize;
        for (i, &c) in raw.iter().enumerate() {
            map.push(u32::try_from(j).ok()?);
            match norm.get(j) {
                Some(&n) if n == c => j += 1,
                // A lone `\r` becomes `\n`.
                Some('\n')
                    if c == '\r'
                        && raw[i + 1..]
                            .iter()
                            .find(|c| !shared::normalize::is_removed_control(**c))
                            != Some(&'\n') =>
                {
                    j += 1
                }
                // A run of horizontal whitespace becomes one space.
                Some(' ') if c.is_whitespace() && c != '\n' && c != '\r' => j += 1,
                _ if removable(c) => {}
                _ => return None,
            }
        }
        if j != norm.len() {
            return None;
        }
        map.push(u32::try_from(j).ok()?);
        Some(Self { map })
    }

    /// The normalized offset of raw offset `raw` (clamped to the end).
    pub fn at(&self, raw: usize) -> u32 {
        self.map
            .get(raw)
            .or_else(|| self.map.last())
            .copied()
            .unwrap_or(0)
    }

    /// Number of code points of the raw text.
    pub fn raw_len(&self) -> usize {
        self.map.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn removed_and_replaced_whitespace_maps_to_the_kept_text() {
        let raw = "\u{feff}a  b\t\tc \r\nd\re";
        let norm = shared::normalize::normalize(raw.as_bytes()).unwrap().text;
        assert_eq!(norm, "a b c\nd\ne");
        let m = OffsetMap::new(raw, &norm).unwrap();
        let n: Vec<char> = norm.chars().collect();
        // Every raw letter maps to the same letter.
        for (i, c) in raw.chars().enumerate() {
            if c.is_alphabetic() {
                assert_eq!(n[m.at(i) as usize], c, "raw offset {i}");
            }
        }
        assert_eq!(m.at(raw.chars().count()) as usize, n.len());
        assert!(OffsetMap::new("abc", "abd").is_none());
    }

    #[test]
    fn removed_controls_map_to_the_next_kept_character() {
        for raw in [
            "\u{0}",
            "a\u{0}\u{0}b",
            "page one\n\u{c}page two\u{c}",
            "x \u{7} y\u{1b}",
        ] {
            let norm = shared::normalize::normalize(raw.as_bytes()).unwrap().text;
            let m = OffsetMap::new(raw, &norm).unwrap_or_else(|| panic!("{raw:?}"));
            assert_eq!(m.at(raw.chars().count()) as usize, norm.chars().count());
        }
    }
}
