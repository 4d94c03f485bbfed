#!/usr/bin/env python3
"""LangChain text splitter throughput on a Markdown corpus (the peer figure
for docs/benchmarks-log.md).

Reads every *.md file under --corpus (recursively, sorted paths) into memory
first, then times only the splitting (time.perf_counter, one process, one
pass over all files) and prints one JSON line:
  {"splitter", "chunk_size", "chunk_overlap", "bytes", "files", "chunks", "seconds", "mb_per_s"}
MB/s is input bytes (UTF-8 file sizes) / 1e6 / seconds.

Splitters (all count cl100k_base tokens, as LangChain's from_tiktoken_encoder
does: len(enc.encode(t, allowed_special=set(), disallowed_special="all"))):
  recursive: RecursiveCharacterTextSplitter.from_tiktoken_encoder(
                 encoding_name="cl100k_base", chunk_size, chunk_overlap)
  markdown:  the same with the Language.MARKDOWN separators, is_separator_regex=True
  token:     TokenTextSplitter(encoding_name="cl100k_base", chunk_size, chunk_overlap)
             (defaults for token: 512/64)

tiktoken works offline through scripts/peers/tiktoken_offline.py. Files are
split as read (no normalization, front matter kept).

Usage (from the repository root, after scripts/peers/setup-venv.sh):
  nice -n 10 .venv-peers/bin/python scripts/peers/bench_langchain.py \
      --corpus ../shared/corpus/en --splitter recursive --chunk-size 1000 --chunk-overlap 200
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiktoken_offline  # noqa: E402


def make_splitter(kind: str, chunk_size: int, chunk_overlap: int):
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter, TokenTextSplitter

    if kind == "recursive":
        return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=chunk_size, chunk_overlap=chunk_overlap
        )
    if kind == "markdown":
        return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base",
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            separators=RecursiveCharacterTextSplitter.get_separators_for_language(Language.MARKDOWN),
            is_separator_regex=True,
        )
    if kind == "token":
        return TokenTextSplitter(encoding_name="cl100k_base", chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    raise SystemExit(f"unknown splitter {kind!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="directory searched recursively for *.md")
    ap.add_argument("--splitter", choices=["recursive", "markdown", "token"], default="recursive")
    ap.add_argument("--chunk-size", type=int, default=None, help="tokens (1000; 512 for token)")
    ap.add_argument("--chunk-overlap", type=int, default=None, help="tokens (200; 64 for token)")
    args = ap.parse_args()
    size = args.chunk_size if args.chunk_size is not None else (512 if args.splitter == "token" else 1000)
    overlap = args.chunk_overlap if args.chunk_overlap is not None else (64 if args.splitter == "token" else 200)

    tiktoken_offline.setup()
    splitter = make_splitter(args.splitter, size, overlap)

    paths = []
    for dirpath, _dirs, files in os.walk(args.corpus):
        paths.extend(os.path.join(dirpath, f) for f in files if f.endswith(".md"))
    paths.sort()
    texts = []
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        total += len(data)
        texts.append(data.decode("utf-8"))

    chunks = 0
    start = time.perf_counter()
    for t in texts:
        chunks += len(splitter.split_text(t))
    seconds = time.perf_counter() - start

    print(
        json.dumps(
            {
                "splitter": args.splitter,
                "chunk_size": size,
                "chunk_overlap": overlap,
                "bytes": total,
                "files": len(paths),
                "chunks": chunks,
                "seconds": round(seconds, 3),
                "mb_per_s": round(total / 1e6 / seconds, 4),
            }
        )
    )


if __name__ == "__main__":
    main()
