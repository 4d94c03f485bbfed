//! Helpers the command-line test crates share: running the real binary,
//! the shared fixtures, a fresh directory per test.

// Each test crate uses its own subset.
#![allow(dead_code)]
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `chunk-worker` with `args` in the test's working directory.
pub fn chunk_worker<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(args)
        .output()
        .unwrap()
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shared fixtures folder (`shared/tests/fixtures`).
pub fn fixtures() -> PathBuf {
    root().join("shared/tests/fixtures")
}

/// One shared fixture.
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// A fresh, empty directory for test `test` of suite `suite`.
pub fn temp_dir(suite: &str, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "chunk-worker-{suite}-{}-{test}",
        std::process::id()
    ));
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}
