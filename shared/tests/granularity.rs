//! The granularity-aware strategies of issue 10 on their own terms:
//! section-aware atomic sections, the table modes (row groups, rows,
//! summaries, the grouping fallback, ragged rows), sliding windows ending at
//! sentences with tables kept whole, and parameter errors that name the
//! problem. Every output here also passes the independent checker.

// Test code: a failed unwrap on a fixture the test reads is itself a failure.
#![allow(clippy::unwrap_used)]

mod common;

use common::{engine, invariant_violations, level_for, meta, Level};
use shared::{Chunk, ChunkType, ChunkedDocument, Granularity, Profile, ProfileOrigin, Registry};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}.md")).unwrap()
}

fn parse(src: &str) -> Result<Profile, String> {
    Profile::parse(
        src,
        ProfileOrigin::File("test.toml".into()),
        &Registry::builtin(),
    )
    .map_err(|e| e.to_string())
}

/// Chunks `bytes` under `p` and checks the contract independently.
fn run(bytes: &[u8], p: &Profile) -> ChunkedDocument {
    let doc = shared::normalize::normalize(bytes).unwrap();
    let out = shared::chunk_document(&doc, &meta("t", "doc", "v1"), p, None).unwrap();
    let v = invariant_violations(&out.normalized, &out.chunks, p, level_for(p, Level::Full));
    assert!(v.is_empty(), "{}: {}", p.name, common::describe(&v));
    out
}

fn builtin(name: &str) -> Profile {
    engine().profile(Some(name)).unwrap().clone()
}

#[test]
fn ctgov_keeps_the_eligibility_criteria_whole_and_cuts_at_every_section() {
    let bytes = fixture("21-clinical-trial");
    let doc = run(&bytes, &builtin("ctgov-v1"));
    let elig: Vec<&Chunk> = doc
        .chunks
        .iter()
        .filter(|c| {
            c.headings_path
                .last()
                .is_some_and(|h| h == "Eligibility Criteria")
        })
        .collect();
    assert_eq!(elig.len(), 1, "one eligibility chunk");
    assert!(
        elig[0].token_count > 402,
        "larger than target + 15%: atomic"
    );
    assert!(elig[0]
        .chunk_text
        .contains("Participation in another interventional trial"));
    // Without the atomic pattern the same section is packed to the target.
    let plain = parse(
        "name = \"plain\"\nstrategy = \"section_aware\"\n[params]\ntarget_tokens = 350\nhard_max_tokens = 1200\n",
    )
    .unwrap();
    let doc = run(&bytes, &plain);
    let parts = doc
        .chunks
        .iter()
        .filter(|c| {
            c.headings_path
                .last()
                .is_some_and(|h| h == "Eligibility Criteria")
        })
        .count();
    assert!(parts >= 2, "split without the atomic pattern: {parts}");
    for c in &doc.chunks {
        assert!(c.token_count as usize <= 402 || c.chunk_type != ChunkType::Paragraph);
        // No chunk mixes two H2 sections.
        let h2 = c
            .chunk_text
            .lines()
            .filter(|l| l.starts_with("## "))
            .count();
        assert!(h2 <= 1, "{}", c.chunk_text);
    }
}

