#!/usr/bin/env python3
"""Margins at equal context, with their noise: each profile's budgeted
recall against the best external system at each budget, pooled over the
leaderboards given (e.g. both retrieval sets of one half), with a paired
bootstrap interval over questions.

    scripts/eval/margins.py DIR_OR_LEADERBOARD_JSON... [--budgets 500,1000,2000]
        [--reps 1000] [--seed 20261207]
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
"""

import argparse
import json
import random
import sys
from pathlib import Path


def load(arg):
    p = Path(arg)
    if p.is_dir():
        p = p / "leaderboard.json"
    try:
        return json.loads(p.read_text())["rows"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"margins: {p}: {e}")


def pool(boards):
    """name -> {"external": bool, "q": {question: {metric: value}}}"""
    systems = {}
    for rows in boards:
        for r in rows:
            if "per_question" not in r:
                print(f"margins: row {r.get('name')} has no per_question (an older chunk-worker?)", file=sys.stderr)
                sys.exit(2)
            s = systems.setdefault(r["name"], {"external": bool(r.get("external")), "q": {}})
            s["q"].update(r["per_question"])
    return systems


def report(title, systems, budgets, reps, seed):
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
    draws = [[rng.randrange(n) for _ in range(n)] for _ in range(reps)]
    print(f"{title}: {n} questions; best peer " + " / ".join(f"{mean[best[b]][b]:.3f} ({best[b]})" for b in budgets))
    # The best peer's sum in each resample, once per budget.
    peer_best = {b: [max(sum(vals[p][b][i] for i in d) for p in peers) for d in draws] for b in budgets}
    results = {}
    for s in ours:
        cells = []
        for b in budgets:
            v = vals[s][b]
            margins = [(sum(v[i] for i in d) - pb) / n for d, pb in zip(draws, peer_best[b])]
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
    print("margins: self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("boards", nargs="*", help="eval --out directories or leaderboard.json files")
    ap.add_argument("--self-test", action="store_true", help="check the arithmetic on a made-up board and exit")
    ap.add_argument("--budgets", default="500,1000,2000")
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261207)
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.boards:
        ap.error("give at least one eval --out directory or leaderboard.json")
    budgets = [int(b) for b in args.budgets.split(",")]
    boards = [load(a) for a in args.boards]
    if len(boards) > 1:
        for a, rows in zip(args.boards, boards):
            report(a, pool([rows]), budgets, args.reps, args.seed)
    report("pooled" if len(boards) > 1 else args.boards[0], pool(boards), budgets, args.reps, args.seed)


if __name__ == "__main__":
    main()
