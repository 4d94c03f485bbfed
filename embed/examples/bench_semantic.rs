//! Throughput of the topic strategies over a sample of Markdown files:
//! `semantic-v1` (sentences/s, MB/s, share of time in inference) and the
//! lexical `texttiling-v1` / `c99-v1` (MB/s).
//!
//! ```text
//! cargo run --release -p embed --example bench_semantic -- DIR [MB] [THREADS]
//! ```
//! Files are read in name order (recursively) until MB megabytes (default
//! 5); THREADS documents are chunked at once (default 1). The model comes
//! from `$CHUNK_WORKER_MODEL_DIR` or `models/all-MiniLM-L6-v2`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use embed::{MiniLm, Options};
use shared::{DocumentMeta, Engine};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

fn run(engine: &Engine, profile: &str, docs: &[Vec<u8>], threads: usize) -> f64 {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(d) = docs.get(i) else { break };
                let _ = engine.chunk(d, &DocumentMeta::default(), Some(profile));
            });
        }
    });
    started.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .expect("usage: bench_semantic DIR [MB] [THREADS]"),
    );
    let mb: f64 = args.get(2).map_or(5.0, |s| s.parse().unwrap());
    let threads: usize = args.get(3).map_or(1, |s| s.parse().unwrap());
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    let mut docs = Vec::new();
    let mut bytes = 0usize;
    for p in paths {
        if bytes as f64 >= mb * 1e6 {
            break;
        }
        let d = std::fs::read(&p).unwrap();
        bytes += d.len();
        docs.push(d);
    }
    let total_mb = bytes as f64 / 1e6;
    println!(
        "{} documents, {total_mb:.2} MB, {threads} thread(s)",
        docs.len()
    );
    let model_dir = std::env::var_os("CHUNK_WORKER_MODEL_DIR")
        .map_or_else(|| PathBuf::from(embed::DEFAULT_MODEL_DIR), PathBuf::from);
    let model = Arc::new(MiniLm::load(&model_dir, Options::default()).unwrap());
    let engine = Engine::builder()
        .experimental(true)
        .embedder(model.clone())
        .build()
        .unwrap();
    for profile in ["texttiling-v1", "c99-v1"] {
        let secs = run(&engine, profile, &docs, threads);
        println!("{profile}: {secs:.2} s, {:.2} MB/s", total_mb / secs);
    }
    let secs = run(&engine, "semantic-v1", &docs, threads);
    let st = model.stats();
    let sentences = st.embedded + st.cache_hits;
    println!(
        "semantic-v1: {secs:.1} s, {:.3} MB/s, {} texts ({} embedded, {} from the cache), {:.0} texts/s, {:.0} embedded/s, {} batches, {:.1} pieces/text, padding {:.0}%, inference {:.1} s ({:.0}% of wall x threads)",
        total_mb / secs,
        sentences,
        st.embedded,
        st.cache_hits,
        sentences as f64 / secs,
        st.embedded as f64 / secs,
        st.batches,
        st.pieces as f64 / st.embedded.max(1) as f64,
        (st.padded - st.pieces) as f64 / st.padded.max(1) as f64 * 100.0,
        st.inference.as_secs_f64(),
        st.inference.as_secs_f64() / (secs * threads as f64) * 100.0
    );
}
