#!/usr/bin/env bash
# Retrieval at equal context on one half of both shipped retrieval sets
# (BENCHMARKS.md "Retrieval at equal context"): `chunk-worker eval` with the
# given profiles and every peer's chunks under target/peers/<set>/
# (scripts/peers/eval_peers.py), then the margins over the best peer at each
# budget, per set and pooled over both, with paired bootstrap intervals
# (scripts/eval/margins.py).
#
# usage: scripts/eval/equal-context.sh HALF [RETRIEVER] [PROFILES]
#   HALF       A or B (eval/*/splits.json)
#   RETRIEVER  bm25 (default) or minilm (needs models/all-MiniLM-L6-v2)
#   PROFILES   comma-separated [retrieval-lexical-v1,retrieval-minilm-v2,retrieval-minilm-v1,retrieval-v1,spec-v1]
# Environment: CHUNK_WORKER (default target/release/chunk-worker), OUT
# (default target/equal-context).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
half="${1:?usage: equal-context.sh HALF [RETRIEVER] [PROFILES]}"
retriever="${2:-bm25}"
profiles="${3:-retrieval-lexical-v1,retrieval-minilm-v2,retrieval-minilm-v1,retrieval-v1,spec-v1}"
bin="${CHUNK_WORKER:-target/release/chunk-worker}"
out="${OUT:-target/equal-context}/$retriever-$half"
model=()
[[ "$retriever" == bm25 ]] || model=(--model-dir models/all-MiniLM-L6-v2)
for set in retrieval-plain retrieval; do
    peers=()
    for f in target/peers/"$set"/*.jsonl; do
        [[ -e "$f" ]] || { echo "no peer chunks in target/peers/$set: run scripts/peers/eval_peers.py first" >&2; exit 2; }
        peers+=(--external "$(basename "$f" .jsonl)=$f")
    done
    "$bin" eval --dataset "eval/$set" --split "$half" --text chunk --retriever "$retriever" \
        "${model[@]}" --profiles "$profiles" "${peers[@]}" --out "$out/$set" >/dev/null
done
scripts/eval/margins.py "$out/retrieval-plain" "$out/retrieval"
