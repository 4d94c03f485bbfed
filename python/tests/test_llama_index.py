"""The LlamaIndex side: ChunkWorkerNodeParser as a LlamaIndex user calls it."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import FIXTURES, need


@pytest.fixture(autouse=True)
def _llama() -> None:
    if importlib.util.find_spec("llama_index") is None:
        need("llama-index-core", "pip install llama-index-core")


def documents() -> list["object"]:
    from llama_index.core import Document

    return [
        Document(text=p.read_text(encoding="utf-8"), metadata={"file_path": str(p)})
        for p in sorted(FIXTURES.glob("*.md"))[:10]
    ]


def test_nodes_carry_ids_offsets_and_neighbours() -> None:
    from llama_index.core.schema import NodeRelationship, TextNode

    from chunk_worker import normalize
    from chunk_worker.llama_index import ChunkWorkerNodeParser

    docs = documents()
    nodes = ChunkWorkerNodeParser(profile="spec-v1").get_nodes_from_documents(docs)  # type: ignore[arg-type]
    assert nodes and all(isinstance(n, TextNode) for n in nodes)
    by_doc: dict[str, list[TextNode]] = {}
    for n in nodes:
        assert isinstance(n, TextNode)
        assert n.node_id == n.metadata["chunk_id"]
        source = n.relationships[NodeRelationship.SOURCE]
        by_doc.setdefault(source.node_id, []).append(n)
        text = normalize(open(n.metadata["file_path"], encoding="utf-8").read())
        assert n.start_char_idx is not None and n.end_char_idx is not None
        assert text[n.start_char_idx:n.end_char_idx] in n.text
        # Our fields stay out of what is embedded.
        assert "chunk_id" not in n.get_content(metadata_mode="embed")  # type: ignore[arg-type]
    for run in by_doc.values():
        for a, b in zip(run, run[1:]):
            assert a.relationships[NodeRelationship.NEXT].node_id == b.node_id
            assert b.relationships[NodeRelationship.PREVIOUS].node_id == a.node_id
    again = ChunkWorkerNodeParser(profile="spec-v1").get_nodes_from_documents(documents())  # type: ignore[arg-type]
    assert [n.node_id for n in again] == [n.node_id for n in nodes]


def test_multi_granularity_profiles_give_parent_and_child_links() -> None:
    from llama_index.core import Document
    from llama_index.core.schema import NodeRelationship

    from chunk_worker.llama_index import ChunkWorkerNodeParser

    text = (FIXTURES / "15-runbook.md").read_text(encoding="utf-8")
    nodes = ChunkWorkerNodeParser(profile="hierarchy-v1").get_nodes_from_documents(
        [Document(text=text, id_="runbook")]
    )
    by_id = {n.node_id: n for n in nodes}
    granularities = {n.metadata["granularity"] for n in nodes}
    assert {"document", "section", "window"} <= granularities
    with_parent = [n for n in nodes if NodeRelationship.PARENT in n.relationships]
    assert with_parent
    for n in with_parent:
        parent = by_id[n.relationships[NodeRelationship.PARENT].node_id]
        children = parent.relationships[NodeRelationship.CHILD]
        assert isinstance(children, list) and n.node_id in {c.node_id for c in children}
    # Neighbours stay within one granularity.
    for n in nodes:
        nxt = n.relationships.get(NodeRelationship.NEXT)
        if nxt is not None:
            assert by_id[nxt.node_id].metadata["granularity"] == n.metadata["granularity"]


def test_it_runs_in_an_ingestion_pipeline() -> None:
    from llama_index.core.ingestion import IngestionPipeline

    from chunk_worker.llama_index import ChunkWorkerNodeParser

    pipeline = IngestionPipeline(transformations=[ChunkWorkerNodeParser(profile="recursive-v1")])
    nodes = pipeline.run(documents=documents())
    assert nodes and all(n.metadata["profile"] == "recursive-v1" for n in nodes)
