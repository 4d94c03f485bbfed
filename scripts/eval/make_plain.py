#!/usr/bin/env python3
"""Rebuild eval/retrieval-plain/documents/ from pinned public sources.

    python3 scripts/eval/make_plain.py [--mirror DIR] [--out DIR] [--check] [--list]

Every document is cut from a file of a public GitHub repository at a pinned
commit (see SOURCES below and eval/retrieval-plain/SOURCES.tsv). The
repositories must be present as git directories under --mirror (default
/work/.mirror), one per repository, named OWNER+NAME/repo (bare or with a
.git inside), e.g. fetched with

    git clone --bare https://github.com/OWNER/NAME MIRROR/OWNER+NAME/repo

(any clone containing the pinned commit works). Files are read with
`git show COMMIT:PATH`, so nothing but git and Python 3 is needed, except for
the Wikipedia articles: their wikitext is turned into plain text by the npm
package wtf_wikipedia 10.4.2 (MIT), which needs node and

    npm install --prefix DIR wtf_wikipedia@10.4.2     # pass --wtf DIR

What is done to a text, per kind (nothing else: no reformatting, no Markdown):

  plain     the file as is (NLTK inaugural / state_union: a member of the zip);
  slice     a verbatim substring of the file: from the first occurrence of a
            start marker (kept) to the first occurrence after it of an end
            marker (not kept), for a Project Gutenberg text the part between
            its "*** START" and "*** END" lines (licence boilerplate dropped),
            for an EDGAR submission the <TEXT> of its main <DOCUMENT>;
  json      one string field of a JSON file (10-K item 7, already plain text);
  jats      a PLOS article (JATS XML): title, abstract and body paragraphs,
            section titles on their own lines, blank line between blocks;
            figures, tables, formulas and the reference list are left out,
            inline citation labels such as [12] are kept as printed;
  wikitext  wtf_wikipedia's text() of each section, each section preceded by
            its title on a line of its own;
  enwiki    the same, for the wikitext of one page (by title) of the
            bzip2-compressed English Wikipedia XML dump excerpt that gensim
            ships as test data (revision id printed in SOURCES.tsv).

Then: bytes decoded (UTF-8, or Latin-1 where the source says so), CRLF/CR
turned into LF, a trailing newline ensured. --check compares the result
with the committed documents instead of writing them and exits 1 on any
difference.
"""

import argparse
import html
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_OUT = os.path.join(REPO_ROOT, "eval", "retrieval-plain", "documents")

NLTK = ("nltk/nltk_data", "5db857e6f7df11eabb5e5665836db9ec8df07e28")
SEC_EDGAR = ("sec-edgar/sec-edgar", "9eb2bb97fd9f8347c170e6e1883f0e27e250794e")
NEO4J = ("neo4j-examples/semantic-kernel-starter-kit", "203f1150547308b6206594d0ba5e1f0ecf6eb24e")
PLOS = ("PLOS/allofplos", "07fdeed848b2816a7fbf7da6418ef6e2076e1960")
WTF = ("spencermountain/wtf_wikipedia", "015abc2dce21856c2b0640d47e9337a091eaacfe")
GENSIM = ("piskvorky/gensim", "37f90ec121eb7cd401448a947e80953e0c53ccdc")
ENWIKI_DUMP = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

