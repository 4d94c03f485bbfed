//! Python's string semantics where they differ from Rust's, for the
//! drop-in strategies that reproduce Python frameworks character for
//! character.

use std::ops::Range;

/// Python's `str.isspace()` for one character: Unicode `White_Space` and
/// U+001C..U+001F (what `strip()` and `split()` treat as whitespace).
pub fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `range` of `text` without Python whitespace at either end.
pub fn py_strip(text: &str, range: Range<usize>) -> Range<usize> {
    let s = &text[range.clone()];
    let start = range.start + (s.len() - s.trim_start_matches(py_isspace).len());
    let end = range.end - (s.len() - s.trim_end_matches(py_isspace).len());
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_is_stripped() {
        let text = "\u{1f} a \u{a0}";
        assert_eq!(&text[py_strip(text, 0..text.len())], "a");
        assert!(py_isspace('\u{1c}') && !'\u{1c}'.is_whitespace());
    }
}
