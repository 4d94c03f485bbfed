#!/usr/bin/env python3
"""The profile sweep at equal context (BENCHMARKS.md "Retrieval at equal
context"): writes candidate profiles, runs `chunk-worker eval` on one half
of a data set with them and the peers' chunks, and prints a Markdown table
ranked by budget_recall@1000 (the harness's default), with each system's
margin over the best peer at every budget; `--svg FILE` also draws the
ranked metric against mean chunk size (plain SVG, no dependencies).

usage:
  scripts/eval/sweep.py --grid budget --split A [--retriever bm25] [--svg FILE]
  scripts/eval/sweep.py --grid budget --split A --retriever minilm --dataset eval/retrieval

Tune on one half (--split A), then run the chosen profiles once on the
other (--split B): a figure tuned and scored on the same half is not a
result. The binary is target/release/chunk-worker (build it first); peers
come from target/peers/<dataset>/*.jsonl (scripts/peers/eval_peers.py). With minilm
the model must be in models/all-MiniLM-L6-v2 (scripts/fetch-model.sh); the
eval keeps every vector in target/sweep/vectors-*.bin, so a second run
embeds only new chunk texts.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

OUT = "target/sweep"
MD4 = ["\n# ", "\n## ", "\n### ", "\n#### ", "\n\n", "\n", " ", ""]
WINDOW = {"name": "all-MiniLM-L6-v2", "max_tokens": 256, "tokenizer": "model"}


def value(v):
    """A TOML value: strings and lists as JSON (valid TOML), tables inline."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (str, list)):
        return json.dumps(v)
    return str(v)


def profile(name, strategy, params, crumb="conditional", embedder=None):
    lines = [f'name = "{name}"', f'strategy = "{strategy}"', f'breadcrumb_mode = "{crumb}"']
    if embedder:
        lines += ["", "[embedder]"] + [f"{k} = {value(v)}" for k, v in embedder.items()]
    lines += ["", "[params]"]
    for k, v in params.items():
        lines.append(f"{k} = {value(v)}")
    return "\n".join(lines) + "\n"


SENT = MD4[:5] + ["<sentence>", "\n", " ", ""]


