"""A LlamaIndex node parser over the engine (``pip install llama-index-core``).

``ChunkWorkerNodeParser(profile="spec-v1")`` is a LlamaIndex ``NodeParser``:
``get_nodes_from_documents(docs)`` returns one ``TextNode`` per chunk, whose
``id_`` is the chunk id, ``text`` the chunk text, ``start_char_idx`` /
``end_char_idx`` the chunk's own span in the normalized document, and whose
relationships are ``SOURCE`` (the document), ``PREVIOUS`` / ``NEXT`` (the
neighbours of the same granularity) and, for multi-granularity profiles
(``hierarchy-v1``, ...), ``PARENT`` / ``CHILD`` from ``parent_chunk_id``.
The chunk's fields go into the node's metadata, kept out of the text that is
embedded or shown to the LLM.

A document's id (for the chunk ids) is its metadata's ``document_id`` /
``file_path`` / ... when set, else its ``id_``: set one of them for ids that
stay the same from run to run.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.node_parser.interface import NodeParser
    from llama_index.core.schema import (
        BaseNode,
        Document,
        MetadataMode,
        NodeRelationship,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "chunk_worker.llama_index needs LlamaIndex: pip install llama-index-core"
    ) from e

from ._documents import chunk_metadata, document_id, engine_metadata
from ._native import Chunk, Engine


class ChunkWorkerNodeParser(NodeParser):
    """LlamaIndex ``NodeParser`` backed by one engine profile."""

    profile: str = Field(default="spec-v1", description="The chunk-worker profile to chunk with.")
    tenant_id: str = Field(default="local", description="Tenant written on every chunk record.")
    input_format: str = Field(
        default="markdown", description='"markdown", "html" or "tei": what the documents hold.'
    )
    experimental: bool = Field(default=False, description="Allow experimental profiles.")
    model_dir: Optional[str] = Field(
        default=None, description="Where the sentence-embedding model is (semantic profiles)."
    )
    _engine: Any = PrivateAttr(default=None)

    def __init__(self, engine: Optional[Engine] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._engine = engine or Engine(
            self.profile, experimental=self.experimental, model_dir=self.model_dir
        )

    @classmethod
    def class_name(cls) -> str:
        return "ChunkWorkerNodeParser"

    @property
    def engine(self) -> Engine:
        """The engine the parser chunks with."""
        engine: Engine = self._engine
        return engine

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in nodes:
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            doc_id = document_id(node.metadata, text, node.node_id)
            chunks = self.engine.chunk(
                text,
                document_id=doc_id,
                tenant_id=self.tenant_id,
                metadata=engine_metadata(node.metadata),
                profile=self.profile,
                format=self.input_format,
            )
            out.extend(self._nodes(node, chunks))
        return out

    def _nodes(self, source: BaseNode, chunks: list[Chunk]) -> list[BaseNode]:
        made: dict[str, TextNode] = {}
        by_granularity: dict[str, list[TextNode]] = {}
        for chunk in chunks:
            ours = chunk_metadata(chunk)
            metadata = {**source.metadata, **ours} if self.include_metadata else ours
            hidden = list(ours)
            node = TextNode(
                id_=chunk.chunk_id,
                text=chunk.chunk_text,
                metadata=metadata,
                start_char_idx=chunk.char_start,
                end_char_idx=chunk.char_end,
                excluded_embed_metadata_keys=list(source.excluded_embed_metadata_keys) + hidden,
                excluded_llm_metadata_keys=list(source.excluded_llm_metadata_keys) + hidden,
            )
            node.relationships[NodeRelationship.SOURCE] = source.as_related_node_info()
            made[chunk.chunk_id] = node
            by_granularity.setdefault(chunk.granularity, []).append(node)
        if self.include_prev_next_rel:
            for run in by_granularity.values():
                for prev, nxt in zip(run, run[1:]):
                    nxt.relationships[NodeRelationship.PREVIOUS] = prev.as_related_node_info()
                    prev.relationships[NodeRelationship.NEXT] = nxt.as_related_node_info()
        children: dict[str, list[RelatedNodeInfo]] = {}
        for chunk in chunks:
            parent = chunk.parent_chunk_id
            if parent is not None and parent in made:
                node = made[chunk.chunk_id]
                node.relationships[NodeRelationship.PARENT] = made[parent].as_related_node_info()
                children.setdefault(parent, []).append(node.as_related_node_info())
        for parent, infos in children.items():
            made[parent].relationships[NodeRelationship.CHILD] = infos
        return list(made.values())

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        # Offsets, metadata and relationships are set exactly in _parse_nodes;
        # LlamaIndex's default would search each text in the document again.
        return nodes
