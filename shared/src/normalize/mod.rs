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

use crate::error::ChunkError;

pub(crate) mod chars;
mod one_parse;
mod pages;
mod scan;
mod steps;

pub use chars::is_removed_control;
pub(crate) use chars::{is_ascii_space, space_len, utf8_len};
pub use one_parse::normalize_with_blocks;
pub(crate) use scan::{lines, needs_collapse};
pub use steps::NormalizedDocument;
use steps::{collapse_whitespace, protected_ranges, unified};

/// Normalizes raw markdown bytes.
pub fn normalize(bytes: &[u8]) -> Result<NormalizedDocument, ChunkError> {
    let unified = unified(bytes)?;
    let text = collapse_whitespace(&unified, || protected_ranges(&unified), None);
    Ok(NormalizedDocument {
        page_breaks: pages::form_feeds(bytes, &text),
        text,
    })
}

/// What a profile's documents go through before chunking (its
/// `normalization` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    /// [`normalize`] (docs/contract.md#normalization): the default.
    #[default]
    Standard,
    /// The text exactly as sent: only checked to be UTF-8 (a byte-order mark
    /// stays, nothing is removed or changed). For the drop-in splitters,
    /// whose chunk texts must equal a framework's own on the same text.
    None,
}

impl Normalization {
    /// The profile key's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::None => "none",
        }
    }
}

/// The document `bytes` become under `normalization`.
pub fn prepare(
    bytes: &[u8],
    normalization: Normalization,
) -> Result<NormalizedDocument, ChunkError> {
    match normalization {
        Normalization::Standard => normalize(bytes),
        Normalization::None => {
            let text = std::str::from_utf8(bytes).map_err(|e| ChunkError::InvalidUtf8 {
                byte_offset: e.valid_up_to(),
            })?;
            Ok(NormalizedDocument {
                text: text.to_owned(),
                page_breaks: Vec::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::normalize::steps::collapse_rest;

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
