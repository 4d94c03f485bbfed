#!/usr/bin/env bash
# Retrieval at equal context on one half of both shipped retrieval sets
# (BENCHMARKS.md "Retrieval at equal context"): `chunk-worker eval` with the
# given profiles and every peer's chunks under target/peers/<set>/
# (scripts/peers/eval_peers.py), then the margins over the best peer at each
# budget, per set and pooled over both.
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
python3 - "$out" <<'PY'
import json, sys
root = sys.argv[1]
budgets = (500, 1000, 2000)
pooled = {}
for name in ("retrieval-plain", "retrieval"):
    rows = json.load(open(f"{root}/{name}/leaderboard.json"))["rows"]
    best = {b: max(r[f"budget_recall@{b}"] for r in rows if r.get("external")) for b in budgets}
    print(f"{name}: best peer " + " / ".join(f"{best[b]:.3f}" for b in budgets))
    for r in rows:
        p = pooled.setdefault(r["name"], {"q": 0, "ext": r.get("external"), **{b: 0.0 for b in budgets}})
        p["q"] += r["questions"]
        for b in budgets:
            p[b] += r["questions"] * r[f"budget_recall@{b}"]
        if not r.get("external"):
            vals = " / ".join(f"{r[f'budget_recall@{b}']:.3f}" for b in budgets)
            margin = " / ".join(f"{r[f'budget_recall@{b}'] - best[b]:+.3f}" for b in budgets)
            print(f"  {r['name']:<24} {vals}   margin {margin}")
best = {b: max(p[b] / p["q"] for p in pooled.values() if p["ext"]) for b in budgets}
print("pooled: best peer " + " / ".join(f"{best[b]:.3f}" for b in budgets))
for n, p in pooled.items():
    if not p["ext"]:
        vals = " / ".join(f"{p[b] / p['q']:.3f}" for b in budgets)
        margin = " / ".join(f"{p[b] / p['q'] - best[b]:+.3f}" for b in budgets)
        print(f"  {n:<24} {vals}   margin {margin}")
PY
