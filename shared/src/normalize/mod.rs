//! Normalization (docs/contract.md#normalization): the text every offset refers to.
//!
//! 1. Decode UTF-8; a failure is [`ChunkError::InvalidUtf8`] with the byte
//!    offset of the first bad sequence. A leading byte-order mark is dropped.
//! 2. Control characters are removed everywhere, code blocks included (an
//!    escape sequence in code reaches terminals and prompts too): C0 controls
//!    other than tab, line feed and carriage return, DEL, C1 controls, and
//!    the Unicode bidi embedding, override and isolate controls
//!    (U+202A-U+202E, U+2066-U+2069) that can disguise text. See
//!    [`is_removed_control`]; [`crate::source_map`] maps offsets back across
//!    the removals.
//! 3. `\r\n` and lone `\r` become `\n`.
//! 4. Outside fenced/indented code, tables, HTML blocks and front matter:
//!    runs of horizontal whitespace inside a line collapse to one space,
//!    trailing horizontal whitespace is removed, and the line's leading
//!    structure (indentation, `>` quote markers, list markers and the spaces
//!    after them) is kept byte for byte, because it carries list and code
//!    structure. A single space or a single no-break space stays as it is.
//!
//! Normalization is idempotent: normalizing a normalized document changes
//! nothing (a property test holds it to that).

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser};

use crate::error::ChunkError;
use crate::markdown::raw_blocks;

mod one_parse;
mod scan;

pub use one_parse::normalize_with_blocks;
use one_parse::Collapsed;

pub(crate) use scan::{lines, needs_collapse};

/// A normalized Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedDocument {
    /// The normalized text.
    pub text: String,
}

/// Normalizes raw markdown bytes.
pub fn normalize(bytes: &[u8]) -> Result<NormalizedDocument, ChunkError> {
    let unified = unified(bytes)?;
    Ok(NormalizedDocument {
        text: collapse_whitespace(&unified, || protected_ranges(&unified), None),
    })
}

/// Steps 1-3: the decoded text, its controls removed and line endings unified.
fn unified(bytes: &[u8]) -> Result<Cow<'_, str>, ChunkError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ChunkError::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(match remove_controls(text) {
        Cow::Borrowed(clean) => unify_line_endings(clean),
        Cow::Owned(clean) => Cow::Owned(unify_line_endings(&clean).into_owned()),
    })
}

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

fn remove_controls(text: &str) -> Cow<'_, str> {
    // Most documents have none: one scan, eight bytes at a time, no copy. Every removed
    // character is a byte below 0x20 or 0x7F, or starts with C2 (C1
    // controls) or E2 (the bidi controls); only those are decoded.
    if !scan::holds_removed_control(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|c| !is_removed_control(*c)).collect())
}