# GITenberg repositories (one Project Gutenberg ebook each): ebook number ->
# (repository, commit, file, encoding).
GUTENBERG = {
    33239: ("GITenberg/Encyclopaedia-Britannica-11th-Edition-Volume-5-Slice-5-Cat--to--Celt-_33239",
            "c873304fc181994ed68fb802f75e2e55f8ebdf4c", "33239-8.txt", "latin-1"),
    44002: ("GITenberg/Warren-Commission--2-of-26---Hearings-Vol.-II--of-15-_44002",
            "6860e3f4564c864286c69ffd97e06c4ac489ce87", "44002-8.txt", "latin-1"),
    44003: ("GITenberg/Warren-Commission--3-of-26---Hearings-Vol.-III--of-15-_44003",
            "a0773334f56f28051c6e443bbf99717dc69eebec", "44003-8.txt", "latin-1"),
    16432: ("GITenberg/Esperanto--Hearings-before-the-Committee-on-Education_16432",
            "b0ddc225a4eb964ac5a9da266b4ea5a843a524ce", "16432-8.txt", "latin-1"),
    10713: ("GITenberg/The-Bullitt-Mission-to-Russia--13-Testimony-before-the-Committee-on-Foreign-Relations-United-__10713",
            "54ea77c7b86d8a53bc72038828575fd2826c3889", "10713-8.txt", "latin-1"),
    18281: ("GITenberg/An-Account-of-the-Proceedings-on-the-Trial-of-Susan-B.-Anthony-on-the-Charge-of-Illegal-Votin__18281",
            "ad2fcb989471a433bf0a7c3eb9cbc114a801c4ad", "18281-8.txt", "latin-1"),
    31424: ("GITenberg/Report-of-the-Proceedings-at-the-Examination-of-Charles-G.-Davis-Esq.-on-the-Charge-of-Aiding__31424",
            "46ee8bd7a7e06d58737ec36fa9298b85c3bf1e1b", "31424.txt", "latin-1"),
    29414: ("GITenberg/An-Inquiry-into-the-Causes-and-Effects-of-the-Variolae-VaccinaeA-Disease-Discovered-in-Some-o__29414",
            "383e8ee9b08dfd7346beb2b6dd630d7813b1ae76", "29414-8.txt", "latin-1"),
    64143: ("GITenberg/Soil-and-Water-Pollution-Presented-to-the-American-Public-Health-Association-at-New-Orleans-D__64143",
            "2add43c64512188dde53bdbb5907b2b42e786ef7", "64143-0.txt", "utf-8"),
    17170: ("GITenberg/A-Study-of-Pueblo-Pottery-as-Illustrative-of-Zu-i-Culture-Growth.--13-Fourth-Annual-Report-of__17170",
            "c8b06c36e277960c351a67a04e4394557d67c5e1", "17170-0.txt", "utf-8"),
    17475: ("GITenberg/The-Lobster-Fishery-of-Maine--13-Bulletin-of-the-United-States-Fish-Commission-Vol.-19-Pages-__17475",
            "7f47caadf314723a5ee26892190cf0dde61240f3", "17475.txt", "latin-1"),
    25454: ("GITenberg/Introduction-of-the-Locomotive-Safety-TruckContributions-from-the-Museum-of-History-and-Techn__25454",
            "3f8074dca7989406c11d8a193823107fff4cca1b", "25454-8.txt", "latin-1"),
}

# name -> (kind, spec)
DOCUMENTS = {}


def doc(name, kind, **spec):
    DOCUMENTS[name] = (kind, spec)


# ---------------------------------------------------------------- the documents
# Split A
doc("speech-inaugural-1841-harrison.md", "nltk", corpus="inaugural", member="1841-Harrison.txt")
doc("speech-inaugural-1861-lincoln.md", "nltk", corpus="inaugural", member="1861-Lincoln.txt")
doc("speech-inaugural-1909-taft.md", "nltk", corpus="inaugural", member="1909-Taft.txt")
doc("speech-inaugural-1953-eisenhower.md", "nltk", corpus="inaugural", member="1953-Eisenhower.txt")
doc("speech-inaugural-2009-obama.md", "nltk", corpus="inaugural", member="2009-Obama.txt")

doc("transcript-warren-hill.md", "gutenberg", ebook=44002,
    start="TESTIMONY OF CLINTON J. HILL, SPECIAL AGENT, SECRET SERVICE\n", end="\nTESTIMONY OF ")
doc("transcript-warren-euins.md", "gutenberg", ebook=44002,
    start="TESTIMONY OF AMOS LEE EUINS\n", end="\nTESTIMONY OF ")
doc("transcript-warren-randle.md", "gutenberg", ebook=44002,
    start="TESTIMONY OF LINNIE MAE RANDLE\n", end="\nTESTIMONY OF ")
