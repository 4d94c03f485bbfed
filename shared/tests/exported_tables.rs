//! Issue 17, finding 5: a table an export flattened into a list (one
//! `- | ... |` item per row) is chunked as a table: whole when it fits, else
//! split between rows with its header row repeated.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use shared::{Chunk, ChunkType, ChunkedDocument, DocumentMeta, Engine};

const FIXTURE: &str = include_str!("fixtures/regressions/pipe-row-table.md");

fn engine_with(hard_max: usize) -> Engine {
    let toml = format!(
        "name = \"tiny\"\nstrategy = \"structural\"\n[params]\ntarget_tokens = {t}\nhard_max_tokens = {hard_max}\n",
        t = 100
    );
    Engine::builder()
        .profile_source("tiny.toml", toml)
        .build()
        .unwrap()
}

fn meta() -> DocumentMeta {
    DocumentMeta {
        document_id: "report".into(),
        ..DocumentMeta::default()
    }
}

fn chunked(engine: &Engine, profile: &str) -> ChunkedDocument {
    engine
        .chunk(FIXTURE.as_bytes(), &meta(), Some(profile))
        .unwrap()
}

fn tables(out: &ChunkedDocument) -> Vec<&Chunk> {
    out.chunks
        .iter()
        .filter(|c| c.chunk_type == ChunkType::Table)
        .collect()
}

#[test]
fn a_pipe_row_list_is_one_table_chunk_when_it_fits() {
    let out = chunked(&Engine::builtin().unwrap(), "spec-v1");
    let tables = tables(&out);
    assert_eq!(tables.len(), 1, "{:#?}", out.chunks);
    let t = &tables[0].chunk_text;
    assert!(t.contains("- | (in thousands) | 2019"), "{t}");
    assert!(t.contains("- | Diluted earnings per share"), "{t}");
}

#[test]
fn a_split_pipe_row_table_repeats_its_header_row() {
    let out = chunked(&engine_with(110), "tiny");
    let tables = tables(&out);
    assert!(tables.len() >= 2, "{:#?}", out.chunks);
    for c in &tables[1..] {
        assert!(
            c.chunk_text
                .starts_with("- | (in thousands) | 2019 | 2018 | 2017 |\n"),
            "continuation without its header: {:?}",
            c.chunk_text
        );
        assert!(c.token_count <= 110);
    }
    // Every row is in exactly one chunk's own text.
    for row in FIXTURE
        .lines()
        .filter(|l| l.starts_with("- | ") && !l.contains("(in thousands)"))
    {
        let owners = tables
            .iter()
            .filter(|c| out.normalized[c.byte_start as usize..c.byte_end as usize].contains(row))
            .count();
        assert_eq!(owners, 1, "row {row:?}");
    }
}
