//! The engine's work for the instruction-count regression gate
//! (`scripts/perf-gate.sh`, issue 18): chunks a fixed set of documents under
//! one profile and serializes every chunk as the CLI does (JSON to a sink).
//!
//! `cargo run --profile gate -p perf --bin gate_workload -- PROFILE [FILE_OR_DIR...]`
//!
//! Every named file and every `*.md` under named directories is read before
//! any chunking; one small document is chunked first, so the tokenizer
//! tables, the profiles and lazily built patterns are loaded before the
//! documents are. Without paths only that warm-up runs: the gate counts the
//! instructions of a run with the documents minus those of a run without
//! them (all threads included), which leaves the documents' own work.
//! Prints `documents bytes chunks failures`.

use std::io::{sink, Write};
use std::path::Path;
use std::process::ExitCode;

use shared::{DocumentMeta, Engine};

use perf::collect;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(profile) = args.next().and_then(|p| p.into_string().ok()) else {
        eprintln!("usage: gate_workload PROFILE [FILE_OR_DIR...]");
        return ExitCode::from(2);
    };
    let mut paths = Vec::new();
    for arg in args {
        collect(Path::new(&arg), &mut paths);
    }
    paths.sort();
    let mut docs = Vec::new();
    for path in &paths {
        match std::fs::read(path) {
            Ok(bytes) => docs.push(bytes),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(1);
            }
        }
    }
    let engine = match Engine::builtin() {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let meta = DocumentMeta::default();
    if let Err(e) = engine.chunk(
        b"# Warm up\n\nA sentence. Another one.\n",
        &meta,
        Some(&profile),
    ) {
        eprintln!("{profile}: {e}");
        return ExitCode::from(2);
    }
    let (mut bytes, mut chunks, mut failures) = (0usize, 0usize, 0usize);
    for doc in &docs {
        bytes += doc.len();
        match engine.chunk(doc, &meta, Some(&profile)) {
            Ok(out) => {
                // The CLI's JSON line writer, as `chunk-worker chunk` writes.
                let mut line = Vec::new();
                for chunk in &out.chunks {
                    line.clear();
                    if shared::chunk::json::push_chunk_json(chunk, &mut line).is_err()
                        || sink().write_all(&line).is_err()
                    {
                        failures += 1;
                    }
                }
                chunks += out.chunks.len();
            }
            // Fixtures include documents the engine refuses (empty ones).
            Err(_) => failures += 1,
        }
    }
    println!("{} {bytes} {chunks} {failures}", docs.len());
    ExitCode::SUCCESS
}
