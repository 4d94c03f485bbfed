//! End-to-end tests of `chunk-worker report`: the real binary on fixtures
//! and temporary files, the page parsed back (no browser) and checked
//! against what `chunk` and `normalize` print for the same files.
//!
//! What the page must hold, per file and profile: every chunk exactly once,
//! in order, its element's text exactly its own span; the spans and gaps
//! together exactly the normalized document; overlap and synthetic
//! prefixes marked as the records say; nothing loaded from off the page;
//! every piece of document text escaped.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod column;
mod content;
mod page;
mod writing;

use std::fs;
use std::path::PathBuf;
use std::process::Output;

use common::chunk_worker;

fn temp_dir(test: &str) -> PathBuf {
    common::temp_dir("report", test)
}

/// Runs `report` on `files` with `profiles`; the page and the run.
fn report(test: &str, files: &[PathBuf], profiles: &[&str]) -> (String, Output) {
    let out = temp_dir(&format!("{test}-out")).join("report.html");
    let mut args: Vec<String> = vec!["report".into(), "-o".into(), out.display().to_string()];
    for p in profiles {
        args.push("--profile".into());
        args.push((*p).into());
    }
    args.extend(files.iter().map(|f| f.display().to_string()));
    let run = chunk_worker(&args);
    let page = fs::read_to_string(&out).unwrap_or_default();
    (page, run)
}