def grid(kind):
    """Candidate profiles: name -> TOML."""
    out = {}
    if kind == "budget":
        # Issue 46: Markdown-aware recursive splitting with sentences before
        # lines, small sizes, with and without overlap (at most half).
        for size in [200, 220, 250, 280, 300, 350, 400]:
            for ov in [0, 30, 60, 100, 150]:
                if 2 * ov <= size:
                    n = f"m-{size}-{ov}"
                    out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov,
                                                      "separators": SENT, "stub_tokens": 8}, "none")
    elif kind == "budget-struct":
        # Paragraph packing with a soft and a hard max (structural).
        for t in [150, 200, 250, 300]:
            for ov, tag in [({"tokens": 0}, "none"), ({"sentences": 1}, "s1")]:
                n = f"st-{t}-{tag}"
                out[n] = profile(n, "structural", {"target_tokens": t, "soft_max_tokens": t * 13 // 10,
                                                   "hard_max_tokens": t * 3 // 2, "min_tokens": 0, "overlap": ov}, "none")
    else:
        sys.exit(f"unknown grid {kind}")
    return out


def svg(rows, path, metric="budget_recall@1000"):
    """`metric` (y) against mean tokens (x, log), one panel per retriever."""
    import math

    panels = sorted({r["retriever"] for r in rows})
    W, H, M = 460, 340, 50
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(panels)}" height="{H}" font-family="sans-serif" font-size="11">',
             f'<rect width="{W * len(panels)}" height="{H}" fill="white"/>']
    for pi, ret in enumerate(panels):
        rs = [r for r in rows if r["retriever"] == ret]
        x0 = pi * W
        ys = [r[metric] for r in rs]
        lo, hi = min(ys) - 0.01, max(ys) + 0.01
        xs = [math.log(max(r["mean_tokens"], 1)) for r in rs]
        xl, xh = min(xs) - 0.1, max(xs) + 0.1
        px = lambda v: x0 + M + (v - xl) / (xh - xl) * (W - 2 * M - 60)
        py = lambda v: H - M - (v - lo) / (hi - lo) * (H - 2 * M)
        parts.append(f'<text x="{x0 + W / 2}" y="20" text-anchor="middle" font-size="13">{metric} vs mean chunk tokens ({ret})</text>')
        parts.append(f'<line x1="{x0 + M}" y1="{H - M}" x2="{x0 + W - M}" y2="{H - M}" stroke="black"/>')
        parts.append(f'<line x1="{x0 + M}" y1="{M}" x2="{x0 + M}" y2="{H - M}" stroke="black"/>')
        for k in range(5):
            v = lo + (hi - lo) * k / 4
            parts.append(f'<text x="{x0 + M - 4}" y="{py(v) + 4}" text-anchor="end">{v:.3f}</text>')
        for t in [100, 200, 400, 800, 1600]:
            if xl <= math.log(t) <= xh:
                parts.append(f'<text x="{px(math.log(t))}" y="{H - M + 14}" text-anchor="middle">{t}</text>')
        # Candidates first, so a peer or a shipped profile is never hidden
        # under a candidate with the same figures.
        shipped = lambda r: bool(r.get("external")) or r["name"].startswith("retrieval")
        for r in sorted(rs, key=shipped):
            ext = r.get("external")
            colour = "#d62728" if ext else ("#1f77b4" if not r["name"].startswith("retrieval") else "#2ca02c")
            x, y = px(math.log(max(r["mean_tokens"], 1))), py(r[metric])
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"><title>{r["name"]}: {r[metric]:.3f}</title></circle>')
            if ext or r["name"].startswith("retrieval"):
                parts.append(f'<text x="{x + 6:.1f}" y="{y - 4:.1f}" font-size="9">{r["name"]}</text>')
        parts.append(f'<text x="{x0 + M}" y="{H - 8}" font-size="9">red: peers, green: shipped retrieval profiles, blue: candidates</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", required=True, choices=["budget", "budget-struct"])
    ap.add_argument("--dataset", default="eval/retrieval-plain")
    ap.add_argument("--split", help="the half to tune on (its splits.json)")
    ap.add_argument("--retriever", default="bm25", choices=["bm25", "minilm"])
    ap.add_argument("--rank-by", default="budget_recall@1000")
    ap.add_argument("--profiles", default="", help="built-in profiles to add, comma-separated")
    ap.add_argument("--svg")
    ap.add_argument("--out", default=OUT, help=f"work directory [{OUT}]")
    a = ap.parse_args()
    out = a.out
    os.makedirs(f"{out}/profiles", exist_ok=True)
    cmd = [os.environ.get("CHUNK_WORKER", "target/release/chunk-worker"), "eval", "--dataset", a.dataset, "--text", "chunk",
           "--retriever", a.retriever, "--rank-by", a.rank_by, "--out", out]
    if a.split:
        cmd += ["--split", a.split]
    names = [p for p in a.profiles.split(",") if p]
    for name, toml in grid(a.grid).items():
        path = f"{out}/profiles/{name}.toml"
        with open(path, "w") as f:
            f.write(toml)
        cmd += ["--profile-file", path]
        names.append(name)
    cmd += ["--profiles", ",".join(names)]
    dataset = os.path.basename(os.path.normpath(a.dataset))
    for peer in sorted(glob.glob(f"target/peers/{dataset}/*.jsonl")):
        cmd += ["--external", f"{os.path.basename(peer)[:-6]}={peer}"]
    print("+", " ".join(c if " " not in c else repr(c) for c in cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    board = json.load(open(f"{out}/leaderboard.json"))
    rows = board["rows"]
    budgets = [k.split("@")[1] for k in sorted(rows[0]) if k.startswith("budget_recall@")]
    budgets.sort(key=int)
    peers = [r for r in rows if r.get("external")]
    best = {b: max((p[f"budget_recall@{b}"] for p in peers), default=0.0) for b in budgets}
    rows.sort(key=lambda r: -r[a.rank_by])
    head = " | ".join(f"@{b}" for b in budgets)
    print(f"| system | {head} | margin over the best peer ({', '.join(budgets)}) | mean tokens |")
    print("|---|" + "---:|" * len(budgets) + "---|---:|")
    for r in rows:
        name = f"{r['name']} (peer)" if r.get("external") else r["name"]
        vals = " | ".join(f"{r[f'budget_recall@{b}']:.3f}" for b in budgets)
        margin = " ".join(f"{r[f'budget_recall@{b}'] - best[b]:+.3f}" for b in budgets)
        print(f"| {name} | {vals} | {margin} | {r['mean_tokens']:.0f} |")
    if a.svg:
        svg(rows, a.svg, a.rank_by)
        print(f"wrote {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
