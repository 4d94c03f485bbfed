//! The characters normalization removes or collapses, and byte-level
//! helpers for whitespace and UTF-8 sequences.

/// Whether normalization removes `c` (step 2): C0 controls other than tab,
/// line feed and carriage return (a line ending, unified in step 3), DEL,
/// C1 controls, and the bidi controls U+202A-U+202E and U+2066-U+2069.
pub fn is_removed_control(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{8}'
            | '\u{b}'
            | '\u{c}'
            | '\u{e}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}
/// Horizontal whitespace: what a collapsed run is made of (every Unicode
/// space but the line endings).
pub(crate) fn is_hspace(c: char) -> bool {
    c != '\n' && c != '\r' && c.is_whitespace()
}

/// The byte length of the whitespace character at `i`, if it is one.
/// Outside ASCII, Unicode White_Space characters all start with byte C2, E1,
/// E2 or E3 (U+0085, U+00A0, U+1680, U+2000..U+205F, U+3000), so other
/// letters (Cyrillic, say) are skipped without decoding.
pub(crate) fn space_len(text: &str, i: usize) -> Option<usize> {
    let b = *text.as_bytes().get(i)?;
    if b < 0x80 {
        return is_ascii_space(b).then_some(1);
    }
    if !matches!(b, 0xC2 | 0xE1 | 0xE2 | 0xE3) {
        return None;
    }
    let c = text.get(i..)?.chars().next()?;
    c.is_whitespace().then(|| c.len_utf8())
}

pub(crate) fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The length of the UTF-8 sequence a (non-ASCII, valid) lead byte starts.
pub(crate) fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}
