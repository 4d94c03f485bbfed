#!/usr/bin/env python3
"""Check eval/boundaries/boundaries.jsonl against eval/boundaries/documents/.

For every line of boundaries.jsonl:
  * it is a JSON object with exactly the keys document, lang, kind, boundaries;
    lang is "en" or "ru", kind is "choi" or "annotated";
  * the document exists in documents/, decodes as UTF-8, and is named
    choi-<lang>-NNN.md (kind choi) or real-<lang>-<name>.md (kind annotated);
  * no document has two lines, and every documents/*.md has a line;
  * boundaries is a list of integers, strictly increasing, each within
    1..len(doc)-1 (code points), each at the first character of a non-blank
    line (the character before it is "\\n") and not inside a fenced code block;
  * choi documents (when the corpus is available) are byte-identical to what
    scripts/eval/make_choi.py generates, with the same boundaries, and every
    generated document is present;
  * every annotated document has a row in SOURCES.md (`| `<document>` |
    <source> | ...`); when the source cell is a corpus path (`en/...` or
    `ru/...`) and the corpus is available, the document is byte-identical to
    that corpus file.

`--show DOCUMENT` prints the line each boundary points at, to review an
annotation. Problems are printed as `file:line: message`; the exit status is 1 if there
were any. Python 3 standard library only.
"""

import argparse
import importlib.util
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
KEYS = {"document", "lang", "kind", "boundaries"}


