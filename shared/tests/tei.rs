//! GROBID TEI input (`shared::tei`) and the `grobid-v1` profile: a paper
//! written to GROBID's schema (tests/fixtures/tei/) becomes Markdown with
//! its sections, formula, table and references, and its chunks carry the
//! heading path and the page numbers of the `pb` elements, keep the
//! contract, and are the same run to run.

// Test code: a failed unwrap on a fixture the test reads is itself a failure.
#![allow(clippy::unwrap_used)]

mod common;

use common::{invariant_violations, level_for, meta, Level};
use shared::{DocumentMeta, Engine};

const PAPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tei/short-paper.tei.xml"
);

#[test]
fn a_grobid_paper_is_chunked_by_its_sections_with_pages() {
    let xml = std::fs::read(PAPER).unwrap();
    let paper = shared::tei::to_markdown(&xml).unwrap();
    assert_eq!(
        paper.title.as_deref(),
        Some("Chunk Boundaries and Retrieval Quality in Technical Manuals")
    );
    for line in [
        "## Abstract",
        "## 1 Introduction",
        "### 2.1 Scoring",
        "```math\nR(B) = |ref ∩ ctx(B)| / |ref| (1)\n```",
        "| Hardware | 70 | 350 |",
        "<!-- page 3 -->",
        "Note: All figures are means over the 600 questions.",
        "## References",
    ] {
        assert!(paper.markdown.contains(line), "{line}\n{}", paper.markdown);
    }
    let engine = Engine::builder().experimental(true).build().unwrap();
    let profile = engine.profile(Some("grobid-v1")).unwrap().clone();
    let m = DocumentMeta {
        title: paper.title.clone(),
        ..meta("t", "paper", "v1")
    };
    let out = engine
        .chunk(paper.markdown.as_bytes(), &m, Some("grobid-v1"))
        .unwrap();
    let v = invariant_violations(
        &out.normalized,
        &out.chunks,
        &profile,
        level_for(&profile, Level::Full),
    );
    assert!(v.is_empty(), "{}", common::describe(&v));
    let results = out
        .chunks
        .iter()
        .find(|c| c.chunk_text.contains("## 3 Results"))
        .unwrap();
    assert_eq!(
        results.headings_path.last().map(String::as_str),
        Some("3 Results")
    );
    assert_eq!((results.page_start, results.page_end), (Some(2), Some(3)));
    let first = &out.chunks[0];
    assert_eq!(first.page_start, Some(1));
    assert!(out
        .chunks
        .iter()
        .all(|c| !c.embed_text.contains("<!-- page")));
    // The formula and the table are whole in one chunk each.
    assert!(out
        .chunks
        .iter()
        .any(|c| c.chunk_text.contains("```math\nR(B)") && c.chunk_text.contains("(1)\n```")));
    let again = engine
        .chunk(paper.markdown.as_bytes(), &m, Some("grobid-v1"))
        .unwrap();
    assert_eq!(out.chunks, again.chunks);
    // Without the experimental switch the profile is refused.
    let off = Engine::builder().build().unwrap();
    assert!(off
        .chunk(paper.markdown.as_bytes(), &m, Some("grobid-v1"))
        .is_err());
}
