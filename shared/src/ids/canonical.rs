//! The canonical form of a chunk's text (docs/contract.md#ids), hashed into chunk ids
//! and content hashes.

use crate::normalize::{is_ascii_space, lines, needs_collapse, space_len, utf8_len};

/// The canonical form of a chunk's text, used in ids and content hashes.
///
/// Lines are walked in order. A line whose first characters (after at most
/// three spaces) are three or more backticks or tildes opens a fenced code
/// block, which runs to a line holding only a fence of the same character at
/// least as long (or to the end); code blocks keep their lines byte for byte.
/// Between code blocks, every maximal whitespace run of a prose segment
/// becomes one space and the segment is trimmed; empty segments are dropped.
/// The pieces are joined with `\n` and the result is trimmed.
pub fn canonical_text(text: &str) -> String {
    // No fence can open without three backticks or tildes in a row: then
    // the whole text is one prose segment (the same result, one pass, no
    // line splitting).
    if !has_fence_run(text.as_bytes()) {
        let mut prose = String::with_capacity(text.len());
        push_words(text, &mut prose);
        return prose;
    }
    let mut out = String::with_capacity(text.len());
    let mut prose = String::new();
    let mut fence: Option<(u8, usize)> = None;
    for line in crate::normalize::lines(text) {
        match fence {
            None => {
                if let Some(open) = fence_of(line) {
                    flush_prose(&mut prose, &mut out);
                    separate(&mut out);
                    out.push_str(line);
                    fence = Some(open);
                } else {
                    push_words(line, &mut prose);
                }
            }
            Some((ch, len)) => {
                out.push('\n');
                out.push_str(line);
                if closes(line, ch, len) {
                    fence = None;
                }
            }
        }
    }
    flush_prose(&mut prose, &mut out);
    let trimmed = out.trim();
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_owned()
    }
}

/// Whether `bytes` hold three backticks or three tildes in a row.
fn has_fence_run(bytes: &[u8]) -> bool {
    memchr::memchr2_iter(b'`', b'~', bytes)
        .any(|i| bytes.get(i + 1..i + 3) == Some(&[bytes[i], bytes[i]][..]))
}

/// The lines of `text` (as `str::lines` gives them) that hold three
/// backticks or three tildes in a row, each once, in order: the only lines
/// [`fence_of`] can find a fence on. Found with one `memchr2` pass instead
/// of a walk over every line.
pub(crate) fn fence_run_lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut next_line = 0;
    memchr::memchr2_iter(b'`', b'~', bytes).filter_map(move |i| {
        if i < next_line || bytes.get(i + 1..i + 3) != Some(&[bytes[i], bytes[i]][..]) {
            return None;
        }
        let start = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
        next_line = end + 1;
        let line = text.get(start..end)?;
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Appends the whitespace-separated words of `text` to `prose`, one space
/// between words: `split_whitespace` semantics (Unicode White_Space), with
/// an ASCII fast path, since this runs over every byte of every chunk.
fn push_words(text: &str, prose: &mut String) {
    // Most lines are collapsed already (normalization did it): single plain
    // spaces between words, none at the end. Their words, joined by one
    // space, are the line after its leading whitespace as it is.
    for line in lines(text) {
        let rest = line.trim_start_matches(char::is_whitespace);
        if needs_collapse(rest) {
            push_line_words(rest, prose);
        } else if !rest.is_empty() {
            push_word(rest, prose);
        }
    }
}

/// [`push_words`] for one line, word by word.
fn push_line_words(line: &str, prose: &mut String) {
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        while i < bytes.len() {
            match space_len(line, i) {
                Some(len) => i += len,
                None => break,
            }
        }
        if i >= bytes.len() {
            return;
        }
        let start = i;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if is_ascii_space(b) {
                    break;
                }
                i += 1;
            } else if space_len(line, i).is_some() {
                break;
            } else {
                i += utf8_len(b);
            }
        }
        push_word(&line[start..i], prose);
    }
}

fn push_word(word: &str, prose: &mut String) {
    if !prose.is_empty() {
        prose.push(' ');
    }
    prose.push_str(word);
}

fn separate(out: &mut String) {
    if !out.is_empty() {
        out.push('\n');
    }
}

