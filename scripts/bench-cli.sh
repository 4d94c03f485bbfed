#!/usr/bin/env bash
# Whole-process throughput and memory of `chunk-worker chunk`, as the issue's
# acceptance criteria measure them (see docs/benchmarks-log.md):
#
#   1. `chunk-worker chunk --profile spec-v1 <English corpus>` > /dev/null,
#      pinned to one core, RUNS times: MB/s (bytes = total size of the input
#      *.md files) from the fastest run, and max RSS;
#   2. a bare cl100k count of the same bytes (`perf/src/bin/bpe_count.rs`,
#      bpe-openai), alternating run for run with 1 so both see the same load,
#      and the ratio ours / bare from the fastest runs (target >= 0.5);
#   3. ours / text-splitter (target >= 8) when TS_MBPS is given: text-splitter's
#      MB/s from `cargo bench -p shared --bench text_splitter` (criterion prints
#      MiB/s: multiply by 1.048576; docs/benchmarks-log.md uses its fastest sample);
#   4. a >= 100 MiB synthetic file (corpus files concatenated into $BIG) chunked
#      once, pinned: wall time and max RSS (target < 1 GB RSS).
#
# Usage (from anywhere in the repository):
#   scripts/bench-cli.sh
#   RUNS=5 CPU=1 TS_MBPS=2.1 scripts/bench-cli.sh
# Environment: CORPUS (default ../shared/corpus/en, relative to the repository
# root), PROFILE (spec-v1), RUNS (3), CPU (the core to pin to, 0),
# BIG_MIB (100), BIG (/tmp/chunk-worker-bench-big.md; kept between runs),
# BIG_TIMEOUT (1200 s: the big file run is killed after that, exit status 124),
# TS_MBPS (unset), BUILD_PROFILE (release; production for fat LTO, both sides),
# SKIP_BUILD=1 (use the binaries already in target/$BUILD_PROFILE),
# SKIP_BIG=1 (skip the big file test).
#
# Needs GNU time as /usr/bin/time for max RSS (`apt-get install -y time` on
# Debian/Ubuntu if it is missing) and taskset (util-linux).
#
# Timings on a shared machine are noisy: the script prints the 1-minute load
# average next to every run; compare the minimum of several runs, and re-run
# when the load is above the number of cores.
set -euo pipefail

cd "$(dirname "$0")/.."
CORPUS=${CORPUS:-../shared/corpus/en}
PROFILE=${PROFILE:-spec-v1}
RUNS=${RUNS:-3}
CPU=${CPU:-0}
BIG_MIB=${BIG_MIB:-100}
BIG=${BIG:-/tmp/chunk-worker-bench-big.md}
BIG_TIMEOUT=${BIG_TIMEOUT:-1200}

if ! /usr/bin/time --version 2>&1 | grep -q GNU; then
  echo "GNU time not found at /usr/bin/time: apt-get install -y time" >&2
  exit 2
fi
command -v taskset >/dev/null || { echo "taskset not found (util-linux)" >&2; exit 2; }
[ -d "$CORPUS" ] || { echo "corpus not found at $CORPUS" >&2; exit 2; }

# Both sides are built with the same cargo profile: BUILD_PROFILE=release
# (the default) or production (fat LTO, one codegen unit: issue 18's figures).
BUILD_PROFILE=${BUILD_PROFILE:-release}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "==> cargo build --profile $BUILD_PROFILE -p worker -p perf --bin chunk-worker --bin bpe_count"
  cargo build --profile "$BUILD_PROFILE" -p worker -p perf --bin chunk-worker --bin bpe_count
fi