#[test]
fn row_groups_keep_groups_whole_and_an_unknown_column_falls_back_and_says_so() {
    let bytes = fixture("20-grouped-table");
    let doc = run(&bytes, &builtin("table-v1"));
    let tables: Vec<&Chunk> = doc
        .chunks
        .iter()
        .filter(|c| c.granularity == Granularity::Table)
        .collect();
    assert!(tables.len() >= 2);
    for c in &tables {
        assert_eq!(c.is_table, Some(true));
        assert!(c
            .chunk_key
            .as_deref()
            .unwrap()
            .starts_with("doc:table:table:"));
        let facet = c.facet_json.as_ref().unwrap();
        assert_eq!(facet["mode"], "rowgroup");
        assert!(facet.get("group_by_fallback").is_none());
    }
    // Every drug's rows sit in exactly one chunk.
    for drug in [
        "Atorvastatin 20 mg",
        "Metformin 500 mg",
        "Lisinopril 10 mg",
        "Sertraline 50 mg",
    ] {
        let holding = tables
            .iter()
            .filter(|c| c.facet_json.as_ref().is_some_and(|f| f["table"] == 0))
            .filter(|c| c.chunk_text.contains(&format!("| {drug} |")))
            .count();
        assert_eq!(holding, 1, "{drug}");
    }
    let fallback = parse(
        "name = \"fb\"\nstrategy = \"table\"\ngranularity = \"table\"\n[params]\nmode = \"rowgroup\"\ngroup_by = \"Dosage\"\ntarget_tokens = 100\n",
    )
    .unwrap();
    let doc = run(&bytes, &fallback);
    let facet = doc
        .chunks
        .iter()
        .find_map(|c| c.facet_json.clone())
        .unwrap();
    assert_eq!(facet["group_by"], "Study drug");
    assert!(facet["group_by_fallback"]
        .as_str()
        .unwrap()
        .contains("\"Dosage\" not found"));
}

#[test]
fn row_mode_gives_one_chunk_per_row_under_its_header_and_ragged_rows_are_kept() {
    let md = "# Prices\n\n| Item | Price (EUR) |\n|---|---:|\n| Tea | 3.50 |\n| Coffee |\n| Cake | 4.20 | extra |\n\nAfter.\n";
    let row = parse("name = \"rows\"\nstrategy = \"table\"\ngranularity = \"table\"\n[params]\nmode = \"row\"\n").unwrap();
    let doc = run(md.as_bytes(), &row);
    let rows: Vec<&Chunk> = doc
        .chunks
        .iter()
        .filter(|c| c.granularity == Granularity::Table)
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[0]
        .chunk_text
        .starts_with("# Prices\n\n| Item | Price (EUR) |"));
    for c in &rows[1..] {
        assert!(
            c.chunk_text
                .starts_with("| Item | Price (EUR) |\n|---|---:|\n"),
            "{}",
            c.chunk_text
        );
    }
    assert!(rows[1].chunk_text.ends_with("| Coffee |"));
    assert_eq!(doc.chunks.last().unwrap().chunk_text, "After.");
}

#[test]
fn a_summary_describes_the_table_and_its_facet_holds_the_whole_table() {
    let doc = run(&fixture("20-grouped-table"), &builtin("table-summary-v1"));
    let first = doc
        .chunks
        .iter()
        .find(|c| c.granularity == Granularity::Table)
        .unwrap();
    let facet = first.facet_json.as_ref().unwrap();
    assert_eq!(facet["row_count"], 24);
    assert!(facet["markdown"]
        .as_str()
        .unwrap()
        .contains("| Sertraline 50 mg |"));
    assert!(
        first.embed_text.starts_with("Table 2: Adverse reactions"),
        "{}",
        first.embed_text
    );
    assert!(first.embed_text.contains("Frequency (%) from"));
}

#[test]
fn windows_end_at_sentences_overlap_from_sentence_starts_and_tables_stay_whole() {
    let doc = run(&fixture("04-no-headings"), &builtin("window-v1"));
    assert!(doc.chunks.len() >= 5);
    for c in &doc.chunks {
        assert!(c.token_count <= 512);
        assert_eq!(c.granularity, Granularity::Window);
        assert_eq!(c.is_table, Some(false));
    }
    // All but the last window end at a sentence end (the prose is punctuated).
    let ends_sentence = doc.chunks[..doc.chunks.len() - 1]
        .iter()
        .filter(|c| c.chunk_text.trim_end().ends_with(['.', '!', '?', ')', '»']))
        .count();
    assert!(ends_sentence + 1 >= doc.chunks.len() - 1, "{ends_sentence}");
    let doc = run(&fixture("20-grouped-table"), &builtin("window-v1"));
    let tables: Vec<&Chunk> = doc
        .chunks
        .iter()
        .filter(|c| c.granularity == Granularity::Table)
        .collect();
    assert_eq!(tables.len(), 2, "each table whole");
    assert_eq!((tables[0].ordinal, tables[1].ordinal), (0, 1));
    // A 240-row table over the hard max is split by rows, header repeated.
    let doc = run(&fixture("03-big-table"), &builtin("window-v1"));
    let parts: Vec<&Chunk> = doc
        .chunks
        .iter()
        .filter(|c| c.granularity == Granularity::Table)
        .collect();
    assert!(parts.len() >= 2);
    for c in &parts[1..] {
        assert!(c.chunk_text.starts_with("| Service | Owner |"));
        assert!(c.token_count <= 1024);
    }
}

