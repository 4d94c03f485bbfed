//! The chunker over the real Markdown corpus (`../shared/corpus`, ~2,600
//! files, ~44 MB of English and Russian documentation).
//!
//! Every `*.md` file is chunked with `spec-v1`, `enterprise-v1` and the
//! profiles of the other strategies (unless `CORPUS_PROFILES` names others,
//! comma-separated) and checked with the
//! corpus level of the independent invariants in `common`: no error, the
//! `tiktoken-rs` count of EVERY chunk's text equals its `token_count`, the
//! hard max, ordinals, spans and char offsets, text composition, nothing
//! lost, balanced fences, table headers, heading paths and ids (the full
//! level). Prints one summary line per profile, and a count of small prose
//! chunks in the middle of a section (a quality smell, not asserted). Skips (and passes) when the corpus is not checked out.

// Test code: a failed unwrap on a file the test lists is itself a failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{engine, invariant_violations, level_for, markdown_files, meta, profile, Level};
use shared::{Chunk, ChunkType};

/// Where the corpus lives relative to this crate.
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// The profiles checked unless `CORPUS_PROFILES` names others: two
/// structural ones and every other strategy's.
const DEFAULT_PROFILES: &str = "spec-v1,enterprise-v1,recursive-v1,token-v1,markdown-v1";

/// Failing files to print in full before only counting them.
const SHOWN_FAILURES: usize = 15;

/// Violations shown per failing file.
const SHOWN_PER_FILE: usize = 3;

/// What chunking one slice of the corpus found.
#[derive(Default)]
struct Report {
    files: usize,
    bytes: usize,
    chunks: usize,
    tokens: u64,
    stubs: usize,
    stub_examples: Vec<String>,
    /// Thread time spent in `Engine::chunk` and in the independent checks.
    engine_secs: f64,
    check_secs: f64,
    failures: Vec<String>,
}

/// A prose chunk under 50 tokens between two prose chunks of the same
/// heading path: a quality smell (informational, printed, not asserted).
fn is_stub(prev: &Chunk, c: &Chunk, next: &Chunk) -> bool {
    let prose = |c: &Chunk| matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed);
    c.token_count < 50
        && prose(prev)
        && prose(c)
        && prose(next)
        && prev.headings_path == c.headings_path
        && next.headings_path == c.headings_path
        && !next.chunk_text.starts_with('#')
        && !c.chunk_text.starts_with('#')
}

fn check_file(root: &Path, path: &Path, profile_name: &str, report: &mut Report) {
    let bytes = std::fs::read(path).unwrap();
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    report.files += 1;
    report.bytes += bytes.len();
    let started = Instant::now();
    let result = engine().chunk(&bytes, &meta("corpus", &name, "v1"), Some(profile_name));
    report.engine_secs += started.elapsed().as_secs_f64();
    let started = Instant::now();
    let doc = match result {
        Ok(doc) => doc,
        Err(e) => {
            report.failures.push(format!("{name}: {} {e}", e.code()));
            return;
        }
    };
    report.chunks += doc.chunks.len();
    report.tokens += doc
        .chunks
        .iter()
        .map(|c| u64::from(c.token_count))
        .sum::<u64>();
    for w in doc.chunks.windows(3) {
        if is_stub(&w[0], &w[1], &w[2]) {
            report.stubs += 1;
            if report.stub_examples.len() < 3 {
                report.stub_examples.push(format!(
                    "{name} #{} {}tok {:?}",
                    w[1].ordinal,
                    w[1].token_count,
                    common::head(&w[1].chunk_text, 50)
                ));
            }
        }
    }
    let p = profile(profile_name);
    let v = invariant_violations(&doc.normalized, &doc.chunks, p, level_for(p, Level::Full));
    report.check_secs += started.elapsed().as_secs_f64();
    if !v.is_empty() {
        let shown: Vec<&str> = v.iter().take(SHOWN_PER_FILE).map(String::as_str).collect();
        report.failures.push(format!(
            "{name}: {} violation(s): {}",
            v.len(),
            shown.join(" | ")
        ));
    }
}

