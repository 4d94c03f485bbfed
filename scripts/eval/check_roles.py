#!/usr/bin/env python3
"""Check eval/clinical/roles.jsonl against eval/clinical/documents/ and print counts.

For every line of roles.jsonl:
  * it is a JSON object with the keys id, document, start, end, text, role,
    section, split (and optionally lang); no other keys;
  * id is a unique non-empty string; role is one of the nine roles;
    split is "dev" or "test"; lang, when present, is "en" or "ru";
  * the document exists in documents/ and decodes as UTF-8; start and end are
    integers with 0 <= start < end <= len(doc) in Unicode code points (Python
    str indices, end exclusive), and doc[start:end] == text;
  * text has no leading or trailing whitespace;
  * section is the text of the nearest Markdown heading (ATX) above start, or
    "" when there is none;
  * within a document the units are in document order and do not overlap, and
    every line of a document has the same split.

Over the whole file:
  * every documents/*.md has at least one line, and a row in SOURCES.tsv;
  * coverage (unless --no-coverage): the units of each document are exactly
    the units eval/clinical/segment.py finds (every sentence, list item and
    table labelled once, nothing else);
  * every role except general has at least --min examples (default 20).

Prints counts per role and split, per document, then problems as
`file:line: message`; the exit status is 1 if there were any problems.
Python 3 standard library only.

    python3 scripts/eval/check_roles.py [--data eval/clinical] [--min 20] [--no-coverage]
"""

import argparse
import collections
import importlib.util
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ROLES = ["pico_population", "pico_intervention", "pico_comparison", "pico_outcome",
         "eligibility", "endpoint", "adverse_event", "dose_regimen", "general"]