doc("transcript-warren-norman.md", "gutenberg", ebook=44003,
    start="TESTIMONY OF HAROLD NORMAN\n", end="\nTESTIMONY OF ")
doc("transcript-warren-carrico.md", "gutenberg", ebook=44003,
    start="TESTIMONY OF DR. CHARLES JAMES CARRICO\n", end="\nTESTIMONY OF ")

doc("finance-edgar-apple-10q-1998q2.md", "edgar", type="10-Q",
    path="SEC-Edgar-data/AAPL/0000320193/10-Q/0000320193-98-000006.txt")
doc("finance-edgar-apple-10q-1998q3.md", "edgar", type="10-Q",
    path="SEC-Edgar-data/AAPL/0000320193/10-Q/0000320193-98-000008.txt")
doc("finance-edgar-apple-10q-1999q1.md", "edgar", type="10-Q",
    path="SEC-Edgar-data/AAPL/0000320193/10-Q/0000320193-99-000002.txt")
doc("finance-edgar-apple-10q-1999q3.md", "edgar", type="10-Q",
    path="SEC-Edgar-data/AAPL/0000320193/10-Q/0000320193-99-000009.txt")
doc("finance-edgar-apple-10q-2000q1.md", "edgar", type="10-Q",
    path="SEC-Edgar-data/AAPL/0000320193/10-Q/0000912057-00-003201.txt")

doc("science-plos-research-findings-false.md", "jats", path="allofplos/starter_corpus/journal.pmed.0020124.xml")
doc("science-plos-thresher-sharks.md", "jats", path="allofplos/starter_corpus/journal.pone.0067380.xml")
doc("science-plos-cremonese-violins.md", "jats", path="allofplos/starter_corpus/journal.pone.0002554.xml")
doc("science-plos-arctic-plants.md", "jats", path="allofplos/starter_corpus/journal.pone.0116586.xml")
doc("science-plos-acupuncture-depression.md", "jats", path="allofplos/starter_corpus/journal.pmed.1001518.xml")

doc("encyclopedia-eb1911-cathedral.md", "gutenberg", ebook=33239,
    start="CATHEDRAL, more correctly", end="CATHELINEAU, JACQUES (1759-1793)")
doc("encyclopedia-eb1911-cavour.md", "gutenberg", ebook=33239,
    start="CAVOUR, CAMILLO BENSO, COUNT", end="CAVOUR (anc. _Caburrum_")
doc("encyclopedia-eb1911-cellulose.md", "gutenberg", ebook=33239,
    start="CELLULOSE, the name given", end="CELSIUS, ANDERS (1701-1744)")
doc("encyclopedia-eb1911-catullus.md", "gutenberg", ebook=33239,
    start="CATULLUS, GAIUS VALERIUS", end="CATULUS, the name of a distinguished")
doc("encyclopedia-eb1911-cave.md", "gutenberg", ebook=33239,
    start="CAVE (Lat. _cavea_", end="CAVEA, the Latin name")

# Split B
doc("speech-sotu-1956-eisenhower.md", "nltk", corpus="state_union", member="1956-Eisenhower.txt")
doc("speech-sotu-1962-kennedy.md", "nltk", corpus="state_union", member="1962-Kennedy.txt")
doc("speech-sotu-1978-carter.md", "nltk", corpus="state_union", member="1978-Carter.txt")
doc("speech-sotu-1985-reagan.md", "nltk", corpus="state_union", member="1985-Reagan.txt")
doc("speech-sotu-1995-clinton.md", "nltk", corpus="state_union", member="1995-Clinton.txt")

doc("transcript-hearings-esperanto-1914.md", "gutenberg", ebook=16432,
    start="                               ESPERANTO\n                               =========\n")
doc("transcript-hearings-bullitt-1919.md", "gutenberg", ebook=10713, after="THE COMMITTEE ADJOURNS",
    start="UNITED STATES SENATE, COMMITTEE ON FOREIGN RELATIONS,", end="TEXT OF PROJECTED PEACE PROPOSAL BY THE ALLIED")