fn run_profile(root: &Path, files: &[PathBuf], profile_name: &str) -> Vec<String> {
    let started = Instant::now();
    // Files are independent: spread them over the available cores.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    let mut report = Report::default();
                    for path in files.iter().skip(worker).step_by(workers) {
                        check_file(root, path, profile_name, &mut report);
                    }
                    report
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let sum = |f: fn(&Report) -> usize| reports.iter().map(f).sum::<usize>();
    let (files_n, bytes, chunks) = (sum(|r| r.files), sum(|r| r.bytes), sum(|r| r.chunks));
    let tokens: u64 = reports.iter().map(|r| r.tokens).sum();
    let stubs = sum(|r| r.stubs);
    let engine_secs: f64 = reports.iter().map(|r| r.engine_secs).sum();
    let check_secs: f64 = reports.iter().map(|r| r.check_secs).sum();
    let examples: Vec<String> = reports
        .iter()
        .flat_map(|r| r.stub_examples.iter().cloned())
        .take(4)
        .collect();
    let mut failures: Vec<String> = reports.into_iter().flat_map(|r| r.failures).collect();
    failures.sort();
    println!(
        "corpus {profile_name}: {files_n} files, {bytes} bytes, {chunks} chunks, {tokens} tokens, {} failing files, {:.1}s on {workers} threads",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "corpus {profile_name}: thread time {engine_secs:.1}s in Engine::chunk, {check_secs:.1}s in the independent checks (tiktoken, ids, spans)"
    );
    println!("corpus {profile_name}: {stubs} prose chunks under 50 tokens between prose chunks of the same path; e.g. {examples:?}");
    failures
}

#[test]
fn corpus_chunks_hold_the_invariants() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        println!("corpus not found at {}; skipping", root.display());
        return;
    }
    let files = markdown_files(root);
    let profiles = std::env::var("CORPUS_PROFILES").unwrap_or_else(|_| DEFAULT_PROFILES.to_owned());
    let mut failures = Vec::new();
    for p in profiles.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        failures.extend(
            run_profile(root, &files, p)
                .into_iter()
                .map(|f| format!("{p} {f}")),
        );
    }
    for f in failures.iter().take(SHOWN_FAILURES) {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} corpus file(s) failed; first: {}",
        failures.len(),
        failures[0]
    );
}

/// The per-chunk file format `sourcePosition`: every corpus file's normalized text aligns
/// with the original, and every line of the normalized text maps back to
/// original text with the same visible characters.
#[test]
fn corpus_positions_map_back_to_the_original() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        println!("corpus not found at {}; skipping", root.display());
        return;
    }
    let mut lines = 0usize;
    for path in markdown_files(root) {
        let bytes = std::fs::read(&path).unwrap();
        let Ok(doc) = shared::normalize::normalize(&bytes) else {
            continue;
        };
        let original = std::str::from_utf8(&bytes).unwrap();
        let map = shared::source_map::SourceMap::new(original, &doc.text)
            .unwrap_or_else(|| panic!("{} does not align", path.display()));
        let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let mut at = 0;
        for line in doc.text.split_inclusive('\n') {
            let (s, e) = (at, at + line.trim_end().len());
            at += line.len();
            if s == e {
                continue;
            }
            let back = &original[map.start(s)..map.end(e)];
            assert_eq!(
                visible(back),
                visible(&doc.text[s..e]),
                "{}",
                path.display()
            );
            lines += 1;
        }
    }
    println!("{lines} normalized lines map back to the original");
}

/// Normalization's one parse gives every corpus document the blocks a parse
/// of its normalized text gives (issue 18), and says how many documents
/// took the one-parse path.
#[test]
fn corpus_blocks_from_one_parse_equal_a_second_parse() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        println!("corpus not found at {}; skipping", root.display());
        return;
    }
    let (mut files, mut differ) = (0usize, Vec::new());
    for path in markdown_files(root) {
        let bytes = std::fs::read(&path).unwrap();
        let Ok((doc, blocks)) = shared::normalize::normalize_with_blocks(&bytes) else {
            continue;
        };
        files += 1;
        assert_eq!(
            doc,
            shared::normalize::normalize(&bytes).unwrap(),
            "{}",
            path.display()
        );
        if blocks != shared::markdown::parse_blocks(&doc.text) {
            differ.push(path.display().to_string());
        }
    }
    println!(
        "one parse against two: {files} documents, {} differ",
        differ.len()
    );
    assert!(differ.is_empty(), "blocks differ: {differ:?}");
}
