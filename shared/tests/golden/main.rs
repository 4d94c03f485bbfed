//! Golden tests: every fixture of `tests/fixtures/*.md`, chunked with
//! `spec-v1` and `enterprise-v1`, checked against the independent invariants
//! of `common` and compared with a readable snapshot in
//! `tests/golden/<stem>.<profile>.txt`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p shared --test golden` rewrites the
//! snapshots; review the diff like code. The mandatory documents of the Russian enterprise specification
//! §11 (fixtures 01-07) also get targeted assertions on chunk counts, types,
//! limits and id stability.

// Test code: a failed unwrap on a fixture the test reads is itself a failure.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod edge_cases;
mod invariants;
mod mandatory;
mod snapshots;

use std::path::Path;

use common::{chunk_deterministic, describe, invariant_violations, meta, profile, Level};
use shared::{Chunk, ChunkType, ChunkedDocument};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const GOLDEN_PROFILES: [&str; 2] = ["spec-v1", "enterprise-v1"];

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Chunks one fixture (tenant `golden`, document id = stem, version `v1`),
/// twice, asserting determinism and the invariants ([`check_invariants`]).
fn chunk_fixture(name: &str, profile_name: &str) -> ChunkedDocument {
    let bytes = std::fs::read(Path::new(FIXTURES).join(format!("{name}.md"))).unwrap();
    let doc = chunk_deterministic(&bytes, &meta("golden", name, "v1"), profile_name);
    check_invariants(&doc, profile_name);
    doc
}

/// Every structural rule, except for `recursive` profiles, which split like
/// LangChain (inside code fences too) and keep the universal ones.
fn check_invariants(doc: &ChunkedDocument, profile_name: &str) {
    let p = profile(profile_name);
    let level = if p.strategy == "recursive" {
        Level::Universal
    } else {
        Level::Full
    };
    let v = invariant_violations(&doc.normalized, &doc.chunks, p, level);
    assert!(v.is_empty(), "{}", describe(&v));
}

fn of_type(doc: &ChunkedDocument, t: ChunkType) -> Vec<&Chunk> {
    doc.chunks.iter().filter(|c| c.chunk_type == t).collect()
}
