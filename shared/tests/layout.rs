//! The layout strategies on converted documents: `grobid-v1` on a paper
//! in GROBID's TEI (tests/fixtures/tei/), and `layout-v1` on converted-PDF-like
//! Markdown (tests/fixtures/layout/): inferred heading paths, page numbers,
//! running headers and footers out of `embed_text`, and chunk boundaries
//! measured against `spec-v1` on the same documents with real headings.
//! Every output also passes the independent checker.

// Test code: a failed unwrap on a fixture the test reads is itself a failure.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod common;

use std::collections::BTreeSet;

use common::{engine, invariant_violations, level_for, meta, Level};
use shared::{Chunk, ChunkedDocument, DocumentMeta, Engine};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/layout");
const NAMES: [&str; 4] = [
    "01-caps-report",
    "02-bold-guide",
    "03-numbered-paper",
    "04-slides",
];

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}.md")).unwrap()
}

/// Chunks `bytes` under the built-in profile `name` and checks the contract
/// independently.
fn run(bytes: &[u8], name: &str) -> ChunkedDocument {
    let p = engine().profile(Some(name)).unwrap().clone();
    let doc = shared::normalize::normalize(bytes).unwrap();
    let out = shared::chunk_document(&doc, &meta("t", "doc", "v1"), &p, None).unwrap();
    let v = invariant_violations(&out.normalized, &out.chunks, &p, level_for(&p, Level::Full));
    assert!(v.is_empty(), "{}: {}", p.name, common::describe(&v));
    out
}

fn layout(name: &str) -> Vec<Chunk> {
    run(&fixture(name), "layout-v1").chunks
}

fn paths(chunks: &[Chunk]) -> Vec<Vec<String>> {
    chunks.iter().map(|c| c.headings_path.clone()).collect()
}

fn pages(chunks: &[Chunk]) -> Vec<(Option<u32>, Option<u32>)> {
    chunks.iter().map(|c| (c.page_start, c.page_end)).collect()
}

