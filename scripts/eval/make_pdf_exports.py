#!/usr/bin/env python3
"""Make the PDF-export boundary set (eval/pdf-exports/) from real PDFs.

    python3 scripts/eval/make_pdf_exports.py ../shared/corpus eval/pdf-exports

Each chosen corpus document (Markdown with real headings) is rendered to
HTML (Python-Markdown), printed to PDF by headless Chromium with its default
page header and footer (date and title on top, file address and "N/M" page
numbers below), and the PDF is turned back into text the way converters do,
losing every heading mark:

- `pdftotext-*.md`: poppler's `pdftotext` (reading order; pages separated by
  form feeds);
- `pypdf-*.md`: pypdf's `extract_text` per page, pages joined by a blank line
  (no form feed: only the printed page numbers tell the pages).

The gold boundaries (`boundaries.jsonl`, code point offsets of the exported
file) are where the source's headings start in the export: each heading
(ATX, outside fenced code) that follows body text of its own section, found
in order in the export (its words, any whitespace between). A heading the
export does not show in order is left out and counted. The document's first
heading starts the first chunk and is no boundary.

The page header carries the date of the run: regenerated files differ
there and nowhere else. Requires: chromium (Debian package), pdftotext (poppler-utils), and the
pinned PyPI packages markdown==3.7 and pypdf==5.1.0. 
"""

import argparse
import html
import json
import os
import re
import subprocess
import sys

# Chosen by path: English prose with headings, code, lists and tables, from
# three repositories of the corpus (licences in SOURCES.md).
DOCUMENTS = [
    "en/rust-lang+rfcs/text/0001-private-fields.md",
    "en/rust-lang+rfcs/text/0230-remove-runtime.md",
    "en/rust-lang+rfcs/text/1105-api-evolution.md",
    "en/rust-lang+rfcs/text/1210-impl-specialization.md",
    "en/rust-lang+rfcs/text/2126-path-clarity.md",
    "en/rust-lang+rfcs/text/2585-unsafe-block-in-unsafe-fn.md",
    "en/rust-lang+book/src/ch04-01-what-is-ownership.md",
    "en/rust-lang+book/src/ch08-02-strings.md",
    "en/rust-lang+book/src/ch09-02-recoverable-errors-with-result.md",
    "en/rust-lang+book/src/ch16-01-threads.md",
    "en/rust-lang+book/src/ch15-05-interior-mutability.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/concepts/signals/traces.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/collector/configuration.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/concepts/sampling/index.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/concepts/observability-primer.md",
]

# Held out: chosen by position in sorted listings of the corpus (the 10th,
# 60th and 200th KEP of 8-25 KB, ...) after the heuristics were tuned on
# DOCUMENTS, and not looked at before they were scored.
HELDOUT = [
    "en/kubernetes+enhancements/keps/sig-api-machinery/1904-efficient-watch-resumption/README.md",
    "en/kubernetes+enhancements/keps/sig-auth/3130-kms-observability/README.md",
    "en/kubernetes+enhancements/keps/sig-node/5607-hostnetwork-userns/README.md",
    "en/rust-lang+rfcs/text/1725-unaligned-access.md",
    "en/rust-lang+rfcs/text/3052-optional-authors-field.md",
    "en/rust-lang+rfcs/text/3668-async-closures.md",
    "en/rust-lang+book/src/ch08-00-common-collections.md",
    "en/rust-lang+book/src/ch15-06-reference-cycles.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/collector/management.md",
    "en/open-telemetry+opentelemetry.io/content/en/docs/languages/swift/libraries.md",
]

CSS = """body { font-family: 'DejaVu Sans', sans-serif; font-size: 11pt; }
h1 { font-size: 20pt; } h2 { font-size: 16pt; } h3 { font-size: 13pt; }
pre, code { font-family: 'DejaVu Sans Mono', monospace; font-size: 9pt; }
table { border-collapse: collapse; } td, th { border: 1px solid #999; padding: 2px; }"""


def strip_front_matter(text):
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5 :]
    return text


def headings(markdown):
    """(level, text, has_body_before, first_body_words) of each ATX heading
    outside fences."""
    out, fence, body = [], None, False
    lines = markdown.split("\n")
    for n, line in enumerate(lines):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            body = True
            continue
        if m:
            fence = m.group(1)
            body = True
            continue
        h = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if h:
            out.append((len(h.group(1)), h.group(2), body, following_words(lines[n + 1 :])))
            body = False
        elif line.strip():
            body = True
    return out


def following_words(rest):
    """The first words of the paragraph after a heading (none when a heading,
    code or a list comes first): they tell the heading from a line that
    only reads the same (an entry of a table of contents)."""
    for line in rest:
        if not line.strip():
            continue
        if re.match(r"^\s*([#>|`~<*+-]|\d+\.)", line):
            return []
        return plain(line).split()[:3]
    return []


