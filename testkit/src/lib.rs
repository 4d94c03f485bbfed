//! What the test suites share outside the end-to-end harness (`tests/`):
//! the embedding model's location, and one rule for a test that finds
//! something it needs missing (the model, valgrind, a server program).
//!
//! Locally such a test skips and says so: a user's clone may lack the model
//! or a tool. Under `CI=true` (which `.ci/run` sets) it fails instead,
//! naming what to install: CI must not pass by skipping what it claims to
//! test.

pub mod chat;

use std::path::{Path, PathBuf};

/// Whether the tests run in CI (`CI` is `true` or `1`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A test cannot run because `what` is missing: in CI a panic naming
/// `install` (what to run or install); locally a line on stdout saying the
/// test skipped. Returns `None` so a caller can write
/// `let Some(x) = found.or_else(|| testkit::missing(...)) else { return };`.
pub fn missing<T>(what: &str, install: &str) -> Option<T> {
    assert!(
        !in_ci(),
        "CI=true and {what} is missing: {install} (a test must not pass by skipping in CI)"
    );
    println!("skipped: {what} is missing ({install})");
    None
}

/// The sentence-embedding model's directory (`$CHUNK_WORKER_MODEL_DIR`, or
/// `models/all-MiniLM-L6-v2` at the repository root) when it holds `file`;
/// else [`missing`].
pub fn model_file(file: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("CHUNK_WORKER_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2"),
    };
    if dir.join(file).is_file() {
        Some(dir)
    } else {
        missing(
            &format!("the embedding model ({} in {})", file, dir.display()),
            "run scripts/fetch-model.sh",
        )
    }
}

/// The model's directory when its weights are there ([`model_file`]).
pub fn model_dir() -> Option<PathBuf> {
    model_file("model.safetensors")
}