#[test]
fn bad_parameters_are_refused_naming_the_key_and_the_choices() {
    let cases = [
        (
            "sliding_window",
            "tables = \"sometimes\"",
            "params.tables = \"sometimes\" is not one of whole, windows",
        ),
        (
            "sliding_window",
            "target_tokens = 600\nhard_max_tokens = 500",
            "params.hard_max_tokens = 500 is out of range",
        ),
        (
            "section_aware",
            "atomic_sections = [\"\"]",
            "params.atomic_sections holds an empty pattern",
        ),
        (
            "section_aware",
            "atomic_sections = \"eligibility\"",
            "expected a list of strings",
        ),
        (
            "table",
            "mode = \"cells\"",
            "params.mode = \"cells\" is not one of row, rowgroup, summary",
        ),
        (
            "table",
            "group_by = 3",
            "params.group_by = 3 is a integer; expected a string",
        ),
    ];
    for (strategy, params, want) in cases {
        let src = format!("name = \"bad\"\nstrategy = \"{strategy}\"\n[params]\n{params}\n");
        let err = parse(&src).unwrap_err();
        assert!(err.contains(want), "{strategy} {params}: {err}");
    }
}

#[test]
fn hierarchy_gives_every_granularity_with_parents_that_contain_their_children() {
    let p = builtin("hierarchy-v1");
    assert_eq!(
        p.chunker_version,
        "structural:1.3.0+document:1.0.0+sliding_window:1.0.0+table:1.0.0"
    );
    let doc = run(&fixture("20-grouped-table"), &p);
    let of = |g: Granularity| -> Vec<&Chunk> {
        doc.chunks.iter().filter(|c| c.granularity == g).collect()
    };
    let (documents, sections, windows, tables) = (
        of(Granularity::Document),
        of(Granularity::Section),
        of(Granularity::Window),
        of(Granularity::Table),
    );
    assert_eq!(documents.len(), 1);
    assert!(!sections.is_empty() && windows.len() > sections.len());
    assert_eq!(tables.len(), 2, "one summary per table");
    let by_id = |id: &str| doc.chunks.iter().find(|c| c.chunk_id == id).unwrap();
    for w in &windows {
        assert!(w.token_count <= 128);
        assert!(w
            .chunk_key
            .as_deref()
            .unwrap()
            .starts_with("doc:sliding_window:window:"));
        // A window inside a table names the table chunk; others a section.
        let inside_table = tables
            .iter()
            .find(|t| t.byte_start <= w.byte_start && w.byte_end <= t.byte_end);
        match (inside_table, &w.parent_chunk_id) {
            (Some(t), Some(pid)) => assert_eq!(*pid, t.chunk_id),
            (None, Some(pid)) => assert_ne!(by_id(pid).granularity, Granularity::Window),
            (_, None) => {}
        }
    }
    assert!(
        tables.iter().any(|t| t.parent_chunk_id.is_some()),
        "the small table sits in a section"
    );
    for t in &tables {
        // A table the sections split in two has no single containing
        // section (nor the document head, when it ends inside the table).
        if let Some(pid) = t.parent_chunk_id.as_deref() {
            let parent = by_id(pid);
            assert!(matches!(
                parent.granularity,
                Granularity::Section | Granularity::Document
            ));
            assert!(parent.byte_start <= t.byte_start && t.byte_end <= parent.byte_end);
        }
        assert_eq!(t.facet_json.as_ref().unwrap()["mode"], "summary");
    }
    for s in &sections {
        assert_eq!(
            s.chunk_key.as_deref(),
            Some(format!("doc:structural:section:{}", s.ordinal).as_str())
        );
    }
    // Sections are the primary: their ids are spec-v1's.
    let spec = run(&fixture("20-grouped-table"), &builtin("spec-v1"));
    let spec_ids: Vec<&str> = spec.chunks.iter().map(|c| c.chunk_id.as_str()).collect();
    let section_ids: Vec<&str> = sections.iter().map(|c| c.chunk_id.as_str()).collect();
    assert_eq!(section_ids, spec_ids);
}