def plain(inline):
    """A heading's text as a reader sees it (Markdown and HTML marks gone)."""
    s = re.sub(r"<[^>]+>", "", inline)
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[`*_]", "", s)
    s = re.sub(r"\{#[^}]*\}", "", s)
    return html.unescape(s).strip()


def render(markdown_text, title, workdir, stem):
    import markdown  # pinned: markdown==3.7

    # Python-Markdown takes a fence's info string as one word: mdBook's
    # "```rust,ignore" would print as text and open a fence in the export.
    markdown_text = re.sub(r"(?m)^([ \t]*)(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n`]*$", r"\1\2\3", markdown_text)
    # Nor does it know fences inside block quotes: they would print as text.
    markdown_text = re.sub(r"(?m)^([ \t]*>[ \t>]*)(`{3,}|~{3,})[^\n]*$", r"\1", markdown_text)
    body = markdown.markdown(markdown_text, extensions=["fenced_code", "tables"])
    page = f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{CSS}</style></head><body>{body}</body></html>"
    src = os.path.join(workdir, stem + ".html")
    pdf = os.path.join(workdir, stem + ".pdf")
    with open(src, "w", encoding="utf-8") as f:
        f.write(page)
    chromium = os.environ.get("CHROMIUM", "chromium")
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         f"--print-to-pdf={pdf}", "file://" + src],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return pdf


def export_pdftotext(pdf):
    return subprocess.run(["pdftotext", "-enc", "UTF-8", pdf, "-"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def export_pypdf(pdf):
    from pypdf import PdfReader  # pinned: pypdf==5.1.0

    return "\n\n".join(p.extract_text() or "" for p in PdfReader(pdf).pages) + "\n"


def gold(export, heads):
    """Code point offsets of the headings in `export`, and how many were missed."""
    offsets, pos, missed = [], 0, 0
    for k, (_, text, body_before, after) in enumerate(heads):
        words = plain(text).split()
        if not words:
            continue
        head = r"(?m)^[ \t]*(" + r"\s+".join(map(re.escape, words)) + r")[ \t]*$"
        m = None
        if after:
            # The heading, then (furniture of a page break aside) its text.
            m = re.compile(head + r"(?:\s*\n[^\n]{0,100}){0,6}?\s*" + r"\s+".join(map(re.escape, after))).search(export, pos)
        if not m:
            m = re.compile(head).search(export, pos)
        if not m:
            missed += 1
            continue
        pos = m.end()
        if k > 0 and body_before:
            offsets.append(m.start(1))
    return offsets, missed


def write_headed(out, docs):
    """The sources as they are, gold at their headings' line starts."""
    os.makedirs(os.path.join(out, "documents"), exist_ok=True)
    with open(os.path.join(out, "boundaries.jsonl"), "w", encoding="utf-8") as gold_file:
        for rel, source, heads in docs:
            name = "headed-" + re.sub(r"[^a-z0-9]+", "-", os.path.basename(rel)[:-3].lower()) + ".md"
            with open(os.path.join(out, "documents", name), "w", encoding="utf-8", newline="") as f:
                f.write(source)
            offsets, pos, lines = [], 0, source.split("\n")
            starts, at = [], 0
            for line in lines:
                starts.append(at)
                at += len(line) + 1
            k = 0
            for level, text, body_before, _ in heads:
                while k < len(lines) and not re.match(r"^ {0,3}#{1,6}\s+" + re.escape(text), lines[k]):
                    k += 1
                if k == len(lines):
                    break
                if body_before and starts[k] > 0:
                    offsets.append(starts[k])
                k += 1
            gold_file.write(json.dumps({"document": name, "lang": "en", "kind": "headed", "boundaries": offsets}) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="the corpus folder (../shared/corpus)")
    ap.add_argument("out", help="the dataset folder to write (eval/pdf-exports)")
    ap.add_argument("--set", choices=("tuning", "heldout"), default="tuning",
                    help="which documents: the ones the heuristics were tuned on, or the held-out ones")
    ap.add_argument("--headed", metavar="DIR",
                    help="also write the source documents (front matter cut) with their headings as gold: the ceiling")
    args = ap.parse_args(argv)
    headed = []
    docs = os.path.join(args.out, "documents")
    os.makedirs(docs, exist_ok=True)
    lines, total_missed = [], 0
    # A fixed folder: the file address is in every page's footer.
    tmp = "/tmp/chunk-worker-pdf-exports"
    os.makedirs(tmp, exist_ok=True)
    for rel in DOCUMENTS if args.set == "tuning" else HELDOUT:
        with open(os.path.join(args.corpus, rel), encoding="utf-8") as f:
            source = strip_front_matter(f.read())
        heads = headings(source)
        if args.headed:
            headed.append((rel, source, heads))
        base = os.path.basename(rel)[:-3]
        if base == "README":  # a KEP: its folder names it
            base = os.path.basename(os.path.dirname(rel))
        stem = re.sub(r"[^a-z0-9]+", "-", rel.split("/", 2)[1].split("+")[1] + "-" + base.lower()).strip("-")
        pdf = render(source, stem, tmp, stem)
        for tool, export in (("pdftotext", export_pdftotext), ("pypdf", export_pypdf)):
            text = export(pdf)
            name = f"{tool}-{stem}.md"
            with open(os.path.join(docs, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)
            offsets, missed = gold(text, heads)
            total_missed += missed
            lines.append({"document": name, "lang": "en", "kind": "pdf-export", "boundaries": offsets})
            print(f"{name}: {len(offsets)} boundaries, {missed} headings not found", file=sys.stderr)
    if args.headed:
        write_headed(args.headed, headed)
    with open(os.path.join(args.out, "boundaries.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    print(f"{len(lines)} documents, {sum(len(l['boundaries']) for l in lines)} boundaries, "
          f"{total_missed} headings not found in order", file=sys.stderr)


if __name__ == "__main__":
    main()
