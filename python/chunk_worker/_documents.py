"""What the framework adapters share: a document's id and the metadata a
chunk adds to the framework's own."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional

from ._native import METADATA_KEYS, Chunk

# Where a document's id is looked for, in order, before falling back to a
# hash of its text.
ID_KEYS = ("document_id", "doc_id", "id", "source", "file_path", "file_name", "url")


def document_id(metadata: Mapping[str, Any], text: str, fallback: Optional[str] = None) -> str:
    """A stable id for a document: a metadata id key (with ``#page=N`` when
    a ``page`` key tells pages of one file apart), else ``fallback`` (the
    framework's own id), else ``sha256:`` + 16 hex digits of the text."""
    for key in ID_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            found = str(value)
            page = metadata.get("page", metadata.get("page_number"))
            if isinstance(page, int) and not isinstance(page, bool):
                found = f"{found}#page={page}"
            return _clean(found)
    if fallback:
        return _clean(fallback)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _clean(value: str) -> str:
    """Control characters dropped and at most 256 characters (the contract's
    document id)."""
    kept = "".join(ch for ch in value if ch.isprintable() or ch == " ")
    return kept[:256] or "document"


def engine_metadata(metadata: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The known keys of ``metadata`` whose values are JSON, for the engine."""
    kept: dict[str, Any] = {}
    # The keys the engine itself carries onto chunk records (title and
    # source_url also name the document); other keys stay on the
    # framework's side, preserved as they are.
    for key in METADATA_KEYS:
        if key in metadata and metadata[key] is not None:
            try:
                json.dumps(metadata[key])
            except (TypeError, ValueError):
                continue
            kept[key] = metadata[key]
    return kept or None


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """What a chunk adds to its document's metadata. ``start_index`` and
    ``end_index`` are character offsets of the chunk's own text (overlap
    excluded) in the normalized document: for text already normalized (LF
    line ends, no control characters; see ``chunk_worker.normalize``) they
    index the input itself."""
    out: dict[str, Any] = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "ordinal": chunk.ordinal,
        "start_index": chunk.char_start,
        "end_index": chunk.char_end,
        "headings_path": list(chunk.headings_path),
        "chunk_path": chunk.chunk_path,
        "chunk_type": chunk.chunk_type,
        "granularity": chunk.granularity,
        "token_count": chunk.token_count,
        "tokenizer": chunk.tokenizer,
        "content_hash": chunk.content_hash,
        "profile": chunk.profile,
        "chunker_version": chunk.chunker_version,
    }
    if chunk.parent_chunk_id is not None:
        out["parent_chunk_id"] = chunk.parent_chunk_id
    if chunk.page_start is not None:
        out["page_start"] = chunk.page_start
        out["page_end"] = chunk.page_end
    return out
