#!/usr/bin/env python3
"""Split a Markdown document into the units that eval/clinical/roles.jsonl labels.

A unit is a sentence of a paragraph or of a list item (the list marker is not
part of it), or a whole GFM table (all its lines). Headings, blank lines and
thematic breaks are not units; the heading a unit is under is its section.
Offsets are Unicode code point offsets into the file as given (Python str
indices), end exclusive. Python 3 standard library only.

    python3 eval/clinical/segment.py eval/clinical/documents/X.md   # prints the units
"""

import re
import sys

ABBREV = {"e.g.", "i.e.", "vs.", "al.", "approx.", "dr.", "no.", "fig.", "b.i.d.", "t.i.d.",
          "q.i.d.", "u.s.", "st.", "inc.", "ltd.", "ca.", "cf.", "vol.", "ref."}
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+")
TABLE = re.compile(r"^\s*\|")
# a sentence ends at . ! ? (optionally followed by closing quotes/brackets)
END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+)")


def sentence_spans(text, base):
    """(start, end) spans of the sentences of text; base is text's offset."""
    spans = []
    start = 0
    for m in END.finditer(text):
        end = m.end()
        rest = text[end:].lstrip()
        if not rest:
            continue
        word = text[:m.end()].split()[-1] if text[:m.end()].split() else ""
        if word.lstrip("([{\"“‘").lower() in ABBREV:
            continue
        if re.match(r"^[A-Z]\.$", word):        # initial: "J. Smith"
            continue
        if re.match(r"^\(?(i|ii|iii|iv|v|vi|vii|viii|ix|x)\.$", word):   # enumerator "ii."
            continue
        if re.search(r"\b(Table|Figure|Fig)\s+\d+[A-Za-z]?\.$", text[:m.end()]):   # "Table 1. Title"
            continue
        nxt = rest[0]
        if not (nxt.isupper() or nxt.isdigit() or nxt in "([\"'“‘•"):
            continue
        spans.append((start, end))
        start = end + (len(text[end:]) - len(rest))
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    out = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        seg = seg.strip()
        if seg:
            out.append((base + s + lead, base + s + lead + len(seg)))
    return out


def units(doc):
    """Yield dicts {start, end, text, section} in document order."""
    lines = doc.splitlines(keepends=True)
    offs = []
    pos = 0
    for line in lines:
        offs.append(pos)
        pos += len(line)
    section = ""
    i = 0
    n = len(lines)
    res = []

    def emit(s, e, sec):
        for a, b in sentence_spans(doc[s:e], s):
            res.append({"start": a, "end": b, "text": doc[a:b], "section": sec})

    while i < n:
        line = lines[i].rstrip("\n")
        if not line.strip() or re.match(r"^\s*([-*_])(\s*\1){2,}\s*$", line):
            i += 1
            continue
        h = HEADING.match(line)
        if h:
            section = h.group(2)
            i += 1
            continue
        if TABLE.match(line):
            j = i
            while j + 1 < n and TABLE.match(lines[j + 1]):
                j += 1
            s = offs[i] + (len(line) - len(line.lstrip()))
            e = offs[j] + len(lines[j].rstrip("\n").rstrip())
            res.append({"start": s, "end": e, "text": doc[s:e], "section": section})
            i = j + 1
            continue
        m = ITEM.match(line)
        # a block: this line plus following lines that are not blank, not a heading,
        # not a table and not a new list item
        j = i
        while j + 1 < n:
            nxt = lines[j + 1].rstrip("\n")
            if not nxt.strip() or HEADING.match(nxt) or TABLE.match(nxt) or ITEM.match(nxt):
                break
            j += 1
        s = offs[i] + (m.end() if m else len(line) - len(line.lstrip()))
        e = offs[j] + len(lines[j].rstrip("\n"))
        emit(s, e, section)
        i = j + 1
    return res


if __name__ == "__main__":
    for path in sys.argv[1:]:
        doc = open(path, encoding="utf-8").read()
        for k, u in enumerate(units(doc)):
            print(f"{k}\t{u['section'][:40]}\t{u['text']}")
