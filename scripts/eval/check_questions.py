#!/usr/bin/env python3
"""Check a retrieval dataset: questions.jsonl against documents/.

    python3 scripts/eval/check_questions.py eval/retrieval-plain
    python3 scripts/eval/check_questions.py eval/retrieval

For every line of DIR/questions.jsonl:
  * it is a JSON object with the keys id, question, document, lang and
    references (corpus optional; no other keys); lang is "en" or "ru";
  * the id is unique in the file and the question is not empty;
  * the document exists in DIR/documents/ and decodes as UTF-8;
  * references is a non-empty list of {text, start, end}: start and end are
    integers with 0 <= start < end <= len(document) in code points (Python
    string indices, end exclusive), text is not blank, and
    document[start:end] == text;
  * when corpus is given, the document is named <corpus>-<something>.md.

Also, over the dataset: every file named in SOURCES.tsv (first column) exists
and every document has a row there (when SOURCES.tsv exists); every corpus is
in exactly one half of splits.json (when it exists). Warnings (not errors):
an excerpt that occurs more than once in its document (--strict makes it an
error) and a document without questions.

Prints per corpus (the corpus field, else the document's corpus or
repository column in SOURCES.tsv, else the first two dash-separated parts of
its name): documents, words, questions, questions with two
or more excerpts. Problems are printed as `questions.jsonl:LINE: message`;
exit status 1 if there were any. Python 3 standard library only.
"""

import argparse
import collections
import csv
import json
import os
import sys

KEYS = {"id", "question", "document", "lang", "references"}
OPTIONAL = {"corpus"}


SOURCE_CORPUS = {}  # document -> corpus, from SOURCES.tsv (column corpus, else repository)