fn path(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

/// Asserts that no chunk's `embed_text` has `line` as a line while some
/// chunk's `chunk_text` does (nothing is lost).
fn left_out_of_embed_text(chunks: &[Chunk], line: &str) {
    let has = |t: &str| t.lines().any(|l| l == line);
    assert!(chunks.iter().any(|c| has(&c.chunk_text)), "{line}");
    for c in chunks {
        assert!(!has(&c.embed_text), "{line} in {}", c.embed_text);
    }
}

#[test]
fn caps_titles_nest_under_the_title_and_running_lines_leave_the_embed_text() {
    let c = layout("01-caps-report");
    let title = "NORTHWIND ANNUAL SAFETY REVIEW";
    assert_eq!(
        paths(&c),
        [
            path(&[title]),
            path(&[title, "EXECUTIVE SUMMARY"]),
            path(&[title, "INCIDENT ANALYSIS"]),
            path(&[title, "ACTIONS FOR NEXT YEAR"]),
        ]
    );
    assert_eq!(
        pages(&c),
        [
            (Some(1), Some(1)),
            (Some(1), Some(1)),
            (Some(2), Some(2)),
            (Some(3), Some(3))
        ]
    );
    for line in [
        "Northwind Logistics | Safety Review",
        "Northwind Logistics - Confidential",
        "Page 1 of 3",
        "Page 2 of 3",
    ] {
        left_out_of_embed_text(&c, line);
    }
}

#[test]
fn bold_titles_and_dashed_page_numbers() {
    let c = layout("02-bold-guide");
    let title = "Onboarding Guide for New Engineers";
    assert_eq!(
        paths(&c),
        [
            path(&[title, "Your first week"]),
            path(&[title, "Development workflow"]),
            path(&[title, "On call"]),
        ]
    );
    assert_eq!(
        pages(&c),
        [(Some(3), Some(3)), (Some(4), Some(4)), (Some(5), Some(5))]
    );
    left_out_of_embed_text(&c, "- 4 -");
}

#[test]
fn numbered_sections_nest_by_depth_and_lone_page_numbers_are_footers() {
    let c = layout("03-numbered-paper");
    let title = "Adaptive Caching for Edge Networks";
    let got = paths(&c);
    assert_eq!(
        got,
        [
            path(&[title, "1 Introduction"]),
            path(&[title, "2 Method", "2.1 Popularity estimate"]),
            path(&[title, "2 Method", "2.2 Admission and eviction"]),
            path(&[title, "3 Evaluation"]),
            path(&[title, "4 Conclusion"]),
        ]
    );
    assert_eq!(
        pages(&c),
        [
            (Some(12), Some(12)),
            (Some(13), Some(13)),
            (Some(13), Some(13)),
            (Some(14), Some(14)),
            (Some(14), Some(14))
        ]
    );
    // Hyphenated words stay as the source has them.
    assert!(c[0].chunk_text.contains("poli-\ncies."));
    left_out_of_embed_text(&c, "13");
}

#[test]
fn page_comments_number_the_slides() {
    let c = layout("04-slides");
    assert_eq!(
        pages(&c),
        [
            (Some(1), Some(1)),
            (Some(2), Some(2)),
            (Some(3), Some(3)),
            (Some(4), Some(4))
        ]
    );
    assert_eq!(
        c[3].headings_path,
        ["Quarterly Product Update", "Known Issues"]
    );
    left_out_of_embed_text(&c, "<!-- page 3 -->");
}

#[test]
fn other_profiles_carry_no_page_fields() {
    let out = run(&fixture("01-caps-report"), "spec-v1");
    assert!(out.chunks.iter().all(|c| c.page_start.is_none()));
    let json = serde_json::to_string(&out.chunks[0]).unwrap();
    assert!(!json.contains("page_start"), "{json}");
    let json = serde_json::to_string(&layout("01-caps-report")[0]).unwrap();
    assert!(json.contains("\"page_start\":1,\"page_end\":1"), "{json}");
}

/// A line as the boundary key compares it: heading marks, emphasis and
/// spacing dropped.
fn key(line: &str) -> String {
    line.trim_start_matches('#')
        .replace("**", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Each chunk's start: the first line of its own span that the headed
/// document also has (running headers and page numbers are not in it).
fn starts(chunks: &[Chunk], lines: &BTreeSet<String>) -> BTreeSet<String> {
    chunks
        .iter()
        .filter_map(|c| {
            let own: String = c
                .chunk_text
                .chars()
                .skip(c.overlap_prefix_chars as usize)
                .collect();
            own.lines().map(key).find(|l| lines.contains(l))
        })
        .collect()
}

#[test]
fn boundaries_match_structural_on_the_headed_documents() {
    let mut total = (0usize, 0usize, 0usize);
    // The four fixtures here, and the PDF export of the main fixtures.
    let pdf_export = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/07-pdf-export.md"
    );
    let converted = |name: &str| match name {
        "07-pdf-export" => std::fs::read(pdf_export).unwrap(),
        _ => fixture(name),
    };
    for name in NAMES.iter().copied().chain(["07-pdf-export"]) {
        let headed = fixture(&format!("{name}.headed"));
        let lines: BTreeSet<String> = String::from_utf8(headed.clone())
            .unwrap()
            .lines()
            .map(key)
            .filter(|l| !l.is_empty())
            .collect();
        let want = starts(&run(&headed, "spec-v1").chunks, &lines);
        let got = starts(&run(&converted(name), "layout-v1").chunks, &lines);
        let hits = got.intersection(&want).count();
        let f1 = 2.0 * hits as f64 / (got.len() + want.len()) as f64;
        // The baseline: spec-v1 on the converted document, no inference.
        let plain = starts(&run(&converted(name), "spec-v1").chunks, &lines);
        let base =
            2.0 * plain.intersection(&want).count() as f64 / (plain.len() + want.len()) as f64;
        println!(
            "{name}: layout-v1 {} starts, spec-v1 on headings {}, shared {hits}, boundary F1 {f1:.2} (spec-v1 on the converted text {base:.2})",
            got.len(),
            want.len()
        );
        assert!(f1 >= 0.75, "{name}: F1 {f1:.2}\n{got:#?}\n{want:#?}");
        total = (total.0 + hits, total.1 + got.len(), total.2 + want.len());
    }
    let f1 = 2.0 * total.0 as f64 / (total.1 + total.2) as f64;
    println!("all fixtures: boundary F1 {f1:.2}");
    assert!(f1 >= 0.85, "F1 {f1:.2}");
}

#[test]
fn the_pdf_export_fixture_gets_its_sections_and_pages_back() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/07-pdf-export.md"
    ))
    .unwrap();
    let c = run(&bytes, "layout-v1").chunks;
    let sections: Vec<(&str, Option<u32>)> = c
        .iter()
        .map(|c| (c.headings_path.last().unwrap().as_str(), c.page_start))
        .collect();
    let title = "Annual Maintenance Report 2023";
    assert_eq!(
        sections,
        [
            (title, Some(1)),
            ("Executive summary", Some(2)),
            ("Executive summary", Some(2)),
            ("Main activities", Some(3)),
            ("Incidents by quarter", Some(4)),
            ("Recommendations for 2024", Some(4)),
            ("Recommendations for 2024", Some(4)),
            ("Appendix A. Glossary", Some(5)),
        ]
    );
    left_out_of_embed_text(&c, "Page 2 of 9");
}

