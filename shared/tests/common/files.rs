//! The input files of the tests, the benches and `perf`'s programs: every
//! named file, and every `*.md` under named directories.

use std::path::{Path, PathBuf};

/// Adds `path` (a file) or the `*.md` files under it (a directory) to `out`.
pub fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            let child = entry.path();
            if child.is_dir() || child.extension().is_some_and(|ext| ext == "md") {
                collect(&child, out);
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
}