doc("transcript-hearings-anthony-1873.md", "gutenberg", ebook=18281,
    start="UNITED STATES\nCIRCUIT COURT.\n", end="ARGUMENT OF MR. SELDEN FOR THE DEFENDANT.")
doc("transcript-hearings-davis-1851.md", "gutenberg", ebook=31424,
    start="THE GOVERNMENT THEN OPENED ITS TESTIMONY.", end="MR. DANA THEN ADDRESSED THE COURT")

doc("finance-10k-koss-2023.md", "json", field="item7", path="CreateKnowledgeGraph/data/all/form10k/0000056701-23-000026.json")
doc("finance-10k-caci-2023.md", "json", field="item7", path="CreateKnowledgeGraph/data/all/form10k/0000016058-23-000086.json")
doc("finance-10k-crown-crafts-2023.md", "json", field="item7", path="CreateKnowledgeGraph/data/all/form10k/0001437749-23-018305.json")
doc("finance-10k-hr-block-2023.md", "json", field="item7", path="CreateKnowledgeGraph/data/all/form10k/0001838862-23-000027.json")
doc("finance-10k-darden-2023.md", "json", field="item7", path="CreateKnowledgeGraph/data/all/form10k/0000940944-23-000037.json")

doc("science-pd-jenner-variolae-vaccinae-1798.md", "gutenberg", ebook=29414,
    start="AN\n_INQUIRY_\nINTO\n", end="     *     *     *     *     *\n\n\n\n\nTranscriber's note")
doc("science-pd-soil-water-pollution-1880.md", "gutenberg", ebook=64143,
    start="                             SOIL\n                              AND\n")
doc("science-pd-zuni-pottery-1886.md", "gutenberg", ebook=17170,
    start="SMITHSONIAN INSTITUTION----BUREAU OF ETHNOLOGY.")
doc("science-pd-lobster-fishery-maine-1899.md", "gutenberg", ebook=17475,
    start="THE LOBSTER FISHERY OF MAINE.\n")
doc("science-pd-locomotive-safety-truck-1961.md", "gutenberg", ebook=25454,
    start="INTRODUCTION OF\nTHE LOCOMOTIVE\nSAFETY TRUCK\n")

doc("encyclopedia-wikipedia-ibn-al-haytham.md", "wikitext", path="tests/cache/al_Haytham.txt")
doc("encyclopedia-wikipedia-toronto.md", "wikitext", path="tests/cache/toronto.txt")
doc("encyclopedia-wikipedia-bodmin.md", "wikitext", path="tests/cache/Bodmin.txt")
doc("encyclopedia-wikipedia-apollo-8.md", "enwiki", title="Apollo 8", revision="716637143")
doc("encyclopedia-wikipedia-chemical-biology.md", "wikitext", path="tests/cache/Chemical-biology.txt")


# ---------------------------------------------------------------- sources

class Mirror:
    def __init__(self, root):
        self.root = root

    def gitdir(self, repo):
        base = os.path.join(self.root, repo.replace("/", "+"), "repo")
        if os.path.isdir(os.path.join(base, ".git")):
            return os.path.join(base, ".git")
        return base

    def show(self, repo, commit, path):
        gd = self.gitdir(repo)
        if not os.path.isdir(gd):
            raise SystemExit(f"make_plain: {repo} is not under {self.root} (fetch it first)")
        r = subprocess.run(["git", "--git-dir", gd, "show", f"{commit}:{path}"], capture_output=True)
        if r.returncode != 0:
            raise SystemExit(f"make_plain: git show {commit}:{path} in {repo}: {r.stderr.decode().strip()}")
        return r.stdout


def lf(text):
    return text.replace("\r\n", "\n").replace("\r", "\n")


