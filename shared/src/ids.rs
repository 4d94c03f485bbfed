//! Canonical chunk text and the stable id formulas (SPEC 3.5).

use sha2::{Digest, Sha256};

use crate::chunk::json::decimal;
use crate::chunk::record::Granularity;
use crate::normalize::{is_ascii_space, lines, needs_collapse, space_len, utf8_len};
use crate::profile::IdFormula;

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

/// Lowercase hex sha256 of the given parts (the tests' reference).
#[cfg(test)]
fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    lower_hex(&h.finalize())
}

/// `bytes` in lowercase hex, two digits a byte (what `hex::encode` gives,
/// without its per-character iterator: issue 18 measured that at 1.4% of
/// `spec-v1`'s instructions, two digests per chunk).
fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xF)]));
    }
    out
}

/// The inputs of a chunk id.
#[derive(Debug, Clone, Copy)]
pub struct IdInput<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// Document.
    pub document_id: &'a str,
    /// Source version.
    pub source_version_id: &'a str,
    /// Ordinal.
    pub ordinal: u32,
    /// The chunk's canonical text ([`canonical_text`]), used by seed 000.
    pub canonical_text: &'a str,
    /// First block index.
    pub block_start_idx: u32,
    /// Last block index.
    pub block_end_idx: u32,
    /// Own span start, in chars.
    pub char_start: u64,
    /// Own span end, in chars.
    pub char_end: u64,
    /// Granularity of the chunk.
    pub granularity: Granularity,
    /// The profile's primary granularity.
    pub primary: Granularity,
}

/// The stable chunk id under `formula` (SPEC 3.5). A chunk of a granularity
/// other than the profile's primary one appends `|granularity`.
pub fn chunk_id(formula: IdFormula, input: &IdInput<'_>) -> String {
    // The digest's input is written part by part, without formatting it
    // into a string first (issue 18: four allocations a chunk).
    let mut h = Sha256::new();
    let mut digits = [0u8; 20];
    match formula {
        IdFormula::Seed000 => {
            // tenant|document|version|ordinal|canonical text
            for part in [input.tenant_id, input.document_id, input.source_version_id] {
                h.update(part.as_bytes());
                h.update(b"|");
            }
            h.update(decimal(u64::from(input.ordinal), &mut digits));
            h.update(b"|");
            h.update(input.canonical_text.as_bytes());
        }
        IdFormula::Seed003 => {
            // document:block start:block end:char start:char end
            h.update(input.document_id.as_bytes());
            for n in [
                u64::from(input.block_start_idx),
                u64::from(input.block_end_idx),
                input.char_start,
                input.char_end,
            ] {
                h.update(b":");
                h.update(decimal(n, &mut digits));
            }
        }
    }
    if input.granularity != input.primary {
        h.update(b"|");
        h.update(input.granularity.as_str().as_bytes());
    }
    lower_hex(&h.finalize())
}

/// sha256 of the canonical text and the headings path, without the ordinal:
/// equal across versions exactly when the chunk's content is unchanged.
pub fn content_hash(canonical_text: &str, headings_path: &[String]) -> String {
    // The headings joined with U+001F, a U+001E, the text; hashed part by
    // part rather than joined first.
    let mut h = Sha256::new();
    for (i, heading) in headings_path.iter().enumerate() {
        if i > 0 {
            h.update(b"\x1f");
        }
        h.update(heading.as_bytes());
    }
    h.update(b"\x1e");
    h.update(canonical_text.as_bytes());
    lower_hex(&h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_hashes_the_joined_path_and_the_text() {
        let sha = |s: &str| sha256_hex(&[s.as_bytes()]);
        let path = ["Guide".to_owned(), "Install".to_owned()];
        assert_eq!(
            content_hash("Run it.", &path),
            sha("Guide\u{1f}Install\u{1e}Run it.")
        );
        assert_eq!(content_hash("Run it.", &[]), sha("\u{1e}Run it."));
        assert_eq!(
            content_hash("x", &["".to_owned(), "".to_owned()]),
            sha("\u{1f}\u{1e}x")
        );
    }

    #[test]
    fn chunk_ids_hash_the_formulas_text() {
        let mut input = IdInput {
            tenant_id: "t1",
            document_id: "doc-9",
            source_version_id: "v2",
            ordinal: 17,
            canonical_text: "Some text",
            block_start_idx: 3,
            block_end_idx: 5,
            char_start: 120,
            char_end: 4_567,
            granularity: Granularity::Section,
            primary: Granularity::Section,
        };
        let sha = |s: &str| sha256_hex(&[s.as_bytes()]);
        assert_eq!(
            chunk_id(IdFormula::Seed000, &input),
            sha("t1|doc-9|v2|17|Some text")
        );
        assert_eq!(
            chunk_id(IdFormula::Seed003, &input),
            sha("doc-9:3:5:120:4567")
        );
        input.granularity = Granularity::Paragraph;
        assert_eq!(
            chunk_id(IdFormula::Seed000, &input),
            sha("t1|doc-9|v2|17|Some text|paragraph")
        );
        assert_eq!(
            chunk_id(IdFormula::Seed003, &input),
            sha("doc-9:3:5:120:4567|paragraph")
        );
    }

    #[test]
    fn lower_hex_is_hex_encode() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(lower_hex(&all), hex::encode(&all));
        assert_eq!(lower_hex(&[]), "");
    }

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

    #[test]
    fn seed000_id_matches_the_formula_by_hand() {
        let input = IdInput {
            tenant_id: "acme",
            document_id: "doc",
            source_version_id: "v1",
            ordinal: 3,
            canonical_text: &canonical_text("Hello   world\n"),
            block_start_idx: 0,
            block_end_idx: 0,
            char_start: 0,
            char_end: 0,
            granularity: Granularity::Section,
            primary: Granularity::Section,
        };
        let want = hex::encode(Sha256::digest(b"acme|doc|v1|3|Hello world"));
        assert_eq!(chunk_id(IdFormula::Seed000, &input), want);
        let other = IdInput {
            granularity: Granularity::Window,
            ..input
        };
        let want = hex::encode(Sha256::digest(b"acme|doc|v1|3|Hello world|window"));
        assert_eq!(chunk_id(IdFormula::Seed000, &other), want);
    }

    #[test]
    fn seed003_id_matches_the_formula_by_hand() {
        let input = IdInput {
            tenant_id: "acme",
            document_id: "doc",
            source_version_id: "v1",
            ordinal: 3,
            canonical_text: "x",
            block_start_idx: 2,
            block_end_idx: 5,
            char_start: 10,
            char_end: 99,
            granularity: Granularity::Section,
            primary: Granularity::Section,
        };
        let want = hex::encode(Sha256::digest(b"doc:2:5:10:99"));
        assert_eq!(chunk_id(IdFormula::Seed003, &input), want);
    }
}
