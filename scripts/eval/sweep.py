#!/usr/bin/env python3
"""The retrieval-first profile sweep of issue 17 (BENCHMARKS.md
"Retrieval-first profiles"): writes candidate profiles, runs
`chunk-worker eval` on the retrieval set with them and the peers' chunks,
and prints a Markdown table; `--svg FILE` also draws recall@5 against mean
chunk size, one panel per retriever (plain SVG, no dependencies).

usage:
  scripts/eval/sweep.py --grid bm25 [--retriever bm25] [--svg docs/sweep-bm25.svg]
  scripts/eval/sweep.py --grid minilm --retriever minilm [--svg ...]

The binary is target/release/chunk-worker (build it first); peers come from
target/peers/retrieval/*.jsonl (scripts/peers/eval_peers.py). With minilm
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


def grid(kind):
    """Candidate profiles: name -> TOML."""
    out = {}
    if kind == "bm25":
        for size, ov in [(600, 150), (800, 200), (900, 200), (1000, 150), (1000, 200), (1000, 250), (1100, 250), (1200, 300), (1500, 400)]:
            for crumb in ["none", "conditional"]:
                n = f"rmd-{size}-{ov}-{crumb[:4]}"
                out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4}, crumb)
        for size, ov in [(1000, 200), (1000, 300), (1500, 400)]:
            for h, hn in [([1], "h1"), ([1, 2], "h12"), ([1, 2, 3], "h123")]:
                n = f"mdh-{hn}-{size}-{ov}"
                out[n] = profile(n, "markdown_headers", {"headings": h, "chunk_size": size, "chunk_overlap": ov})
        for t, hm in [(700, 1000), (900, 1200)]:
            n = f"struct-{t}"
            out[n] = profile(n, "structural", {"target_tokens": t, "hard_max_tokens": hm})
    elif kind == "minilm":
        # Fitted to the model's window: every word piece embedded.
        for size, ov in [(300, 100), (350, 50), (500, 100)]:
            for crumb in ["none", "conditional"]:
                n = f"w-rmd-{size}-{ov}-{crumb[:4]}"
                out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4}, crumb, WINDOW)
        n = "w-mdh-h123-350-50"
        out[n] = profile(n, "markdown_headers", {"headings": [1, 2, 3], "chunk_size": 350, "chunk_overlap": 50}, "conditional", WINDOW)
        n = "w-struct-350"
        out[n] = profile(n, "structural", {"target_tokens": 350, "soft_max_tokens": 450, "hard_max_tokens": 520,
                                           "overlap": {"percent_of_target": 15, "sentence_aligned": True}}, "conditional", WINDOW)
    elif kind == "minilm2":
        # Not fitted: the model reads each chunk's first 256 word pieces.
        for size, ov in [(300, 50), (350, 50), (400, 100), (400, 200)]:
            n = f"rmd-{size}-{ov}-none"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4}, "none")
        n = "mdh-h123-350-50-none"
        out[n] = profile(n, "markdown_headers", {"headings": [1, 2, 3], "chunk_size": 350, "chunk_overlap": 50}, "none")
    elif kind == "minilm3":
        # Around the best of minilm2: less overlap (it takes the start of the
        # window), sentence cuts, other sizes, sections at headings 1-2.
        for size, ov in [(350, 0), (350, 25), (375, 50)]:
            n = f"rmd-{size}-{ov}-none"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4}, "none")
        n = "rmds-350-50-none"
        out[n] = profile(n, "recursive", {"chunk_size": 350, "chunk_overlap": 50, "separators": MD4[:6] + [". ", " ", ""]}, "none")
        n = "mdh-h12-350-50-none"
        out[n] = profile(n, "markdown_headers", {"headings": [1, 2], "chunk_size": 350, "chunk_overlap": 50}, "none")
    elif kind == "minilm4":
        # Sentence cuts that keep the end punctuation (the "<sentence>"
        # separator) between lines and words.
        for size, ov in [(300, 50), (350, 50), (400, 50), (350, 25)]:
            n = f"rsent-{size}-{ov}-none"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4[:6] + ["<sentence>", " ", ""]}, "none")
    elif kind == "minilm5":
        # Around the best sentence variant; structural sections of a similar size.
        for size, ov in [(325, 50), (375, 50), (350, 75), (360, 50), (340, 50)]:
            n = f"rsent-{size}-{ov}-none"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": MD4[:6] + ["<sentence>", " ", ""]}, "none")
        n = "struct-300-none"
        out[n] = profile(n, "structural", {"target_tokens": 300, "soft_max_tokens": 380, "hard_max_tokens": 450,
                                           "overlap": {"percent_of_target": 15, "sentence_aligned": True}}, "none")
    elif kind == "minilm6":
        # Stubs and heading-only chunks join a neighbour (stub_tokens).
        SENT = MD4[:6] + ["<sentence>", " ", ""]
        for size, ov, seps, tag in [(350, 50, MD4, "rmd"), (350, 50, SENT, "rsent"), (360, 50, SENT, "rsent"),
                                    (350, 75, SENT, "rsent"), (375, 50, SENT, "rsent"), (400, 50, SENT, "rsent")]:
            n = f"{tag}-{size}-{ov}-stub"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": seps, "stub_tokens": 8}, "none")
    elif kind == "minilm7":
        # Sentences before lines: hard-wrapped prose is cut at sentence ends,
        # not at its line wraps.
        SENT2 = MD4[:5] + ["<sentence>", "\n", " ", ""]
        for size, ov in [(300, 50), (325, 50), (350, 50), (360, 50), (350, 75), (375, 50), (400, 50)]:
            n = f"rsl-{size}-{ov}-stub"
            out[n] = profile(n, "recursive", {"chunk_size": size, "chunk_overlap": ov, "separators": SENT2, "stub_tokens": 8}, "none")
    elif kind == "minilm-all":
        for k in ["minilm", "minilm2", "minilm3", "minilm4", "minilm5", "minilm6", "minilm7"]:
            out.update(grid(k))
    else:
        sys.exit(f"unknown grid {kind}")
    return out


def svg(rows, path):
    """recall@5 (y) against mean tokens (x, log), one panel per retriever."""
    import math

    panels = sorted({r["retriever"] for r in rows})
    W, H, M = 460, 340, 50
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(panels)}" height="{H}" font-family="sans-serif" font-size="11">',
             f'<rect width="{W * len(panels)}" height="{H}" fill="white"/>']
    for pi, ret in enumerate(panels):
        rs = [r for r in rows if r["retriever"] == ret]
        x0 = pi * W
        ys = [r["recall@5"] for r in rs]
        lo, hi = min(ys) - 0.01, max(ys) + 0.01
        xs = [math.log(max(r["mean_tokens"], 1)) for r in rs]
        xl, xh = min(xs) - 0.1, max(xs) + 0.1
        px = lambda v: x0 + M + (v - xl) / (xh - xl) * (W - 2 * M - 60)
        py = lambda v: H - M - (v - lo) / (hi - lo) * (H - 2 * M)
        parts.append(f'<text x="{x0 + W / 2}" y="20" text-anchor="middle" font-size="13">recall@5 vs mean chunk tokens ({ret})</text>')
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
            x, y = px(math.log(max(r["mean_tokens"], 1))), py(r["recall@5"])
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"><title>{r["name"]}: {r["recall@5"]:.3f}</title></circle>')
            if ext or r["name"].startswith("retrieval"):
                parts.append(f'<text x="{x + 6:.1f}" y="{y - 4:.1f}" font-size="9">{r["name"]}</text>')
        parts.append(f'<text x="{x0 + M}" y="{H - 8}" font-size="9">red: peers, green: shipped retrieval profiles, blue: candidates</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", required=True, choices=["bm25", "minilm", "minilm2", "minilm3", "minilm4", "minilm5", "minilm6", "minilm7", "minilm-all"])
    ap.add_argument("--retriever", default="bm25", choices=["bm25", "minilm", "both"])
    ap.add_argument("--profiles", default="", help="built-in profiles to add, comma-separated")
    ap.add_argument("--svg")
    ap.add_argument("--out", default=OUT, help=f"work directory [{OUT}]")
    a = ap.parse_args()
    out = a.out
    os.makedirs(f"{out}/profiles", exist_ok=True)
    cmd = ["target/release/chunk-worker", "eval", "--dataset", "eval/retrieval", "--k", "5,10",
           "--text", "embed", "--retriever", a.retriever, "--out", out]
    names = [p for p in a.profiles.split(",") if p]
    for name, toml in grid(a.grid).items():
        path = f"{out}/profiles/{name}.toml"
        with open(path, "w") as f:
            f.write(toml)
        cmd += ["--profile-file", path]
        names.append(name)
    cmd += ["--profiles", ",".join(names)]
    for peer in sorted(glob.glob("target/peers/retrieval/*.jsonl")):
        cmd += ["--external", f"{os.path.basename(peer)[:-6]}={peer}"]
    print("+", " ".join(c if " " not in c else repr(c) for c in cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    board = json.load(open(f"{out}/leaderboard.json"))
    rows = board["rows"]
    rows.sort(key=lambda r: (r["retriever"], -r["recall@5"]))
    print("| system | retriever | recall@5 | token recall@5 | token precision@5 | nDCG@10 | chunks | mean tokens |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        name = f"{r['name']} (peer)" if r.get("external") else r["name"]
        print(f"| {name} | {r['retriever']} | {r['recall@5']:.3f} | {r['token_recall@5']:.3f} | "
              f"{r['token_precision@5']:.4f} | {r['ndcg@10']:.3f} | {r['chunks']} | {r['mean_tokens']:.0f} |")
    if a.svg:
        svg(rows, a.svg)
        print(f"wrote {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
