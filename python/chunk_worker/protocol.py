"""The chunker protocol: what any chunker in a pipeline provides.

``BaseChunker`` is a structural type (``typing.Protocol``): anything with a
``chunk(text, *, document_id, ...)`` method returning ``Chunk`` records is
one; ``explain`` is optional (``SupportsExplain``). ``EngineChunker`` binds an
``Engine`` to one profile and satisfies both.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Protocol, Union, runtime_checkable

from ._native import Chunk, Engine, Explanation


@runtime_checkable
class BaseChunker(Protocol):
    """A chunker: text in, ``Chunk`` records with full provenance out."""

    def chunk(
        self,
        markdown: Union[str, bytes],
        *,
        document_id: str,
        tenant_id: str = "local",
        title: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> list[Chunk]:
        """Chunks one document; chunks in order, offsets into its normalized text."""
        ...


@runtime_checkable
class SupportsExplain(Protocol):
    """A chunker that can say why each chunk ends (for debugging)."""

    def explain(
        self,
        markdown: Union[str, bytes],
        *,
        document_id: str,
        tenant_id: str = "local",
    ) -> list[Explanation]:
        """One explanation per chunk, in order."""
        ...


class EngineChunker:
    """An ``Engine`` bound to one profile: a ``BaseChunker`` with ``explain``.

    >>> from chunk_worker import EngineChunker
    >>> chunker = EngineChunker("recursive-v1")
    >>> [c.ordinal for c in chunker.chunk("Some text.", document_id="d")]
    [0]
    """

    def __init__(self, profile: str = "spec-v1", *, engine: Optional[Engine] = None) -> None:
        self.engine = engine if engine is not None else Engine(profile)
        self.profile = profile

    def chunk(
        self,
        markdown: Union[str, bytes],
        *,
        document_id: str,
        tenant_id: str = "local",
        title: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> list[Chunk]:
        """Chunks one document under the bound profile."""
        return self.engine.chunk(
            markdown,
            document_id=document_id,
            tenant_id=tenant_id,
            title=title,
            metadata=dict(metadata) if metadata is not None else None,
            profile=self.profile,
        )

    def explain(
        self,
        markdown: Union[str, bytes],
        *,
        document_id: str,
        tenant_id: str = "local",
    ) -> list[Explanation]:
        """Why each chunk ends, under the bound profile."""
        return self.engine.explain(
            markdown, document_id=document_id, tenant_id=tenant_id, profile=self.profile
        )

    def __repr__(self) -> str:
        return f"EngineChunker(profile={self.profile!r})"
