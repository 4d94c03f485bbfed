//! The yardstick: `text-splitter`'s `MarkdownSplitter` at 350 cl100k
//! tokens with 52 overlap (what `spec-v1` targets), against our engine on the
//! same bytes.
//!
//! `text-splitter` runs at about 2 MB/s, so one pass over the whole 37 MB
//! English corpus takes ~18 s. By default this bench uses a fixed,
//! deterministic subset: the files sorted by path, every `k`-th one, with `k`
//! chosen so the subset is about [`SUBSET_BYTES`] (~5 MB); a stride keeps the
//! mix of the corpus' sources. Set `TEXT_SPLITTER_FULL=1` to use the whole
//! corpus (ten samples then take several minutes).
//!
//! Groups (criterion's `Throughput::Bytes`, printed as MiB/s):
//! `text_splitter_en/markdown_350_52` and `text_splitter_en/engine_spec-v1`.
//!
//! Run with `cargo bench -p shared --bench text_splitter`. Skips (with a
//! message) when the corpus is not checked out next to this repository.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark with a broken tokenizer or profile set should panic loudly"
)]

#[path = "../tests/common/files.rs"]
mod files;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use shared::DocumentMeta;
use shared::Engine;
use text_splitter::{ChunkConfig, MarkdownSplitter};

/// The English part of the shared corpus, relative to this crate.
const CORPUS_EN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/en");

/// The size the default subset aims at.
const SUBSET_BYTES: usize = 5_000_000;

/// `spec-v1`'s target and its 15% overlap.
const CAPACITY: usize = 350;
const OVERLAP: usize = 52;

/// Every `*.md` file under `dir` (recursively), sorted by path, as text.
fn load(dir: &Path) -> Vec<(String, String)> {
    let mut paths: Vec<PathBuf> = Vec::new();
    files::collect(dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let raw = std::fs::read(&path).ok()?;
            let text = String::from_utf8_lossy(&raw).into_owned();
            Some((path.display().to_string(), text))
        })
        .collect()
}

/// Every `stride`-th file, `stride` chosen so the result is ~`target` bytes.
fn subset(files: Vec<(String, String)>, target: usize) -> Vec<(String, String)> {
    let total: usize = files.iter().map(|(_, text)| text.len()).sum();
    let stride = total.div_ceil(target).max(1);
    files.into_iter().step_by(stride).collect()
}

fn bench_text_splitter(c: &mut Criterion) {
    let all = load(Path::new(CORPUS_EN));
    if all.is_empty() {
        println!("corpus not found at {CORPUS_EN}, skipping the text-splitter comparison");
        return;
    }
    let full = std::env::var_os("TEXT_SPLITTER_FULL").is_some_and(|v| v == "1");
    let all_count = all.len();
    let files = if full { all } else { subset(all, SUBSET_BYTES) };
    let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
    let what = if full {
        "whole corpus"
    } else {
        "every k-th file"
    };
    println!(
        "text-splitter comparison over {} of {all_count} English files ({what}), {bytes} bytes",
        files.len(),
    );

    let splitter = MarkdownSplitter::new(
        ChunkConfig::new(CAPACITY)
            .with_overlap(OVERLAP)
            .unwrap()
            .with_sizer(tiktoken_rs::cl100k_base().unwrap()),
    );
    let engine = Engine::builtin().unwrap();
    let docs: Vec<(DocumentMeta, &[u8])> = files
        .iter()
        .map(|(path, text)| {
            let meta = DocumentMeta {
                tenant_id: "bench".into(),
                document_id: path.clone(),
                source_version_id: "v1".into(),
                ..DocumentMeta::default()
            };
            (meta, text.as_bytes())
        })
        .collect();

    let mut group = c.benchmark_group("text_splitter_en");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    // One pass per sample: a pass takes seconds.
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_secs(1));
    // Ten passes of ~2.5 s each: criterion extends this as needed.
    group.measurement_time(Duration::from_secs(if full { 200 } else { 25 }));
    group.bench_function(format!("markdown_{CAPACITY}_{OVERLAP}"), |b| {
        b.iter(|| {
            files
                .iter()
                .map(|(_, text)| splitter.chunks(black_box(text)).count())
                .sum::<usize>()
        })
    });
    group.bench_function("engine_spec-v1", |b| {
        b.iter(|| {
            docs.iter()
                .filter_map(|(meta, raw)| engine.chunk(black_box(raw), meta, Some("spec-v1")).ok())
                .map(|doc| doc.chunks.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_text_splitter);
criterion_main!(benches);
