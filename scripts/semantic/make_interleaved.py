#!/usr/bin/env python3
"""Build the interleaved topic-switch fixtures for the semantic chunking strategy.

Each fixture is made from two corpus documents on clearly different topics,
A and B. Sections are taken alternately, A1 B1 A2 B2 ..., so that every
section boundary is a topic switch whose position is known by construction.

A *section* is one paragraph, or two paragraphs that are adjacent in the
source (nothing but blank lines between them), copied from the corpus file
as-is: the original lines, line breaks and inline markup (links, emphasis,
inline code) are kept. The sections of one source appear in source order and
never overlap. Only running prose is taken; headings, fenced code, tables,
lists, block quotes, images, HTML, shortcodes, link reference definitions and
front matter are never selected (see `prose_reason`).

Paragraphs are joined with one blank line, and sections with one blank line
too: nothing at a switch point differs from an ordinary paragraph break. The
file ends with a single "\\n".

The selections are hard-coded below as 1-based, inclusive line ranges of the
corpus files (one range per paragraph), so they can be audited with
`sed -n START,ENDp FILE`. The script checks every selected paragraph against
the rules before writing anything, and refuses to write if one fails.

Outputs (under shared/tests/fixtures/semantic/ of the repository):
  interleaved-en-1.md .. interleaved-en-3.md, interleaved-ru-1.md
  interleaved.json   {"fixtures": [{"file", "sources": [{"path", "licence"}],
                      "switches": [UTF-8 byte offsets where sections 2..N start],
                      "sections": N}]}  sources are listed A first, then B.

Usage:
  make_interleaved.py [--corpus DIR] [--out DIR]   build (default)
  make_interleaved.py --check                      verify the written files
                                                   against a fresh build
  make_interleaved.py --candidates CORPUS_REL_PATH list candidate paragraphs
                                                   of a corpus file (for
                                                   choosing selections)

Python 3 standard library only. Output depends only on the corpus: running it
twice gives identical bytes.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_CORPUS = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "corpus"))
DEFAULT_OUT = os.path.join(REPO_ROOT, "shared", "tests", "fixtures", "semantic")

# Limits per section (inclusive).
MIN_SENTENCES, MAX_SENTENCES = 4, 9
MIN_WORDS, MAX_WORDS = 80, 250
MIN_SECTIONS, MAX_SECTIONS = 8, 12

# corpus folder -> (GitHub repository, commit, licence of the text), from PROVENANCE.md
REPOS = {
    "en/kubernetes+enhancements": ("kubernetes/enhancements", "64765b4b02389318f2113119dd9e491479f978a0", "Apache-2.0"),
    "en/rust-lang+rfcs": ("rust-lang/rfcs", "354518a8c9025f40be6f730452c1bfe71a12dc22", "MIT OR Apache-2.0"),
    "en/rust-lang+book": ("rust-lang/book", "917544888a55e4da7109bdba8c88c893c0da70f4", "MIT OR Apache-2.0"),
    "en/open-telemetry+opentelemetry.io": ("open-telemetry/opentelemetry.io", "dd5997c8b9fafbf72ea6b8059ade242d88b8f118", "CC-BY-4.0"),
    "ru/reactjs+ru.react.dev": ("reactjs/ru.react.dev", "2361adda823b4cb04f0c46aade0303d20e6cb8a4", "CC-BY-4.0"),
    "ru/rust-lang-ru+book": ("rust-lang-ru/book", "efa545aa947dac1f900970865c3f1f77c16060b5", "MIT OR Apache-2.0"),
    "ru/vuejs-translations+docs-ru": ("vuejs-translations/docs-ru", "ed53a951b62483bb8a9e70b98815edd7491b475c", "CC-BY-4.0"),
}

# The fixtures. "a" and "b": corpus path (relative to the corpus folder) and
# the sections taken from it, in source order; a section is a list of one or
# two paragraphs, each paragraph a (first line, last line) range, 1-based and
# inclusive. Sections alternate A1 B1 A2 B2 ...; A has the extra one when the
# count is odd.
FIXTURES = [
    {
        # A: IEEE 754 floating-point / NaN semantics; B: an engineer's account of
        # migrating a company's telemetry to OpenTelemetry (interview write-up).
        "file": "interleaved-en-1.md",
        "a": ("en/rust-lang+rfcs/text/3514-float-semantics.md", [
            [(9, 11), (13, 16)],
            [(56, 58), (60, 61)],
            [(138, 143)],
            [(220, 226)],
            [(265, 271)],
        ]),
        "b": ("en/open-telemetry+opentelemetry.io/content/en/blog/2023/end-user-q-and-a-04.md", [
            [(60, 62), (64, 68)],
            [(95, 99), (101, 104)],
            [(166, 172), (174, 177)],
            [(387, 393)],
            [(421, 428)],
        ]),
    },
    {
        # A: request queuing and fairness in the Kubernetes API server;
        # B: how a foundation funds, hires and pays open-source maintainers.
        "file": "interleaved-en-2.md",
        "a": ("en/kubernetes+enhancements/keps/sig-api-machinery/1040-priority-and-fairness/README.md", [
            [(297, 302), (304, 310)],
            [(582, 592)],
            [(1632, 1634), (1636, 1641)],
            [(2095, 2101), (2103, 2108)],
            [(2848, 2861)],
            [(2942, 2954)],
        ]),
        "b": ("en/rust-lang+rfcs/text/3931-rfmf-rust-foundation-maintainer-fund.md", [
            [(25, 25), (27, 27)],
            [(157, 157), (159, 159)],
            [(183, 183), (185, 185)],
            [(219, 219), (221, 221)],
            [(297, 297)],
            [(318, 318), (320, 320)],
        ]),
    },
    {
        # A: the state design pattern, explained on a blog-post workflow;
        # B: community managers' personal stories (careers, hobbies, community).
        "file": "interleaved-en-3.md",
        "a": ("en/rust-lang+book/src/ch18-03-oo-design-patterns.md", [
            [(3, 8), (10, 14)],
            [(79, 86)],
            [(210, 216), (218, 221)],
            [(376, 382), (384, 390)],
            [(531, 539)],
        ]),
        "b": ("en/open-telemetry+opentelemetry.io/content/en/blog/2026/hello-from-community-managers/index.md", [
            [(15, 20), (22, 26)],
            [(66, 76)],
            [(78, 90)],
            [(114, 120), (122, 127)],
        ]),
    },
    {
        # A: when a program should panic and when it should return an error
        # (Rust); B: React components, state and Effects in a web UI.
        "file": "interleaved-ru-1.md",
        "a": ("ru/rust-lang-ru+book/rustbook-ru/src/ch09-03-to-panic-or-not-to-panic.md", [
            [(3, 3)],
            [(33, 33), (35, 35)],
            [(39, 39)],
            [(78, 78)],
        ]),
        "b": ("ru/reactjs+ru.react.dev/src/content/learn/you-might-not-need-an-effect.md", [
            [(195, 195), (197, 197)],
            [(412, 412), (415, 415)],
            [(453, 453), (455, 455)],
            [(791, 791), (793, 793)],
        ]),
    },
]


# --------------------------------------------------------------------------
# Markdown blocks

LIST_RE = re.compile(r"^\s*([-*+]|\d{1,9}[.)])(\s|$)")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HTML_OPEN_RE = re.compile(r"^<([A-Za-z][A-Za-z0-9-]*)(\s[^>]*)?>\s*$")
TERMINAL_RE = re.compile(r"[.!?…][\"'”’»)*_]*$")


def read_corpus_file(corpus, rel):
    with open(os.path.join(corpus, rel), "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")
    if "\r" in text:
        raise SystemExit(f"{rel}: has carriage returns")
    return text.split("\n")


def blocks(lines):
    """Split a Markdown file into blocks: (kind, first, last), 0-based inclusive
    line indexes. kind is "text" for a run of non-blank lines outside fences,
    comments, front matter and HTML containers, otherwise "other". Adjacent
    text blocks are separated by blank lines only."""
    out = []
    i, n = 0, len(lines)
    if n and lines[0].strip() in ("---", "+++"):
        j = 1
        while j < n and lines[j].strip() != lines[0].strip():
            j += 1
        out.append(("other", 0, min(j, n - 1)))
        i = j + 1
    while i < n:
        line = lines[i]
        if line.strip() == "":
            i += 1
            continue
        m = FENCE_RE.match(line)
        if m:
            fence = m.group(1)
            j = i + 1
            while j < n:
                s = lines[j].strip()
                if s.startswith(fence[0] * len(fence)) and set(s) <= {fence[0]}:
                    break
                j += 1
            out.append(("other", i, min(j, n - 1)))
            i = j + 1
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            j = i + 1
            while j < n and "-->" not in lines[j]:
                j += 1
            out.append(("other", i, min(j, n - 1)))
            i = j + 1
            continue
        m = HTML_OPEN_RE.match(line)
        if m and not line.rstrip().endswith("/>"):
            # an HTML/MDX container (<Intro>, <Note>, <div ...>): skip to its
            # closing tag, blank lines inside included
            tag = m.group(1)
            close = "</" + tag + ">"
            j = i
            while j < n and close not in lines[j]:
                j += 1
            if j < n:
                out.append(("other", i, j))
                i = j + 1
                continue
        j = i
        while j + 1 < n and lines[j + 1].strip() != "" and not FENCE_RE.match(lines[j + 1]):
            j += 1
        out.append(("text", i, j))
        i = j + 1
    return out


def strip_code(text):
    return re.sub(r"(`+)(.+?)\1", " ", text)


def prose_reason(lines, lang):
    """None if the paragraph (its lines) is running prose, else why not."""
    for line in lines:
        if line != line.lstrip():
            return "indented line"
        if line != line.rstrip():
            return "trailing whitespace"
        if "\t" in line:
            return "tab"
    first = lines[0]
    if re.match(r"^(#|>|\||<|\{|!\[|\[[^\]]*\]:|\$\$|:::|[-*_=]{3,})", first):
        return "not a paragraph (heading, quote, table, HTML, image, ...)"
    if any(LIST_RE.match(line) for line in lines):
        return "list item"
    if any(re.match(r"^(=+|-+)\s*$", line) for line in lines):
        return "setext heading"
    text = " ".join(lines)
    bare = strip_code(text)
    if "`" in bare:
        return "unbalanced backticks"
    if "{{" in text or "{%" in text or "{#" in text:
        return "shortcode or include"
    if "<" in bare or "|" in bare:
        return "HTML or table syntax"
    if re.search(r"\]\[[^\]]*\]", bare) or "[^" in bare:
        return "reference link or footnote"
    if re.search(r"\[[^\]]+\](?![(\[:])", re.sub(r"\[[^\]]*\]\([^)]*\)", "L", bare)):
        return "shortcut reference link"
    if not TERMINAL_RE.search(text):
        return "does not end a sentence"
    letters_lat = len(re.findall(r"[A-Za-z]", bare))
    letters_cyr = len(re.findall(r"[А-Яа-яЁё]", bare))
    total = letters_lat + letters_cyr
    if total == 0:
        return "no letters"
    if lang == "ru" and letters_cyr < 0.8 * total:
        return "not mostly Cyrillic"
    if lang == "en" and letters_lat < 0.98 * total:
        return "not English"
    return None


# --------------------------------------------------------------------------
# Sentences and words

ABBREVIATIONS = {
    "e.g", "i.e", "vs", "cf", "mr", "mrs", "ms", "dr", "st", "no", "fig", "al", "approx",
    "т.е", "т", "е", "д", "т.д", "т.п", "т.к", "г", "гг", "др", "см", "напр", "стр", "рис", "ср",
}


def sentence_text(text):
    """Text with markup reduced for sentence splitting: inline code becomes
    "Code", links their text, URLs "URL"."""
    t = " ".join(text.split())
    t = re.sub(r"(`+)(.+?)\1", "Code", t)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"https?://\S+", "URL", t)
    return t


def sentences(text):
    t = sentence_text(text)
    out, start = [], 0
    for m in re.finditer(r"([.!?…]+)([\"'”’»)*_]*)\s+(?=[\"'“‘«(*_]*[A-ZА-ЯЁ0-9])", t):
        if m.group(1) == ".":
            before = re.search(r"(\S+)$", t[start:m.start(1)])
            word = before.group(1).lstrip("(\"'“‘«*_").lower() if before else ""
            if word in ABBREVIATIONS or re.fullmatch(r"[a-zа-яё]", word):
                continue
        out.append(t[start:m.end()].strip())
        start = m.end()
    if t[start:].strip():
        out.append(t[start:].strip())
    return out


def words(text):
    return len(text.split())


# --------------------------------------------------------------------------
# Candidates (exploration helper)

def lang_of(rel):
    return rel.split("/", 1)[0]


def list_candidates(corpus, rel):
    lines = read_corpus_file(corpus, rel)
    bl = blocks(lines)
    lang = lang_of(rel)
    paras = {}
    for k, (kind, a, b) in enumerate(bl):
        if kind == "text" and prose_reason(lines[a:b + 1], lang) is None:
            t = "\n".join(lines[a:b + 1])
            paras[k] = (a + 1, b + 1, len(sentences(t)), words(t), t)
    for k in sorted(paras):
        a, b, s, w, t = paras[k]
        mark = "*" if MIN_SENTENCES <= s <= MAX_SENTENCES and MIN_WORDS <= w <= MAX_WORDS else " "
        pair = ""
        if k + 1 in paras:
            s2, w2 = s + paras[k + 1][2], w + paras[k + 1][3]
            if MIN_SENTENCES <= s2 <= MAX_SENTENCES and MIN_WORDS <= w2 <= MAX_WORDS:
                pair = f"  +next: s={s2} w={w2}"
        flat = " ".join(t.split())
        print(f"{mark} ({a}, {b}) s={s} w={w}{pair} | {flat[:150]}")


# --------------------------------------------------------------------------
# Build

def source_info(rel):
    folder = "/".join(rel.split("/")[:2])
    return REPOS[folder]


def take_section(corpus, rel, ranges, cache):
    """The text of one section, after checking every rule that can be checked
    on the source. Returns (text, sentences, words)."""
    if rel not in cache:
        lines = read_corpus_file(corpus, rel)
        cache[rel] = (lines, blocks(lines))
    lines, bl = cache[rel]
    lang = lang_of(rel)
    index = {(a + 1, b + 1): k for k, (kind, a, b) in enumerate(bl) if kind == "text"}
    paras, ks = [], []
    for (a, b) in ranges:
        if (a, b) not in index:
            raise SystemExit(f"{rel}:{a}-{b}: not exactly one paragraph of the file")
        reason = prose_reason(lines[a - 1:b], lang)
        if reason:
            raise SystemExit(f"{rel}:{a}-{b}: not prose: {reason}")
        ks.append(index[(a, b)])
        paras.append("\n".join(lines[a - 1:b]))
    if not 1 <= len(paras) <= 2:
        raise SystemExit(f"{rel}: a section has 1 or 2 paragraphs")
    if len(ks) == 2 and ks[1] != ks[0] + 1:
        raise SystemExit(f"{rel}:{ranges}: paragraphs are not adjacent in the source")
    text = "\n\n".join(paras)
    return text, len(sentences(text)), words(text)


def build(corpus):
    """{file name: bytes} and the truth document."""
    files, truth, cache = {}, {"fixtures": []}, {}
    for fx in FIXTURES:
        picks = {}
        for side in ("a", "b"):
            rel, sections = fx[side]
            last = 0
            for sec in sections:
                if sec[0][0] <= last:
                    raise SystemExit(f"{fx['file']}: sections of {rel} overlap or are out of order")
                last = sec[-1][1]
            picks[side] = [take_section(corpus, rel, sec, cache) for sec in sections]
        na, nb = len(picks["a"]), len(picks["b"])
        if na - nb not in (0, 1):
            raise SystemExit(f"{fx['file']}: A needs as many sections as B, or one more")
        order = []
        for i in range(na):
            order.append(("a", picks["a"][i]))
            if i < nb:
                order.append(("b", picks["b"][i]))
        if not MIN_SECTIONS <= len(order) <= MAX_SECTIONS:
            raise SystemExit(f"{fx['file']}: {len(order)} sections")
        out, switches = b"", []
        for i, (side, (text, s, w)) in enumerate(order):
            if not MIN_SENTENCES <= s <= MAX_SENTENCES or not MIN_WORDS <= w <= MAX_WORDS:
                raise SystemExit(f"{fx['file']} section {i + 1} ({side}): {s} sentences, {w} words")
            if i:
                out += b"\n\n"
                switches.append(len(out))
            out += text.encode("utf-8")
        out += b"\n"
        files[fx["file"]] = out
        sources = []
        for side in ("a", "b"):
            rel = fx[side][0]
            sources.append({"path": "corpus/" + rel, "licence": source_info(rel)[2]})
        truth["fixtures"].append({
            "file": fx["file"],
            "sources": sources,
            "switches": switches,
            "sections": len(order),
        })
    return files, truth


def truth_bytes(truth):
    return (json.dumps(truth, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def verify(files, truth, corpus):
    """Checks on the written form: switch offsets at paragraph starts, each
    section from one source, formatting rules. Returns a list of problems."""
    problems = []
    for fx, entry in zip(FIXTURES, truth["fixtures"]):
        data = files[entry["file"]]
        name = entry["file"]
        if b"\r" in data or b"\t" in data:
            problems.append(f"{name}: CR or tab")
        if not data.endswith(b"\n") or data.endswith(b"\n\n"):
            problems.append(f"{name}: must end with exactly one newline")
        if b"\n\n\n" in data:
            problems.append(f"{name}: more than one blank line")
        for ln in data.decode("utf-8").split("\n"):
            if ln != ln.rstrip():
                problems.append(f"{name}: trailing whitespace in {ln[-30:]!r}")
            if re.match(r"^(\s|#|>|[-+*]\s|\d+[.)]\s|=|\||<|```|~~~|\[[^\]]*\]:)", ln) or re.fullmatch(
                r"\s*([-*_])\s*(\1\s*){2,}", ln
            ):
                problems.append(f"{name}: line starts like a non-paragraph block: {ln[:30]!r}")
        sw = entry["switches"]
        if len(sw) != entry["sections"] - 1:
            problems.append(f"{name}: {len(sw)} switches for {entry['sections']} sections")
        for off in sw:
            if data[off - 2:off] != b"\n\n" or data[off:off + 1] in (b"\n", b" ", b""):
                problems.append(f"{name}: switch {off} is not at a paragraph start")
        bounds = [0] + sw + [len(data)]
        source_text = {}
        for side in ("a", "b"):
            rel = fx[side][0]
            with open(os.path.join(corpus, rel), encoding="utf-8") as f:
                source_text[side] = f.read()
        for i in range(len(bounds) - 1):
            chunk = data[bounds[i]:bounds[i + 1]].decode("utf-8").strip("\n")
            side = "a" if i % 2 == 0 else "b"
            other = "b" if side == "a" else "a"
            paras = chunk.split("\n\n")
            for p in paras:
                if p not in source_text[side]:
                    problems.append(f"{name} section {i + 1}: paragraph not found in {fx[side][0]}")
                if p in source_text[other]:
                    problems.append(f"{name} section {i + 1}: paragraph also in {fx[other][0]}")
            joined = r"\n(?:[ \t]*\n)+".join(re.escape(p) for p in paras)
            if len(paras) > 1 and not re.search(joined, source_text[side]):
                problems.append(f"{name} section {i + 1}: paragraphs not consecutive in the source")
            s, w = len(sentences(chunk)), words(chunk)
            if not MIN_SENTENCES <= s <= MAX_SENTENCES or not MIN_WORDS <= w <= MAX_WORDS:
                problems.append(f"{name} section {i + 1}: {s} sentences, {w} words")
            if not 1 <= len(paras) <= 2:
                problems.append(f"{name} section {i + 1}: {len(paras)} paragraphs")
        if not MIN_SECTIONS <= entry["sections"] <= MAX_SECTIONS:
            problems.append(f"{name}: {entry['sections']} sections")
    return problems


def report(files, truth):
    for entry in truth["fixtures"]:
        data = files[entry["file"]]
        bounds = [0] + entry["switches"] + [len(data)]
        print(f"{entry['file']}: {len(data)} bytes, {entry['sections']} sections, switches {entry['switches']}")
        for i in range(len(bounds) - 1):
            chunk = data[bounds[i]:bounds[i + 1]].decode("utf-8").strip("\n")
            print(f"  {i + 1:2} {'AB'[i % 2]} paragraphs={chunk.count(chr(10) * 2) + 1} "
                  f"sentences={len(sentences(chunk))} words={words(chunk)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="compare the files in --out with a fresh build")
    ap.add_argument("--candidates", metavar="REL_PATH")
    ap.add_argument("--sentences", action="store_true", help="with the build: print each sentence")
    args = ap.parse_args()
    if args.candidates:
        list_candidates(args.corpus, args.candidates)
        return 0
    files, truth = build(args.corpus)
    files["interleaved.json"] = truth_bytes(truth)
    problems = verify(files, truth, args.corpus)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    if args.sentences:
        for entry in truth["fixtures"]:
            data = files[entry["file"]]
            bounds = [0] + entry["switches"] + [len(data)]
            for i in range(len(bounds) - 1):
                chunk = data[bounds[i]:bounds[i + 1]].decode("utf-8")
                for k, s in enumerate(sentences(chunk)):
                    print(f"{entry['file']} #{i + 1}.{k + 1}: {s}")
    if args.check:
        stale = []
        for name, data in sorted(files.items()):
            path = os.path.join(args.out, name)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                stale.append(name)
        if stale:
            print("differs from a fresh build: " + ", ".join(stale), file=sys.stderr)
            return 1
        report(files, truth)
        print("ok: files match a fresh build and pass the checks")
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, data in sorted(files.items()):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    report(files, truth)
    return 0


if __name__ == "__main__":
    sys.exit(main())
