#!/usr/bin/env python3
"""Parity of a drop-in profile with its framework on any Markdown files
(documents no fixture holds): the framework's chunk texts (the call of
bench_adapters.py, the profile's defaults) against `chunk-worker chunk
--profile ADAPTER` on the same files, document by document.

Prints `ADAPTER: N of M documents identical (P%)`, then the first
differences (file, chunk index, both texts' heads); exit status 0.

Usage (from the repository root, after scripts/peers/setup-adapters-venv.sh
and a build of chunk-worker):
  .venv-adapters/bin/python scripts/peers/compare_adapters.py \\
      target/debug/chunk-worker langchain.recursive ../shared/corpus/en/rust-lang+book
`--set KEY=TOML` (before the paths, repeatable) adds a parameter of ours to
the profile, e.g. `--set keep_code_indentation=false` for langchain.markdown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_adapters  # noqa: E402
import tiktoken_offline  # noqa: E402


def markdown_files(paths: list[str]) -> list[str]:
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                files += [os.path.join(d, n) for n in names if n.endswith(".md")]
        else:
            files.append(p)
    return sorted(files)


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit("usage: compare_adapters.py CHUNK_WORKER ADAPTER PATH...")
    binary, adapter, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    sets = []
    while len(paths) > 1 and paths[0] == "--set":
        sets.append(paths[1])
        paths = paths[2:]
    profile = ["--profile", adapter]
    if sets:
        path = os.path.join(tempfile.mkdtemp(), "compare.toml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f'name = "compare"\nstrategy = "{adapter}"\n[params]\n' + "\n".join(sets) + "\n")
        profile = ["--profile-file", path]
    tiktoken_offline.setup()
    split = bench_adapters.splitter(adapter)
    files = markdown_files(paths)
    ours: dict[str, list[str]] = {f: [] for f in files}
    # One file per call: document ids (file stems) repeat across folders.
    for f in files:
        out = subprocess.run(
            [binary, "chunk", *profile, f], capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            ours[f] = [f"<error: {out.stderr.strip()[:200]}>"]
            continue
        ours[f] = [json.loads(line)["chunk_text"] for line in out.stdout.splitlines() if line]
    same, diffs = 0, []
    for f in files:
        with open(f, encoding="utf-8", newline="") as fh:
            text = fh.read()
        # Records never hold whitespace alone.
        theirs = [t for t in split(text) if t.strip()]
        if theirs == ours[f]:
            same += 1
            continue
        at = next((i for i, (a, b) in enumerate(zip(ours[f], theirs)) if a != b), min(len(ours[f]), len(theirs)))
        head = lambda xs: repr(xs[at][:100]) if at < len(xs) else "-"  # noqa: E731
        diffs.append(f"  {f}: {len(ours[f])} chunks, theirs {len(theirs)}; chunk {at}: ours {head(ours[f])} theirs {head(theirs)}")
    print(f"{adapter}: {same} of {len(files)} documents identical ({100.0 * same / max(1, len(files)):.1f}%)")
    for d in diffs[:10]:
        print(d)


if __name__ == "__main__":
    main()
