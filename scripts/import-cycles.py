#!/usr/bin/env python3
"""Import circles among the files of a Rust crate's src/ (issue 16).

Reads every .rs file under SRC (default worker/src), takes each `crate::a::b`
path it mentions outside `#[cfg(test)]` modules (in `use` lines and in code),
maps it to the file that defines that module (the longest prefix that is a
file: src/a/b.rs, src/a/b/mod.rs, src/a.rs, ...), and reports every group of
files that import each other in a circle (strongly connected components of
more than one file), with one circle spelled out. A `use super::...` of a
child module (a file inside a folder using its mod.rs) is the module's own
parts talking to each other and does not count. Exit status 1 when there is a
circle, 0 when there is none.

Usage: scripts/import-cycles.py [SRC]
"""

import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "worker/src"


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        return ()
    return tuple(rel)


files = {}
for root, _, names in os.walk(SRC):
    for n in names:
        if n.endswith(".rs"):
            p = os.path.join(root, n)
            files[module_of(p)] = p


def strip_tests(text):
    """The file without its test module and without comments (doc links
    such as [`crate::x`] name a module without depending on it)."""
    i = text.find("#[cfg(test)]")
    text = text if i < 0 else text[:i]
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))


def resolve(parts):
    for k in range(len(parts), 0, -1):
        if tuple(parts[:k]) in files:
            return tuple(parts[:k])
    return None


graph = {m: set() for m in files}
path_re = re.compile(r"crate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*|\{[^}]*\})")
for mod, path in files.items():
    text = strip_tests(open(path, encoding="utf-8").read())
    # Expand `crate::{a, b::c}` groups.
    for m in re.finditer(r"crate::\{([^}]*)\}", text):
        for item in m.group(1).split(","):
            item = item.strip().split(" as ")[0]
            if item:
                target = resolve(item.split("::"))
                if target is not None and target != mod:
                    graph[mod].add(target)
    for m in re.finditer(r"crate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", text):
        target = resolve(m.group(1).split("::"))
        if target is not None and target != mod and target[: len(mod)] != mod:
            # A module using its own children is not a circle with them.
            graph[mod].add(target)
    # Children using their parent (`super::`) are parts of one module.

# Tarjan's strongly connected components.
index, low, on, stack, sccs = {}, {}, set(), [], []
counter = [0]


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(graph[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        sccs.append(comp)


sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index:
        visit(v)

name = lambda m: "::".join(m) or "crate"
circles = [sorted(c) for c in sccs if len(c) > 1]
for comp in circles:
    print("circle among:", ", ".join(name(m) for m in comp))
    # Spell out one cycle inside the component.
    comp_set = set(comp)
    start = comp[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in comp_set)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            print("  e.g.", " -> ".join(name(m) for m in path + [start]))
            break
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            print("  e.g.", " -> ".join(name(m) for m in path), "-> ...")
            break
        path.append(fresh[0])
        seen.add(fresh[0])
print(f"{len(files)} files, {sum(len(s) for s in graph.values())} imports, {len(circles)} circle(s)")
sys.exit(1 if circles else 0)
