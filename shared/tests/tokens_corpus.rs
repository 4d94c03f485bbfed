//! Token counts over the real Markdown corpus.
//!
//! For every `*.md` file of the shared corpus this checks, for `cl100k_base`
//! and `o200k_base`, that the `bpe-openai` count of the whole file equals the
//! `tiktoken-rs` reference count, that `DocumentTokens` agrees on the whole
//! file, and that `DocumentTokens::count` equals a direct count for a seeded
//! sample of ranges. Skips (and passes) when the corpus is not checked out.

// Test code: a failed unwrap on values the test built is itself a failure.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use shared::tokens::{DocumentTokens, TokenCounter, TokenizerKind};

mod common;

use common::markdown_files;

/// Where the corpus lives relative to this crate.
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// Short ranges sampled per file and tokenizer: across 2,600 files that is
/// tens of thousands of edges (mid-word, mid-whitespace, multi-byte) while
/// the direct counts they are checked against stay under one corpus pass.
const SHORT_RANGES: usize = 12;

/// Long ranges (anywhere in the file) per file and tokenizer; each costs a
/// third of a whole-file direct count on average, so only one.
const LONG_RANGES: usize = 1;

/// The longest short range in bytes: a chunk's worth or two, like the
/// spans the packer asks about.
const SHORT_RANGE_BYTES: usize = 2048;

/// Short ranges per file and tokenizer that are also cut with `cut_points`.
const CUT_RANGES: usize = 4;

/// A small budget for those cuts, so a 4 KB range yields several parts.
const CUT_MAX_TOKENS: usize = 64;

/// Mismatches to print in full before only counting them.
const SHOWN_MISMATCHES: usize = 10;

/// A tiny deterministic generator (SplitMix64), so runs are reproducible
/// without another dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..=max`.
    fn below_or_at(&mut self, max: usize) -> usize {
        (self.next() % (max as u64 + 1)) as usize
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The seeded sample of ranges for one file.
fn sample_ranges(text: &str, seed: u64) -> Vec<std::ops::Range<usize>> {
    let mut rng = SplitMix(seed);
    let len = text.len();
    let mut ranges = Vec::with_capacity(SHORT_RANGES + LONG_RANGES);
    for i in 0..SHORT_RANGES + LONG_RANGES {
        let start = floor_char_boundary(text, rng.below_or_at(len));
        let reach = if i < SHORT_RANGES {
            SHORT_RANGE_BYTES
        } else {
            len
        };
        let end = floor_char_boundary(text, (start + rng.below_or_at(reach)).min(len));
        ranges.push(start..end);
    }
    ranges
}

/// What checking one file found.
#[derive(Default)]
struct Report {
    bytes: usize,
    checks: usize,
    mismatches: Vec<String>,
}

/// Checks one file with both tokenizers.
fn check_file(root: &Path, path: &Path, seed: u64) -> Report {
    let raw = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let mut report = Report {
        bytes: text.len(),
        ..Report::default()
    };
    for kind in TokenizerKind::ALL {
        let counter = kind.counter();
        let reference = match kind {
            TokenizerKind::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            TokenizerKind::O200kBase => tiktoken_rs::o200k_base_singleton(),
        };
        // Our pretokenizer (with its ASCII fast path) splits exactly like
        // bpe-openai's regex, piece for piece.
        report.checks += 1;
        let ours: Vec<&str> = counter.pieces(&text).collect();
        let regex: Vec<&str> = match kind {
            TokenizerKind::Cl100kBase => bpe_openai::cl100k_base().split(&text).collect(),
            TokenizerKind::O200kBase => bpe_openai::o200k_base().split(&text).collect(),
        };
        if ours != regex {
            report.mismatches.push(format!(
                "{name} {}: pretokenizer pieces differ",
                kind.name()
            ));
        }
        let direct = counter.count(&text);
        let tiktoken = reference.encode_ordinary(&text).len();
        if direct != tiktoken {
            report.mismatches.push(format!(
                "{name} {}: bpe-openai {direct} != tiktoken {tiktoken}",
                kind.name()
            ));
        }
        let doc = DocumentTokens::new(counter, &text);
        if doc.total() != direct {
            report.mismatches.push(format!(
                "{name} {}: DocumentTokens total {} != {direct}",
                kind.name(),
                doc.total()
            ));
        }
        let ranges = sample_ranges(&text, seed);
        for range in &ranges {
            let fast = doc.count(range.clone());
            let want = counter.count(&text[range.clone()]);
            if fast != want {
                report.mismatches.push(format!(
                    "{name} {}: range {range:?} counted {fast} != {want}",
                    kind.name()
                ));
            }
        }
        // Cutting the short ranges: every part must fit on its own.
        for range in &ranges[..CUT_RANGES] {
            let mut start = range.start;
            let cuts = doc.cut_points(range.clone(), CUT_MAX_TOKENS);
            for end in cuts.into_iter().chain([range.end]) {
                let tokens = counter.count(&text[start..end]);
                if tokens > CUT_MAX_TOKENS && text[start..end].chars().count() > 1 {
                    report.mismatches.push(format!(
                        "{name} {}: cut part {start}..{end} of {range:?} has {tokens} tokens",
                        kind.name()
                    ));
                }
                start = end;
            }
        }
        report.checks += 2 + SHORT_RANGES + LONG_RANGES + CUT_RANGES;
    }
    report
}

#[test]
fn corpus_counts_match_tiktoken_and_direct_counts() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        println!("corpus not found at {}, skipping", root.display());
        return;
    }
    let started = std::time::Instant::now();
    let files = markdown_files(root);
    // Files are independent: spread them over the available cores (file i
    // goes to worker i % workers, so the sample stays the same either way).
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let files = &files;
                scope.spawn(move || {
                    let mut total = Report::default();
                    for (number, path) in files.iter().enumerate().skip(worker).step_by(workers) {
                        let report = check_file(root, path, number as u64);
                        total.bytes += report.bytes;
                        total.checks += report.checks;
                        total.mismatches.extend(report.mismatches);
                    }
                    total
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let bytes: usize = reports.iter().map(|r| r.bytes).sum();
    let checks: usize = reports.iter().map(|r| r.checks).sum();
    let mut mismatches: Vec<&String> = reports.iter().flat_map(|r| &r.mismatches).collect();
    mismatches.sort();
    for mismatch in mismatches.iter().take(SHOWN_MISMATCHES) {
        println!("MISMATCH {mismatch}");
    }
    println!(
        "tokens corpus: {} files, {bytes} bytes, {checks} checks, {} mismatches, {:.1}s on {workers} threads",
        files.len(),
        mismatches.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        mismatches.is_empty(),
        "{} token count mismatches",
        mismatches.len()
    );
}
