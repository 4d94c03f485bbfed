#!/usr/bin/env python3
"""Generate the parity fixtures of the "drop-in" adapter strategies.

For each adapter (framework splitter -> our future strategy name):

  langchain.token        LangChain TokenTextSplitter (cl100k_base)
  langchain.markdown     LangChain MarkdownHeaderTextSplitter (strip_headers True/False)
  langchain.character    LangChain CharacterTextSplitter
  langchain.recursive    LangChain RecursiveCharacterTextSplitter (characters; Markdown separators; tiktoken)
  llama.sentence         LlamaIndex SentenceSplitter
  llama.hierarchical     LlamaIndex HierarchicalNodeParser (node level and parent)
  llama.semantic         LlamaIndex SemanticSplitterNodeParser with FAKE_EMBEDDING
  haystack.split         Haystack DocumentSplitter (word/sentence/passage/line)
  unstructured.by_title  Unstructured chunk_by_title over partition_md elements

runs the framework on every document of DOCUMENTS with every settings set of
that adapter and writes shared/tests/fixtures/adapters/<adapter>.json:

  {"adapter", "call", "versions", "notes", "documents": [...],
   "settings": [{"name", "kwargs"}], "cases": [{"document", "settings",
   "chunks": [...]} | {"document", "settings", "error"}], ...}

Keys are sorted, cases are in DOCUMENTS order, then settings order. The
input of a case is the document file's text exactly as stored (UTF-8, no
newline translation, no normalization, front matter included); "documents"
gives each file's path (relative to shared/tests/fixtures), SHA-256 and
length in code points. String offsets in the fixtures are Python str
indices, i.e. code points, not bytes. The algorithms and every field are
described in scripts/peers/ADAPTERS.md.

Nothing is downloaded: tiktoken's cl100k_base comes from the cargo registry
(tiktoken_offline.py), NLTK's punkt_tab from the llama-index-core wheel
(NLTK_DATA is pointed there before anything imports nltk), and the one
spaCy use of unstructured's Markdown partitioner (NarrativeText-vs-Text
classification, which needs the en_core_web_sm model from GitHub) is
replaced, see UNSTRUCTURED_NOTE. Telemetry of Haystack and Unstructured is
switched off through their environment variables.

Usage (from the repository root, after scripts/peers/setup-adapters-venv.sh):
  nice -n 10 .venv-adapters/bin/python scripts/peers/adapter_parity.py
Options: --adapter NAME (repeatable; default all), --out DIR,
--corpus DIR (default ../shared/corpus: only read to (re)copy the corpus
documents into the fixture folder when a copy is missing), --check (exit 1
if a written file would change; writes nothing).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import string
import sys
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in scripts/peers

# -- before any framework import: no telemetry, no notices, no downloads --
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("SCARF_NO_ANALYTICS", "1")
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _llama_nltk_cache() -> str:
    spec = importlib.util.find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llama-index-core is not installed (run scripts/peers/setup-adapters-venv.sh)")
    return os.path.join(list(spec.submodule_search_locations)[0], "_static", "nltk_cache")


# NLTK reads NLTK_DATA when it is imported; LlamaIndex uses the same folder
# when NLTK_DATA is set. Haystack's SentenceSplitter then finds punkt_tab
# there instead of calling nltk.download("punkt_tab").
os.environ["NLTK_DATA"] = _llama_nltk_cache()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiktoken_offline  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURES = os.path.join(ROOT, "shared", "tests", "fixtures")
OUT_DIR = os.path.join(FIXTURES, "adapters")

# (name, path relative to shared/tests/fixtures, corpus source or None).
# Corpus documents are copied verbatim into adapters/docs/ (see the README
# there for their origin and licences); the others are the repository's own
# fixtures, used in place.
DOCUMENTS: list[tuple[str, str, str | None]] = [
    ("01-headings", "01-headings.md", None),
    ("02-nested-lists", "02-nested-lists.md", None),
    ("06-confluence-page", "06-confluence-page.md", None),
    ("07-pdf-export", "07-pdf-export.md", None),
    ("08-crlf", "08-crlf.md", None),
    ("09-emoji-combining", "09-emoji-combining.md", None),
    ("10-empty", "10-empty.md", None),
    ("11-whitespace-only", "11-whitespace-only.md", None),
    ("14-front-matter", "14-front-matter.md", None),
    ("15-runbook", "15-runbook.md", None),
    ("16-headings-only", "16-headings-only.md", None),
    ("17-russian-docs", "17-russian-docs.md", None),
    ("18-setext-heading-sections", "18-setext-heading-sections.md", None),
    ("20-grouped-table", "20-grouped-table.md", None),
    ("21-clinical-trial", "21-clinical-trial.md", None),
    (
        "en-book-ch12-00-an-io-project",
        "adapters/docs/en-book-ch12-00-an-io-project.md",
        "en/rust-lang+book/src/ch12-00-an-io-project.md",
    ),
    (
        "en-otel-observability-primer",
        "adapters/docs/en-otel-observability-primer.md",
        "en/open-telemetry+opentelemetry.io/content/en/docs/concepts/observability-primer.md",
    ),
    (
        "en-otel-python-distro",
        "adapters/docs/en-otel-python-distro.md",
        "en/open-telemetry+opentelemetry.io/content/en/docs/languages/python/distro.md",
    ),
    (
        "en-rfc-0430-finalizing-naming-conventions",
        "adapters/docs/en-rfc-0430-finalizing-naming-conventions.md",
        "en/rust-lang+rfcs/text/0430-finalizing-naming-conventions.md",
    ),
    (
        "ru-react-installation",
        "adapters/docs/ru-react-installation.md",
        "ru/reactjs+ru.react.dev/src/content/learn/installation.md",
    ),
    (
        "ru-rustbook-ch01-00-introduction",
        "adapters/docs/ru-rustbook-ch01-00-introduction.md",
        "ru/rust-lang-ru+book/rustbook-ru/src/ch01-00-introduction.md",
    ),
    (
        "ru-vue-tutorial-step-3",
        "adapters/docs/ru-vue-tutorial-step-3.md",
        "ru/vuejs-translations+docs-ru/src/tutorial/src/step-3/description.md",
    ),
]

# ---------------------------------------------------------------------------
# The fake embedding of llama.semantic
# ---------------------------------------------------------------------------

FAKE_EMBEDDING_DIM = 64
FAKE_EMBEDDING_DOC = (
    "fnv64-bag-of-words-64: a 64-dimensional float vector, all entries small integers. "
    "v[0] = 1 (bias, so no vector is zero). The text is split on runs of the five ASCII "
    "whitespace characters ' ', '\\t', '\\n', '\\r', '\\x0c' (Rust: split_ascii_whitespace; "
    "NOT '\\x0b' and no Unicode spaces); empty pieces are dropped; each piece is trimmed at "
    "both ends of the 32 ASCII punctuation characters (Python string.punctuation, Rust "
    "char::is_ascii_punctuation); if the result is empty it is skipped; otherwise only ASCII "
    "A-Z are lower-cased (other characters unchanged), the UTF-8 bytes are hashed with 64-bit "
    "FNV-1a (offset 0xcbf29ce484222325, prime 0x100000001b3, wrapping multiply) and "
    "v[1 + hash % 63] += 1. Dot products and squared norms are therefore exact integers, so "
    "LlamaIndex's cosine (numpy dot / (norm * norm)) is reproducible bit for bit."
)
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_WS_RE = re.compile(r"[ \t\n\r\x0c]+")


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fake_embedding(text: str) -> list[float]:
    v = [0.0] * FAKE_EMBEDDING_DIM
    v[0] = 1.0
    for piece in _WS_RE.split(text):
        tok = piece.strip(string.punctuation)
        if not tok:
            continue
        tok = tok.translate(_ASCII_LOWER)
        v[1 + fnv1a64(tok.encode("utf-8")) % (FAKE_EMBEDDING_DIM - 1)] += 1.0
    return v


FAKE_EMBEDDING_EXAMPLES = [
    "",
    "Hello, World!",
    "hello world hello",
    "  tabs\tand\x0bvertical\x0ctab\r\n",
    "Привет, мир! «Ёлка» — ДА.",
    "(a) [b] {c} 'd' \"e\" ...",
    "emoji 👍🏽 café cafe\u0301",
]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def version(dist: str) -> str:
    from importlib.metadata import version as v

    return v(dist)


def versions(*dists: str) -> dict[str, str]:
    out = {d: version(d) for d in dists}
    out["python"] = platform.python_version()
    return out


def error_of(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def load_documents(corpus: str) -> list[dict]:
    docs = []
    for name, rel, source in DOCUMENTS:
        path = os.path.join(FIXTURES, rel)
        if source is not None and not os.path.exists(path):
            src = os.path.join(corpus, source)
            if not os.path.exists(src):
                raise SystemExit(f"{rel} is missing and {src} does not exist (--corpus)")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copyfile(src, path)
            print(f"copied {source} -> {os.path.relpath(path, ROOT)}", file=sys.stderr)
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")  # strict; no newline translation
        doc = {
            "name": name,
            "path": rel,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "chars": len(text),
            "bytes": len(raw),
        }
        if source is not None:
            doc["source"] = source
        docs.append((doc, text))
    return docs


# ---------------------------------------------------------------------------
# adapters: each returns (call, versions, notes, settings, run(text, kwargs) -> case dict,
# extra top-level fields)
# ---------------------------------------------------------------------------


def adapter_langchain_token():
    from langchain_text_splitters import TokenTextSplitter

    settings = [
        ("small", {"encoding_name": "cl100k_base", "chunk_size": 100, "chunk_overlap": 20}),
        ("medium", {"encoding_name": "cl100k_base", "chunk_size": 256, "chunk_overlap": 32}),
        ("default", {"encoding_name": "cl100k_base", "chunk_size": 4000, "chunk_overlap": 200}),
    ]

    def run(text, kwargs):
        s = TokenTextSplitter(add_start_index=True, **kwargs)
        docs = s.create_documents([text])
        return {"chunks": [{"text": d.page_content, "start_index": d.metadata["start_index"]} for d in docs]}

    return {
        "call": "TokenTextSplitter(add_start_index=True, **kwargs).create_documents([text]); "
        "chunk = {text: page_content, start_index: metadata['start_index']}",
        "versions": versions("langchain-text-splitters", "langchain-core", "tiktoken"),
        "notes": "encoding_name is always cl100k_base: the class default 'gpt2' needs OpenAI's "
        "vocab.bpe/encoder.json, which are not available offline. allowed_special=set(), "
        "disallowed_special='all' (defaults). 'default' uses TextSplitter's defaults "
        "chunk_size=4000, chunk_overlap=200.",
        "settings": settings,
        "run": run,
    }


def adapter_langchain_character():
    from langchain_text_splitters import CharacterTextSplitter

    settings = [
        ("small", {"chunk_size": 200, "chunk_overlap": 40}),
        ("lines_keep_end", {"separator": "\n", "keep_separator": "end", "chunk_size": 500, "chunk_overlap": 100}),
        ("default", {}),
    ]

    def run(text, kwargs):
        s = CharacterTextSplitter(add_start_index=True, **kwargs)
        docs = s.create_documents([text])
        return {"chunks": [{"text": d.page_content, "start_index": d.metadata["start_index"]} for d in docs]}

    return {
        "call": "CharacterTextSplitter(add_start_index=True, **kwargs).create_documents([text])",
        "versions": versions("langchain-text-splitters", "langchain-core"),
        "notes": "Defaults: separator='\\n\\n', is_separator_regex=False, keep_separator=False, "
        "chunk_size=4000, chunk_overlap=200, length_function=len (code points), strip_whitespace=True.",
        "settings": settings,
        "run": run,
    }


def adapter_langchain_recursive():
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    markdown = RecursiveCharacterTextSplitter.get_separators_for_language(Language.MARKDOWN)
    settings = [
        ("small", {"chunk_size": 200, "chunk_overlap": 40}),
        ("markdown", {"separators": markdown, "is_separator_regex": True, "chunk_size": 500, "chunk_overlap": 50}),
        ("tiktoken", {"encoding_name": "cl100k_base", "chunk_size": 256, "chunk_overlap": 32}),
        ("default", {}),
    ]

    def run(text, kwargs):
        kwargs = dict(kwargs)
        if "encoding_name" in kwargs:
            s = RecursiveCharacterTextSplitter.from_tiktoken_encoder(add_start_index=True, **kwargs)
        else:
            s = RecursiveCharacterTextSplitter(add_start_index=True, **kwargs)
        docs = s.create_documents([text])
        return {"chunks": [{"text": d.page_content, "start_index": d.metadata["start_index"]} for d in docs]}

    return {
        "call": "RecursiveCharacterTextSplitter(add_start_index=True, **kwargs).create_documents([text]) "
        "(.from_tiktoken_encoder(...) when encoding_name is given; 'markdown' passes "
        "get_separators_for_language(Language.MARKDOWN) as from_language does)",
        "versions": versions("langchain-text-splitters", "langchain-core", "tiktoken"),
        "notes": "Defaults: separators=['\\n\\n', '\\n', ' ', ''], keep_separator=True, is_separator_regex=False, "
        "chunk_size=4000, chunk_overlap=200, length_function=len (code points), strip_whitespace=True.",
        "settings": settings,
        "run": run,
    }


def adapter_langchain_markdown():
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    h3 = [["#", "Header 1"], ["##", "Header 2"], ["###", "Header 3"]]
    h6 = h3 + [["####", "Header 4"], ["#####", "Header 5"], ["######", "Header 6"]]
    settings = [
        ("h1-h3", {"headers_to_split_on": h3}),
        ("h1-h3_keep_headers", {"headers_to_split_on": h3, "strip_headers": False}),
        ("h1-h6_keep_headers", {"headers_to_split_on": h6, "strip_headers": False}),
    ]

    def run(text, kwargs):
        kw = dict(kwargs)
        kw["headers_to_split_on"] = [tuple(h) for h in kw["headers_to_split_on"]]
        s = MarkdownHeaderTextSplitter(**kw)
        docs = s.split_text(text)
        return {"chunks": [{"text": d.page_content, "metadata": d.metadata} for d in docs]}

    return {
        "call": "MarkdownHeaderTextSplitter(**kwargs).split_text(text); chunk = {text: page_content, metadata}",
        "versions": versions("langchain-text-splitters", "langchain-core"),
        "notes": "strip_headers defaults to True, return_each_line to False. headers_to_split_on is "
        "given as lists here, as tuples to the framework. metadata maps each header name to the "
        "stripped heading text.",
        "settings": settings,
        "run": run,
    }


def _llama_document(text):
    from llama_index.core import Document

    return Document(text=text)


def adapter_llama_sentence():
    from llama_index.core.node_parser import SentenceSplitter

    settings = [
        ("small", {"chunk_size": 128, "chunk_overlap": 16}),
        ("medium", {"chunk_size": 512, "chunk_overlap": 64}),
        ("default", {}),
    ]

    def run(text, kwargs):
        s = SentenceSplitter(**kwargs)
        nodes = s.get_nodes_from_documents([_llama_document(text)])
        return {
            "chunks": [
                {"text": n.text, "start_char_idx": n.start_char_idx, "end_char_idx": n.end_char_idx} for n in nodes
            ]
        }

    return {
        "call": "SentenceSplitter(**kwargs).get_nodes_from_documents([Document(text=text)])",
        "versions": versions("llama-index-core", "nltk", "tiktoken"),
        "notes": "Defaults: chunk_size=1024, chunk_overlap=200, separator=' ', paragraph_separator='\\n\\n\\n', "
        "secondary_chunking_regex='[^,.;。？！]+[,.;。？！]?|[,.;。？！]', tokenizer = tiktoken "
        "encoding_for_model('gpt-3.5-turbo') (cl100k_base) encode(allowed_special='all'), sentence "
        "tokenizer = nltk PunktSentenceTokenizer() with NO trained parameters. The Document has no "
        "metadata, so the metadata-aware chunk size equals chunk_size.",
        "settings": settings,
        "run": run,
    }


def adapter_llama_hierarchical():
    from llama_index.core.node_parser import HierarchicalNodeParser

    settings = [
        ("default", {}),
        ("two_levels", {"chunk_sizes": [1024, 256]}),
        ("small", {"chunk_sizes": [512, 128, 64], "chunk_overlap": 10}),
    ]

    def run(text, kwargs):
        p = HierarchicalNodeParser.from_defaults(**kwargs)
        nodes = p.get_nodes_from_documents([_llama_document(text)])
        index = {n.node_id: i for i, n in enumerate(nodes)}
        out = []
        for n in nodes:
            parent = n.parent_node
            pi = index[parent.node_id] if parent is not None else None
            level = 0 if pi is None else out[pi]["level"] + 1
            out.append(
                {
                    "text": n.text,
                    "level": level,
                    "parent": pi,
                    "start_char_idx": n.start_char_idx,
                    "end_char_idx": n.end_char_idx,
                }
            )
        # children lists must be the nodes that name the node as parent, in order
        for i, n in enumerate(nodes):
            kids = [index[c.node_id] for c in (n.child_nodes or [])]
            assert kids == [j for j, o in enumerate(out) if o["parent"] == i], "child order"
        return {"chunks": out}

    return {
        "call": "HierarchicalNodeParser.from_defaults(**kwargs).get_nodes_from_documents([Document(text=text)])",
        "versions": versions("llama-index-core", "nltk", "tiktoken"),
        "notes": "Defaults: chunk_sizes=[2048, 512, 128], chunk_overlap=20 (each level is a "
        "SentenceSplitter(chunk_size=chunk_sizes[level], chunk_overlap=chunk_overlap)). Nodes are in "
        "the framework's order (all level-0 nodes, then all level-1 nodes, ...). 'parent' is the index "
        "of the parent node in this list (null at level 0), 'level' counts parents. start/end_char_idx "
        "of a level-0 node refer to the document; of a deeper node to its PARENT's text.",
        "settings": settings,
        "run": run,
    }


def adapter_llama_semantic():
    import numpy as np
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.node_parser import SemanticSplitterNodeParser
    from llama_index.core.node_parser.text.utils import split_by_sentence_tokenizer

    embedded: list[str] = []

    class FakeEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query):
            return fake_embedding(query)

        async def _aget_query_embedding(self, query):
            return fake_embedding(query)

        def _get_text_embedding(self, text):
            embedded.append(text)
            return fake_embedding(text)

    settings = [
        ("default", {"buffer_size": 1, "breakpoint_percentile_threshold": 95}),
        ("threshold_80", {"buffer_size": 1, "breakpoint_percentile_threshold": 80}),
        ("buffer_2_threshold_90", {"buffer_size": 2, "breakpoint_percentile_threshold": 90}),
    ]
    splitter = split_by_sentence_tokenizer()
    sentences_of: dict[str, list[str]] = {}

    def run(text, kwargs):
        model = FakeEmbedding(model_name="fnv64-bag-of-words-64")
        p = SemanticSplitterNodeParser.from_defaults(embed_model=model, **kwargs)
        embedded.clear()
        nodes = p.get_nodes_from_documents([_llama_document(text)])
        sentences = splitter(text)
        b = kwargs["buffer_size"]
        groups = [[max(0, i - b), min(len(sentences) - 1, i + b)] for i in range(len(sentences))]
        group_texts = ["".join(sentences[a : z + 1]) for a, z in groups]
        assert embedded == group_texts, "the embedded texts are not the documented sentence groups"
        # the same computation as the framework, to expose the intermediate values
        vecs = [fake_embedding(t) for t in group_texts]
        distances = [float(1 - model.similarity(vecs[i], vecs[i + 1])) for i in range(len(vecs) - 1)]
        for d in distances:
            assert d == d and abs(d) != float("inf"), "non-finite distance"
        case = {"groups": groups, "distances": distances}
        if distances:
            thr = float(np.percentile(distances, kwargs["breakpoint_percentile_threshold"]))
            case["threshold"] = thr
            case["breakpoints"] = [i for i, d in enumerate(distances) if d > thr]
        case["chunks"] = [
            {"text": n.text, "start_char_idx": n.start_char_idx, "end_char_idx": n.end_char_idx} for n in nodes
        ]
        # the sentence list is the same for every settings set: stored once per document
        case["sentences_sha256"] = sha256_text(json.dumps(sentences, ensure_ascii=False))
        sentences_of[sha256_text(text)] = sentences
        return case

    def extra(docs):
        return {
            "sentences": {d["name"]: sentences_of[sha256_text(t)] for d, t in docs},
            "fake_embedding": {
                "name": "fnv64-bag-of-words-64",
                "dim": FAKE_EMBEDDING_DIM,
                "definition": FAKE_EMBEDDING_DOC,
                "examples": [
                    {"text": t, "nonzero": {str(i): x for i, x in enumerate(fake_embedding(t)) if x}}
                    for t in FAKE_EMBEDDING_EXAMPLES
                ],
            },
        }

    return {
        "call": "SemanticSplitterNodeParser.from_defaults(embed_model=FakeEmbedding(), **kwargs)"
        ".get_nodes_from_documents([Document(text=text)])",
        "versions": versions("llama-index-core", "nltk", "numpy"),
        "notes": "Sentences: split_by_sentence_tokenizer() (untrained nltk PunktSentenceTokenizer, each "
        "sentence runs to the start of the next). sentences[doc] is that list; groups[i] = [first, last] "
        "sentence index of the i-th embedded text, which is ''.join(sentences[first..=last]) (checked "
        "against the texts the framework passed to the embedding). distances[i] = 1 - cosine(group i, "
        "group i+1); threshold = numpy.percentile(distances, breakpoint_percentile_threshold) (linear); "
        "breakpoints = indices with distance > threshold. With no distance (0 or 1 sentence) there is no "
        "threshold and the only chunk is ' '.join(sentences). Defaults: buffer_size=1, "
        "breakpoint_percentile_threshold=95.",
        "settings": settings,
        "run": run,
        "extra": extra,
    }


def adapter_haystack_split():
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter

    settings = [
        ("word_default", {"split_by": "word"}),
        (
            "word_sentence_boundary",
            {"split_by": "word", "split_length": 100, "split_overlap": 20, "respect_sentence_boundary": True},
        ),
        ("sentence", {"split_by": "sentence", "split_length": 5, "split_overlap": 1, "split_threshold": 2}),
        ("passage", {"split_by": "passage", "split_length": 3, "split_overlap": 0}),
        ("line", {"split_by": "line", "split_length": 20, "split_overlap": 5, "split_threshold": 3}),
    ]

    def run(text, kwargs):
        s = DocumentSplitter(**kwargs)
        s.warm_up()
        docs = s.run(documents=[Document(content=text)])["documents"]
        index = {d.id: i for i, d in enumerate(docs)}
        out = []
        for d in docs:
            c = {
                "text": d.content,
                "split_id": d.meta["split_id"],
                "split_idx_start": d.meta["split_idx_start"],
                "page_number": d.meta["page_number"],
            }
            if "_split_overlap" in d.meta:
                c["split_overlap"] = [[index[o["doc_id"]], list(o["range"])] for o in d.meta["_split_overlap"]]
            out.append(c)
        return {"chunks": out}

    return {
        "call": "DocumentSplitter(**kwargs); warm_up(); run(documents=[Document(content=text)])['documents']",
        "versions": versions("haystack-ai", "nltk", "more-itertools"),
        "notes": "Defaults: split_by='word', split_length=200, split_overlap=0, split_threshold=0, "
        "respect_sentence_boundary=False, language='en', use_split_rules=True, extend_abbreviations=True, "
        "skip_empty_documents=True. Sentences: NLTK punkt_tab 'english' parameters (from the "
        "llama-index-core wheel, NLTK_DATA) plus haystack/data/abbreviations/en.txt, with "
        "keep_white_spaces=True. split_overlap entries are [index of the other chunk, [start, end]] "
        "(the framework stores the other Document's id); present only when split_overlap > 0. An empty "
        "document gives no chunk (skip_empty_documents).",
        "settings": settings,
        "run": run,
    }


UNSTRUCTURED_NOTE = (
    "partition_md = Python-Markdown (extensions ['tables', 'fenced_code']) to HTML, then "
    "partition_html. Its text classifier derive_element_type_from_text() calls "
    "is_possible_narrative_text(), which runs spaCy's en_core_web_sm 3.8.0; unstructured downloads "
    "that model from GitHub on first use, which is not reachable (it is not on PyPI). The generator "
    "replaces unstructured.partition.html.parser.is_possible_narrative_text with a function that "
    "returns True, so elements the framework would type NarrativeText or Text all come out as "
    "NarrativeText; the fixtures therefore record both as 'Text'. chunk_by_title never looks at that "
    "distinction (only at Title, Table/TableChunk, CodeSnippet and Image types), so chunk texts are "
    "unaffected."
)


def adapter_unstructured_by_title():
    import unstructured.partition.html.parser as html_parser

    html_parser.is_possible_narrative_text = lambda text, *a, **kw: True  # see UNSTRUCTURED_NOTE
    from unstructured.chunking.title import chunk_by_title
    from unstructured.partition.md import partition_md

    settings = [
        ("default", {}),
        ("small", {"max_characters": 200, "new_after_n_chars": 150, "combine_text_under_n_chars": 50, "overlap": 20}),
        (
            "large_overlap_all",
            {
                "max_characters": 1500,
                "new_after_n_chars": 1000,
                "combine_text_under_n_chars": 300,
                "overlap": 100,
                "overlap_all": True,
            },
        ),
    ]
    elements_of: dict[str, list[dict]] = {}
    parsed: dict[str, list] = {}

    def element_type(e):
        name = type(e).__name__
        return "Text" if name in ("NarrativeText", "Text") else name

    def partition(text):
        key = sha256_text(text)
        if key not in parsed:
            els = partition_md(text=text)
            index = {e.id: i for i, e in enumerate(els)}
            assert len(index) == len(els), "duplicate element ids"
            rec = []
            for e in els:
                m = e.metadata
                r = {"type": element_type(e), "text": e.text}
                if m.category_depth is not None:
                    r["category_depth"] = m.category_depth
                if m.parent_id is not None:
                    r["parent"] = index[m.parent_id]
                if m.text_as_html is not None:
                    r["text_as_html"] = m.text_as_html
                rec.append(r)
            parsed[key] = els
            elements_of[key] = rec
        return parsed[key]

    def run(text, kwargs):
        els = partition(text)
        index = {e.id: i for i, e in enumerate(els)}
        chunks = chunk_by_title(els, **kwargs)
        out = []
        for c in chunks:
            r = {"type": type(c).__name__, "text": c.text}
            if c.metadata.text_as_html is not None:
                r["text_as_html"] = c.metadata.text_as_html
            orig = c.metadata.orig_elements
            if orig is not None:
                r["orig_elements"] = [index[o.id] for o in orig]
            out.append(r)
        return {"chunks": out, "elements_sha256": sha256_text(json.dumps(elements_of[sha256_text(text)], sort_keys=True, ensure_ascii=False))}

    def extra(docs):
        return {"elements": {d["name"]: elements_of[sha256_text(t)] for d, t in docs}, "classifier_note": UNSTRUCTURED_NOTE}

    return {
        "call": "chunk_by_title(partition_md(text=text), **kwargs)",
        "versions": versions("unstructured", "markdown", "lxml", "langdetect"),
        "notes": "Defaults: max_characters=500, new_after_n_chars=max_characters, "
        "combine_text_under_n_chars=max_characters (capped at new_after_n_chars), overlap=0, "
        "overlap_all=False, multipage_sections=True, include_orig_elements=True, isolate_table=True, "
        "repeat_table_headers=True. elements[doc] are the partition_md elements (type, text, "
        "category_depth, parent = index of the parent element, text_as_html for tables); a chunk's "
        "orig_elements are indices into that list. " + UNSTRUCTURED_NOTE,
        "settings": settings,
        "run": run,
        "extra": extra,
    }


ADAPTERS = {
    "langchain.token": adapter_langchain_token,
    "langchain.markdown": adapter_langchain_markdown,
    "langchain.character": adapter_langchain_character,
    "langchain.recursive": adapter_langchain_recursive,
    "llama.sentence": adapter_llama_sentence,
    "llama.hierarchical": adapter_llama_hierarchical,
    "llama.semantic": adapter_llama_semantic,
    "haystack.split": adapter_haystack_split,
    "unstructured.by_title": adapter_unstructured_by_title,
}


def render(obj: dict) -> str:
    """JSON with sorted keys at every level; the elements of "cases" one per line
    (readable diffs), everything else compact."""

    def dump(v):
        return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    parts = []
    for key in sorted(obj):
        if key == "cases":
            body = "[\n" + ",\n".join(dump(c) for c in obj[key]) + "\n]"
        else:
            body = dump(obj[key])
        parts.append(dump(key) + ":" + body)
    return "{" + ",\n".join(parts) + "}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--adapter", action="append", choices=sorted(ADAPTERS))
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()

    logging.disable(logging.WARNING)  # "Created a chunk of size ..." and friends
    warnings.filterwarnings("ignore")
    tiktoken_offline.setup()
    import tiktoken

    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]

    docs = load_documents(args.corpus)
    names = args.adapter or list(ADAPTERS)
    changed = []
    for name in names:
        spec = ADAPTERS[name]()
        cases = []
        counts = {"cases": 0, "chunks": 0, "errors": 0}
        for doc, text in docs:
            for sname, kwargs in spec["settings"]:
                case = {"document": doc["name"], "settings": sname}
                try:
                    case.update(spec["run"](text, kwargs))
                    counts["chunks"] += len(case["chunks"])
                except AssertionError:
                    raise
                except Exception as e:  # the framework's own error is part of its behaviour
                    case["error"] = error_of(e)
                    counts["errors"] += 1
                counts["cases"] += 1
                cases.append(case)
        obj = {
            "adapter": name,
            "call": spec["call"],
            "versions": spec["versions"],
            "notes": spec["notes"],
            "generator": "scripts/peers/adapter_parity.py",
            "documents": [d for d, _ in docs],
            "settings": [{"name": n, "kwargs": k} for n, k in spec["settings"]],
            "cases": cases,
        }
        if "extra" in spec:
            obj.update(spec["extra"](docs))
        data = render(obj)
        path = os.path.join(args.out, f"{name}.json")
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old != data:
            changed.append(path)
        if not args.check:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(data)
        print(
            f"{name}: {counts['cases']} cases, {counts['chunks']} chunks, {counts['errors']} errors, "
            f"{len(data.encode('utf-8'))} bytes{' (changed)' if old != data else ''}"
        )
    if args.check and changed:
        print("would change: " + ", ".join(os.path.relpath(p, ROOT) for p in changed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
