#!/usr/bin/env python3
"""Builds eval/interleaved: topic-switch gold for the semantic strategies.

Each document interleaves groups of paragraphs of two unrelated real
documents under one heading, so every switch between them is a topic
boundary that no one chose by hand. The sources are the shipped retrieval
documents (eval/retrieval-plain: speeches, hearings, filings, science,
encyclopedias, plain text; eval/retrieval: English and Russian Markdown
documentation), whose provenance is in their SOURCES.tsv. A seeded draw
(not a person) picks the pairs, two documents of different corpora,
Russian paired with Russian.

Two datasets, the same format as eval/boundaries (documents/*.md and
boundaries.jsonl, code point offsets of each switch, the first character
of a line):

  eval/interleaved/dev       tune on this
  eval/interleaved/held-out  report on this, once, at the end

The held-out documents use source documents the dev ones do not. Standard
library only; run from anywhere: `python3 scripts/eval/make_interleaved.py`
(rewrites both folders; `--check` verifies them instead: they are what the
script writes, byte for byte, every group's text occurs verbatim in its
source, every boundary starts a line).
"""

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "eval" / "interleaved"
SEED = 20261207
PER_HALF = {"en": 24, "ru": 6}
GROUPS = 6  # groups per document: 5 switches
MIN_PARA = 160  # characters of a prose paragraph
MIN_PARAS = 12  # prose paragraphs a source needs (it gives at most 3 x 3)
PROSE = re.compile(r"^[^\s#>|`*\-+\d<!\[]")


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs (no headings, lists, tables, code, quotes)."""
    blocks = [b.strip("\n") for b in re.split(r"\n\s*\n", text)]
    if len(blocks) < 8:  # one paragraph per line (speeches): lines instead
        blocks = text.split("\n")
    out = []
    in_code = False
    for b in blocks:
        if b.lstrip().startswith("```"):
            if b.count("```") % 2:
                in_code = not in_code
            continue
        if in_code or len(b) < MIN_PARA or not PROSE.match(b):
            continue
        if "```" in b or "|" in b.split("\n")[0]:
            continue
        out.append(b)
    return out


def sources() -> list[dict]:
    docs = []
    for folder, lang_of in (
        ("retrieval-plain", lambda name: "en"),
        ("retrieval", lambda name: name[:2]),
    ):
        base = ROOT / "eval" / folder
        corpus_of = {}
        tsv = base / "SOURCES.tsv"
        head = None
        for line in tsv.read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if head is None:
                head = cols
                continue
            row = dict(zip(head, cols))
            corpus_of[row["file"]] = row.get("corpus") or row["file"][:4]
        for path in sorted((base / "documents").glob("*.md")):
            text = path.read_text(encoding="utf-8")
            paras = paragraphs(text)
            if len(paras) < MIN_PARAS:
                continue
            name = path.name
            docs.append(
                {
                    "path": f"eval/{folder}/documents/{name}",
                    "lang": lang_of(name),
                    "corpus": corpus_of.get(name, name.rsplit("-", 1)[0]),
                    "paras": paras,
                }
            )
    return docs


def build(rng: random.Random, a: dict, b: dict, title: str):
    """One document: GROUPS groups of 2-3 paragraphs, alternating a, b."""
    text = f"# {title}\n\n"
    switches = []
    used = {id(a): 0, id(b): 0}
    groups = []
    for g in range(GROUPS):
        src = a if g % 2 == 0 else b
        n = rng.choice((2, 3))
        start = used[id(src)]
        paras = src["paras"][start : start + n]
        used[id(src)] = start + n
        if g > 0:
            switches.append(len(text))
        groups.append({"source": src["path"], "paragraphs": len(paras)})
        text += "\n\n".join(paras) + "\n\n"
    return text.rstrip("\n") + "\n", switches, groups


def generate() -> dict:
    """{half: [(file name, text, boundaries.jsonl line)]}, as written."""
    rng = random.Random(SEED)
    docs = sources()
    by_lang = {}
    for d in docs:
        by_lang.setdefault(d["lang"], []).append(d)
    manifest = {}
    for lang, pool in sorted(by_lang.items()):
        pool = sorted(pool, key=lambda d: d["path"])
        rng.shuffle(pool)
        # Disjoint sources for the two halves: the first half of the
        # shuffled pool feeds dev, the second held-out.
        cut = len(pool) // 2
        for half, part in (("dev", pool[:cut]), ("held-out", pool[cut:])):
            made = 0
            tries = 0
            pairs = set()
            while made < PER_HALF[lang] and tries < 10_000:
                tries += 1
                a, b = rng.sample(part, 2)
                pair = frozenset((a["path"], b["path"]))
                if a["corpus"] == b["corpus"] or pair in pairs:
                    continue
                pairs.add(pair)
                name = f"{lang}-{made + 1:03}.md"
                title = "Interleaved document" if lang == "en" else "Смешанный документ"
                text, switches, groups = build(rng, a, b, title)
                line = json.dumps(
                    {
                        "document": name,
                        "lang": lang,
                        "kind": "interleaved",
                        "boundaries": switches,
                        "groups": groups,
                    },
                    ensure_ascii=False,
                )
                manifest.setdefault(half, []).append((name, text, line))
                made += 1
            if made < PER_HALF[lang]:
                sys.exit(f"only {made} {lang} pairs for {half}")
    return manifest


def make() -> int:
    for half, items in generate().items():
        folder = OUT / half
        (folder / "documents").mkdir(parents=True, exist_ok=True)
        for old in (folder / "documents").glob("*.md"):
            old.unlink()
        for name, text, _ in items:
            (folder / "documents" / name).write_text(text, encoding="utf-8")
        lines = "".join(line + "\n" for _, _, line in items)
        (folder / "boundaries.jsonl").write_text(lines, encoding="utf-8")
        switches = sum(len(json.loads(line)["boundaries"]) for _, _, line in items)
        print(f"{half}: {len(items)} documents, {switches} switches")
    return 0


def check() -> int:
    bad = 0
    for half, items in generate().items():
        folder = OUT / half
        expected = {name: text for name, text, _ in items}
        on_disk = {p.name: p.read_text(encoding="utf-8") for p in (folder / "documents").glob("*.md")}
        lines = "".join(line + "\n" for _, _, line in items)
        if on_disk != expected or (folder / "boundaries.jsonl").read_text(encoding="utf-8") != lines:
            print(f"{half}: not what make_interleaved.py writes (run it without --check)")
            bad += 1
        for line in (folder / "boundaries.jsonl").read_text(encoding="utf-8").splitlines():
            gold = json.loads(line)
            text = (folder / "documents" / gold["document"]).read_text(encoding="utf-8")
            starts = [text.index("\n\n") + 2] + gold["boundaries"]
            ends = gold["boundaries"] + [len(text)]
            if len(gold["groups"]) != len(starts) or gold["boundaries"] != sorted(set(gold["boundaries"])):
                print(f"{half}/{gold['document']}: {len(gold['groups'])} groups for {len(gold['boundaries'])} boundaries")
                bad += 1
            for (s, e, g) in zip(starts, ends, gold["groups"]):
                if s > 0 and text[s - 1] != "\n":
                    print(f"{half}/{gold['document']}: boundary {s} is not a line start")
                    bad += 1
                source = (ROOT / g["source"]).read_text(encoding="utf-8")
                for para in text[s:e].strip("\n").split("\n\n"):
                    if para not in source:
                        print(f"{half}/{gold['document']}: a paragraph at {s} is not in {g['source']}")
                        bad += 1
    print("interleaved: as the script writes it, every group verbatim from its source" if not bad else f"{bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="verify instead of writing")
    args = ap.parse_args()
    sys.exit(check() if args.check else make())
