#!/usr/bin/env python3
"""Import circles among the files of a Rust crate's src/ (issues 16 and 47).

Reads every .rs file under each SRC folder (default worker/src; pass several,
e.g. `worker/src shared/src`, and each is checked as its own crate), takes
every path it mentions outside its `#[cfg(test)]` module and outside
comments -- `crate::`, `super::` and `self::` paths and paths that start with
one of the file's own child modules, in `use` lines (grouped ones such as
`use a::{b, c::{d, e}}` included) and in code -- and maps each to the file
that defines the module it names: the longest prefix of the path that is a
file (src/a/b.rs or src/a/b/mod.rs; the crate root is lib.rs). An item
re-exported by a mod.rs counts as the mod.rs's. Declaring a child module
(`mod x;`) is not an import; a parent's `use self::x::...` or
`pub use x::...` is, and so is a child's `use super::...`: a parent that uses
its child and a child that uses its parent are a circle.

Reports every group of files that import each other in a circle (strongly
connected components of more than one file), with one circle spelled out.
Exit status 1 when any crate has a circle, 0 when none has.

Usage: scripts/import-cycles.py [SRC ...]
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel == ["lib"]:
        return ()
    if rel == ["main"]:
        # The binary is a crate of its own (it reaches the library by name).
        return ("<main>",)
    return tuple(rel)


def strip_tests_and_comments(text):
    """The file before its test module, without comments (doc links such as
    [`crate::x`] name a module without depending on it) and without string
    literals (a message that mentions `crate::x` imports nothing)."""
    i = text.find("#[cfg(test)]")
    text = text if i < 0 else text[:i]
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    return re.sub(r"//[^\n]*", "", text)


def expand_use(tree):
    """`a::{b, c::{d, e as f}, self}` -> [[a,b], [a,c,d], [a,c,e], [a]]."""
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, s):
        # Split s at top-level commas.
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:i])
                start = i + 1
        parts.append(s[start:])
        for p in parts:
            if not p:
                continue
            j = p.find("{")
            if j >= 0:
                head = [x for x in p[:j].split("::") if x]
                walk(prefix + head, p[j + 1 : p.rfind("}")])
                continue
            segs = [x for x in p.split("::") if x and x != "*"]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            out.append(prefix + segs)

    walk([], tree)
    return out


def check(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(root, n)
                files[module_of(src, p)] = p

    def resolve(mod, segs):
        """The file a path written in module `mod` names, or None (std, a
        dependency, a local variable)."""
        if not segs:
            return None
        if segs[0] == "crate":
            base, rest = (), segs[1:]
        elif segs[0] in ("super", "self"):
            base, rest = mod, segs
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        elif mod + (segs[0],) in files:
            base, rest = mod, segs  # a child module, named without `self::`
        else:
            return None
        if base not in files:
            return None
        for seg in rest:
            if base + (seg,) in files:
                base = base + (seg,)
            else:
                break
        return base

    graph = {m: set() for m in files}
    use_re = re.compile(r"\buse\s+([^;]+);")
    path_re = re.compile(r"(?<![\w:])(" + IDENT + r"(?:::" + IDENT + r")+)")
    for mod, path in files.items():
        text = strip_tests_and_comments(open(path, encoding="utf-8").read())
        paths = []
        for m in use_re.finditer(text):
            paths.extend(expand_use(m.group(1)))
        code = use_re.sub(" ", text)
        for m in path_re.finditer(code):
            paths.append(m.group(1).split("::"))
        for segs in paths:
            target = resolve(mod, segs)
            if target is not None and target != mod:
                graph[mod].add(target)

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

    for v in sorted(graph):
        if v not in index:
            visit(v)

    def name(m):
        return os.path.relpath(files[m])

    circles = [sorted(c) for c in sccs if len(c) > 1]
    for comp in circles:
        print(f"{src}: circle among:", ", ".join(name(m) for m in comp))
        # Spell out one shortest cycle through the component's first file.
        comp_set, start = set(comp), comp[0]
        prev, frontier, found = {start: None}, [start], None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == start:
                        found = v
                        break
                    if w in comp_set and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        cycle, v = [start], found
        while v is not None and v != start:
            cycle.insert(1, v)
            v = prev[v]
        print("  e.g.", " -> ".join(name(m) for m in cycle + [start]))
    print(f"{src}: {len(files)} files, {sum(len(s) for s in graph.values())} imports, {len(circles)} circle(s)")
    return bool(circles)


sys.setrecursionlimit(10000)
srcs = sys.argv[1:] or ["worker/src"]
bad = [src for src in srcs if check(src)]
sys.exit(1 if bad else 0)