REQUIRED = {"id", "document", "start", "end", "text", "role", "section", "split"}
OPTIONAL = {"lang"}
SPLITS = ("dev", "test")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def load_segment(data_dir):
    path = os.path.join(data_dir, "segment.py")
    if not os.path.exists(path):
        return None
    sys.dont_write_bytecode = True  # no __pycache__ next to the data
    spec = importlib.util.spec_from_file_location("clinical_segment", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def heading_index(doc):
    """Sorted (offset of line start, heading text) for every ATX heading line."""
    out = []
    pos = 0
    for line in doc.splitlines(keepends=True):
        m = HEADING.match(line.rstrip("\n"))
        if m:
            out.append((pos, m.group(2)))
        pos += len(line)
    return out


def section_at(headings, offset):
    sec = ""
    for pos, text in headings:
        if pos > offset:
            break
        sec = text
    return sec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO_ROOT, "eval", "clinical"),
                    help="dataset folder with roles.jsonl, documents/ and SOURCES.tsv")
    ap.add_argument("--min", type=int, default=20, help="minimum examples per non-general role")
    ap.add_argument("--no-coverage", action="store_true", help="skip the comparison with segment.py")
    args = ap.parse_args(argv)

    data = args.data
    gold = os.path.join(data, "roles.jsonl")
    docs_dir = os.path.join(data, "documents")
    rel = os.path.relpath(gold, os.getcwd())
    problems = []

    def bad(line_no, msg):
        problems.append(f"{rel}:{line_no}: {msg}")

    docs = {}
    if os.path.isdir(docs_dir):
        for name in sorted(os.listdir(docs_dir)):
            if name.endswith(".md"):
                try:
                    with open(os.path.join(docs_dir, name), encoding="utf-8", newline="") as f:
                        docs[name] = f.read()
                except UnicodeDecodeError as e:
                    problems.append(f"{os.path.join(docs_dir, name)}:0: not UTF-8: {e}")
    else:
        problems.append(f"{docs_dir}:0: no documents folder")
    headings = {name: heading_index(text) for name, text in docs.items()}

    rows = []
    ids = set()
    try:
        fh = open(gold, encoding="utf-8")
    except OSError as e:
        print(f"{rel}:0: cannot open: {e}")
        return 1
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                bad(n, "empty line")
                continue
            try:
                o = json.loads(line)
            except json.JSONDecodeError as e:
                bad(n, f"not JSON: {e}")
                continue
            if not isinstance(o, dict):
                bad(n, "not a JSON object")
                continue
            keys = set(o)
            if REQUIRED - keys:
                bad(n, f"missing keys: {sorted(REQUIRED - keys)}")
                continue
            if keys - REQUIRED - OPTIONAL:
                bad(n, f"unknown keys: {sorted(keys - REQUIRED - OPTIONAL)}")
            if not isinstance(o["id"], str) or not o["id"]:
                bad(n, "id must be a non-empty string")
            elif o["id"] in ids:
                bad(n, f"duplicate id {o['id']!r}")
            else:
                ids.add(o["id"])
            if o["role"] not in ROLES:
                bad(n, f"unknown role {o['role']!r}")
            if o["split"] not in SPLITS:
                bad(n, f"split must be one of {SPLITS}, not {o['split']!r}")
            if "lang" in o and o["lang"] not in ("en", "ru"):
                bad(n, f"lang must be 'en' or 'ru', not {o['lang']!r}")
            doc = docs.get(o["document"])
            if doc is None:
                bad(n, f"unknown document {o['document']!r}")
                continue
            s, e = o["start"], o["end"]
            if not (isinstance(s, int) and isinstance(e, int)) or isinstance(s, bool) or isinstance(e, bool):
                bad(n, "start and end must be integers")
                continue
            if not (0 <= s < e <= len(doc)):
                bad(n, f"offsets {s}..{e} out of range (document has {len(doc)} code points)")
                continue
            if doc[s:e] != o["text"]:
                bad(n, f"text does not match document[{s}:{e}] = {doc[s:e][:60]!r}")
            if not isinstance(o["text"], str) or o["text"] != o["text"].strip():
                bad(n, "text has leading or trailing whitespace")
            want = section_at(headings[o["document"]], s)
            if o["section"] != want:
                bad(n, f"section {o['section']!r} but the heading above is {want!r}")
            rows.append((n, o))

    by_doc = collections.defaultdict(list)
    for n, o in rows:
        by_doc[o["document"]].append((n, o))
    for name, items in by_doc.items():
        splits = {o["split"] for _, o in items}
        if len(splits) > 1:
            bad(items[0][0], f"{name}: units in more than one split {sorted(splits)}")
        last_end = -1
        for n, o in items:
            if o["start"] < last_end:
                bad(n, f"{name}: unit starts at {o['start']}, before the end of the previous unit ({last_end}), or out of order")
            last_end = max(last_end, o["end"])
    for name in docs:
        if name not in by_doc:
            problems.append(f"{rel}:0: document {name} has no labelled units")

    # SOURCES.tsv
    src = os.path.join(data, "SOURCES.tsv")
    if os.path.exists(src):
        with open(src, encoding="utf-8") as f:
            listed = {line.split("\t", 1)[0] for line in f.read().splitlines()[1:] if line.strip()}
        for name in docs:
            if name not in listed:
                problems.append(f"{os.path.relpath(src, os.getcwd())}:0: no row for {name}")
    else:
        problems.append(f"{src}:0: missing")

    # coverage: exactly the segmenter's units
    if not args.no_coverage:
        seg = load_segment(data)
        if seg is None:
            problems.append(f"{data}/segment.py:0: missing (use --no-coverage to skip)")
        else:
            for name, doc in docs.items():
                want = {(u["start"], u["end"]) for u in seg.units(doc)}
                have = {(o["start"], o["end"]): n for n, o in by_doc.get(name, [])}
                for s, e in sorted(want - set(have)):
                    problems.append(f"{rel}:0: {name}: unit {s}..{e} not labelled: {doc[s:e][:60]!r}")
                for (s, e), n in sorted(have.items()):
                    if (s, e) not in want:
                        bad(n, f"{name}: {s}..{e} is not a unit of segment.py")

    # counts
    count = collections.Counter((o["role"], o["split"]) for _, o in rows)
    width = max(len(r) for r in ROLES)
    print(f"{'role':<{width}}  {'dev':>5}  {'test':>5}  {'all':>5}")
    for r in ROLES:
        d, t = count[(r, "dev")], count[(r, "test")]
        print(f"{r:<{width}}  {d:>5}  {t:>5}  {d + t:>5}")
    tot_d = sum(v for (r, s), v in count.items() if s == "dev")
    tot_t = sum(v for (r, s), v in count.items() if s == "test")
    print(f"{'total':<{width}}  {tot_d:>5}  {tot_t:>5}  {tot_d + tot_t:>5}")
    print()
    langs = collections.Counter(o.get("lang", "?") for _, o in rows)
    print("languages: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))
    print("documents:")
    for name in sorted(by_doc):
        items = by_doc[name]
        c = collections.Counter(o["role"] for _, o in items)
        roles = ", ".join(f"{r} {c[r]}" for r in ROLES if c[r])
        print(f"  {name} [{items[0][1]['split']}] {len(items)}: {roles}")
    for r in ROLES:
        if r != "general" and count[(r, "dev")] + count[(r, "test")] < args.min:
            problems.append(f"{rel}:0: role {r} has {count[(r, 'dev')] + count[(r, 'test')]} examples, fewer than {args.min}")

    if problems:
        print()
        for p in problems:
            print(p)
        print(f"\n{len(problems)} problem(s)")
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
