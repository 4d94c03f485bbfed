//! The readable snapshots of every fixture under `tests/golden/`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use shared::{Chunk, ChunkType, ChunkedDocument};

use crate::common::{self, chunk_deterministic, fixtures, head, meta};
use crate::{check_invariants, chunk_fixture, stem, FIXTURES, GOLDEN_PROFILES};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");
/// The granularity-aware strategies (issue 10) on the fixtures that show
/// their behaviour: table modes, atomic sections, windows around tables.
/// HTML pages (issue 10, the LangChain-style factory specification): converted, then chunked (`html/` under
/// the fixtures; the snapshot also names what the conversion left out).
const HTML_SNAPSHOTS: [(&str, &str); 4] = [
    ("html/01-article", "spec-v1"),
    ("html/02-messy", "spec-v1"),
    ("html/02-messy", "hierarchy-v1"),
    ("html/03-messy-pre", "spec-v1"),
];
const EXTRA_SNAPSHOTS: [(&str, &str); 16] = [
    ("03-big-table", "table-v1"),
    ("03-big-table", "table-summary-v1"),
    ("03-big-table", "table-rows-v1"),
    ("20-grouped-table", "table-rows-v1"),
    ("20-grouped-table", "table-v1"),
    ("20-grouped-table", "table-summary-v1"),
    ("21-clinical-trial", "ctgov-v1"),
    ("20-grouped-table", "window-v1"),
    ("04-no-headings", "window-v1"),
    ("20-grouped-table", "hierarchy-v1"),
    ("01-headings", "hierarchy-v1"),
    ("18-setext-heading-sections", "retrieval-minilm-v1"),
    ("17-russian-docs", "retrieval-minilm-v1"),
    ("15-runbook", "retrieval-v1"),
    ("07-pdf-export", "retrieval-minilm-v2"),
    ("04-no-headings", "retrieval-minilm-v2"),
];

/// Chars of chunk text shown per snapshot line.
const SHOWN_CHARS: usize = 70;

/// Converts `html/<page>.html` and chunks it like a fixture; returns what
/// the conversion left out too.
fn chunk_html(page: &str, profile_name: &str) -> (ChunkedDocument, String) {
    let bytes = std::fs::read(Path::new(FIXTURES).join(format!("html/{page}.html"))).unwrap();
    let converted = shared::html::to_markdown(&bytes).unwrap();
    let mut m = meta("golden", page, "v1");
    m.title = converted.title.clone();
    let doc = chunk_deterministic(converted.markdown.as_bytes(), &m, profile_name);
    check_invariants(&doc, profile_name);
    (doc, converted.dropped_summary())
}

fn one_line(s: &str) -> String {
    s.replace('\n', "⏎").replace('\t', "⇥")
}

/// The readable snapshot of one chunked document.
fn snapshot(name: &str, profile_name: &str, doc: &ChunkedDocument) -> String {
    let mut types: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &doc.chunks {
        *types.entry(c.chunk_type.as_str()).or_default() += 1;
    }
    let types: Vec<String> = types.iter().map(|(t, n)| format!("{t} {n}")).collect();
    let tokens: Vec<u32> = doc.chunks.iter().map(|c| c.token_count).collect();
    let mut out = format!(
        "# {name} {profile_name}: {} chunks ({}); tokens min {} max {} total {}; normalized {} chars\n",
        doc.chunks.len(),
        types.join(", "),
        tokens.iter().min().unwrap_or(&0),
        tokens.iter().max().unwrap_or(&0),
        tokens.iter().map(|&t| u64::from(t)).sum::<u64>(),
        doc.normalized.chars().count(),
    );
    for c in &doc.chunks {
        // Records of granularity-aware strategies show their granularity,
        // key-derived fields and table digest (without the full table).
        if c.chunk_key.is_some() {
            let _ = write!(out, "[{}] ", c.granularity.as_str());
        }
        if let Some(f) = &c.facet_json {
            let mut f = f.clone();
            if let Some(o) = f.as_object_mut() {
                o.remove("markdown");
            }
            let _ = writeln!(out, "facet={f}");
            if f["mode"] == "summary" && f.get("row_count").is_some() {
                let _ = writeln!(out, "embed=\"{}\"", one_line(&c.embed_text));
            }
        }
        let _ = writeln!(
            out,
            "#{} {} {}tok chars {}..{} path={:?} pre={}{} suf={} id={} text=\"{}\"",
            c.ordinal,
            c.chunk_type.as_str(),
            c.token_count,
            c.char_start,
            c.char_end,
            c.chunk_path,
            c.overlap_prefix_chars,
            overlap_flag(&doc.normalized, c),
            c.closing_suffix_chars,
            &c.chunk_id[..8],
            one_line(head(&c.chunk_text, SHOWN_CHARS)),
        );
    }
    out
}

/// Marks an overlap that a reviewer should look at: one that starts inside
/// a word, or (by a simple heuristic: a lowercase first letter) inside a
/// sentence, although every profile asks for sentence-aligned overlap.
fn overlap_flag(normalized: &str, c: &Chunk) -> &'static str {
    if c.overlap_prefix_chars == 0
        || !matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed)
    {
        ""
    } else if !common::overlap_word_aligned(normalized, c) {
        "(mid-word)"
    } else if c.chunk_text.chars().next().is_some_and(char::is_lowercase) {
        "(mid-sentence)"
    } else {
        ""
    }
}

/// A short diff: the first differing lines, with line numbers.
fn first_differences(want: &str, got: &str) -> String {
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let mut out = String::new();
    let mut shown = 0;
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            if let Some(a) = a {
                let _ = writeln!(out, "-{:>4} {a}", i + 1);
            }
            if let Some(b) = b {
                let _ = writeln!(out, "+{:>4} {b}", i + 1);
            }
            shown += 1;
            if shown == 8 {
                let _ = writeln!(out, "  ...");
                break;
            }
        }
    }
    out
}

#[test]
fn fixtures_match_golden_snapshots() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let files = fixtures();
    assert!(
        files.len() >= 17,
        "expected the 17 fixtures, found {}",
        files.len()
    );
    let mut runs: Vec<(String, &str)> = Vec::new();
    for path in &files {
        for profile_name in GOLDEN_PROFILES {
            runs.push((stem(path), profile_name));
        }
    }
    runs.extend(EXTRA_SNAPSHOTS.iter().map(|(f, p)| ((*f).to_owned(), *p)));
    runs.extend(HTML_SNAPSHOTS.iter().map(|(f, p)| ((*f).to_owned(), *p)));
    {
        for (name, profile_name) in runs {
            let name = name.as_str();
            let got = match name.strip_prefix("html/") {
                Some(page) => {
                    let (doc, left_out) = chunk_html(page, profile_name);
                    format!(
                        "# left out: {left_out}\n{}",
                        snapshot(name, profile_name, &doc)
                    )
                }
                None => snapshot(name, profile_name, &chunk_fixture(name, profile_name)),
            };
            let file =
                Path::new(GOLDEN).join(format!("{}.{profile_name}.txt", name.replace('/', "-")));
            if update {
                std::fs::create_dir_all(GOLDEN).unwrap();
                std::fs::write(&file, &got).unwrap();
                continue;
            }
            match std::fs::read_to_string(&file) {
                Ok(want) if want == got => {}
                Ok(want) => failures.push(format!(
                    "{} differs:\n{}",
                    file.display(),
                    first_differences(&want, &got)
                )),
                Err(e) => failures.push(format!("{}: {e}", file.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden snapshot(s) differ. If the change is intended, review it and run\n  UPDATE_GOLDEN=1 cargo test -p shared --test golden\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