#[test]
fn multi_granularity_off_runs_the_primary_alone_exactly_as_before() {
    let off = shared::Engine::builder()
        .multi_granularity(false)
        .build()
        .unwrap();
    let bytes = fixture("01-headings");
    let m = meta("t", "doc", "v1");
    let h = off.chunk(&bytes, &m, Some("hierarchy-v1")).unwrap();
    let spec = off.chunk(&bytes, &m, Some("spec-v1")).unwrap();
    assert_eq!(h.chunker_version, "structural:1.3.0");
    assert_eq!(h.chunks.len(), spec.chunks.len());
    for (a, b) in h.chunks.iter().zip(&spec.chunks) {
        // Every chunk has a key now, the same one as spec-v1's.
        assert_eq!(
            (&a.chunk_id, &a.chunk_text, a.chunk_key.as_ref()),
            (&b.chunk_id, &b.chunk_text, b.chunk_key.as_ref())
        );
        assert!(a.chunk_key.is_some());
    }
    let per_profile = parse(
        "name = \"h\"\nstrategy = \"structural\"\nmulti_granularity = false\n[params]\ntarget_tokens = 350\nhard_max_tokens = 520\n[[auxiliary]]\nstrategy = \"document\"\ngranularity = \"document\"\n",
    )
    .unwrap();
    let doc = run(&bytes, &per_profile);
    assert!(doc
        .chunks
        .iter()
        .all(|c| c.granularity == Granularity::Section));
}

#[test]
fn bad_multi_granularity_profiles_are_refused_with_the_reason() {
    let head = "name = \"bad\"\nstrategy = \"structural\"\n[params]\ntarget_tokens = 350\nhard_max_tokens = 520\n";
    let cases = [
        ("[[auxiliary]]\nstrategy = \"token\"\ngranularity = \"section\"\n", "repeats a granularity"),
        (
            "[[auxiliary]]\nstrategy = \"token\"\ngranularity = \"window\"\n[[auxiliary]]\nstrategy = \"sliding_window\"\ngranularity = \"window\"\n",
            "auxiliary[1].granularity \"window\" repeats",
        ),
        ("[[auxiliary]]\nstrategy = \"nope\"\ngranularity = \"window\"\n", "auxiliary[0].strategy \"nope\" is unknown"),
        ("[[auxiliary]]\nstrategy = \"document\"\ngranularity = \"window\"\n", "produces document chunks only"),
        (
            "[[auxiliary]]\nstrategy = \"sliding_window\"\ngranularity = \"window\"\nparams = { tables = 1 }\n",
            "auxiliary[0].params.tables = 1 is a integer",
        ),
        ("[[auxiliary]]\nstrategy = \"semantic\"\ngranularity = \"paragraph\"\n", "needs the embedding model"),
    ];
    for (aux, want) in cases {
        let err = parse(&format!("{head}{aux}")).unwrap_err();
        assert!(err.contains(want), "{aux}: {err}");
    }
    let err =
        parse("name = \"bad\"\nstrategy = \"token\"\nmulti_granularity = true\n").unwrap_err();
    assert!(err.contains("has none"), "{err}");
}

#[test]
fn a_multi_granularity_profile_prints_and_loads_back_the_same() {
    let p = builtin("hierarchy-v1");
    let again = parse(&p.to_toml()).unwrap();
    assert_eq!(again.to_toml(), p.to_toml());
    assert_eq!(again.chunker_version, p.chunker_version);
}
