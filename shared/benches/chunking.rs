//! Whole-engine throughput over the English corpus, and its stages.
//!
//! Groups, every figure in bytes of raw Markdown per second (criterion's
//! `Throughput::Bytes`: it prints MiB/s, 1 MiB/s = 1.048576 MB/s):
//! - `engine/spec-v1`, `engine/enterprise-v1`: `Engine::chunk` (normalize,
//!   parse, pack, overlap, build records, validate) for every file;
//! - `stages/normalize`: `normalize` alone;
//! - `stages/parse_blocks`: `parse_blocks` over the already normalized text;
//! - `stages/bpe_openai_count`: one bare `bpe_openai::cl100k_base().count`
//!   pass, the yardstick of the issue's "at least half the speed of a bare
//!   bpe-openai count".
//!
//! Run with `cargo bench -p shared --bench chunking`; filter with e.g.
//! `cargo bench -p shared --bench chunking -- engine/spec-v1`. Skips (with a
//! message) when the corpus is not checked out next to this repository.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark with a broken built-in profile set should panic loudly"
)]

#[path = "../tests/common/files.rs"]
mod files;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use shared::markdown::parse_blocks;
use shared::normalize::normalize;
use shared::DocumentMeta;
use shared::Engine;

/// The English part of the shared corpus, relative to this crate.
const CORPUS_EN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/en");

/// One pass over the 37 MB corpus takes seconds: ten samples of about ten
/// seconds in all keep a run short on a shared machine.
const SAMPLES: usize = 10;
const MEASUREMENT: Duration = Duration::from_secs(10);
const WARM_UP: Duration = Duration::from_secs(2);

/// Every `*.md` file under `dir` (recursively), sorted by path, as bytes.
fn load(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut paths: Vec<PathBuf> = Vec::new();
    files::collect(dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let raw = std::fs::read(&path).ok()?;
            Some((path.display().to_string(), raw))
        })
        .collect()
}

/// The metadata the CLI would derive: the file stem as document id.
fn meta(path: &str) -> DocumentMeta {
    let stem = Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    DocumentMeta {
        tenant_id: "bench".into(),
        document_id: stem,
        source_version_id: "v1".into(),
        file_path: Some(path.to_owned()),
        ..DocumentMeta::default()
    }
}

/// Chunks every file, returning (chunks, failed files); a failed file still
/// costs the work done before the error, as it would in the CLI.
fn chunk_all(engine: &Engine, docs: &[(DocumentMeta, Vec<u8>)], profile: &str) -> (usize, usize) {
    let (mut chunks, mut failed) = (0, 0);
    for (meta, raw) in docs {
        match engine.chunk(black_box(raw), meta, Some(profile)) {
            Ok(doc) => chunks += doc.chunks.len(),
            Err(_) => failed += 1,
        }
    }
    (chunks, failed)
}

fn bench_chunking(c: &mut Criterion) {
    let files = load(Path::new(CORPUS_EN));
    if files.is_empty() {
        println!("corpus not found at {CORPUS_EN}, skipping the chunking benchmarks");
        return;
    }
    let bytes: u64 = files.iter().map(|(_, raw)| raw.len() as u64).sum();
    let docs: Vec<(DocumentMeta, Vec<u8>)> = files
        .iter()
        .map(|(path, raw)| (meta(path), raw.clone()))
        .collect();
    let engine = Engine::builtin().unwrap();
    for profile in ["spec-v1", "enterprise-v1"] {
        let (chunks, failed) = chunk_all(&engine, &docs, profile);
        println!(
            "corpus en: {} files, {bytes} bytes; {profile}: {chunks} chunks, {failed} files failed",
            files.len()
        );
    }

    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(SAMPLES);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(WARM_UP);
    group.measurement_time(MEASUREMENT);
    for profile in ["spec-v1", "enterprise-v1"] {
        group.bench_function(profile, |b| b.iter(|| chunk_all(&engine, &docs, profile)));
    }
    group.finish();

    let normalized: Vec<String> = files
        .iter()
        .filter_map(|(_, raw)| normalize(raw).ok())
        .map(|doc| doc.text)
        .collect();
    // Every raw file is counted even if one failed to normalize (invalid
    // UTF-8): the corpus has none, and the figure stays comparable.
    let mut group = c.benchmark_group("stages");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(SAMPLES);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(WARM_UP);
    group.measurement_time(MEASUREMENT);
    group.bench_function("normalize", |b| {
        b.iter(|| {
            files
                .iter()
                .filter_map(|(_, raw)| normalize(black_box(raw)).ok())
                .map(|doc| doc.text.len())
                .sum::<usize>()
        })
    });
    group.bench_function("parse_blocks", |b| {
        b.iter(|| {
            normalized
                .iter()
                .map(|text| parse_blocks(black_box(text)).len())
                .sum::<usize>()
        })
    });
    let texts: Vec<String> = files
        .iter()
        .map(|(_, raw)| String::from_utf8_lossy(raw).into_owned())
        .collect();
    let bpe = bpe_openai::cl100k_base();
    group.bench_function("bpe_openai_count", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|text| bpe.count(black_box(text.as_str())))
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_chunking);
criterion_main!(benches);
