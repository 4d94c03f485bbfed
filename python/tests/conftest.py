"""What the tests share: the repository, the CLI binary to compare with, the
model, the fixtures.

Something a test needs that is missing (the CLI binary, the model,
LangChain, LlamaIndex) skips the test locally and fails it under CI=true,
naming what to build or install: CI never passes by skipping.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "shared" / "tests" / "fixtures"
MODEL_DIR = Path(os.environ.get("CHUNK_WORKER_MODEL_DIR", REPO / "models" / "all-MiniLM-L6-v2"))


def need(what: str, hint: str) -> None:
    """Skips the test, or fails it under CI."""
    message = f"{what} is missing: {hint}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def cli_binary() -> Optional[Path]:
    given = os.environ.get("CHUNK_WORKER_BIN")
    if given:
        return Path(given)
    for profile in ("debug", "release"):
        path = REPO / "target" / profile / "chunk-worker"
        if path.exists():
            return path
    found = shutil.which("chunk-worker")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli() -> Path:
    path = cli_binary()
    if path is None or not path.exists():
        need("the chunk-worker binary", "cargo build -p worker (or set CHUNK_WORKER_BIN)")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def model_dir() -> Path:
    if not (MODEL_DIR / "model.safetensors").exists():
        need(f"the sentence-embedding model in {MODEL_DIR}", "scripts/fetch-model.sh")
    return MODEL_DIR


def markdown_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.md"))
