#!/usr/bin/env python3
"""Generate shared/tests/fixtures/adapters/haystack.sentences.json: Haystack's
sentence splitting on seeded random texts, for the `haystack.split` drop-in's
sentence tests (shared/src/strategy/haystack_split/sentences/tests.rs).

Each text is a random sequence of tokens chosen to hit Punkt's and Haystack's
rules (trained and Haystack abbreviations, initials, numbers, ellipses, list
numbers, straight and curly quotes, apostrophes, brackets, closers after
whitespace, Python-only whitespace U+001C, NBSP, CRLF, form feeds) joined by
random whitespace. For each the fixture holds:

  "spans":  SentenceSplitter(language, use_split_rules, extend_abbreviations,
            keep_white_spaces=True).split_sentences(text) as [start, end]
            (code points);
  "chunks": DocumentSplitter(**kwargs).run(...) chunk texts, with kwargs
            split_by="sentence" (random length, overlap, threshold) or
            split_by="word" with respect_sentence_boundary=True.

Same pinned versions and offline setup as adapter_parity.py (haystack-ai
3.4.1, nltk 3.10.4, punkt_tab from the llama-index-core wheel).

Usage (from the repository root, after scripts/peers/setup-adapters-venv.sh):
  .venv-adapters/bin/python scripts/peers/haystack_sentences.py [--check]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "shared/tests/fixtures/adapters/haystack.sentences.json"
SEED = 7
CASES = 600

TOKENS = [
    "The", "the", "he", "He", "said", "Dr.", "dr.", "Mr.", "e.g.", "i.e.", "U.S.", "u.s.",
    "p.m.", "etc.", "Inc.", "J.", "a.", "A.", "12.", "1.", "3", "1.2.3", "x-.", "co.", "No.",
    "no.", ".", "..", "...", ". . .", "?", "!", "?!", "!!!", ",", ";", ":", "--", "-", '"', "'",
    "\u2019", "\u201d", "\u00bb", "\u00ab", "\u201c", "\u2018", "(", ")", "[", "]", "{", "}",
    "don't", "isn't", "It", "it", "Yes", "yes", "Smith", "Bach", "Why?", "Hi.", "end.",
    "\u041f\u0440\u0438\u0432\u0435\u0442.", "\u0414\u0430", "\u00e9", "\u00c4.", "2.", "Step",
    "most", "since", "download", "http://x.org.", "a.b", "v1.0", "$5.", "Oct.", "Jan.", "Fig.",
    "fig.", "Ph.D.", "St.", "vs.", "a.m.", "No.5", "1,000.", '"Hi!"', "'Hi.'", ").", '".',
    "\u00dcber.", "\u0130stanbul.", "\u01c5.", 'x."', "(a)", "[1]", "'s", "5.5.", "-3.",
    "\u2163.", "\u00b2.",
]
SEPARATORS = [
    " ", " ", " ", " ", "", "\n", "\n\n", "\t", "  ", "\u00a0", "\x1c", " \n ", "\r\n", "\f",
]
OPTIONS = [("en", True, True)] * 4 + [("en", False, True), ("en", True, False), ("ru", True, True)]


def text(rng: random.Random) -> str:
    out = [rng.choice(SEPARATORS) if rng.random() < 0.1 else ""]
    for _ in range(rng.randint(0, 30)):
        out.append(rng.choice(TOKENS))
        out.append(rng.choice(SEPARATORS))
    return "".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 if the file would change")
    args = ap.parse_args()
    os.environ.setdefault(
        "NLTK_DATA",
        str(
            ROOT
            / ".venv-adapters/lib/python3.11/site-packages/llama_index/core/_static/nltk_cache"
        ),
    )
    os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
    logging.disable(logging.WARNING)
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.preprocessors.sentence_tokenizer import SentenceSplitter

    rng = random.Random(SEED)
    splitters: dict = {}
    cases = []
    for _ in range(CASES):
        t = text(rng)
        lang, rules, ext = rng.choice(OPTIONS)
        key = (lang, rules, ext)
        if key not in splitters:
            splitters[key] = SentenceSplitter(
                language=lang, use_split_rules=rules, extend_abbreviations=ext, keep_white_spaces=True
            )
        spans = [[d["start"], d["end"]] for d in splitters[key].split_sentences(t)]
        length = rng.randint(1, 12)
        overlap = rng.randint(0, length - 1)
        threshold = rng.randint(0, 3)
        respect = rng.random() < 0.5
        kwargs = {
            "split_by": "word" if respect else "sentence",
            "split_length": length,
            "split_overlap": overlap,
            "split_threshold": 0 if respect else threshold,
            "respect_sentence_boundary": respect,
            "language": lang,
            "use_split_rules": rules,
            "extend_abbreviations": ext,
        }
        splitter = DocumentSplitter(**kwargs)
        splitter.warm_up()
        chunks = [d.content for d in splitter.run(documents=[Document(content=t)])["documents"]]
        cases.append({"text": t, "kwargs": kwargs, "spans": spans, "chunks": chunks})
    data = {
        "generator": "scripts/peers/haystack_sentences.py",
        "versions": {"haystack-ai": "3.4.1", "nltk": "3.10.4"},
        "seed": SEED,
        "cases": cases,
    }
    new = json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n"
    if args.check:
        return 0 if OUT.exists() and OUT.read_text(encoding="utf-8") == new else 1
    OUT.write_text(new, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
