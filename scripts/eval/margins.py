#!/usr/bin/env python3
"""Margins at equal context, with their noise: each profile's budgeted
recall against the best external system at each budget, pooled over the
leaderboards given (e.g. both retrieval sets of one half), with a paired
bootstrap interval over questions.

    scripts/eval/margins.py DIR_OR_LEADERBOARD_JSON... [--budgets 500,1000,2000]
        [--reps 1000] [--seed 20261207] [--by-document] [--batch 1|2]
    scripts/eval/margins.py --self-test

Each argument is a `chunk-worker eval --out` directory (its
leaderboard.json) or the file itself; rows of the same name are pooled
(their questions added, as `per_question` keys `dataset/question id`
never collide between sets). For each budget B, a profile's margin is its
mean `budget_recall@B` minus the best external row's; the interval
resamples the questions with replacement (`--reps` times, seeded) and takes
the margin over the best external row *of each resample*, so it is the
noise of "beats every peer", not of beating one fixed peer. `P(>0)` is the
share of resamples where the profile leads.

Prints, per set and pooled: the best peer at each budget, then each
profile's recall, margin and 2.5-97.5% interval. Needs a leaderboard with
`per_question` (chunk-worker from 2026-12-07 on); exits 2 otherwise.

`--by-document` resamples whole documents instead of questions (a
clustered bootstrap: the questions of one document share its chunking, so
they are not independent, and the interval allows for that). `--batch 1`
keeps the questions of the first batch of each shipped set (the
questions.jsonl lines written with the sets, on which every figure before
round 6 was measured), `--batch 2` those added on 2026-12-07
(eval/README.md "How the questions were written"). Both read the shipped
sets' questions.jsonl.
"""

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Lines of each shipped set's questions.jsonl in the first batch.
FIRST_BATCH = {"retrieval": 317, "retrieval-plain": 541}