def load_make_choi():
    sys.dont_write_bytecode = True  # no __pycache__ next to the scripts
    spec = importlib.util.spec_from_file_location("make_choi", os.path.join(HERE, "make_choi.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fence_line_starts(mc, text):
    """Offsets of line starts that lie inside a fenced code block (fence lines included)."""
    lines = mc.split_lines(text)
    start = mc.front_matter_end(lines)
    info = mc.classify(lines, start)
    inside = set()
    pos = sum(len(line) for line in lines[:start])
    for line, (kind, _, _) in zip(lines[start:], info):
        if kind == "fence":
            inside.add(pos)
        pos += len(line)
    return inside


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="eval/boundaries", help="dataset folder (relative to the repo root)")
    ap.add_argument("--corpus", default="../shared/corpus", help="corpus root (relative to the repo root)")
    ap.add_argument("--seed", type=int, default=42, help="seed make_choi.py was run with")
    ap.add_argument(
        "--require-corpus",
        action="store_true",
        help="fail (instead of skipping the regeneration checks) when the corpus is missing",
    )
    ap.add_argument(
        "--show",
        metavar="DOCUMENT",
        action="append",
        default=[],
        help="also print the line each boundary of DOCUMENT points at (for reviewing annotations); repeatable",
    )
    args = ap.parse_args(argv)
    data = os.path.normpath(os.path.join(REPO_ROOT, args.data))
    corpus = os.path.normpath(os.path.join(REPO_ROOT, args.corpus))
    jsonl = os.path.join(data, "boundaries.jsonl")
    doc_dir = os.path.join(data, "documents")
    rel_jsonl = os.path.relpath(jsonl, REPO_ROOT)
    mc = load_make_choi()

    problems = []

    def problem(where, msg):
        problems.append(f"{where}: {msg}")

    if not os.path.exists(jsonl):
        print(f"{rel_jsonl}: missing", file=sys.stderr)
        return 1
    with open(jsonl, "rb") as f:
        raw_lines = f.read().decode("utf-8").split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()

    entries = {}  # document -> (lineno, obj, text)
    n_boundaries = 0
    by_kind = {}
    for lineno, raw in enumerate(raw_lines, 1):
        where = f"{rel_jsonl}:{lineno}"
        try:
            obj = json.loads(raw)
        except ValueError as e:
            problem(where, f"not JSON ({e})")
            continue
        if not isinstance(obj, dict) or set(obj) != KEYS:
            problem(where, f"expected an object with keys {sorted(KEYS)}")
            continue
        name, lang, kind, bounds = obj["document"], obj["lang"], obj["kind"], obj["boundaries"]
        where = f"{where} ({name})"
        if lang not in ("en", "ru"):
            problem(where, f"lang {lang!r} is not 'en' or 'ru'")
        if kind not in ("choi", "annotated"):
            problem(where, f"kind {kind!r} is not 'choi' or 'annotated'")
        if not isinstance(name, str) or "/" in name or not name.endswith(".md"):
            problem(where, "document must be a .md file name in documents/")
            continue
        if kind == "choi" and not re.fullmatch(rf"choi-{lang}-\d{{3}}\.md", name):
            problem(where, f"a choi document of lang {lang} must be named choi-{lang}-NNN.md")
        if kind == "annotated" and not re.fullmatch(rf"real-{lang}-[a-z0-9][a-z0-9.-]*\.md", name):
            problem(where, f"an annotated document of lang {lang} must be named real-{lang}-<short-name>.md")
        if name in entries:
            problem(where, f"document already listed on line {entries[name][0]}")
            continue
        path = os.path.join(doc_dir, name)
        if not os.path.isfile(path):
            problem(where, f"document {os.path.relpath(path, REPO_ROOT)} does not exist")
            continue
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8")
        except UnicodeDecodeError as e:
            problem(where, f"document is not UTF-8 ({e})")
            continue
        entries[name] = (lineno, obj, text)
        by_kind[(kind, lang)] = by_kind.get((kind, lang), 0) + 1
        if not isinstance(bounds, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            problem(where, "boundaries must be a list of integers")
            continue
        if not bounds:
            problem(where, "no boundaries (a document with one segment tells nothing)")
        n_boundaries += len(bounds)
        in_fence = fence_line_starts(mc, text)
        prev = 0
        for b in bounds:
            if b <= prev:
                problem(where, f"boundary {b} is not greater than {prev} (must be strictly increasing, never 0)")
            prev = max(prev, b)
            if not (1 <= b < len(text)):
                problem(where, f"boundary {b} is outside 1..{len(text) - 1}")
                continue
            if text[b - 1] != "\n":
                line = text.count("\n", 0, b) + 1
                problem(where, f"boundary {b} (document line {line}) is not at the start of a line")
            elif text[b] == "\n":
                line = text.count("\n", 0, b) + 1
                problem(where, f"boundary {b} (document line {line}) is at a blank line")
            elif b in in_fence:
                line = text.count("\n", 0, b) + 1
                problem(where, f"boundary {b} (document line {line}) is inside a fenced code block")

    for name in sorted(os.listdir(doc_dir)) if os.path.isdir(doc_dir) else []:
        if name.endswith(".md") and name not in entries:
            problem(os.path.relpath(os.path.join(doc_dir, name), REPO_ROOT), f"has no line in {rel_jsonl}")

    have_corpus = os.path.isdir(os.path.join(corpus, "en")) and os.path.isdir(os.path.join(corpus, "ru"))
    # annotated documents: a SOURCES.md row each; byte copies of the corpus file it names
    sources_path = os.path.join(data, "SOURCES.md")
    sources = ""
    if os.path.exists(sources_path):
        with open(sources_path, "rb") as f:
            sources = f.read().decode("utf-8")
    for name, (lineno, obj, text) in sorted(entries.items()):
        if obj["kind"] != "annotated":
            continue
        where = f"{rel_jsonl}:{lineno} ({name})"
        m = re.search(r"^\|\s*`" + re.escape(name) + r"`\s*\|([^|\n]*)\|", sources, re.M)
        if not m:
            problem(where, "no row `| `<document>` | <source> | ...` for it in SOURCES.md (say where it comes from)")
            continue
        src_cell = m.group(1).strip()
        pm = re.fullmatch(r"`((?:en|ru)/[^`]+)`", src_cell)
        if not pm:
            continue  # not a corpus file (a user's own document): nothing to compare
        if not have_corpus:
            continue
        src = os.path.join(corpus, pm.group(1))
        if not os.path.isfile(src):
            problem(where, f"corpus file {pm.group(1)} (from SOURCES.md) does not exist")
            continue
        with open(src, "rb") as f, open(os.path.join(doc_dir, name), "rb") as g:
            if f.read() != g.read():
                problem(where, f"not a byte-for-byte copy of {pm.group(1)}")

    if not have_corpus:
        msg = f"corpus not found at {corpus}: choi regeneration and real-document byte checks skipped"
        if args.require_corpus:
            problem(rel_jsonl, msg)
        else:
            print(f"note: {msg}")
    else:
        # choi documents: identical to the generator's output
        generated = {d["name"]: d for d in mc.generate(corpus, args.seed)}
        for name, d in sorted(generated.items()):
            if name not in entries:
                problem(rel_jsonl, f"{name}: generated by make_choi.py (seed {args.seed}) but not listed")
                continue
            lineno, obj, text = entries[name]
            where = f"{rel_jsonl}:{lineno} ({name})"
            if obj["kind"] != "choi" or obj["lang"] != d["lang"]:
                problem(where, f"expected kind choi, lang {d['lang']}")
            if text != d["text"]:
                problem(where, "document text differs from make_choi.py output (rerun the script)")
            if obj["boundaries"] != d["boundaries"]:
                problem(where, f"boundaries differ from make_choi.py output {d['boundaries']}")
        for name, (lineno, obj, _) in sorted(entries.items()):
            if obj["kind"] == "choi" and name not in generated:
                problem(f"{rel_jsonl}:{lineno} ({name})", f"not produced by make_choi.py (seed {args.seed})")

    for name in args.show:
        if name not in entries:
            problem(rel_jsonl, f"--show {name}: no such document in {rel_jsonl}")
            continue
        _, obj, text = entries[name]
        print(f"{name} ({obj['kind']}, {obj['lang']}, {len(text)} code points, {len(obj['boundaries'])} boundaries):")
        for b in obj["boundaries"]:
            if isinstance(b, int) and 0 <= b < len(text):
                end = text.find("\n", b)
                line = text[b:end if end >= 0 else len(text)]
                print(f"  {b:>7}  line {text.count(chr(10), 0, b) + 1:>4}  {line[:90]}")

    for p in problems:
        print(p, file=sys.stderr)
    counts = ", ".join(f"{k} {l}: {n}" for (k, l), n in sorted(by_kind.items()))
    status = "FAILED" if problems else "OK"
    print(f"check_boundaries: {status}: {len(entries)} documents ({counts}), {n_boundaries} boundaries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
