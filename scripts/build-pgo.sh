#!/usr/bin/env bash
# A profile-guided (PGO) release build of `chunk-worker`, and of the bare
# cl100k count (`perf/src/bin/bpe_count.rs`) with the same settings, so that
# docs/benchmarks-log.md's engine ratio compares like with like (issue 18: both sides
# built with the same, best release settings).
#
#   scripts/build-pgo.sh            # binaries in target/pgo/release/
#
# 1. An instrumented build (fat LTO, one codegen unit, -Cprofile-generate).
# 2. Training: both binaries run over the repository's own Markdown (eval/
#    documents and shared/tests/fixtures, English and Russian), the engine
#    under the profiles users run most (spec-v1, enterprise-v1, retrieval-v1,
#    docs-v1). Never the benchmark corpus (../shared/corpus): a profile trained
#    on what it is measured on would flatter it.
# 3. The optimized build (fat LTO, one codegen unit, -Cprofile-use).
#
# Needs llvm-profdata of the same or a newer LLVM major version than rustc's
# (`rustc -vV`; Debian: `apt-get install llvm-22`, or rustup's
# llvm-tools component). Set LLVM_PROFDATA to choose one. Two full builds:
# about 20 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
PROFDATA=${LLVM_PROFDATA:-$(command -v "llvm-profdata-$llvm_major" || command -v llvm-profdata || true)}
if [[ -z "$PROFDATA" ]]; then
  echo "build-pgo: no llvm-profdata found (rustc uses LLVM $llvm_major: apt-get install llvm-$llvm_major)" >&2
  exit 2
fi
have_major=$("$PROFDATA" --version | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -1)
if [[ -n "$have_major" && "$have_major" -lt "$llvm_major" ]]; then
  echo "build-pgo: $PROFDATA is LLVM $have_major, older than rustc's LLVM $llvm_major" >&2
  exit 2
fi

base=${CARGO_TARGET_DIR:-target}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
build=(cargo build --release --locked -p worker --bin chunk-worker -p perf --bin bpe_count)

echo "build-pgo: 1/3 instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$data/raw" "${build[@]}" --target-dir "$base/pgo-gen"

echo "build-pgo: 2/3 training on the repository's own Markdown" >&2
train=(eval/boundaries/documents eval/retrieval/documents shared/tests/fixtures)
gen=$base/pgo-gen/release
for profile in spec-v1 enterprise-v1 retrieval-v1 docs-v1; do
  "$gen/chunk-worker" chunk --profile "$profile" "${train[@]}" >/dev/null
done
"$gen/bpe_count" "${train[@]}" >/dev/null
"$PROFDATA" merge -o "$data/merged.profdata" "$data/raw"

echo "build-pgo: 3/3 optimized build" >&2
RUSTFLAGS="-Cprofile-use=$data/merged.profdata" "${build[@]}" --target-dir "$base/pgo"
echo "build-pgo: done: $base/pgo/release/chunk-worker, $base/pgo/release/bpe_count" >&2
