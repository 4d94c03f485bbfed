#!/usr/bin/env python3
"""One splitter over a Markdown corpus, for whole-process timings of the
Python package against LangChain's splitters (BENCHMARKS.md, "From Python").

Reads every *.md file under --corpus (sorted paths) into memory, splits all
of them with the chosen implementation, prints one JSON line
({"impl", "files", "bytes", "chunks", "split_seconds"}). Time the whole
process from outside (e.g. /usr/bin/time -v, hyperfine); split_seconds is
the splitting alone, for reference. Sizes are cl100k_base tokens, 1000 with
200 overlap, as the factory's defaults.

  lc-recursive   LangChain RecursiveCharacterTextSplitter.from_tiktoken_encoder(...).split_text
  cw-recursive   ChunkingFactory().create_recursive(1000, 200).split_text (one thread)
  lc-markdown    MarkdownHeaderTextSplitter (headings 1-3, kept) + the recursive splitter,
                 split_documents on Documents
  cw-markdown    ChunkingFactory().create_markdown(1000, 200).split_documents
  cw-batch       Engine("recursive-v1").chunk_many(...) on every core

LangChain needs langchain-text-splitters and tiktoken (scripts/peers/
requirements.txt); tiktoken runs offline through scripts/peers/tiktoken_offline.py.

  python python/bench/bench_vs_langchain.py --corpus ../shared/corpus/en --impl cw-recursive
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

IMPLS = ("lc-recursive", "cw-recursive", "lc-markdown", "cw-markdown", "cw-batch")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--impl", required=True, choices=IMPLS)
    args = ap.parse_args()
    paths = sorted(args.corpus.rglob("*.md"))
    texts = [p.read_text(encoding="utf-8") for p in paths]
    if not texts:
        raise SystemExit(f"no *.md files under {args.corpus}")

    if args.impl.startswith("lc-"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "peers"))
        import tiktoken_offline

        tiktoken_offline.setup()
        from langchain_core.documents import Document
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )

        recursive = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=1000, chunk_overlap=200
        )
        start = time.perf_counter()
        if args.impl == "lc-recursive":
            chunks = sum(len(recursive.split_text(t)) for t in texts)
        else:
            headers = MarkdownHeaderTextSplitter(
                [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")], strip_headers=False
            )
            chunks = 0
            for path, text in zip(paths, texts):
                sections = headers.split_text(text)
                for s in sections:
                    s.metadata["source"] = str(path)
                chunks += len(recursive.split_documents(sections))
        seconds = time.perf_counter() - start
    else:
        from chunk_worker import ChunkingFactory, Engine

        start = time.perf_counter()
        if args.impl == "cw-recursive":
            splitter = ChunkingFactory().create_recursive(1000, 200)
            chunks = sum(len(splitter.split_text(t)) for t in texts)
        elif args.impl == "cw-markdown":
            from langchain_core.documents import Document

            splitter = ChunkingFactory().create_markdown(1000, 200)
            docs = [Document(page_content=t, metadata={"source": str(p)}) for p, t in zip(paths, texts)]
            chunks = len(splitter.split_documents(docs))
        else:
            engine = Engine("recursive-v1")
            out = engine.chunk_many(texts, document_ids=[p.stem for p in paths])
            chunks = sum(len(c) for c in out)
        seconds = time.perf_counter() - start
    print(json.dumps({
        "impl": args.impl,
        "files": len(texts),
        "bytes": sum(len(t.encode("utf-8")) for t in texts),
        "chunks": chunks,
        "split_seconds": round(seconds, 3),
        "cores": os.cpu_count(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
