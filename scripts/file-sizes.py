#!/usr/bin/env python3
"""No source file over 500 lines (issue 47).

Counts, for every .rs file under each SRC folder (default: worker/src and
shared/src), every line before the file's first `#[cfg(test)]` line (the
test module, which is not counted); comments and blank lines count. Prints
each file over the limit with its count and exits 1 when there is one, 0
when there is none.

Usage: scripts/file-sizes.py [--limit N] [SRC ...]
"""

import os
import sys

args = sys.argv[1:]
limit = 500
if args[:1] == ["--limit"]:
    limit = int(args[1])
    args = args[2:]
srcs = args or ["worker/src", "shared/src"]


def counted_lines(path):
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip().startswith("#[cfg(test)]"):
                break
            n += 1
    return n


offenders, total = [], 0
for src in srcs:
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                total += 1
                n = counted_lines(path)
                if n > limit:
                    offenders.append((n, path))
for n, path in sorted(offenders, reverse=True):
    print(f"{path}: {n} lines (limit {limit}, tests excluded)")
print(f"{total} files, {len(offenders)} over {limit} lines")
sys.exit(1 if offenders else 0)
