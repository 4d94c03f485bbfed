#!/usr/bin/env python3
"""Check every relative link and #anchor in the repository's Markdown files.

    python3 scripts/check-links.py [FILE.md ...]

Reads the Markdown files git tracks (or walks the tree without git), skips
data sets (folders named documents, fixtures, golden, corpus; a README.md
there is still read), and checks each inline link, image and reference
definition that is not an absolute URL: the target file or folder must
exist, and an anchor (`page.md#section`, `#section`) must be a heading of
the target as GitHub renders it (lowercase, punctuation removed, spaces to
hyphens, `-1`, `-2` for repeats) or an explicit `<a id>`/`<a name>`. Links
inside code blocks and code spans are not links. Exits 1 listing every
broken link as `file:line: target (why)`, else 0.
"""
import os
import re
import subprocess
import sys
import unicodedata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DATA_DIRS = {"documents", "fixtures", "golden", "corpus", "target", "node_modules", "models"}

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)


def markdown_files():
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.md"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names if n.endswith(".md")]
    keep = []
    for f in sorted(set(files)):
        parts = f.split("/")
        if any(p in DATA_DIRS or p.startswith(".") for p in parts[:-1]) and parts[-1] != "README.md":
            continue
        if any(p in {"target", "node_modules"} or p.startswith(".") for p in parts[:-1]):
            continue
        if os.path.isfile(os.path.join(ROOT, f)):
            keep.append(f)
    return keep


def strip_code_spans(line):
    return re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def lines_outside_code(text):
    """(line number, line) of every line outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield n, line


def slug(heading):
    """GitHub's anchor for a heading's text."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    t = re.sub(r"<[^>]+>", "", t)  # inline HTML
    t = t.strip().lower()
    out = []
    for ch in t:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LN" or cat == "Mn":
            out.append("-" if ch == " " else ch)
    return "".join(out)


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        found, seen = set(), {}
        try:
            text = open(path, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            text = ""
        for _, line in lines_outside_code(text):
            for a in HTML_ANCHOR.findall(line):
                found.add(a)
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                if s in seen:
                    seen[s] += 1
                    found.add(f"{s}-{seen[s]}")
                else:
                    seen[s] = 0
                    found.add(s)
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check(rel):
    path = os.path.join(ROOT, rel)
    text = open(path, encoding="utf-8").read()
    broken = []
    for n, line in lines_outside_code(text):
        targets = [m.group(1) for m in LINK.finditer(strip_code_spans(line))]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) or t.startswith("//"):
                continue  # http:, https:, mailto:, ...
            file_part, _, anchor = t.partition("#")
            file_part = file_part.split("?")[0]
            if file_part:
                target = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not target.startswith(ROOT):
                    broken.append(f"{rel}:{n}: {t} (outside the repository)")
                    continue
                if not os.path.exists(target):
                    broken.append(f"{rel}:{n}: {t} (no such file)")
                    continue
            else:
                target = path
            if anchor and target.endswith(".md") and os.path.isfile(target):
                if anchor not in anchors(target) and anchor.lower() not in anchors(target):
                    broken.append(f"{rel}:{n}: {t} (no such anchor in {os.path.relpath(target, ROOT)})")
    return broken


def main():
    files = sys.argv[1:] or markdown_files()
    broken = []
    for f in files:
        broken += check(os.path.relpath(os.path.abspath(f), ROOT) if sys.argv[1:] else f)
    if broken:
        print("\n".join(broken))
        print(f"{len(broken)} broken link(s) in {len(files)} Markdown files", file=sys.stderr)
        sys.exit(1)
    print(f"links: {len(files)} Markdown files, every relative link and anchor resolves")


if __name__ == "__main__":
    main()
