//! Python's string predicates where they differ from Rust's.

/// Python's `str.isspace()` for one character: Unicode `White_Space` and
/// U+001C..U+001F (what `strip()` and `split()` treat as whitespace).
pub fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}
