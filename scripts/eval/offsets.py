#!/usr/bin/env python3
"""Turn hand-picked segment starts into a boundaries.jsonl line.

    python3 scripts/eval/offsets.py eval/boundaries/documents/real-en-foo.md \\
        "## Second topic" "Third topic starts with this paragraph"

Each argument is the first characters of a segment (2..n) as they appear in
the document. It must occur exactly once in the document and at the start of
a line; the script prints the code point offset of each, the line it points
at, and then the JSON line to paste into eval/boundaries/boundaries.jsonl
(kind "annotated"; --lang defaults to the one in the file name). It exits
non-zero if a snippet is missing, ambiguous or not at a line start.
"""

import argparse
import json
import os
import re
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("document", help="path of the document (in eval/boundaries/documents/)")
    ap.add_argument("snippets", nargs="+", help="first characters of each segment after the first")
    ap.add_argument("--lang", choices=("en", "ru"), help="language (default: from real-<lang>-*.md)")
    args = ap.parse_args(argv)
    with open(args.document, "rb") as f:
        doc = f.read().decode("utf-8")
    name = os.path.basename(args.document)
    lang = args.lang
    if lang is None:
        m = re.match(r"(?:real|choi)-(en|ru)-", name)
        if not m:
            sys.exit("offsets: cannot tell the language from the file name; pass --lang")
        lang = m.group(1)
    bad = False
    offsets = []
    for snip in args.snippets:
        n = doc.count(snip)
        if n != 1:
            print(f"offsets: {snip!r} occurs {n} times (must be exactly once)", file=sys.stderr)
            bad = True
            continue
        off = doc.index(snip)
        if off == 0 or doc[off - 1] != "\n":
            print(f"offsets: {snip!r} (offset {off}) is not at the start of a line", file=sys.stderr)
            bad = True
            continue
        line = doc.count("\n", 0, off) + 1
        print(f"{off:>7}  line {line:>4}  {doc[off:doc.find(chr(10), off)][:70]}", file=sys.stderr)
        offsets.append(off)
    if offsets != sorted(offsets):
        print("offsets: snippets are not in document order", file=sys.stderr)
        bad = True
    if bad:
        return 1
    print(json.dumps({"document": name, "lang": lang, "kind": "annotated", "boundaries": offsets}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
