//! Edge-case fixtures: empty and whitespace-only documents, no punctuation
//! and a huge table row, invalid UTF-8.

use std::path::Path;

use shared::ChunkType;

use crate::common::{self, meta, profile};
use crate::{chunk_fixture, of_type, FIXTURES};

#[test]
fn empty_and_whitespace_documents_give_no_chunks() {
    for p in common::PROFILES {
        for name in ["10-empty", "11-whitespace-only"] {
            let doc = chunk_fixture(name, p);
            assert!(
                doc.chunks.is_empty(),
                "{name} {p}: {} chunks",
                doc.chunks.len()
            );
        }
    }
}

#[test]
fn no_punctuation_and_huge_row_stay_under_the_hard_max() {
    for p in common::PROFILES {
        let doc = chunk_fixture("12-no-punctuation", p);
        let total: u32 = doc.chunks.iter().map(|c| c.token_count).sum();
        assert!(
            doc.chunks.len() >= 4 && total >= 3000,
            "{p}: {} chunks, {total} tokens",
            doc.chunks.len()
        );
        let doc = chunk_fixture("13-huge-table-row", p);
        for c in of_type(&doc, ChunkType::Table) {
            assert!(c.token_count as usize <= profile(p).hard_max_tokens());
        }
    }
}

#[test]
fn invalid_utf8_fixture_bytes_name_the_offset() {
    let mut bytes = std::fs::read(Path::new(FIXTURES).join("09-emoji-combining.md")).unwrap();
    // Cut a 4-byte emoji in half somewhere in the middle of the document.
    let at = bytes.windows(4).position(|w| w == "🚀".as_bytes()).unwrap();
    bytes.truncate(at + 2);
    bytes.extend_from_slice(b" and more text\n");
    for p in common::PROFILES {
        let err = common::engine()
            .chunk(&bytes, &meta("golden", "bad", "v1"), Some(p))
            .unwrap_err();
        assert_eq!(
            err,
            shared::ChunkError::InvalidUtf8 { byte_offset: at },
            "{p}"
        );
        assert_eq!(err.code().as_str(), "INVALID_UTF8");
        assert!(
            err.to_string().contains(&format!("byte offset {at}")),
            "{err}"
        );
    }
}
