"""The LangChain side: ChunkingFactory's splitters as a LangChain user calls
them (the factory scenario: load documents, create_markdown(1000, 200),
split_documents)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from chunk_worker import ChunkingFactory, ChunkWorkerTextSplitter, Engine, normalize

from conftest import FIXTURES, need


@pytest.fixture(autouse=True)
def _langchain() -> None:
    if importlib.util.find_spec("langchain_core") is None:
        need("langchain-core", "pip install langchain-core")


def load_documents() -> list["object"]:
    from langchain_core.documents import Document

    docs = []
    for path in sorted(FIXTURES.glob("*.md"))[:12]:
        docs.append(Document(page_content=path.read_text(encoding="utf-8"),
                             metadata={"source": str(path), "author": "docs team"}))
    return docs


def test_the_factory_scenario_returns_documents_with_our_ids_and_offsets() -> None:
    from langchain_core.documents import BaseDocumentTransformer, Document

    docs = load_documents()
    splitter = ChunkingFactory().create_markdown(1000, 200)
    assert isinstance(splitter, BaseDocumentTransformer)
    out = splitter.split_documents(docs)  # type: ignore[arg-type]
    assert out and all(isinstance(d, Document) for d in out)
    sources = {d.metadata["source"] for d in docs}  # type: ignore[attr-defined]
    for d in out:
        assert d.metadata["source"] in sources  # the document's metadata is kept
        assert d.metadata["author"] == "docs team"
        assert d.id == d.metadata["chunk_id"] and len(d.id) == 64
        assert d.metadata["token_count"] <= 1000
        text = normalize(Path(d.metadata["source"]).read_text(encoding="utf-8"))
        own = text[d.metadata["start_index"]:d.metadata["end_index"]]
        assert own and own in d.page_content
    # Deterministic: the same documents give the same chunks and ids.
    again = ChunkingFactory().create_markdown(1000, 200).split_documents(load_documents())  # type: ignore[arg-type]
    assert [(d.id, d.page_content) for d in again] == [(d.id, d.page_content) for d in out]


def test_every_factory_method_sizes_in_tokens(model_dir: Path) -> None:
    factory = ChunkingFactory(model_dir=str(model_dir))
    text = (FIXTURES / "15-runbook.md").read_text(encoding="utf-8") * 3
    html = (FIXTURES / "html" / "01-article.html").read_text(encoding="utf-8")
    for make, sample in [
        (factory.create_recursive, text),
        (factory.create_markdown, text),
        (factory.create_semantic, text),
        (factory.create_html, html),
    ]:
        splitter = make(200, 40)
        chunks = splitter.chunks(sample)
        assert len(chunks) > 1, make.__name__
        assert all(c.token_count <= 200 for c in chunks), make.__name__
        assert splitter.split_text(sample) == [c.chunk_text for c in chunks]


def test_recursive_defaults_are_1000_and_200() -> None:
    splitter = ChunkingFactory().create_recursive()
    assert (splitter._chunk_size, splitter._chunk_overlap) == (1000, 200)
    profile = {p.name: p for p in splitter.engine.profiles()}[splitter.profile]
    assert "chunk_size = 1000" in profile.toml and "chunk_overlap = 200" in profile.toml
    assert profile.tokenizer == "cl100k_base"


def test_overlap_is_repeated_between_recursive_chunks() -> None:
    text = " ".join(f"word{i}" for i in range(3000))
    chunks = ChunkingFactory().create_recursive(100, 30).chunks(text)
    assert len(chunks) > 3
    assert all(c.overlap_prefix_chars > 0 for c in chunks[1:])


def test_create_documents_and_transform() -> None:
    splitter = ChunkingFactory().create_recursive(100, 0)
    texts = ["alpha " * 200, "beta " * 200]
    docs = splitter.create_documents(texts, metadatas=[{"source": "a"}, {"source": "b"}])
    assert {d.metadata["source"] for d in docs} == {"a", "b"}
    assert {d.metadata["document_id"] for d in docs} == {"a", "b"}
    transformed = splitter.transform_documents(docs[:1])
    assert transformed and transformed[0].metadata["source"] == "a"
    assert asyncio.run(splitter.atransform_documents(docs[:1])) == transformed
    with pytest.raises(ValueError, match="metadatas"):
        splitter.create_documents(texts, metadatas=[{}])


def test_ids_come_from_metadata_else_the_text() -> None:
    from langchain_core.documents import Document

    splitter = ChunkingFactory().create_recursive(100, 0)
    a = splitter.split_documents([Document(page_content="same text", metadata={})])
    b = splitter.split_documents([Document(page_content="same text", metadata={})])
    assert a[0].metadata["document_id"].startswith("sha256:")
    assert a[0].id == b[0].id
    pages = splitter.split_documents([
        Document(page_content="page text", metadata={"source": "x.pdf", "page": 1}),
        Document(page_content="page text", metadata={"source": "x.pdf", "page": 2}),
    ])
    assert pages[0].metadata["document_id"] == "x.pdf#page=1"
    assert pages[0].id != pages[1].id
    own = splitter.split_documents([Document(page_content="t", metadata={}, id="doc-9")])
    assert own[0].metadata["document_id"] == "doc-9"


def test_bad_sizes_are_refused() -> None:
    factory = ChunkingFactory()
    with pytest.raises(ValueError, match="smaller than chunk_size"):
        factory.create_recursive(100, 100)
    with pytest.raises(ValueError, match="positive"):
        factory.create_markdown(0, 0)
    with pytest.raises(ValueError, match="tokenizer"):
        ChunkingFactory(tokenizer="gpt2")


def test_the_splitter_is_a_langchain_text_splitter_once_that_is_imported() -> None:
    if importlib.util.find_spec("langchain_text_splitters") is None:
        need("langchain-text-splitters", "pip install langchain-text-splitters")
    from langchain_text_splitters import TextSplitter

    splitter = ChunkWorkerTextSplitter(Engine("recursive-v1"), "recursive-v1")
    assert isinstance(splitter, TextSplitter)