fn unify_line_endings(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Parser options shared by normalization and block parsing, so both see the
/// same structure.
pub(crate) fn parser_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The length of the YAML (`---`) or TOML (`+++`) front matter at the very
/// start of `text`, 0 if there is none. Only the start counts: pulldown-cmark
/// would also read a `---`/text/`---` stretch in the middle of a document as
/// a metadata block, and that text is content.
pub(crate) fn front_matter_len(text: &str) -> usize {
    let (fence, closers): (&str, &[&str]) = if text.starts_with("---\n") {
        ("---", &["---", "..."])
    } else if text.starts_with("+++\n") {
        ("+++", &["+++"])
    } else {
        return 0;
    };
    let mut lines = text[fence.len() + 1..].split_inclusive('\n');
    // The first line must look like a key (`title: x`, `title = "x"`), so a
    // thematic break that opens a document is not taken for front matter.
    let first = lines.next().unwrap_or("");
    let key_len = first
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        .count();
    let after_key = first[key_len..].trim_start_matches(' ');
    if key_len == 0
        || !(after_key.starts_with(':') || (fence == "+++" && after_key.starts_with('=')))
    {
        return 0;
    }
    let mut end = fence.len() + 1 + first.len();
    for line in lines {
        end += line.len();
        if closers.contains(&line.trim_end()) {
            return end;
        }
    }
    0
}

/// The document's Markdown events with byte ranges into `text`, front matter
/// excluded (it is not Markdown); returns the front matter's length too.
pub(crate) fn body_events(text: &str) -> (usize, impl Iterator<Item = (Event<'_>, Range<usize>)>) {
    let fm = front_matter_len(text);
    let events = Parser::new_ext(&text[fm..], parser_options())
        .into_offset_iter()
        .map(move |(e, r)| (e, r.start + fm..r.end + fm));
    (fm, events)
}

/// Byte ranges whose lines are kept verbatim: code blocks, tables, HTML
/// blocks, front matter (found by the block parse, [`raw_blocks`]).
fn protected_ranges(text: &str) -> Vec<Range<usize>> {
    raw_blocks(text, true).1
}

/// Horizontal whitespace: what a collapsed run is made of (every Unicode
/// space but the line endings).
pub(crate) fn is_hspace(c: char) -> bool {
    c != '\n' && c != '\r' && c.is_whitespace()
}

/// Collapses whitespace on every line outside the protected ranges. The
/// ranges come from `protected`, a Markdown parse only run once a line that
/// collapsing would change is met: a document without one is copied as it
/// is, parse-free (issue 18). `runs`, when given, hears of every run that
/// collapsing changed, to carry offsets across them ([`Collapsed`]).
fn collapse_whitespace(
    text: &str,
    protected: impl FnOnce() -> Vec<Range<usize>>,
    mut runs: Option<&mut Collapsed>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut protected = Some(protected);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut next_range = 0;
    let mut line_start = 0;
    for line in scan::lines_inclusive(text) {
        let line_end = line_start + line.len();
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let lead = leading_structure_len(body);
        let rest = &body[lead..];
        if !scan::needs_collapse(rest) {
            out.push_str(line);
            line_start = line_end;
            continue;
        }
        if let Some(find) = protected.take() {
            ranges = find();
        }
        while ranges.get(next_range).is_some_and(|r| r.end <= line_start) {
            next_range += 1;
        }
        let verbatim = ranges
            .get(next_range)
            .is_some_and(|r| r.start < line_end && line_start < r.end);
        if verbatim {
            out.push_str(line);
        } else {
            out.push_str(&body[..lead]);
            let at = line_start + lead;
            collapse_rest(rest, &mut out, |start, before, after| {
                if let Some(runs) = runs.as_deref_mut() {
                    runs.record(rest, at, start..start + before, after);
                }
            });
            out.push_str(newline);
        }
        line_start = line_end;
    }
    out
}

/// Length in bytes of the line's leading structure: indentation, quote
/// markers, list markers and the whitespace after them.
fn leading_structure_len(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let marker_start = i;
        let mut j = i;
        if j < b.len() && matches!(b[j], b'>' | b'-' | b'+' | b'*') {
            j += 1;
        } else {
            while j < b.len() && j - i < 9 && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > i && j < b.len() && matches!(b[j], b'.' | b')') {
                j += 1;
            } else {
                j = i;
            }
        }
        let marker_ok = j > marker_start
            && (j == b.len() || matches!(b[j], b' ' | b'\t' | b'\n') || b[marker_start] == b'>');
        if !marker_ok {
            return i;
        }
        i = j;
    }
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

/// Collapses the whitespace runs of a line after its leading structure:
/// one plain space (or one lone no-break-like space) stays, other runs
/// become one space, trailing whitespace is dropped.
///
/// `on_run(start, before, after)` hears of every run that changes: its
/// byte offset in `rest`, its length, and the length it became (0 when
/// dropped; a lone tab stays one byte long).
fn collapse_rest(rest: &str, out: &mut String, mut on_run: impl FnMut(usize, usize, usize)) {
    let mut run_start: Option<usize> = None;
    for (i, c) in rest.char_indices() {
        if is_hspace(c) {
            run_start.get_or_insert(i);
        } else {
            if let Some(start) = run_start.take() {
                // One plain space, or one lone no-break-like space, stays itself.
                let run = &rest[start..i];
                let mut it = run.chars();
                match (it.next(), it.next()) {
                    (Some(only), None) if only != '\t' && only != '\u{0b}' && only != '\u{0c}' => {
                        out.push(only)
                    }
                    _ => {
                        out.push(' ');
                        on_run(start, run.len(), 1);
                    }
                }
            }
            out.push(c);
        }
    }
    // Trailing horizontal whitespace is dropped.
    if let Some(start) = run_start {
        on_run(start, rest.len() - start, 0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    fn norm(s: &str) -> String {
        normalize(s.as_bytes())
            .map(|d| d.text)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn line_endings_become_lf() {
        assert_eq!(norm("a\r\nb\rc\n"), "a\nb\nc\n");
    }

    #[test]
    fn whitespace_runs_collapse_outside_code_and_tables() {
        let src = "Some   text\there  \n\n```\nkeep    this  \n```\n\n| a   | b |\n|---|---|\n| 1   | 2 |\n\n    indented   code\n";
        let want = "Some text here\n\n```\nkeep    this  \n```\n\n| a   | b |\n|---|---|\n| 1   | 2 |\n\n    indented   code\n";
        assert_eq!(norm(src), want);
    }

    #[test]
    fn list_and_quote_structure_is_kept() {
        assert_eq!(
            norm("-   item   one\n    cont   inued\n>  quoted   text\n1.  x\n"),
            "-   item one\n    cont inued\n>  quoted text\n1.  x\n"
        );
    }

    #[test]
    fn invalid_utf8_names_the_byte_offset() {
        let err = normalize(b"ok \xff\xfe rest").unwrap_err();
        assert_eq!(err, ChunkError::InvalidUtf8 { byte_offset: 3 });
        assert!(err.to_string().contains("byte offset 3"));
    }

    #[test]
    fn control_characters_are_removed_everywhere_tabs_and_newlines_kept() {
        let src = "# Ti\u{202e}tle\u{0}\n\nPay\u{7}\u{1b}[31m now\u{85}.\u{c}\n\n```\n\u{1b}[2Jrm -rf\t/\u{2066}x\u{2069}\n```\r\n";
        assert_eq!(
            norm(src),
            "# Title\n\nPay[31m now.\n\n```\n[2Jrm -rf\t/x\n```\n"
        );
        for c in ['\t', '\n', '\r', ' ', 'a', '\u{a0}', '\u{200b}', '\u{feff}'] {
            assert!(!is_removed_control(c), "{c:?}");
        }
    }

    #[test]
    fn lines_kept_as_they_are_are_the_lines_collapsing_leaves_unchanged() {
        let parts = [
            " ", "  ", "\t", "a", "é", "я", "\u{a0}", "\u{2003}", "—", "\u{3000}", "\u{b}", "😀",
        ];
        let n = parts.len();
        let mut kept = 0;
        for code in 0..n.pow(4) {
            let mut line = String::new();
            let mut k = code;
            for _ in 0..4 {
                line.push_str(parts[k % n]);
                k /= n;
            }
            let mut collapsed = String::new();
            collapse_rest(&line, &mut collapsed, |_, _, _| {});
            // The check may send a line to the slow path that comes out
            // unchanged (one lone no-break space); never the other way.
            if !scan::needs_collapse(&line) {
                assert_eq!(collapsed, line, "{line:?}");
                kept += 1;
            }
        }
        assert!(kept > n * n, "the fast path is taken ({kept} lines)");
    }

    #[test]
    fn bom_is_dropped_and_nbsp_kept() {
        assert_eq!(norm("\u{feff}10\u{a0}kg"), "10\u{a0}kg");
    }

    #[test]
    fn normalization_is_idempotent_on_tricky_input() {
        for src in [
            "*  a\n\n  b  \n",
            "1)   x\n   y   z\n",
            "> -  a  b\n>\n>   c",
            "\t\tx  y\n",
        ] {
            let once = norm(src);
            assert_eq!(norm(&once), once, "{src:?}");
        }
    }
}