# Copies, so a concurrent build in this checkout cannot swap a binary mid-run.
WORK=$(mktemp -d /tmp/bench-cli.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "target/$BUILD_PROFILE/chunk-worker" "target/$BUILD_PROFILE/bpe_count" "$WORK/"

load1() { cut -d' ' -f1 /proc/loadavg; }

# The inputs exactly as the CLI walks them: *.md, hidden entries skipped.
BYTES=$(find "$CORPUS" -name '.*' -prune -o -type f -name '*.md' -printf '%s\n' | awk '{s += $1} END {print s}')
FILES=$(find "$CORPUS" -name '.*' -prune -o -type f -name '*.md' -print | wc -l)

echo "==> $(date -u '+%Y-%m-%dT%H:%MZ')  commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes present)')"
echo "    $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), pinned to core $CPU"
echo "    corpus $CORPUS: $FILES files, $BYTES bytes"

# time_one NAME BYTES RUN CMD...: one pinned run, stdout to /dev/null; prints
# a line and sets S (wall seconds) and KB (max RSS in KiB).
time_one() {
  local name=$1 bytes=$2 run=$3 rc=0 load
  shift 3
  load=$(load1)
  taskset -c "$CPU" /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" || rc=$?
  read -r S KB < <(tail -n1 "$WORK/time")
  if [ "$rc" != 0 ]; then
    echo "    $name run $run: exit status $rc" >&2
    tail -n5 "$WORK/stderr" >&2
  fi
  awk -v n="$name" -v i="$run" -v s="$S" -v kb="$KB" -v b="$bytes" -v l="$load" -v rc="$rc" \
    'BEGIN { printf "    %-16s run %d: %7.2f s  %7.2f MB/s  max RSS %7.1f MiB  load %s%s\n", n, i, s, b / 1e6 / s, kb / 1024, l, (rc != 0 ? "  (FAILED)" : "") }'
}

# min A B: the smaller of two decimals (A when B is empty).
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

# The two commands alternate, so both see the same load over the runs.
echo "==> $RUNS x alternately, pinned to core $CPU, stdout to /dev/null:"
echo "    chunk-worker chunk --profile $PROFILE $CORPUS"
echo "    bpe_count $CORPUS   (bare bpe-openai cl100k count: perf/src/bin/bpe_count.rs)"
OURS_S="" OURS_KB=0 BARE_S=""
for i in $(seq 1 "$RUNS"); do
  time_one "chunk $PROFILE" "$BYTES" "$i" "$WORK/chunk-worker" chunk --profile "$PROFILE" "$CORPUS"
  OURS_S=$(min "$S" "$OURS_S")
  if [ "$KB" -gt "$OURS_KB" ]; then OURS_KB=$KB; fi
  time_one "bpe_count" "$BYTES" "$i" "$WORK/bpe_count" "$CORPUS"
  BARE_S=$(min "$S" "$BARE_S")
done

awk -v b="$BYTES" -v o="$OURS_S" -v ok="$OURS_KB" -v bare="$BARE_S" -v ts="${TS_MBPS:-}" 'BEGIN {
  ours = b / 1e6 / o; bm = b / 1e6 / bare; r = ours / bm
  printf "==> fastest runs: chunk %.2f MB/s (max RSS %.1f MiB), bare bpe-openai %.2f MB/s\n", ours, ok / 1024, bm
  printf "    ours / bare bpe-openai = %.3f  (target >= 0.5: %s)\n", r, (r >= 0.5 ? "met" : "NOT met")
  if (ts != "") {
    t = ours / ts
    printf "    ours / text-splitter (%.2f MB/s) = %.2f  (target >= 8: %s)\n", ts, t, (t >= 8 ? "met" : "NOT met")
  } else {
    print "    ours / text-splitter: set TS_MBPS (cargo bench -p shared --bench text_splitter; MiB/s x 1.048576)"
  }
}'

if [ "${SKIP_BIG:-0}" = 1 ]; then
  echo "==> SKIP_BIG=1: big file test skipped"
  exit 0
fi

# The synthetic big file: sorted corpus files, each followed by a blank line,
# repeated until the file reaches BIG_MIB MiB (stopping at the first file past
# it). Reused when already big enough.
TARGET=$((BIG_MIB * 1024 * 1024))
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt "$TARGET" ]; then
  echo "==> building $BIG (>= $BIG_MIB MiB of concatenated corpus files)"
  : >"$BIG"
  mapfile -d '' LIST < <(find "$CORPUS" -name '.*' -prune -o -type f -name '*.md' -print0 | sort -z)
  SIZE=0
  while [ "$SIZE" -lt "$TARGET" ]; do
    for f in "${LIST[@]}"; do
      cat "$f" >>"$BIG"
      printf '\n\n' >>"$BIG"
      SIZE=$((SIZE + $(stat -c %s "$f") + 2))
      if [ "$SIZE" -ge "$TARGET" ]; then break; fi
    done
  done
fi
BIG_BYTES=$(stat -c %s "$BIG")
echo "==> taskset -c $CPU chunk-worker chunk --profile $PROFILE $BIG > /dev/null  ($BIG_BYTES bytes, 1 run, timeout ${BIG_TIMEOUT}s)"
time_one "chunk big file" "$BIG_BYTES" 1 timeout "$BIG_TIMEOUT" "$WORK/chunk-worker" chunk --profile "$PROFILE" "$BIG"
awk -v kb="$KB" 'BEGIN { printf "    max RSS %.1f MiB (target < 1 GB: %s)\n", kb / 1024, (kb * 1024 < 1e9 ? "met" : "NOT met") }'
