#!/usr/bin/env bash
# Whole-process throughput of every strategy's profile against the two
# yardsticks of issue 9, measured in one run, pinned to one core:
#
#   - a bare cl100k count of the same bytes (`perf/src/bin/bpe_count.rs`,
#     bpe-openai), built by the same `cargo build --release` (same profile
#     settings as chunk-worker), alternating run for run with each profile;
#     target: each strategy >= 0.5x the bare count;
#   - LangChain's equivalent splitter on the same files (in-process Python,
#     files read before the clock starts, so LangChain's figure excludes I/O
#     and startup that ours includes): RecursiveCharacterTextSplitter
#     .from_tiktoken_encoder 1000/200 for recursive-v1 and markdown-v1 (with
#     LangChain's Markdown separators for the latter), and for token-v1 both
#     RecursiveCharacterTextSplitter.from_tiktoken_encoder 512/64 (the issue's
#     yardstick: the same splitter at the same sizes) and TokenTextSplitter
#     512/64 (the closest LangChain class); target: >= 5x.
#
# Usage (from anywhere in the repository, after scripts/peers/setup-venv.sh):
#   scripts/bench-strategies.sh
#   RUNS=3 CPU=1 PROFILES="spec-v1 recursive-v1" scripts/bench-strategies.sh
# Environment: CORPUS (../shared/corpus/en), RUNS (3), CPU (0),
# PROFILES ("spec-v1 recursive-v1 token-v1 markdown-v1"), SKIP_BUILD=1,
# SKIP_LANGCHAIN=1, PEERS_VENV (.venv-peers).
set -euo pipefail

cd "$(dirname "$0")/.."
CORPUS=${CORPUS:-../shared/corpus/en}
RUNS=${RUNS:-3}
CPU=${CPU:-0}
PROFILES=${PROFILES:-"spec-v1 recursive-v1 token-v1 markdown-v1"}
VENV=${PEERS_VENV:-.venv-peers}

command -v taskset >/dev/null || { echo "taskset not found (util-linux)" >&2; exit 2; }
[ -d "$CORPUS" ] || { echo "corpus not found at $CORPUS" >&2; exit 2; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "==> cargo build --release -p worker; cargo build --release -p perf --bin bpe_count"
  cargo build --release -p worker
  cargo build --release -p perf --bin bpe_count
fi
WORK=$(mktemp -d /tmp/bench-strategies.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp target/release/chunk-worker target/release/bpe_count "$WORK/"

load1() { cut -d' ' -f1 /proc/loadavg; }
BYTES=$(find "$CORPUS" -name '.*' -prune -o -type f -name '*.md' -printf '%s\n' | awk '{s += $1} END {print s}')
echo "==> $(date -u '+%Y-%m-%dT%H:%MZ')  commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (uncommitted changes)')"
echo "    $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), pinned to core $CPU"
echo "    corpus $CORPUS: $BYTES bytes; load before: $(load1)"

# seconds CMD...: wall seconds of one pinned run, stdout to /dev/null.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  taskset -c "$CPU" "$@" >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
mbps() { awk -v b="$BYTES" -v s="$1" 'BEGIN { printf "%.2f", b / 1e6 / s }'; }

declare -A OURS
BARE=""
for i in $(seq 1 "$RUNS"); do
  for p in $PROFILES; do
    s=$(seconds "$WORK/chunk-worker" chunk --profile "$p" "$CORPUS")
    OURS[$p]=$(min "$s" "${OURS[$p]:-}")
    echo "    run $i  chunk --profile $p: ${s}s  $(mbps "$s") MB/s  load $(load1)"
    s=$(seconds "$WORK/bpe_count" "$CORPUS")
    BARE=$(min "$s" "$BARE")
    echo "    run $i  bpe_count:            ${s}s  $(mbps "$s") MB/s"
  done
done

declare -A LC
if [ "${SKIP_LANGCHAIN:-0}" != 1 ]; then
  [ -x "$VENV/bin/python" ] || { echo "no $VENV: run scripts/peers/setup-venv.sh (or SKIP_LANGCHAIN=1)" >&2; exit 2; }
  for spec in "recursive 1000 200" "markdown 1000 200" "recursive 512 64" "token 512 64"; do
    set -- $spec
    line=$(taskset -c "$CPU" "$VENV/bin/python" scripts/peers/bench_langchain.py \
      --corpus "$CORPUS" --splitter "$1" --chunk-size "$2" --chunk-overlap "$3")
    LC[$1-$2]=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["mb_per_s"])' "$line")
    echo "    LangChain $1 $2/$3: ${LC[$1-$2]} MB/s  load $(load1)"
  done
fi

BARE_MBPS=$(mbps "$BARE")
echo "==> fastest runs (MB/s of input bytes), bare bpe-openai count $BARE_MBPS MB/s"
printf '    %-14s %8s %10s %12s %12s\n' profile MB/s "/ bare" "LangChain" "/ LangChain"
for p in $PROFILES; do
  ours=$(mbps "${OURS[$p]}")
  case $p in
    recursive-v1) peer=${LC[recursive-1000]:-} ;;
    markdown-v1) peer=${LC[markdown-1000]:-} ;;
    token-v1) peer=${LC[recursive-512]:-} ;;
    *) peer="" ;;
  esac
  awk -v p="$p" -v o="$ours" -v b="$BARE_MBPS" -v l="$peer" 'BEGIN {
    r = o / b
    if (l == "") printf "    %-14s %8.2f %10.3f %12s %12s\n", p, o, r, "-", "-"
    else printf "    %-14s %8.2f %10.3f %12.2f %12.1f\n", p, o, r, l, o / l
  }'
done
if [ -n "${LC[token-512]:-}" ]; then
  awk -v o="$(mbps "${OURS[token-v1]:-1e9}")" -v l="${LC[token-512]}" 'BEGIN {
    printf "    token-v1 / LangChain TokenTextSplitter 512/64 (%.2f MB/s) = %.1f\n", l, o / l }'
fi
echo "    load after: $(load1)"
