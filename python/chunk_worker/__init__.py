"""chunk-worker's chunking engine in Python.

The same Rust engine as the ``chunk-worker`` CLI, worker and HTTP API: the
same chunk records, ids and bytes for the same input and profile.

>>> from chunk_worker import Engine
>>> engine = Engine()                       # the default profile, spec-v1
>>> chunks = engine.chunk("# Title\\n\\nSome text.\\n", document_id="doc-1")
>>> chunks[0].headings_path
['Title']

LangChain (``pip install langchain-core``)::

    from chunk_worker import ChunkingFactory
    splitter = ChunkingFactory().create_markdown(chunk_size=1000, chunk_overlap=200)
    docs = splitter.split_documents(docs)

LlamaIndex (``pip install llama-index-core``)::

    from chunk_worker.llama_index import ChunkWorkerNodeParser
    nodes = ChunkWorkerNodeParser(profile="spec-v1").get_nodes_from_documents(docs)

Neither framework is imported until it is used.
"""

from ._native import (
    Chunk,
    ChunkingError,
    Engine,
    Explanation,
    ProfileInfo,
    __version__,
    normalize,
)
from .factory import ChunkingFactory, ChunkWorkerTextSplitter
from .protocol import BaseChunker, EngineChunker

__all__ = [
    "BaseChunker",
    "Chunk",
    "ChunkWorkerTextSplitter",
    "ChunkingError",
    "ChunkingFactory",
    "Engine",
    "EngineChunker",
    "Explanation",
    "ProfileInfo",
    "__version__",
    "normalize",
]
