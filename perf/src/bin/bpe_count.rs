//! A bare cl100k count of files, the yardstick `scripts/bench-cli.sh` times
//! as a whole process next to `chunk-worker chunk`.
//!
//! `cargo run --release -p perf --bin bpe_count -- FILE_OR_DIR...`
//! reads every named file and every `*.md` under named directories, counts
//! cl100k tokens with `bpe_openai::cl100k_base().count`, and prints
//! `files bytes tokens` to stdout.

use std::path::Path;

use perf::collect;

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