/// `layout_aware-v1` on Azure Document Intelligence-style Markdown: each
/// page starts a chunk unless a paragraph runs on, the annotations leave
/// `embed_text`, and the pages are numbered from them.
#[test]
fn annotated_pages_start_chunks() {
    let chunks = run(&fixture("05-annotated"), "layout_aware-v1").chunks;
    let starts: Vec<&str> = chunks
        .iter()
        .map(|c| {
            c.chunk_text
                .lines()
                .find(|l| !l.starts_with("<!--") && !l.is_empty())
                .unwrap_or("")
        })
        .collect();
    // Page 2's first paragraph starts a chunk; page 3's runs on from page 2.
    assert!(
        starts.iter().any(|s| s.starts_with("The board proposes")),
        "{starts:?}"
    );
    assert!(
        !starts.iter().any(|s| s.starts_with("customers have asked")),
        "{starts:?}"
    );
    // The chunk of page 2 keeps the section it is in.
    let board = chunks
        .iter()
        .find(|c| c.chunk_text.contains("The board proposes"))
        .unwrap();
    assert_eq!(
        board.headings_path,
        path(&["Annual Report 2025", "Letter to shareholders"])
    );
    assert_eq!((board.page_start, board.page_end), (Some(2), Some(2)));
    let outlook = chunks
        .iter()
        .find(|c| c.chunk_text.contains("## Outlook"))
        .unwrap();
    assert_eq!((outlook.page_start, outlook.page_end), (Some(2), Some(3)));
    for line in [
        "<!-- PageHeader=\"Northwind Traders - Annual Report 2025\" -->",
        "<!-- PageFooter=\"Confidential - for shareholders only\" -->",
        "<!-- PageBreak -->",
    ] {
        left_out_of_embed_text(&chunks, line);
    }
    // Nothing inferred: layout_aware adds no heading the text does not have.
    let all: BTreeSet<&String> = chunks.iter().flat_map(|c| &c.headings_path).collect();
    assert_eq!(all.len(), 3, "{all:?}");
}

// GROBID TEI input (`shared::tei`) and `grobid-v1`: the paper becomes
// Markdown with its sections, formula, table and references; its chunks
// carry the heading path and the pages of the `pb` elements.
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
