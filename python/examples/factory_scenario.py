"""The factory scenario: load documents, split them with ChunkingFactory's
Markdown splitter (1000 tokens, 200 overlap), get LangChain Documents with
chunk ids and offsets. Run: python examples/factory_scenario.py [FILES...]"""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_core.documents import Document

from chunk_worker import ChunkingFactory


def load(paths: list[str]) -> list[Document]:
    return [
        Document(page_content=Path(p).read_text(encoding="utf-8"), metadata={"source": p})
        for p in paths
    ]


def main(argv: list[str]) -> int:
    paths = argv or [str(Path(__file__).resolve().parents[1] / "README.md")]
    docs = load(paths)
    chunks = ChunkingFactory().create_markdown(1000, 200).split_documents(docs)
    for doc in chunks:
        meta = doc.metadata
        print(f"{meta['chunk_id'][:12]}  {meta['start_index']:>6}-{meta['end_index']:<6} "
              f"{meta['token_count']:>4} tok  {' > '.join(meta['headings_path'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
