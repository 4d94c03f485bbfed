"""The chunker protocol: the engine's chunkers satisfy it."""

from __future__ import annotations

from chunk_worker import BaseChunker, Chunk, EngineChunker
from chunk_worker.protocol import SupportsExplain


def test_engine_chunkers_are_base_chunkers_with_explain() -> None:
    chunker = EngineChunker("recursive-v1")
    assert isinstance(chunker, BaseChunker)
    assert isinstance(chunker, SupportsExplain)
    chunks = chunker.chunk("# A\n\nSome text.\n", document_id="d", metadata={"title": "T"})
    assert chunks and all(isinstance(c, Chunk) for c in chunks)
    assert chunks[0].profile == "recursive-v1"
    assert [e.chunk for e in chunker.explain("# A\n\nSome text.\n", document_id="d")] == \
        chunker.chunk("# A\n\nSome text.\n", document_id="d")


def test_any_object_with_chunk_is_one() -> None:
    class Mine:
        def chunk(self, markdown, *, document_id, tenant_id="local", title=None, metadata=None):  # type: ignore[no-untyped-def]
            return []

    assert isinstance(Mine(), BaseChunker)
    assert not isinstance(object(), BaseChunker)
