//! Properties of generated documents: every invariant under every profile,
//! id-only changes under another document id, idempotent normalization.

use proptest::prelude::*;
use shared::normalize::normalize;

use crate::common::{self, engine, invariant_violations, meta, Level};
use crate::grammar::document;
use crate::{config, CASES};

proptest! {
    #![proptest_config(config(CASES))]

    /// Every generated document chunks under every profile, and every
    /// invariant holds; the default profile is also deterministic.
    #[test]
    fn generated_documents_hold_every_invariant(doc in document()) {
        let m = meta("props", "gen-doc", "v1");
        for pr in common::all_profiles() {
            let p = pr.name.as_str();
            let out = if p == "spec-v1" {
                common::chunk_deterministic(doc.as_bytes(), &m, p)
            } else {
                match engine().chunk(doc.as_bytes(), &m, Some(p)) {
                    Ok(d) => d,
                    Err(e) => return Err(TestCaseError::fail(format!("{p}: {e}\n{e:?}"))),
                }
            };
            let level = common::level_for(pr, Level::Full);
            let v = invariant_violations(&out.normalized, &out.chunks, pr, level);
            prop_assert!(v.is_empty(), "{p}: {}", common::describe(&v));
        }
    }

    /// Moving a document under another id and directory changes only the
    /// ids. (The file name itself may matter: without an H1 it is the title
    /// that breadcrumbs in `embed_text` start with.)
    #[test]
    fn another_document_id_changes_only_ids(doc in document()) {
        for p in ["spec-v1", "enterprise-v1"] {
            let mut a_meta = meta("props", "space:A:1", "v1");
            a_meta.file_path = Some("a/one.md".to_owned());
            let mut b_meta = meta("props", "space:B:2", "v1");
            b_meta.file_path = Some("b/c/one.md".to_owned());
            let a = engine().chunk(doc.as_bytes(), &a_meta, Some(p)).unwrap();
            let b = engine().chunk(doc.as_bytes(), &b_meta, Some(p)).unwrap();
            prop_assert_eq!(&a.normalized, &b.normalized);
            prop_assert_eq!(a.chunks.len(), b.chunks.len());
            for (x, y) in a.chunks.iter().zip(&b.chunks) {
                prop_assert_ne!(&x.chunk_id, &y.chunk_id);
                let mut y2 = y.clone();
                y2.chunk_id.clone_from(&x.chunk_id);
                y2.document_id.clone_from(&x.document_id);
                y2.file_path.clone_from(&x.file_path);
                // The key names the document too.
                y2.chunk_key.clone_from(&x.chunk_key);
                prop_assert_eq!(x, &y2);
            }
        }
    }

    /// One parse gives the blocks two give: normalization's parse of the
    /// text before collapsing, carried across the collapsed runs, against
    /// a parse of the normalized text (issue 18). The documents get extra
    /// whitespace inside their lines: runs of spaces and tabs, lone and
    /// doubled no-break spaces, trailing runs, a backslash before one.
    #[test]
    fn one_parse_gives_the_blocks_of_two(
        doc in document(),
        spaces in proptest::collection::vec(
            (any::<proptest::sample::Index>(), proptest::sample::select(&[
                "  ", "\t", " \t ", "   ", "\u{a0}", "\u{a0}\u{a0}", "\u{2003} ", "\\  ", "\x0c",
            ][..])),
            0..24,
        ),
    ) {
        let mut doc = doc;
        for (at, run) in spaces {
            // After the first character of a line, at a char boundary.
            let i = at.index(doc.len().max(1));
            let Some(i) = (i..doc.len()).find(|&i| {
                doc.is_char_boundary(i) && i > 0 && !doc[..i].ends_with('\n')
            }) else { continue };
            doc.insert_str(i, run);
        }
        let (normalized, blocks) = shared::normalize::normalize_with_blocks(doc.as_bytes()).unwrap();
        prop_assert_eq!(&normalized, &normalize(doc.as_bytes()).unwrap());
        prop_assert_eq!(blocks, shared::markdown::parse_blocks(&normalized.text), "{:?}", doc);
    }

    /// Normalization is idempotent on generated Markdown.
    #[test]
    fn normalization_is_idempotent_on_markdown(doc in document()) {
        let once = normalize(doc.as_bytes()).unwrap();
        let twice = normalize(once.text.as_bytes()).unwrap();
        prop_assert_eq!(once, twice);
    }
}