def between(text, start, end, after=None):
    """Verbatim text[start..end): start kept, end not.

    The start marker must begin a line (the first such occurrence, searched
    from `after` when given); the end marker is its first occurrence after
    the start marker, or the end of the text when end is None.
    """
    pos = text.index(after) if after is not None else 0
    while True:
        i = text.index(start, pos)
        if i == 0 or text[i - 1] == "\n":
            break
        pos = i + 1
    if end is None:
        return text[i:]
    j = text.index(end, i + len(start))
    return text[i:j]


def gutenberg_body(text):
    s = re.search(r"^\*\*\* ?START OF (THE|THIS) PROJECT GUTENBERG.*$", text, re.M | re.I)
    e = re.search(r"^\*\*\* ?END OF (THE|THIS) PROJECT GUTENBERG.*$", text, re.M | re.I)
    body = text[s.end():e.start()]
    # the closing "End of the Project Gutenberg EBook of ..." line belongs to the licence
    m = re.search(r"^End of (the )?Project Gutenberg'?s? .*", body, re.M | re.I)
    if m:
        body = body[:m.start()]
    return body


def sgml_main(text, doctype):
    for m in re.finditer(r"<DOCUMENT>(.*?)</DOCUMENT>", text, re.S):
        d = m.group(1)
        t = re.search(r"<TYPE>([^\n]*)", d).group(1).strip()
        if t == doctype:
            tm = re.search(r"<TEXT>\n(.*?)</TEXT>", d, re.S)
            return tm.group(1)
    raise ValueError(f"no <DOCUMENT> of type {doctype}")


# ------------------------------------------------------------- PLOS JATS

def _inline(el):
    """Text of an inline element, dropping formulas; citation labels kept."""
    parts = []
    if el.text:
        parts.append(el.text)
    for ch in el:
        tag = ch.tag.split("}")[-1]
        if tag in ("inline-formula", "disp-formula", "fig", "table-wrap", "supplementary-material"):
            pass
        else:
            parts.append(_inline(ch))
        if ch.tail:
            parts.append(ch.tail)
    return "".join(parts)


def _norm(s):
    return re.sub(r"\s+", " ", s).strip()


def _blocks(sec, out, skip_title=False):
    for ch in sec:
        tag = ch.tag.split("}")[-1]
        if tag == "title":
            t = _norm(_inline(ch))
            if t and not skip_title:
                out.append(t)
        elif tag == "p":
            # a paragraph may hold block children (lists, figures): keep its own text
            t = _norm(_inline(ch))
            if t:
                out.append(t)
        elif tag == "sec":
            _blocks(ch, out)
        elif tag == "list":
            for item in ch.iter():
                if item.tag.split("}")[-1] == "list-item":
                    t = _norm(_inline(item))
                    if t:
                        out.append(t)
        # fig, table-wrap, disp-formula, supplementary-material, boxed-text...: left out


def jats_text(xml_bytes):
    root = ET.fromstring(xml_bytes)
    out = [_norm(_inline(root.find(".//front//article-title")))]
    for ab in root.findall(".//front//abstract"):
        if ab.get("abstract-type") not in (None, "summary"):
            continue  # toc / editor summaries are not part of the printed article
        _blocks(ab, out)  # its <title> (e.g. "Author Summary"), if any, comes first
    _blocks(root.find(".//body"), out)
    return "\n\n".join(out) + "\n"


# ------------------------------------------------------------- wikitext

WTF_JS = r"""
const wtf = require('wtf_wikipedia');
const fs = require('fs');
const doc = wtf(fs.readFileSync(process.argv[2], 'utf8'));
const parts = [];
for (const s of doc.sections()) {
  const body = s.text().trim();
  if (!body) continue;
  const title = s.title();
  parts.push(title ? title + '\n\n' + body : body);
}
process.stdout.write(parts.join('\n\n') + '\n');
"""


