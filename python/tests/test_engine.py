"""The engine from Python: the CLI's records byte for byte, metadata,
offsets, errors with their codes, batches, threads, profiles, explain."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

import chunk_worker
from chunk_worker import Chunk, ChunkingError, Engine, normalize

from conftest import FIXTURES, REPO, markdown_fixtures

# One profile of every kind the CLI comparison covers: the default
# (structural), the LangChain-compatible recursive splitter, Markdown
# headers, token and sliding windows, tables, a multi-granularity profile
# (document > section > window > table with parent links), clinical roles,
# layout recovery, section-aware packing, and two experimental ones (a
# topic segmenter, entity communities).
PROFILES = [
    "spec-v1",
    "recursive-v1",
    "markdown-v1",
    "token-v1",
    "window-v1",
    "table-v1",
    "hierarchy-v1",
    "clinical-v1",
    "layout-v1",
    "pmc-v1",
]
EXPERIMENTAL = ["texttiling-v1", "graphrag-v1"]


def cli_lines(cli: Path, path: Path, profile: str, *extra: str) -> list[str]:
    done = subprocess.run(
        [str(cli), "chunk", str(path), "--document-id", "doc-1", "--profile", profile, *extra],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8").splitlines()


@pytest.mark.parametrize("profile", PROFILES + EXPERIMENTAL)
def test_records_are_the_clis_byte_for_byte(cli: Path, profile: str) -> None:
    experimental = profile in EXPERIMENTAL
    engine = Engine(profile, experimental=experimental)
    compared = 0
    for path in markdown_fixtures():
        expected = cli_lines(cli, path, profile, *(["--experimental"] if experimental else []))
        chunks = engine.chunk(path.read_bytes(), document_id="doc-1", file_path=str(path))
        assert [c.to_json() for c in chunks] == expected, path.name
        compared += len(expected)
    assert compared > 20


def test_html_and_tei_are_converted_as_the_cli_converts_them(cli: Path) -> None:
    engine = Engine()
    for path, fmt in [
        (FIXTURES / "html" / "01-article.html", "html"),
        (FIXTURES / "html" / "02-messy.html", "html"),
        (FIXTURES / "tei" / "short-paper.tei.xml", "tei"),
    ]:
        expected = cli_lines(cli, path, "spec-v1")
        chunks = engine.chunk(path.read_bytes(), document_id="doc-1", file_path=str(path), format=fmt)
        assert [c.to_json() for c in chunks] == expected, path.name
        assert chunks


def test_semantic_profile_loads_the_model_when_first_used(cli: Path, model_dir: Path) -> None:
    engine = Engine(model_dir=str(model_dir))  # default profile: no model yet
    path = FIXTURES / "15-runbook.md"
    expected = cli_lines(cli, path, "semantic-v1", "--model-dir", str(model_dir))
    chunks = engine.chunk(path.read_bytes(), document_id="doc-1", file_path=str(path),
                          profile="semantic-v1")
    assert [c.to_json() for c in chunks] == expected


def test_a_missing_model_is_an_error_naming_the_directory(tmp_path: Path) -> None:
    engine = Engine(model_dir=str(tmp_path / "nowhere"))
    with pytest.raises(ChunkingError) as e:
        engine.chunk("# A\n\ntext\n", document_id="d", profile="semantic-v1")
    assert "nowhere" in str(e.value)
    assert e.value.code == "UNKNOWN_PROFILE"


def test_every_field_of_the_record_is_an_attribute() -> None:
    chunk = Engine().chunk("# Title\n\nSome text here.\n", document_id="d")[0]
    record = chunk.to_dict()
    for key, value in record.items():
        assert getattr(chunk, key) == value, key
    assert chunk.headings_path == ["Title"]
    assert chunk.granularity == "section"
    assert Chunk.from_json(chunk.to_json()) == chunk
    assert hash(Chunk.from_json(chunk.to_json())) == hash(chunk)
    assert str(chunk) == chunk.chunk_text


def test_chunks_are_immutable() -> None:
    chunk = Engine().chunk("text\n", document_id="d")[0]
    with pytest.raises(AttributeError):
        chunk.chunk_text = "changed"  # type: ignore[misc]


def test_offsets_index_the_normalized_text() -> None:
    text = (FIXTURES / "08-crlf.md").read_text(encoding="utf-8")
    normalized = normalize(text)
    assert "\r" not in normalized
    for profile in PROFILES:
        for c in Engine(profile).chunk(text, document_id="d"):
            own = c.chunk_text[c.overlap_prefix_chars: len(c.chunk_text) - c.closing_suffix_chars]
            assert normalized[c.char_start:c.char_end] == own, (profile, c.ordinal)
            assert normalized.encode()[c.byte_start:c.byte_end] == own.encode()


def test_metadata_title_and_ids() -> None:
    engine = Engine()
    chunks = engine.chunk(
        "Body text.\n",
        document_id="confluence:ENG:1",
        tenant_id="acme-prod",
        metadata={"title": "Runbook", "space_key": "ENG", "ignored": object.__name__},
        source_version="v7",
    )
    c = chunks[0]
    assert (c.tenant_id, c.document_id, c.source_version_id) == ("acme-prod", "confluence:ENG:1", "v7")
    assert c.metadata == {"title": "Runbook", "space_key": "ENG"}
    assert c.embed_text.startswith("Runbook")
    again = engine.chunk(
        "Body text.\n", document_id="confluence:ENG:1", tenant_id="acme-prod",
        metadata={"title": "Runbook", "space_key": "ENG"}, source_version="v7",
    )
    assert [x.chunk_id for x in again] == [x.chunk_id for x in chunks]


def test_bad_arguments_are_value_errors() -> None:
    engine = Engine()
    with pytest.raises(ValueError, match="tenant"):
        engine.chunk("x", document_id="d", tenant_id="Not Valid")
    with pytest.raises(ValueError, match="document_id"):
        engine.chunk("x", document_id="")
    with pytest.raises(ValueError, match="format"):
        engine.chunk("x", document_id="d", format="pdf")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str or bytes"):
        engine.chunk(42, document_id="d")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="metadata"):
        engine.chunk("x", document_id="d", metadata=[1, 2])  # type: ignore[arg-type]


def test_errors_carry_the_contracts_code() -> None:
    engine = Engine()
    with pytest.raises(ChunkingError) as e:
        engine.chunk("x", document_id="d", profile="no-such-profile")
    assert e.value.code == "UNKNOWN_PROFILE"
    assert "no-such-profile" in str(e.value)
    with pytest.raises(ChunkingError) as e:
        engine.chunk(b"ok \xff\xfe bad", document_id="d")
    assert e.value.code == "INVALID_UTF8"
    assert "3" in e.value.message  # the offset of the first bad byte
    with pytest.raises(ChunkingError) as e:
        engine.chunk("x", document_id="d", profile="graphrag-v1")
    assert e.value.code == "UNKNOWN_PROFILE"
    assert "experimental" in str(e.value)


def test_experimental_profiles_need_the_opt_in() -> None:
    chunks = Engine(experimental=True).chunk("# A\n\nOne. Two.\n", document_id="d",
                                             profile="graphrag-v1")
    assert chunks and chunks[0].profile == "graphrag-v1"


def test_profile_files_and_toml() -> None:
    toml = (
        'name = "tiny"\ndescription = "tiny pieces"\nstrategy = "recursive"\n'
        'tokenizer = "cl100k_base"\ngranularity = "section"\nid_formula = "text"\n'
        '[params]\nchunk_size = 100\nchunk_overlap = 20\n'
    )
    engine = Engine(profile_toml=[toml])
    assert engine.profile == "tiny"
    chunks = engine.chunk(" ".join(f"w{i}" for i in range(400)), document_id="d")
    assert len(chunks) > 1 and all(c.token_count <= 100 for c in chunks)
    with pytest.raises(ValueError, match="profile_toml"):
        Engine(profile_toml=["name = 1"])
    with pytest.raises(ValueError, match="cannot read profile file"):
        Engine(profile_files=["/nonexistent/profile.toml"])


def test_chunk_many_equals_chunk_one_by_one() -> None:
    engine = Engine("recursive-v1")
    paths = markdown_fixtures()
    texts = [p.read_bytes() for p in paths]
    ids = [p.stem for p in paths]
    batch = engine.chunk_many(texts, document_ids=ids, threads=2)
    single = [engine.chunk(t, document_id=i) for t, i in zip(texts, ids)]
    assert batch == single
    assert engine.chunk_many([], document_ids=[]) == []
    with pytest.raises(ValueError, match="document_ids"):
        engine.chunk_many(["a"], document_ids=[])
    with pytest.raises(ChunkingError, match="bad-one"):
        engine.chunk_many([b"fine", b"\xff"], document_ids=["ok", "bad-one"])


def test_threads_chunk_concurrently_with_the_same_results() -> None:
    engine = Engine()
    text = (FIXTURES / "15-runbook.md").read_text(encoding="utf-8") * 20
    expected = engine.chunk(text, document_id="d")
    results: list[list[Chunk]] = []

    def work() -> None:
        results.append(engine.chunk(text, document_id="d"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_profiles_lists_every_builtin() -> None:
    profiles = {p.name: p for p in Engine().profiles()}
    for name in ["spec-v1", "recursive-v1", "semantic-v1", "hierarchy-v1", "graphrag-v1"]:
        assert name in profiles
    assert profiles["graphrag-v1"].experimental and not profiles["graphrag-v1"].available
    assert profiles["semantic-v1"].needs_model
    assert profiles["hierarchy-v1"].granularities[0] == "document"
    assert 'strategy = "structural"' in profiles["spec-v1"].toml
    assert profiles["spec-v1"].framework is None
    assert profiles["llama.sentence"].framework == "LlamaIndex SentenceSplitter (llama-index-core 0.14.25)"


def test_explain_gives_one_reason_per_chunk() -> None:
    engine = Engine()
    text = "# One\n\nFirst part.\n\n# Two\n\nSecond part.\n"
    explained = engine.explain(text, document_id="d")
    assert [e.chunk for e in explained] == engine.chunk(text, document_id="d")
    assert explained[0].rule == "heading"
    assert explained[0].details["text"] == "Two"
    assert explained[-1].rule == "end_of_document"


def test_version_is_the_workspaces() -> None:
    cargo = (REPO / "Cargo.toml").read_text(encoding="utf-8")
    assert f'version = "{chunk_worker.__version__}"' in cargo
