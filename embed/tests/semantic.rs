//! The `semantic-v1` profile with the real model: topic switches found on
//! documents interleaved from two unrelated sources
//! (`shared/tests/fixtures/semantic`), byte-identical reruns, and the GPU
//! requirement refused on a CPU build. Skips, saying so, without the model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use embed::{MiniLm, Options};
use shared::sentence::sentence_spans;
use shared::{DocumentMeta, Embedder, Engine};

fn model() -> Option<Arc<MiniLm>> {
    let dir = testkit::model_dir()?;
    Some(Arc::new(MiniLm::load(&dir, Options::default()).unwrap()))
}

fn fixtures() -> (PathBuf, serde_json::Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures/semantic");
    let truth =
        serde_json::from_slice(&std::fs::read(dir.join("interleaved.json")).unwrap()).unwrap();
    (dir, truth)
}

/// Share of true switches with a chunk start within one sentence.
fn switch_recall(text: &str, starts: &[usize], switches: &[usize]) -> (usize, usize) {
    let sentences = sentence_spans(text);
    let index = |pos: usize| sentences.partition_point(|s| s.end <= pos) as i64;
    let found = switches
        .iter()
        .filter(|&&sw| starts.iter().any(|&s| (index(s) - index(sw)).abs() <= 1))
        .count();
    (found, switches.len())
}

fn profile_with(params: &str) -> String {
    format!(
        "name = \"semantic-test\"\nstrategy = \"semantic\"\ngranularity = \"section\"\n[params]\n{params}\n"
    )
}

#[test]
fn semantic_v1_finds_the_topic_switches_of_interleaved_documents() {
    let Some(m) = model() else { return };
    let engine = Engine::builder().embedder(m).build().unwrap();
    let (dir, truth) = fixtures();
    let (mut found, mut total) = (0, 0);
    for f in truth["fixtures"].as_array().unwrap() {
        let name = f["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        let doc = engine
            .chunk(&bytes, &DocumentMeta::default(), Some("semantic-v1"))
            .unwrap();
        let norm = doc.normalized.as_str();
        let starts: Vec<usize> = doc.chunks.iter().map(|c| c.byte_start as usize).collect();
        // The switch offsets of the file, found again in the normalized text
        // (normalization may collapse a double space).
        let mut from = 0;
        let switches: Vec<usize> = f["switches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let at = v.as_u64().unwrap() as usize;
                let head: String = text[at..]
                    .split_whitespace()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ");
                let pos = from
                    + norm[from..]
                        .find(&head)
                        .expect("switch sentence in the normalized text");
                from = pos;
                pos
            })
            .collect();
        let (k, n) = switch_recall(norm, &starts, &switches);
        println!(
            "{name}: {k}/{n} switches found, {} chunks",
            doc.chunks.len()
        );
        found += k;
        total += n;
        let again = engine
            .chunk(&bytes, &DocumentMeta::default(), Some("semantic-v1"))
            .unwrap();
        assert_eq!(doc, again, "two runs are identical");
    }
    println!("total: {found}/{total}");
    assert!(
        found * 10 >= total * 8,
        "at least 80% of the switches: {found}/{total}"
    );
}

#[test]
fn a_gpu_required_profile_is_refused_on_a_cpu_model() {
    let Some(m) = model() else { return };
    if m.on_gpu() {
        return;
    }
    let err = Engine::builder()
        .embedder(m)
        .profile_source("gpu.toml", profile_with("gpu_required = true"))
        .build()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("semantic-test") && msg.contains("no CUDA device"),
        "{msg}"
    );
}

/// Documents of the corpus sample (every 120th file, those under 12 KB: 22
/// documents of the shared corpus, so the debug-build test stays short on a
/// slow 2-core box) when `../shared/corpus` is there, else the project's
/// fixtures.
fn sample() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    let files: Vec<PathBuf> = if files.is_empty() {
        println!(
            "corpus not found at {}: the fixtures stand in",
            root.display()
        );
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures");
        let mut f: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        f.sort();
        // Every third: the identity holds or breaks in the model's batching,
        // which any few documents of several sentences exercise.
        f.into_iter().step_by(3).collect()
    } else {
        files
            .into_iter()
            .step_by(240)
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 12_000))
            .collect()
    };
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn output_is_identical_across_batch_sizes_caches_and_threads() {
    let Some(m) = model() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2");
    let dir = std::env::var_os("CHUNK_WORKER_MODEL_DIR").map_or(dir, PathBuf::from);
    let small = MiniLm::load(
        &dir,
        Options {
            cache_entries: 0,
            batch_tokens: 256,
            ..Options::default()
        },
    )
    .unwrap();
    let a = Engine::builder().embedder(m).build().unwrap();
    let b = Engine::builder().embedder(Arc::new(small)).build().unwrap();
    let docs = sample();
    let meta = DocumentMeta::default();
    let run = |e: &Engine, d: &[u8]| e.chunk(d, &meta, Some("semantic-v1")).map(|c| c.chunks);
    // Sequentially with one engine, two at a time with the other.
    let first: Vec<_> = docs.iter().map(|(_, d)| run(&a, d)).collect();
    let second: Vec<_> = std::thread::scope(|s| {
        let half = docs.len() / 2;
        let (x, y) = docs.split_at(half);
        let h1 = s.spawn(|| x.iter().map(|(_, d)| run(&b, d)).collect::<Vec<_>>());
        let h2 = s.spawn(|| y.iter().map(|(_, d)| run(&b, d)).collect::<Vec<_>>());
        let mut v = h1.join().unwrap();
        v.extend(h2.join().unwrap());
        v
    });
    let mut chunks = 0;
    for ((name, _), (x, y)) in docs.iter().zip(first.iter().zip(&second)) {
        assert_eq!(x, y, "{name}");
        chunks += x.as_ref().map_or(0, Vec::len);
    }
    println!("{} documents, {chunks} chunks: identical", docs.len());
}
