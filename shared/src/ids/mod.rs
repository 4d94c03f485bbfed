//! Canonical chunk text and the stable id formulas (docs/contract.md#ids).

mod canonical;

use sha2::{Digest, Sha256};

use crate::chunk::json::decimal;
use crate::chunk::record::Granularity;
use crate::profile::settings::IdFormula;

pub use canonical::{canonical_text, unclosed_fence};
pub(crate) use canonical::{closes, fence_of, fence_run_lines};

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
    /// The chunk's canonical text ([`canonical_text`]), used by Chunking Specification v1.
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

/// The stable chunk id under `formula` (docs/contract.md#ids). A chunk of a granularity
/// other than the profile's primary one appends `|granularity`.
pub fn chunk_id(formula: IdFormula, input: &IdInput<'_>) -> String {
    // The digest's input is written part by part, without formatting it
    // into a string first (issue 18: four allocations a chunk).
    let mut h = Sha256::new();
    let mut digits = [0u8; 20];
    match formula {
        IdFormula::Text => {
            // tenant|document|version|ordinal|canonical text
            for part in [input.tenant_id, input.document_id, input.source_version_id] {
                h.update(part.as_bytes());
                h.update(b"|");
            }
            h.update(decimal(u64::from(input.ordinal), &mut digits));
            h.update(b"|");
            h.update(input.canonical_text.as_bytes());
        }
        IdFormula::Span => {
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
            chunk_id(IdFormula::Text, &input),
            sha("t1|doc-9|v2|17|Some text")
        );
        assert_eq!(chunk_id(IdFormula::Span, &input), sha("doc-9:3:5:120:4567"));
        input.granularity = Granularity::Paragraph;
        assert_eq!(
            chunk_id(IdFormula::Text, &input),
            sha("t1|doc-9|v2|17|Some text|paragraph")
        );
        assert_eq!(
            chunk_id(IdFormula::Span, &input),
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
    fn text_id_matches_the_formula_by_hand() {
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
        assert_eq!(chunk_id(IdFormula::Text, &input), want);
        let other = IdInput {
            granularity: Granularity::Window,
            ..input
        };
        let want = hex::encode(Sha256::digest(b"acme|doc|v1|3|Hello world|window"));
        assert_eq!(chunk_id(IdFormula::Text, &other), want);
    }

    #[test]
    fn span_id_matches_the_formula_by_hand() {
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
        assert_eq!(chunk_id(IdFormula::Span, &input), want);
    }
}