def shipped_questions():
    """(`set/question id` key, `set/document`, batch 1 or 2) for every
    question of the shipped sets, as per_question keys them."""
    for name, first in FIRST_BATCH.items():
        lines = (ROOT / "eval" / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip():
                q = json.loads(line)
                yield f"{name}/{q['id']}", f"{name}/{q['document']}", 1 if i < first else 2


def load(arg):
    p = Path(arg)
    if p.is_dir():
        p = p / "leaderboard.json"
    try:
        return json.loads(p.read_text())["rows"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"margins: {p}: {e}")


def pool(boards, keep=None):
    """name -> {"external": bool, "q": {question: {metric: value}}}; only
    the questions in `keep` when given."""
    systems = {}
    for rows in boards:
        for r in rows:
            if "per_question" not in r:
                print(f"margins: row {r.get('name')} has no per_question (an older chunk-worker?)", file=sys.stderr)
                sys.exit(2)
            s = systems.setdefault(r["name"], {"external": bool(r.get("external")), "q": {}})
            s["q"].update((k, v) for k, v in r["per_question"].items() if keep is None or k in keep)
    return systems


def report(title, systems, budgets, reps, seed, doc=None):
    questions = sorted(set().union(*(s["q"].keys() for s in systems.values())))
    if not questions:
        print(f"{title}: no questions")
        return
    for name, s in systems.items():
        missing = len(questions) - len(s["q"])
        if missing:
            sys.exit(f"margins: {name} lacks {missing} of the {len(questions)} questions; compare rows of the same runs")
    peers = [n for n, s in systems.items() if s["external"]]
    ours = [n for n, s in systems.items() if not s["external"]]
    if not peers:
        sys.exit("margins: no external rows (--external) to compare with")
    key = {b: f"budget_recall@{b}" for b in budgets}
    vals = {n: {b: [systems[n]["q"][q][key[b]] for q in questions] for b in budgets} for n in systems}
    n = len(questions)
    mean = {s: {b: sum(vals[s][b]) / n for b in budgets} for s in systems}
    best = {b: max(peers, key=lambda p: mean[p][b]) for b in budgets}
    rng = random.Random(seed)
    if doc is None:
        draws = [[rng.randrange(n) for _ in range(n)] for _ in range(reps)]
    else:
        # Whole documents resampled: questions of one document are not
        # independent (one chunking of it serves them all).
        groups = {}
        for i, q in enumerate(questions):
            if q not in doc:
                sys.exit(f"margins: {q} is not a question of the shipped sets (--by-document)")
            groups.setdefault(doc[q], []).append(i)
        units = [groups[g] for g in sorted(groups)]
        draws = [[i for _ in units for i in units[rng.randrange(len(units))]] for _ in range(reps)]
    print(f"{title}: {n} questions; best peer " + " / ".join(f"{mean[best[b]][b]:.3f} ({best[b]})" for b in budgets))
    # The best peer's sum in each resample, once per budget.
    peer_best = {b: [max(sum(vals[p][b][i] for i in d) for p in peers) for d in draws] for b in budgets}
    results = {}
    for s in ours:
        cells = []
        for b in budgets:
            v = vals[s][b]
            margins = [(sum(v[i] for i in d) - pb) / len(d) for d, pb in zip(draws, peer_best[b])]
            margins.sort()
            lo, hi = margins[int(0.025 * reps)], margins[int(0.975 * reps) - 1]
            share = sum(m > 0 for m in margins) / reps
            results[(s, b)] = (mean[s][b] - mean[best[b]][b], lo, hi, share)
            cells.append(f"{mean[s][b]:.3f} {mean[s][b] - mean[best[b]][b]:+.3f} [{lo:+.3f}, {hi:+.3f}] P(>0) {share:.2f}")
        print(f"  {s:<26} " + " | ".join(cells))
    return results


def self_test():
    """A profile at .6 on every question against a steady peer at .5 and a
    coin-flip peer (0 or 1, mean .5): the margin is +.100, and since the
    coin-flip peer's resampled mean often beats .5, the interval reaches
    below +.100 but never above it."""
    qs = [f"t/q{i}" for i in range(200)]
    rows = [
        {"name": "ours", "external": False, "per_question": {q: {"budget_recall@500": 0.6} for q in qs}},
        {"name": "steady", "external": True, "per_question": {q: {"budget_recall@500": 0.5} for q in qs}},
        {"name": "coin", "external": True,
         "per_question": {q: {"budget_recall@500": float(i % 2)} for i, q in enumerate(qs)}},
    ]
    (margin, lo, hi, share), = report("self-test", pool([rows]), [500], 400, 1).values()
    assert abs(margin - 0.1) < 1e-12, margin
    assert lo < 0.1 - 1e-3 and hi <= 0.1 + 1e-12, (lo, hi)
    assert 0.9 < share <= 1.0, share
    # Whole documents resampled: a peer right on every question of half
    # the 20 documents (10 questions each) and wrong on the other half
    # varies far more between resamples of documents than of questions.
    block = [{"name": "ours", "external": False, "per_question": {q: {"budget_recall@500": 0.6} for q in qs}},
             {"name": "blocks", "external": True,
              "per_question": {q: {"budget_recall@500": float((i // 10) % 2)} for i, q in enumerate(qs)}}]
    doc = {q: f"t/d{i // 10}" for i, q in enumerate(qs)}
    (_, qlo, qhi, _), = report("self-test, questions", pool([block]), [500], 400, 1).values()
    (m, dlo, dhi, _), = report("self-test, documents", pool([block]), [500], 400, 1, doc).values()
    assert abs(m - 0.1) < 1e-12 and dhi - dlo > 2 * (qhi - qlo), (qlo, qhi, dlo, dhi)
    print("margins: self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("boards", nargs="*", help="eval --out directories or leaderboard.json files")
    ap.add_argument("--self-test", action="store_true", help="check the arithmetic on a made-up board and exit")
    ap.add_argument("--budgets", default="500,1000,2000")
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--by-document", action="store_true", help="resample whole documents (clustered bootstrap) instead of questions")
    ap.add_argument("--batch", type=int, choices=[1, 2], help="only the first (1) or second (2) batch of questions")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.boards:
        ap.error("give at least one eval --out directory or leaderboard.json")
    budgets = [int(b) for b in args.budgets.split(",")]
    boards = [load(a) for a in args.boards]
    shipped = list(shipped_questions()) if args.batch or args.by_document else []
    keep = {key for key, _, batch in shipped if batch == args.batch} if args.batch else None
    doc = {key: document for key, document, _ in shipped} if args.by_document else None
    if len(boards) > 1:
        for a, rows in zip(args.boards, boards):
            report(a, pool([rows], keep), budgets, args.reps, args.seed, doc)
    report("pooled" if len(boards) > 1 else args.boards[0], pool(boards, keep), budgets, args.reps, args.seed, doc)


if __name__ == "__main__":
    main()
