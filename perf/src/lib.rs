//! The measuring programs of issue 18 (`src/bin`): `gate_workload`, the
//! engine's work under the instruction-count gate (`scripts/perf-gate.sh`),
//! and `bpe_count`, the bare cl100k count the engine is timed against
//! (`scripts/bench-cli.sh`). They read their input as shared's tests and
//! benches do: every named file, and every `*.md` under named directories.

#[path = "../../shared/tests/common/files.rs"]
mod files;

pub use files::collect;
