#!/usr/bin/env python3
"""Prints a leaderboard.json as a Markdown table of the retrieval metrics
issue 17 judges by: recall@5 (share of excerpts touched), token recall@5
(share of excerpt text retrieved), token precision@5, nDCG@10, chunks and
mean tokens; one row per system and retriever.

usage: scripts/eval/table.py target/eval/leaderboard.json [--retriever minilm]
"""
import json
import sys

args = sys.argv[1:]
path = args[0]
only = args[args.index("--retriever") + 1] if "--retriever" in args else None
board = json.load(open(path))
rows = board["rows"] if isinstance(board, dict) else board
rows = [r for r in rows if only is None or r["retriever"] == only]
rows.sort(key=lambda r: (r["retriever"], -r["recall@5"]))
print("| system | retriever | recall@5 | token recall@5 | token precision@5 | nDCG@10 | chunks | mean tokens |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(
        f"| {r['name']} | {r['retriever']} | {r['recall@5']:.3f} | {r['token_recall@5']:.3f} "
        f"| {r['token_precision@5']:.4f} | {r['ndcg@10']:.3f} | {r['chunks']} | {r['mean_tokens']:.0f} |"
    )
