#!/usr/bin/env python3
"""Chunk the evaluation data sets with peer chunkers, for the evaluation
harness's `--external NAME=FILE.jsonl`.

For each data set directory (one holding documents/*.md, e.g. eval/retrieval
or eval/boundaries), every documents/*.md file is read as bytes and decoded as
UTF-8, with no other change (no newline or Unicode normalization, front matter
and BOM kept), and split by each peer configuration:

  langchain-recursive     LangChain RecursiveCharacterTextSplitter.from_tiktoken_encoder(
                              encoding_name="cl100k_base", chunk_size=1000, chunk_overlap=200)
  langchain-markdown      LangChain MarkdownHeaderTextSplitter(headers_to_split_on=
                              [("#","h1"),("##","h2"),("###","h3")], strip_headers=False),
                          then the recursive splitter above at 350/52 on each section
  llamaindex-sentence     LlamaIndex SentenceSplitter(chunk_size=512, chunk_overlap=64,
                              tokenizer=cl100k_base encode, allowed_special="all")
  chonkie-recursive       chonkie RecursiveChunker(tokenizer=<tiktoken cl100k_base Encoding>,
                              chunk_size=512)  (default RecursiveRules)
  chonkie-token           chonkie TokenChunker(tokenizer=<cl100k_base>, chunk_size=512,
                              chunk_overlap=64)
  text-splitter-markdown  semantic-text-splitter MarkdownSplitter.from_tiktoken_model(
                              "gpt-3.5-turbo" (= cl100k_base), capacity=350, overlap=52)
  fixed-400-200           LangChain TokenTextSplitter(encoding_name="cl100k_base",
                              chunk_size=400, chunk_overlap=200)  (token windows, stride 200)
  fixed-250-125           the same at 250/125

Writes one JSONL file per configuration, <out>/<peer>.jsonl, one line per
chunk in document order (documents in sorted file-name order):
  {"document": "<file name in documents/>", "text": "<chunk as the peer made it>",
   "start": S, "end": E}
start/end are Unicode code point offsets (Python str indices) into the
document as read. They are found here, not taken from the peer:

* exact: the chunk text is searched in the document. Chunks come in order
  and may overlap the previous one but always add something past its end, so
  the first occurrence that starts after the previous chunk's start and ends
  after its end is taken; failing that, the first after the previous start,
  then the first from 0 (the latter two have not been needed on our data
  sets). When found, doc[start:end] == text. (Searching only from the
  previous start + 1 put short repeated chunks such as ":::" or a repeated
  code line at an earlier copy inside the previous chunk.)
* aligned: otherwise (LangChain's header splitter strips lines, drops
  non-printable characters and rejoins lines with "  \\n"; token windows that
  cut a UTF-8 sequence decode to U+FFFD), the chunk and the document are
  compared as sequences of visible characters only (not str.isspace(), and
  str.isprintable()), with U+FFFD runs at the chunk's ends dropped, and
  searched the same way; start/end are the document span from the first to
  the last matched character (a character cut by a token window, decoded as
  U+FFFD, is left out of the span). `text` stays as the peer made it, so
  doc[start:end] != text there.
* unmapped: if that fails too, the line has no start/end.

Also writes <out>/manifest.json (versions, configurations, counts) and prints
per peer: documents, chunks, exact / aligned / unmapped, seconds (the peer's
splitting time only, not the offset search).

Usage (from the repository root, after scripts/peers/setup-venv.sh):
  nice -n 10 .venv-peers/bin/python scripts/peers/eval_peers.py --all-datasets
  nice -n 10 .venv-peers/bin/python scripts/peers/eval_peers.py --dataset eval/retrieval \\
      [--out DIR] [--peer NAME ...]
--out defaults to target/peers/{dataset} ({dataset} is replaced by the data
set directory's name); with several data sets and an --out without
{dataset}, /{dataset} is appended. Nothing is downloaded: tiktoken uses the
offline cache (scripts/peers/tiktoken_offline.py), LlamaIndex uses the NLTK
data bundled in its wheel, chonkie gets a tiktoken Encoding object (a name
string would make it fetch a tokenizer from the Hugging Face hub), and
semantic-text-splitter has its BPE data compiled in. (Checked by running the
whole script under `unshare -n`, with no network at all.)
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import sys
import time
from importlib import metadata

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiktoken_offline  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ALL_DATASETS = ["eval/retrieval", "eval/retrieval-plain", "eval/boundaries"]
REPLACEMENT = "\ufffd"

# name -> (description, packages whose versions matter)
PEERS: dict[str, tuple[str, list[str]]] = {
    "langchain-recursive": (
        'RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base", '
        "chunk_size=1000, chunk_overlap=200)",
        ["langchain-text-splitters", "tiktoken"],
    ),
    "langchain-markdown": (
        'MarkdownHeaderTextSplitter(headers_to_split_on=[("#","h1"),("##","h2"),("###","h3")], '
        "strip_headers=False), then RecursiveCharacterTextSplitter.from_tiktoken_encoder("
        'encoding_name="cl100k_base", chunk_size=350, chunk_overlap=52) on each section',
        ["langchain-text-splitters", "tiktoken"],
    ),
    "llamaindex-sentence": (
        "SentenceSplitter(chunk_size=512, chunk_overlap=64, tokenizer=cl100k_base encode "
        '(allowed_special="all")).split_text, NLTK punkt data bundled in llama-index-core',
        ["llama-index-core", "nltk", "tiktoken"],
    ),
    "chonkie-recursive": (
        "RecursiveChunker(tokenizer=tiktoken cl100k_base Encoding, chunk_size=512), default RecursiveRules",
        ["chonkie", "chonkie-core", "tiktoken"],
    ),
    "chonkie-token": (
        "TokenChunker(tokenizer=tiktoken cl100k_base Encoding, chunk_size=512, chunk_overlap=64)",
        ["chonkie", "chonkie-core", "tiktoken"],
    ),
    "text-splitter-markdown": (
        'MarkdownSplitter.from_tiktoken_model("gpt-3.5-turbo", capacity=350, overlap=52) '
        "(cl100k_base, trim=True)",
        ["semantic-text-splitter"],
    ),
    "fixed-400-200": (
        'TokenTextSplitter(encoding_name="cl100k_base", chunk_size=400, chunk_overlap=200)',
        ["langchain-text-splitters", "tiktoken"],
    ),
    "fixed-250-125": (
        'TokenTextSplitter(encoding_name="cl100k_base", chunk_size=250, chunk_overlap=125)',
        ["langchain-text-splitters", "tiktoken"],
    ),
    # The configurations that win at equal context on the public token-level
    # retrieval benchmark (docs/evaluation.md): small recursive chunks.
    "recursive-200-0": (
        'RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base", '
        "chunk_size=200, chunk_overlap=0)",
        ["langchain-text-splitters", "tiktoken"],
    ),
    "recursive-250-125": (
        'RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base", '
        "chunk_size=250, chunk_overlap=125)",
        ["langchain-text-splitters", "tiktoken"],
    ),
}


def make_splitter(name: str):
    """Return a function str -> list[str] for the named peer configuration."""
    if name in ("langchain-recursive", "recursive-200-0", "recursive-250-125"):
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        size, overlap = {
            "langchain-recursive": (1000, 200),
            "recursive-200-0": (200, 0),
            "recursive-250-125": (250, 125),
        }[name]
        s = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=size, chunk_overlap=overlap
        )
        return s.split_text
    if name == "langchain-markdown":
        from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

        headers = MarkdownHeaderTextSplitter(
            headers_to_split_on=[("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False
        )
        rec = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=350, chunk_overlap=52
        )

        def split(text: str) -> list[str]:
            out: list[str] = []
            for section in headers.split_text(text):
                out.extend(rec.split_text(section.page_content))
            return out

        return split
    if name == "llamaindex-sentence":
        from functools import partial

        import tiktoken
        from llama_index.core.node_parser import SentenceSplitter

        enc = tiktoken.get_encoding("cl100k_base")
        # The same call llama_index.core.utils.get_tokenizer makes, but with
        # the cl100k_base encoding from our offline cache (its default
        # would look up "gpt-3.5-turbo" with its own cache directory).
        s = SentenceSplitter(chunk_size=512, chunk_overlap=64, tokenizer=partial(enc.encode, allowed_special="all"))
        return s.split_text
    if name in ("chonkie-recursive", "chonkie-token"):
        import tiktoken
        from chonkie import RecursiveChunker, TokenChunker

        # An Encoding object, not the string "cl100k_base": chonkie 1.7 loads
        # tokenizer names through tokie's from_pretrained (a hub download).
        enc = tiktoken.get_encoding("cl100k_base")
        if name == "chonkie-recursive":
            c = RecursiveChunker(tokenizer=enc, chunk_size=512)
        else:
            c = TokenChunker(tokenizer=enc, chunk_size=512, chunk_overlap=64)
        assert type(c.tokenizer).__name__ == "TiktokenAutoTokenizer", type(c.tokenizer)
        return lambda text: [ch.text for ch in c.chunk(text)]
    if name == "text-splitter-markdown":
        from semantic_text_splitter import MarkdownSplitter

        s = MarkdownSplitter.from_tiktoken_model("gpt-3.5-turbo", 350, overlap=52)
        return s.chunks
    if name in ("fixed-400-200", "fixed-250-125"):
        from langchain_text_splitters import TokenTextSplitter

        size, overlap = (400, 200) if name == "fixed-400-200" else (250, 125)
        s = TokenTextSplitter(encoding_name="cl100k_base", chunk_size=size, chunk_overlap=overlap)
        return s.split_text
    raise KeyError(name)


def _visible(ch: str) -> bool:
    return not ch.isspace() and ch.isprintable()


class Locator:
    """Finds chunk spans in one document (see the module docstring)."""

    def __init__(self, doc: str) -> None:
        self.doc = doc
        pos = [i for i, ch in enumerate(doc) if _visible(ch)]
        self.key = "".join(doc[i] for i in pos)
        self.pos = pos  # key index -> doc index
        self.prev: tuple[int, int] | None = None  # previous chunk's (start, end)
        self.fallbacks = 0  # chunks placed by the 2nd or 3rd search

    def _find(self, hay: str, needle: str, prev: tuple[int, int] | None) -> int:
        """First occurrence that starts after prev's start and ends after
        prev's end, else first after prev's start, else first; -1 if none."""
        if prev is None:
            return hay.find(needle)
        starts = [max(prev[0] + 1, prev[1] - len(needle) + 1), prev[0] + 1, 0]
        for i, start in enumerate(starts):
            at = hay.find(needle, start)
            if at >= 0:
                self.fallbacks += i > 0
                return at
        return -1

    def locate(self, text: str) -> tuple[str, int | None, int | None]:
        """(kind, start, end), kind one of exact / aligned / unmapped."""
        if text:
            start = self._find(self.doc, text, self.prev)
            if start >= 0:
                self.prev = (start, start + len(text))
                return "exact", start, start + len(text)
        key = "".join(ch for ch in text if _visible(ch)).strip(REPLACEMENT)
        if not key:
            return "unmapped", None, None
        kprev = None
        if self.prev is not None:
            # key indices of the previous span: first visible char at or
            # after its start, one past its last visible char
            kprev = (bisect.bisect_left(self.pos, self.prev[0]), bisect.bisect_left(self.pos, self.prev[1]))
        k = self._find(self.key, key, kprev)
        if k < 0:
            return "unmapped", None, None
        start, end = self.pos[k], self.pos[k + len(key) - 1] + 1
        self.prev = (start, end)
        return "aligned", start, end


def version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def run_dataset(dataset: str, out_dir: str, peers: list[str]) -> dict:
    doc_dir = os.path.join(dataset, "documents")
    names = sorted(n for n in os.listdir(doc_dir) if n.endswith(".md"))
    docs = []
    for n in names:
        with open(os.path.join(doc_dir, n), "rb") as f:
            docs.append((n, f.read().decode("utf-8")))
    os.makedirs(out_dir, exist_ok=True)
    ds_name = os.path.basename(os.path.normpath(dataset))
    print(f"== {ds_name}: {len(docs)} documents from {os.path.relpath(doc_dir, ROOT)} -> {os.path.relpath(out_dir, ROOT)}")
    results = {}
    for peer in peers:
        split = make_splitter(peer)
        counts = {"documents": len(docs), "chunks": 0, "exact": 0, "aligned": 0, "unmapped": 0, "fallbacks": 0}
        seconds = 0.0
        unmapped_examples = []
        path = os.path.join(out_dir, f"{peer}.jsonl")
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8", newline="\n") as out:
            for doc_name, doc in docs:
                t0 = time.perf_counter()
                chunks = split(doc)
                seconds += time.perf_counter() - t0
                loc = Locator(doc)
                for text in chunks:
                    kind, start, end = loc.locate(text)
                    counts["chunks"] += 1
                    counts[kind] += 1
                    rec: dict = {"document": doc_name, "text": text}
                    if kind != "unmapped":
                        rec["start"], rec["end"] = start, end
                    elif len(unmapped_examples) < 3:
                        unmapped_examples.append((doc_name, text[:80]))
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                counts["fallbacks"] += loc.fallbacks
        os.replace(tmp, path)
        counts["seconds"] = round(seconds, 3)
        results[peer] = counts
        print(
            f"{peer:24} documents {counts['documents']:4}  chunks {counts['chunks']:6}  "
            f"exact {counts['exact']:6}  aligned {counts['aligned']:5}  unmapped {counts['unmapped']:4}  "
            f"{seconds:8.2f} s"
            + (f"  ({counts['fallbacks']} placed by a fallback search)" if counts["fallbacks"] else "")
        )
        for doc_name, snippet in unmapped_examples:
            print(f"    unmapped in {doc_name}: {snippet!r}")
    manifest = {
        "dataset": ds_name,
        "documents": names,
        "offsets": "Unicode code points (Python str indices) into the document decoded from UTF-8 as read",
        "peers": {
            p: {"config": PEERS[p][0], "versions": {pkg: version(pkg) for pkg in PEERS[p][1]}, **results[p]}
            for p in peers
        },
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", default=[], help="data set directory (repeatable)")
    ap.add_argument("--all-datasets", action="store_true", help=f"both of {ALL_DATASETS}")
    ap.add_argument("--out", help="output directory (default target/peers/{dataset})")
    ap.add_argument("--peer", action="append", choices=list(PEERS), help="only these peers (repeatable)")
    args = ap.parse_args()

    datasets = list(args.dataset)
    if args.all_datasets:
        datasets += [os.path.join(ROOT, d) for d in ALL_DATASETS]
    if not datasets:
        ap.error("give --dataset DIR or --all-datasets")
    peers = args.peer or list(PEERS)
    out = args.out or os.path.join(ROOT, "target", "peers", "{dataset}")
    if "{dataset}" not in out and len(datasets) > 1:
        out = os.path.join(out, "{dataset}")

    tiktoken_offline.setup()
    import tiktoken

    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]

    for pkg in sorted({p for name in peers for p in PEERS[name][1]}):
        print(f"{pkg}=={version(pkg)}")
    for dataset in datasets:
        dataset = os.path.abspath(dataset)
        name = os.path.basename(os.path.normpath(dataset))
        run_dataset(dataset, os.path.abspath(out.replace("{dataset}", name)), peers)


if __name__ == "__main__":
    main()
