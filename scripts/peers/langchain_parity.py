#!/usr/bin/env python3
"""Generate the LangChain RecursiveCharacterTextSplitter parity fixtures.

For each document listed in scripts/peers/parity-docs.txt (paths relative to
the corpus root):

1. normalize it with our CLI (`$CHUNK_WORKER normalize FILE`, stdout as
   UTF-8), so LangChain and our port see the same text;
2. strip YAML/TOML front matter with `front_matter_len` (a port of
   shared/src/normalize/mod.rs's function of that name); the rest is `body`;
3. split `body` with LangChain in two configurations:
   - default:  RecursiveCharacterTextSplitter.from_tiktoken_encoder(
                   encoding_name="cl100k_base", chunk_size=1000, chunk_overlap=200)
   - markdown: the same with separators=get_separators_for_language(Language.MARKDOWN)
               and is_separator_regex=True.

Writes shared/tests/fixtures/langchain/recursive.jsonl, one JSON object per
(document, config), default first for each document:
  {"document", "config", "chunk_size", "chunk_overlap", "text": body, "chunks": [...]}

The length function is LangChain's own: `from_tiktoken_encoder` builds
`len(enc.encode(text, allowed_special=set(), disallowed_special="all"))`
(langchain_text_splitters/base.py, TextSplitter._tiktoken_length_function;
`disallowed_special="all"` means a text containing e.g. "<|endoftext|>"
raises ValueError; none of the listed documents contains a special token).
tiktoken works offline through scripts/peers/tiktoken_offline.py.

Usage (from the repository root, after scripts/peers/setup-venv.sh and a
debug build of the CLI):
  .venv-peers/bin/python scripts/peers/langchain_parity.py
Options: --corpus DIR (default ../shared/corpus), --docs FILE, --out FILE.
Environment: CHUNK_WORKER (default target/debug/chunk-worker); the script
waits for it to appear (polling every 60 s, up to --wait-min minutes, 40).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiktoken_offline  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CHUNK_SIZE = 1000
CHUNK_OVERLAP = 200


def front_matter_len(text: str) -> int:
    """Length (in str characters) of the YAML/TOML front matter at the start
    of `text`, 0 if none. Same logic as shared/src/normalize/mod.rs
    `front_matter_len` (which counts bytes; here we count characters and
    slice the str, which is equivalent)."""
    if text.startswith("---\n"):
        fence, closers = "---", ("---", "...")
    elif text.startswith("+++\n"):
        fence, closers = "+++", ("+++",)
    else:
        return 0
    # str.split_inclusive('\n'): pieces ending in "\n", plus a last piece
    # without one. (Not str.splitlines, which also splits on \x0b, \u2028...)
    lines = re.findall(r"[^\n]*\n|[^\n]+", text[len(fence) + 1 :])
    first = lines[0] if lines else ""
    key_len = 0
    for ch in first:
        if ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9") or ch in "_-":
            key_len += 1
        else:
            break
    after_key = first[key_len:].lstrip(" ")
    if key_len == 0 or not (after_key.startswith(":") or (fence == "+++" and after_key.startswith("="))):
        return 0
    end = len(fence) + 1 + len(first)
    for line in lines[1:]:
        end += len(line)
        # Rust's str::trim_end strips Unicode White_Space; so does str.rstrip()
        # (Python also counts \x1c-\x1f, which never end a fence line here).
        if line.rstrip() in closers:
            return end
    return 0


def wait_for(path: str, minutes: float) -> None:
    deadline = time.monotonic() + minutes * 60
    while not os.path.exists(path):
        if time.monotonic() >= deadline:
            raise SystemExit(f"{path} did not appear within {minutes} minutes (build the CLI: cargo build)")
        print(f"waiting for {path} ...", file=sys.stderr)
        time.sleep(60)


def normalize(binary: str, path: str) -> str:
    out = subprocess.run([binary, "normalize", path], check=True, stdout=subprocess.PIPE).stdout
    return out.decode("utf-8")


def splitters():
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    default = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base", chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP
    )
    markdown = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base",
        chunk_size=CHUNK_SIZE,
        chunk_overlap=CHUNK_OVERLAP,
        separators=RecursiveCharacterTextSplitter.get_separators_for_language(Language.MARKDOWN),
        is_separator_regex=True,
    )
    return [("default", default), ("markdown", markdown)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--docs", default=os.path.join(ROOT, "scripts", "peers", "parity-docs.txt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "shared", "tests", "fixtures", "langchain", "recursive.jsonl"))
    ap.add_argument("--wait-min", type=float, default=40.0)
    args = ap.parse_args()

    tiktoken_offline.setup()
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]

    binary = os.environ.get("CHUNK_WORKER") or os.path.join(ROOT, "target", "debug", "chunk-worker")
    wait_for(binary, args.wait_min)

    with open(args.docs, encoding="utf-8") as f:
        docs = [line.strip() for line in f if line.strip() and not line.startswith("#")]

    configs = splitters()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    n_chunks = {name: 0 for name, _ in configs}
    over: dict[str, list[tuple[str, int]]] = {name: [] for name, _ in configs}
    input_bytes = 0
    with open(args.out, "w", encoding="utf-8", newline="\n") as out:
        for doc in docs:
            path = os.path.join(args.corpus, doc)
            input_bytes += os.path.getsize(path)
            text = normalize(binary, path)
            body = text[front_matter_len(text) :]
            for name, splitter in configs:
                chunks = splitter.split_text(body)
                n_chunks[name] += len(chunks)
                for c in chunks:
                    # LangChain sums the token counts of the pieces it merges;
                    # count the whole chunk to see where that differs.
                    n = len(enc.encode(c, allowed_special=set(), disallowed_special="all"))
                    if n > CHUNK_SIZE:
                        over[name].append((doc, n))
                record = {
                    "document": doc,
                    "config": name,
                    "chunk_size": CHUNK_SIZE,
                    "chunk_overlap": CHUNK_OVERLAP,
                    "text": body,
                    "chunks": chunks,
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")

    size = os.path.getsize(args.out)
    print(f"documents: {len(docs)} ({input_bytes} input bytes)")
    for name, _ in configs:
        print(f"{name}: {n_chunks[name]} chunks; {len(over[name])} exceed {CHUNK_SIZE} cl100k tokens when re-counted whole")
        for doc, n in over[name]:
            print(f"  {doc}: {n}")
    print(f"wrote {os.path.relpath(args.out, ROOT)} ({size} bytes)")
    if size > 3 * 1024 * 1024:
        print("warning: fixture is over 3 MB; drop documents from the list", file=sys.stderr)


if __name__ == "__main__":
    main()
