//! Text whose every character remembers where in the document it came
//! from (a byte offset), so that a chunk Unstructured renders (whitespace
//! collapsed, Markdown syntax removed, an overlap or a repeated table header
//! in front) still knows which bytes of the document it was made from.
//! Lengths and slices are in characters (Python `str` indices).

use std::ops::Range;

/// Python's `str.isspace()`: Unicode `White_Space` plus U+001C..U+001F.
pub use crate::strategy::pystr::py_isspace;

/// One character and the document byte it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SChar {
    /// The character.
    pub c: char,
    /// The byte offset in the document of what it was made from.
    pub src: usize,
}

/// A string of [`SChar`]s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SText(pub Vec<SChar>);

impl SText {
    /// `s` with every character at offset `src`.
    pub fn plain(s: &str, src: usize) -> Self {
        SText(s.chars().map(|c| SChar { c, src }).collect())
    }

    /// Length in characters (Python `len`).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No characters.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The characters as a `String`.
    pub fn text(&self) -> String {
        self.0.iter().map(|s| s.c).collect()
    }

    /// `self[r]`, clamped to the length.
    pub fn slice(&self, r: Range<usize>) -> SText {
        let end = r.end.min(self.len());
        SText(self.0[r.start.min(end)..end].to_vec())
    }

    /// The last `n` characters (`s[-n:]`, all of it when shorter).
    pub fn tail(&self, n: usize) -> SText {
        self.slice(self.len().saturating_sub(n)..self.len())
    }

    /// `str.lstrip()`.
    pub fn lstrip(&self) -> SText {
        let from = self
            .0
            .iter()
            .position(|s| !py_isspace(s.c))
            .unwrap_or(self.len());
        self.slice(from..self.len())
    }

    /// `str.rstrip()`.
    pub fn rstrip(&self) -> SText {
        let to = self
            .0
            .iter()
            .rposition(|s| !py_isspace(s.c))
            .map_or(0, |i| i + 1);
        self.slice(0..to)
    }

    /// `str.strip()`.
    pub fn strip(&self) -> SText {
        self.lstrip().rstrip()
    }

    /// `str.split()`: runs of non-whitespace.
    pub fn words(&self) -> Vec<SText> {
        self.0
            .split(|s| py_isspace(s.c))
            .filter(|w| !w.is_empty())
            .map(|w| SText(w.to_vec()))
            .collect()
    }

    /// `" ".join(s.split())`.
    pub fn normalized(&self) -> SText {
        SText::join(&self.words(), " ")
    }

    /// Appends `s`, its characters at the offset of the last character
    /// (or `fallback` when empty).
    pub fn push_str(&mut self, s: &str, fallback: usize) {
        let src = self.0.last().map_or(fallback, |x| x.src);
        self.0.extend(s.chars().map(|c| SChar { c, src }));
    }

    /// Appends `other`.
    pub fn append(&mut self, other: &SText) {
        self.0.extend_from_slice(&other.0);
    }

    /// `sep.join(parts)`; a separator takes the offset of the character
    /// before it.
    pub fn join(parts: &[SText], sep: &str) -> SText {
        let mut out = SText::default();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                let fallback = p.0.first().map_or(0, |x| x.src);
                out.push_str(sep, fallback);
            }
            out.append(p);
        }
        out
    }

    /// Whether `sep` occurs at character `i`.
    pub fn has_at(&self, i: usize, sep: &[char]) -> bool {
        i + sep.len() <= self.len()
            && self.0[i..i + sep.len()]
                .iter()
                .zip(sep)
                .all(|(a, b)| a.c == *b)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn python_string_methods() {
        let s = SText::plain(" a \u{1c} b\n\nc ", 0);
        assert_eq!(s.strip().text(), "a \u{1c} b\n\nc");
        assert_eq!(s.normalized().text(), "a b c");
        assert_eq!(s.tail(3).text(), "\nc ");
        assert_eq!(s.tail(99).text(), s.text());
    }
}