def corpus_of(q):
    c = q.get("corpus")
    if c:
        return c
    if q["document"] in SOURCE_CORPUS:
        return SOURCE_CORPUS[q["document"]]
    return "-".join(q["document"].split("-")[:2])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="dataset directory (holds documents/ and questions.jsonl)")
    ap.add_argument("--strict", action="store_true", help="an excerpt occurring more than once is an error")
    args = ap.parse_args(argv)

    docs_dir = os.path.join(args.dataset, "documents")
    qpath = os.path.join(args.dataset, "questions.jsonl")
    errors = []
    warnings = []

    def err(line, msg):
        errors.append(f"{os.path.basename(qpath)}:{line}: {msg}" if line else msg)

    if not os.path.isdir(docs_dir):
        print(f"check_questions: {docs_dir} is not a directory", file=sys.stderr)
        return 1
    docs = {}
    for name in sorted(os.listdir(docs_dir)):
        if not name.endswith(".md"):
            continue
        with open(os.path.join(docs_dir, name), "rb") as f:
            data = f.read()
        try:
            docs[name] = data.decode("utf-8")
        except UnicodeDecodeError as e:
            err(None, f"documents/{name}: not UTF-8 ({e})")

    ids = {}
    questions = []
    try:
        with open(qpath, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        print(f"check_questions: {qpath} not found", file=sys.stderr)
        return 1
    if lines and lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines, 1):
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            err(n, f"not JSON: {e}")
            continue
        if not isinstance(q, dict):
            err(n, "not a JSON object")
            continue
        missing = KEYS - q.keys()
        extra = q.keys() - KEYS - OPTIONAL
        if missing:
            err(n, f"missing keys: {sorted(missing)}")
            continue
        if extra:
            err(n, f"unknown keys: {sorted(extra)}")
        qid = q["id"]
        if not isinstance(qid, str) or not qid:
            err(n, "id is not a non-empty string")
        elif qid in ids:
            err(n, f"duplicate id {qid!r} (first on line {ids[qid]})")
        else:
            ids[qid] = n
        if not isinstance(q["question"], str) or not q["question"].strip():
            err(n, "question is empty")
        if q["lang"] not in ("en", "ru"):
            err(n, f"lang {q['lang']!r} is not en or ru")
        corpus = q.get("corpus")
        if "corpus" in q and (not isinstance(corpus, str) or not corpus):
            err(n, "corpus is not a non-empty string")
            corpus = None
        doc = docs.get(q["document"])
        if doc is None:
            err(n, f"unknown document {q['document']!r}")
            continue
        if corpus and not q["document"].startswith(corpus + "-"):
            err(n, f"document {q['document']!r} is not named {corpus}-*.md")
        refs = q["references"]
        if not isinstance(refs, list) or not refs:
            err(n, "references is not a non-empty list")
            continue
        ok = True
        for k, r in enumerate(refs, 1):
            if not isinstance(r, dict) or set(r) != {"text", "start", "end"}:
                err(n, f"reference {k}: must be an object with exactly text, start, end")
                ok = False
                continue
            s, e, text = r["start"], r["end"], r["text"]
            if not (isinstance(s, int) and isinstance(e, int)) or isinstance(s, bool) or isinstance(e, bool):
                err(n, f"reference {k}: start/end are not integers")
                ok = False
                continue
            if not isinstance(text, str) or not text.strip():
                err(n, f"reference {k}: empty text")
                ok = False
                continue
            if not (0 <= s < e <= len(doc)):
                err(n, f"reference {k}: [{s}, {e}) is outside 0..{len(doc)} or empty")
                ok = False
                continue
            if doc[s:e] != text:
                at = doc.find(text)
                hint = f" (the text occurs at {at})" if at >= 0 else " (the text does not occur in the document)"
                err(n, f"reference {k}: document[{s}:{e}] != text{hint}")
                ok = False
                continue
            if doc.count(text) > 1:
                msg = f"{os.path.basename(qpath)}:{n}: reference {k}: the excerpt occurs {doc.count(text)} times in {q['document']}"
                (errors if args.strict else warnings).append(msg)
        if ok:
            questions.append(q)

    # SOURCES.tsv: every document has a row, every row names a document
    spath = os.path.join(args.dataset, "SOURCES.tsv")
    if os.path.exists(spath):
        with open(spath, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter="\t"))
        listed = {r[0] for r in rows[1:] if r}
        header = rows[0] if rows else []
        col = header.index("corpus") if "corpus" in header else (
            header.index("repository") if "repository" in header else None)
        if col is not None:
            for r in rows[1:]:
                if len(r) > col:
                    SOURCE_CORPUS[r[0]] = r[col]
        for name in sorted(set(docs) - listed):
            err(None, f"SOURCES.tsv: no row for documents/{name}")
        for name in sorted(listed - set(docs)):
            err(None, f"SOURCES.tsv: {name} is not in documents/")

    # splits.json: each corpus in exactly one half
    corpora = sorted({corpus_of(q) for q in questions})
    split_of = {}
    ppath = os.path.join(args.dataset, "splits.json")
    if os.path.exists(ppath):
        with open(ppath, encoding="utf-8") as f:
            try:
                splits = json.load(f)
            except json.JSONDecodeError as e:
                err(None, f"splits.json: not JSON: {e}")
                splits = {}
        for half, names in splits.items():
            for c in names:
                if c in split_of:
                    err(None, f"splits.json: corpus {c!r} is in {split_of[c]} and {half}")
                split_of[c] = half
        for c in corpora:
            if c not in split_of:
                err(None, f"splits.json: corpus {c!r} is in no half")
        for c in sorted(set(split_of) - set(corpora)):
            err(None, f"splits.json: corpus {c!r} has no questions")

    asked = {q["document"] for q in questions}
    for name in sorted(set(docs) - asked):
        warnings.append(f"documents/{name}: no question refers to it")

    # per-corpus table
    per = collections.OrderedDict()
    doc_corpus = {}
    for q in questions:
        doc_corpus.setdefault(q["document"], corpus_of(q))
    for c in corpora:
        per[c] = {"docs": set(), "questions": 0, "multi": 0}
    for q in questions:
        c = corpus_of(q)
        per[c]["docs"].add(q["document"])
        per[c]["questions"] += 1
        if len(q["references"]) > 1:
            per[c]["multi"] += 1
    w = max([len("corpus")] + [len(c) for c in per])
    print(f"{'corpus':<{w}} {'split':<5} {'docs':>4} {'words':>7} {'questions':>9} {'2+ excerpts':>11}")
    tot = [0, 0, 0, 0]
    for c, v in per.items():
        words = sum(len(docs[d].split()) for d in v["docs"])
        print(f"{c:<{w}} {split_of.get(c, '-'):<5} {len(v['docs']):>4} {words:>7} {v['questions']:>9} {v['multi']:>11}")
        tot[0] += len(v["docs"])
        tot[1] += words
        tot[2] += v["questions"]
        tot[3] += v["multi"]
    print(f"{'total':<{w}} {'':<5} {tot[0]:>4} {tot[1]:>7} {tot[2]:>9} {tot[3]:>11}")
    langs = collections.Counter(q["lang"] for q in questions)
    print("languages: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))

    for w in warnings:
        print("warning: " + w, file=sys.stderr)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check_questions: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_questions: {args.dataset}: {len(lines)} questions, all excerpts at their offsets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
