//! A bare cl100k count of files, the yardstick `scripts/bench-cli.sh` times
//! as a whole process next to `chunk-worker chunk`.
//!
//! `cargo run --release -p shared --example bpe_count -- FILE_OR_DIR...`
//! reads every named file and every `*.md` under named directories, counts
//! cl100k tokens with `bpe_openai::cl100k_base().count`, and prints
//! `files bytes tokens` to stdout.

use std::path::{Path, PathBuf};

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
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

fn main() -> std::io::Result<()> {
    let mut paths = Vec::new();
    for arg in std::env::args_os().skip(1) {
        collect(Path::new(&arg), &mut paths);
    }
    paths.sort();
    let bpe = bpe_openai::cl100k_base();
    let (mut bytes, mut tokens) = (0usize, 0usize);
    for path in &paths {
        let raw = std::fs::read(path)?;
        bytes += raw.len();
        tokens += bpe.count(String::from_utf8_lossy(&raw).as_ref());
    }
    println!("{} {bytes} {tokens}", paths.len());
    Ok(())
}