fn flush_prose(prose: &mut String, out: &mut String) {
    if !prose.is_empty() {
        separate(out);
        out.push_str(prose);
        prose.clear();
    }
}

/// The fence a line opens: its character and length.
pub(crate) fn fence_of(line: &str) -> Option<(u8, usize)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line.as_bytes()[indent..];
    let ch = *rest.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == ch).count();
    // A backtick fence's info string may not contain backticks (CommonMark).
    if len >= 3 && !(ch == b'`' && rest[len..].contains(&b'`')) {
        Some((ch, len))
    } else {
        None
    }
}

/// Whether `line` closes a fence of `ch` repeated at least `len` times.
pub(crate) fn closes(line: &str, ch: u8, len: usize) -> bool {
    let t = line.trim_matches(|c| c == ' ' || c == '\t');
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    indent <= 3 && t.len() >= len && t.bytes().all(|b| b == ch)
}

/// If `text` ends inside a fenced code block (by the line rules of
/// [`canonical_text`]), the line that closes it (indentation and fence).
pub fn unclosed_fence(text: &str) -> Option<String> {
    // No fence opens without three backticks or tildes in a row.
    if !has_fence_run(text.as_bytes()) {
        return None;
    }
    let mut open: Option<(u8, usize, usize)> = None;
    for line in crate::normalize::lines(text) {
        match open {
            None => {
                if let Some((ch, len)) = fence_of(line) {
                    let indent = line.bytes().take_while(|&b| b == b' ').count();
                    open = Some((ch, len, indent));
                }
            }
            Some((ch, len, _)) if closes(line, ch, len) => open = None,
            Some(_) => {}
        }
    }
    open.map(|(ch, len, indent)| {
        format!(
            "{}{}",
            " ".repeat(indent),
            (ch as char).to_string().repeat(len)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_collapses_prose_and_keeps_code() {
        let text =
            "  Intro   text\n\n more\n```rust\nlet  x = 1;\n\n```\n| a  |  b |\n\n~~~\nraw   \n";
        assert_eq!(
            canonical_text(text),
            "Intro text more\n```rust\nlet  x = 1;\n\n```\n| a | b |\n~~~\nraw"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Prose (no fence run) is its words joined by one space, whether
        /// a line takes the collapsed-line shortcut or the word loop.
        #[test]
        fn canonical_prose_is_split_whitespace_joined(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                " ", " ", "  ", "\n", "\n  ", "\r", "\t", "\u{a0}", "\u{2003}", "\u{3000}",
                "\u{85}", "word", "a", "é", "слово", "\u{2019}", "\u{1f600}", "x y",
            ]), 0..40)
        ) {
            let text: String = pieces.concat();
            proptest::prop_assert_eq!(
                canonical_text(&text),
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }

    #[test]
    fn canonical_prose_collapses_unicode_whitespace_like_split_whitespace() {
        let line = "a\u{a0}b \u{2003}\u{3000}c\td\u{85}e  é\u{200b}f ";
        assert_eq!(
            canonical_text(line),
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        // Every character up to U+30FF (all Unicode spaces are below it),
        // next to letters and spaces.
        let mut all = String::new();
        for (n, c) in (0x80u32..0x3100).filter_map(char::from_u32).enumerate() {
            all.push(c);
            all.push(if n % 3 == 0 { ' ' } else { 'x' });
        }
        all.push_str("😀 end");
        assert_eq!(
            canonical_text(&all),
            all.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }

    #[test]
    fn a_fence_needs_three_backticks_or_tildes_in_a_row() {
        assert!(!has_fence_run(b"`a` ``b`` ~~c~~ `~` ~`~"));
        assert!(has_fence_run(b"x\n```rust"));
        assert!(has_fence_run(b"~~~"));
        assert!(!has_fence_run(b"``"));
        let text = "a ``` b\n```rust\nx ```y```\n~~ ~\r\n  ~~~~\r\n`~`";
        let want: Vec<&str> = text
            .lines()
            .filter(|l| has_fence_run(l.as_bytes()))
            .collect();
        assert_eq!(fence_run_lines(text).collect::<Vec<_>>(), want);
        assert_eq!(want.len(), 4);
        assert_eq!(
            canonical_text("a  b\n```\n x  y\n```\n c"),
            "a b\n```\n x  y\n```\nc"
        );
    }
}
