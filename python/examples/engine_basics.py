"""The engine directly: chunk, batch, explain, profiles.
Run: python examples/engine_basics.py"""

from __future__ import annotations

from chunk_worker import Chunk, ChunkingError, Engine, EngineChunker

TEXT = "# Install\n\nRun the installer.\n\n## Verify\n\nCheck the version.\n"


def main() -> None:
    engine = Engine()  # the default profile, spec-v1
    chunks: list[Chunk] = engine.chunk(TEXT, document_id="guide", metadata={"title": "Guide"})
    for c in chunks:
        print(c.ordinal, c.chunk_id[:12], c.headings_path, c.token_count)
    batches = engine.chunk_many([TEXT, TEXT], document_ids=["a", "b"], profile="recursive-v1")
    print([len(b) for b in batches])
    for e in engine.explain(TEXT, document_id="guide"):
        print(e.rule, "-", e.reason)
    print(sorted(p.name for p in engine.profiles() if p.available)[:5])
    try:
        engine.chunk(TEXT, document_id="guide", profile="no-such-profile")
    except ChunkingError as err:
        print(err.code, err.message)
    print(len(EngineChunker("window-v1").chunk(TEXT, document_id="guide")))


if __name__ == "__main__":
    main()
