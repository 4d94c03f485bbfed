//! Token counting throughput over the English corpus.
//!
//! Compares a bare `tiktoken-rs` count, a bare `bpe-openai` count,
//! `DocumentTokens::new` (one pretokenize-and-count pass that also builds the
//! piece index), the same plus a packer-like query mix, the query mix alone
//! and `cut_points`. Every figure is in bytes of Markdown per second; the
//! issue asks the whole chunker to stay at or above half the bare
//! `bpe-openai` speed.
//!
//! Run with `cargo bench -p shared --bench tokens -- --warm-up-time 1
//! --measurement-time 5`. Skips when the corpus is not checked out.

#[path = "../tests/common/files.rs"]
mod files;

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shared::tokens::{DocumentTokens, TokenCounter, TokenizerKind};

/// The English part of the shared corpus, relative to this crate.
const CORPUS_EN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/en");

/// One count query per this many bytes, as the realistic mix asks.
const QUERY_EVERY_BYTES: usize = 200;

/// The packer grows a span block by block and starts a new one about every
/// chunk (350-650 tokens of ~4 bytes); 2 KB between span starts mimics that.
const SPAN_BYTES: usize = 2048;

/// A typical hard max for `cut_points` (the `docs-v1` profile's 512).
const CUT_MAX_TOKENS: usize = 512;

/// Every `*.md` file under `dir`, sorted, as text.
fn load(dir: &Path) -> Vec<String> {
    let mut paths: Vec<PathBuf> = Vec::new();
    files::collect(dir, &mut paths);
    paths.sort();
    paths
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .map(|raw| String::from_utf8_lossy(&raw).into_owned())
        .collect()
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The packer-like query ranges of one file: a query every
/// [`QUERY_EVERY_BYTES`] from the current span start, which moves up to the
/// previous query end once the span passes [`SPAN_BYTES`].
fn queries(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::with_capacity(text.len() / QUERY_EVERY_BYTES + 1);
    let (mut span_start, mut end) = (0, 0);
    while end < text.len() {
        // A char is at most 4 bytes, so flooring still moves forward.
        let next = floor_char_boundary(text, end + QUERY_EVERY_BYTES);
        if next - span_start > SPAN_BYTES {
            span_start = end;
        }
        end = next;
        ranges.push(span_start..end);
    }
    ranges
}

fn bench_tokens(c: &mut Criterion) {
    let files = load(Path::new(CORPUS_EN));
    if files.is_empty() {
        println!("corpus not found at {CORPUS_EN}, skipping");
        return;
    }
    let bytes: usize = files.iter().map(String::len).sum();
    let counter = TokenizerKind::Cl100kBase.counter();
    let tiktoken = tiktoken_rs::cl100k_base_singleton();
    let mixes: Vec<_> = files.iter().map(|text| queries(text)).collect();
    let query_count: usize = mixes.iter().map(Vec::len).sum();
    println!(
        "corpus en: {} files, {bytes} bytes, {query_count} queries",
        files.len()
    );

    let mut group = c.benchmark_group("cl100k_en");
    group.throughput(Throughput::Bytes(bytes as u64));
    // One pass over 37 MB takes a second or more: ten samples is plenty.
    group.sample_size(10);

    group.bench_function("tiktoken_rs_count", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|text| tiktoken.encode_ordinary(text).len())
                .sum::<usize>()
        })
    });
    group.bench_function("bpe_openai_count", |b| {
        b.iter(|| files.iter().map(|text| counter.count(text)).sum::<usize>())
    });
    group.bench_function("document_tokens_new", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|text| DocumentTokens::new(counter, text).total())
                .sum::<usize>()
        })
    });
    group.bench_function("document_tokens_new_and_queries", |b| {
        b.iter(|| {
            let mut sum = 0;
            for (text, mix) in files.iter().zip(&mixes) {
                let doc = DocumentTokens::new(counter, text);
                for range in mix {
                    sum += doc.count(range.clone());
                }
            }
            sum
        })
    });

    let docs: Vec<_> = files
        .iter()
        .map(|text| DocumentTokens::new(counter, text))
        .collect();
    group.bench_function("queries_only", |b| {
        b.iter(|| {
            let mut sum = 0;
            for (doc, mix) in docs.iter().zip(&mixes) {
                for range in mix {
                    sum += doc.count(black_box(range.clone()));
                }
            }
            sum
        })
    });
    group.bench_function("cut_points_512_only", |b| {
        b.iter(|| {
            docs.iter()
                .map(|doc| doc.cut_points(0..doc.text().len(), CUT_MAX_TOKENS).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_tokens);
criterion_main!(benches);