def wikitext_to_text(wikitext_bytes, wtf_dir):
    if not wtf_dir:
        raise SystemExit("make_plain: Wikipedia articles need --wtf DIR (npm install --prefix DIR wtf_wikipedia@10.4.2)")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "page.wiki")
        js = os.path.join(tmp, "conv.cjs")
        with open(src, "wb") as f:
            f.write(wikitext_bytes)
        with open(js, "w") as f:
            f.write(WTF_JS)
        env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(wtf_dir), "node_modules"))
        r = subprocess.run(["node", js, src], capture_output=True, env=env)
        if r.returncode != 0:
            raise SystemExit("make_plain: wtf_wikipedia failed: " + r.stderr.decode())
        return r.stdout.decode("utf-8")


def enwiki_page(dump_bz2, title, revision):
    """Wikitext (bytes) of the page `title` of a MediaWiki XML dump; checks the revision id."""
    import bz2
    root = ET.fromstring(bz2.decompress(dump_bz2))
    for page in root.iter():
        if not page.tag.endswith("}page"):
            continue
        t = next(c for c in page if c.tag.endswith("}title")).text
        if t != title:
            continue
        rev = next(c for c in page if c.tag.endswith("}revision"))
        rid = next(c for c in rev if c.tag.endswith("}id")).text
        if rid != revision:
            raise SystemExit(f"make_plain: {title}: revision {rid}, expected {revision}")
        return next(c for c in rev if c.tag.endswith("}text")).text.encode("utf-8")
    raise SystemExit(f"make_plain: page {title!r} not in the dump")


# ------------------------------------------------------------- build

def build(name, mirror, wtf_dir):
    kind, s = DOCUMENTS[name]
    if kind == "nltk":
        z = zipfile.ZipFile(io.BytesIO(mirror.show(NLTK[0], NLTK[1], f"packages/corpora/{s['corpus']}.zip")))
        text = z.read(f"{s['corpus']}/{s['member']}").decode(s.get("encoding", "utf-8"))
    elif kind == "gutenberg":
        repo, commit, path, enc = GUTENBERG[s["ebook"]]
        text = gutenberg_body(lf(mirror.show(repo, commit, path).decode(enc)))
        if "start" in s:
            text = between(text, s["start"], s.get("end"), s.get("after"))
        elif s.get("strip"):
            text = text.strip("\n") + "\n"
    elif kind == "edgar":
        text = sgml_main(lf(mirror.show(SEC_EDGAR[0], SEC_EDGAR[1], s["path"]).decode("latin-1")), s["type"])
    elif kind == "json":
        text = json.loads(mirror.show(NEO4J[0], NEO4J[1], s["path"]))[s["field"]]
    elif kind == "jats":
        text = jats_text(mirror.show(PLOS[0], PLOS[1], s["path"]))
    elif kind == "wikitext":
        text = wikitext_to_text(mirror.show(WTF[0], WTF[1], s["path"]), wtf_dir)
    elif kind == "enwiki":
        text = wikitext_to_text(enwiki_page(mirror.show(GENSIM[0], GENSIM[1], ENWIKI_DUMP),
                                            s["title"], s["revision"]), wtf_dir)
    else:
        raise ValueError(kind)
    text = lf(text)
    if not text.endswith("\n"):
        text += "\n"
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror", help="folder of OWNER+NAME/repo git directories")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--wtf", help="npm prefix where wtf_wikipedia@10.4.2 is installed")
    ap.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    ap.add_argument("--list", action="store_true", help="print the document names and exit")
    ap.add_argument("only", nargs="*", help="build only these documents")
    args = ap.parse_args(argv)
    if args.list:
        for n in DOCUMENTS:
            print(n)
        return 0
    mirror = Mirror(args.mirror)
    names = args.only or list(DOCUMENTS)
    bad = 0
    os.makedirs(args.out, exist_ok=True)
    for n in names:
        text = build(n, mirror, args.wtf)
        path = os.path.join(args.out, n)
        if args.check:
            try:
                with open(path, "rb") as f:
                    old = f.read().decode("utf-8")
            except FileNotFoundError:
                old = None
            if old != text:
                print(f"{n}: differs from the source", file=sys.stderr)
                bad += 1
        else:
            with open(path, "wb") as f:
                f.write(text.encode("utf-8"))
        print(f"{len(text.split()):>7} words  {n}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
