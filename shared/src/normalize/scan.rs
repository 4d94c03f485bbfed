//! Word-at-a-time byte scans for normalization's two passes over every
//! byte (issue 18): whether a document holds a character step 2 removes,
//! and whether a line holds whitespace step 4 collapses. Eight bytes are
//! tested at once with the classic SWAR bit tricks; a word that holds a
//! byte needing a closer look (a control, a line's tab, a possible
//! non-ASCII space) is handed back to the byte-wise rules, which stay the
//! definition.

use crate::swar::{bytes_equal, has_less, has_non_ascii, word};

/// Whether some byte of `w` is one of the lead bytes of a Unicode space
/// or a removed control outside ASCII (C2, E1, E2, E3).
#[inline]
fn has_space_lead(w: u64) -> bool {
    has_non_ascii(w)
        && (bytes_equal(w, 0xC2)
            | bytes_equal(w, 0xE1)
            | bytes_equal(w, 0xE2)
            | bytes_equal(w, 0xE3))
            != 0
}

/// Whether the byte at `i` starts a character normalization removes
/// (`is_removed_control`), by the byte-wise rule.
#[inline]
fn removed_at(text: &str, i: usize) -> bool {
    match text.as_bytes()[i] {
        b'\t' | b'\n' | b'\r' => false,
        0..=0x1f | 0x7f => true,
        0xC2 | 0xE2 => text
            .get(i..)
            .and_then(|r| r.chars().next())
            .is_some_and(super::chars::is_removed_control),
        _ => false,
    }
}

/// Whether `text` holds any character [`super::is_removed_control`] says
/// normalization removes.
pub(super) fn holds_removed_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(w) = word(bytes, i) {
        let look = has_less(w, 0x20)
            || (bytes_equal(w, 0x7F) | bytes_equal(w, 0xC2) | bytes_equal(w, 0xE2)) != 0;
        if look && (i..i + 8).any(|j| removed_at(text, j)) {
            return true;
        }
        i += 8;
    }
    (i..bytes.len()).any(|j| removed_at(text, j))
}

/// Whether `rest` holds any whitespace but single plain spaces between
/// non-space characters: a run of two plain spaces, a tab, line feed,
/// vertical tab, form feed or carriage return, any non-ASCII space, or
/// trailing whitespace. For a line's text after its leading structure,
/// whether whitespace collapsing changes it; for any text, whether its
/// words joined by one space differ from it (after leading whitespace).
pub(crate) fn needs_collapse(rest: &str) -> bool {
    let bytes = rest.as_bytes();
    let mut after_space = false;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(w) = word(bytes, i) {
            // ASCII whitespace but the plain space is below 0x0E.
            if !has_less(w, 0x0E) && !has_space_lead(w) {
                let spaces = bytes_equal(w, b' ');
                // A space right after a space, inside the word or across
                // its start.
                if spaces & (spaces << 8) != 0 || (after_space && spaces & 0x80 != 0) {
                    return true;
                }
                after_space = spaces >> 56 != 0;
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        if b < 0x80 {
            match b {
                b' ' if after_space => return true,
                b' ' => after_space = true,
                b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' => return true,
                _ => after_space = false,
            }
            i += 1;
        } else if b < 0xC0 {
            // A continuation byte: the word step above may stop inside a
            // character.
            after_space = false;
            i += 1;
        } else {
            // Every non-ASCII space is horizontal.
            if super::chars::space_len(rest, i).is_some() {
                return true;
            }
            after_space = false;
            i += super::chars::utf8_len(b);
        }
    }
    after_space
}

/// `text.split('\n')`, found with the `memchr` crate's vector search: the
/// standard library's is byte-wise for short lines, and these run over
/// every line of every document.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let line = text.get(start..end).unwrap_or_default();
            start = end + 1;
            line
        })
}

/// `text.split_inclusive('\n')` (each line with its line feed; no empty
/// last piece), with the `memchr` crate as [`lines`].
pub(crate) fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .map(|end| end + 1)
        .chain(std::iter::once(text.len()))
        .filter_map(move |end| {
            let line = text.get(start..end).filter(|l| !l.is_empty())?;
            start = end;
            Some(line)
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report

    use proptest::prelude::*;

    use super::*;

    /// The byte-wise definitions the word scans must agree with.
    fn removed_reference(text: &str) -> bool {
        text.chars().any(super::super::is_removed_control)
    }

    fn collapse_reference(rest: &str) -> bool {
        let mut after_space = false;
        for c in rest.chars() {
            match c {
                ' ' if after_space => return true,
                ' ' => after_space = true,
                c if c.is_whitespace() => return true,
                _ => after_space = false,
            }
        }
        after_space
    }

    /// Characters chosen to hit every branch: plain and Unicode spaces,
    /// tabs, controls (C0, DEL, C1, bidi), letters of one to four bytes,
    /// and bytes that share a lead with a space but are not one.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            " ",
            " ",
            "a",
            "bc",
            "\t",
            "\u{b}",
            "\u{c}",
            "\u{1}",
            "\u{7f}",
            "\u{85}",
            "\u{a0}",
            "\u{a9}",
            "\u{1680}",
            "\u{1e00}",
            "\u{2003}",
            "\u{2019}",
            "\u{202a}",
            "\u{2066}",
            "\u{3000}",
            "\u{3042}",
            "ж",
            "слово",
            "\u{1f600}",
            "x",
            "\n",
            "\r",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn word_scans_agree_with_the_byte_rules(pieces in prop::collection::vec(piece(), 0..40)) {
            let text: String = pieces.concat();
            prop_assert_eq!(holds_removed_control(&text), removed_reference(&text));
            let line: String = text.chars().filter(|c| !super::super::is_removed_control(*c)).collect();
            prop_assert_eq!(needs_collapse(&line), collapse_reference(&line), "{:?}", line);
        }
    }

    #[test]
    fn line_splits_equal_the_standard_ones() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "\n\nb",
            "a\nb\n\nc",
            "ж\nслово\n\n",
            "x\r\ny",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.split('\n').collect::<Vec<_>>(),
                "{text:?}"
            );
            assert_eq!(
                lines_inclusive(text).collect::<Vec<_>>(),
                text.split_inclusive('\n').collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn spaces_across_word_edges_are_seen() {
        for n in 0..20 {
            let pad = "x".repeat(n);
            assert!(needs_collapse(&format!("{pad}  y")), "{n}");
            assert!(needs_collapse(&format!("{pad} ")), "{n}");
            assert!(!needs_collapse(&format!("{pad} y z")), "{n}");
            assert!(holds_removed_control(&format!("{pad}\u{7}")), "{n}");
            assert!(!holds_removed_control(&format!("{pad}\t\n")), "{n}");
        }
    }
}
