//! `explain` (issue 48): every built-in profile explains every chunk, one
//! reason each, and explaining changes no chunk; the generic rules give the
//! expected reason on documents built for them.

mod common;

use common::{engine, meta};
use shared::{DocumentMeta, EndReason, Engine};

const FIXTURES: [&str; 7] = [
    "01-headings.md",
    "03-big-table.md",
    "05-code-block.md",
    "07-pdf-export.md",
    "10-empty.md",
    "15-runbook.md",
    "21-clinical-trial.md",
];

#[test]
fn every_builtin_profile_explains_each_chunk_without_changing_any() {
    let engine = engine();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut profiles = 0;
    for profile in engine.profiles().iter() {
        if !matches!(profile.origin, shared::ProfileOrigin::Builtin) {
            continue;
        }
        profiles += 1;
        for name in FIXTURES {
            let md = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            let m = meta("t", name, "v1");
            let chunked = engine
                .chunk(&md, &m, Some(&profile.name))
                .unwrap_or_else(|e| panic!("{} {name}: {e}", profile.name));
            let (explained, reasons) = engine
                .explain(&md, &m, Some(&profile.name))
                .unwrap_or_else(|e| panic!("{} {name}: {e}", profile.name));
            assert_eq!(
                explained, chunked,
                "{} {name}: chunks changed",
                profile.name
            );
            assert_eq!(
                reasons.len(),
                chunked.chunks.len(),
                "{} {name}",
                profile.name
            );
            if let Some(last) = reasons.last() {
                if profile.active_auxiliaries().is_empty() {
                    assert_eq!(last, &EndReason::EndOfDocument, "{} {name}", profile.name);
                }
            }
            for r in &reasons {
                assert!(!r.to_string().is_empty());
            }
        }
    }
    assert!(profiles >= 27, "{profiles} built-in profiles");
}

fn explain(profile_toml: &str, md: &str) -> Vec<(shared::Chunk, EndReason)> {
    let engine = Engine::builder()
        .profile_source("test.toml", profile_toml)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (doc, reasons) = engine
        .explain(
            md.as_bytes(),
            &DocumentMeta::default(),
            Some("explain-test"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    doc.chunks.into_iter().zip(reasons).collect()
}

const SMALL: &str = "name = \"explain-test\"\nstrategy = \"structural\"\n\n[params]\ntarget_tokens = 100\nsoft_max_tokens = 120\nhard_max_tokens = 150\n";

fn paragraph(words: usize, topic: &str) -> String {
    let mut s = String::new();
    for i in 0..words {
        s.push_str(if i == 0 { "" } else { " " });
        s.push_str(topic);
        if i % 12 == 11 {
            s.push('.');
        }
    }
    s.push('.');
    s
}

#[test]
fn a_chunk_before_a_heading_ends_for_the_heading_and_the_last_for_the_document() {
    let md = format!(
        "# Alpha\n\n{}\n\n# Beta\n\n{}\n",
        paragraph(90, "apple"),
        paragraph(90, "banana")
    );
    let out = explain(SMALL, &md);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        out[0].1,
        EndReason::Heading {
            level: 1,
            text: "Beta".into()
        }
    );
    assert_eq!(out[1].1, EndReason::EndOfDocument);
    assert!(out[0].1.to_string().contains("Beta"));
}

#[test]
fn a_paragraph_split_for_size_ends_on_the_budget() {
    let md = format!("# Alpha\n\n{}\n", paragraph(600, "word"));
    let out = explain(SMALL, &md);
    assert!(out.len() >= 3, "{out:?}");
    for (c, r) in &out[..out.len() - 1] {
        match r {
            EndReason::SizeBudget {
                tokens,
                target,
                hard_max,
            } => {
                assert_eq!(*tokens, c.token_count);
                assert_eq!((*target, *hard_max), (100, 150));
            }
            other => panic!("{other:?} for {:?}", c.chunk_text),
        }
    }
}

#[test]
fn a_chunk_that_ends_with_a_table_or_before_code_says_so() {
    let table: String = std::iter::once("| name | value |\n|---|---|\n".to_owned())
        .chain((0..20).map(|i| format!("| row{i} | {i} |\n")))
        .collect();
    let md = format!(
        "# Alpha\n\n{table}\n{}\n\n```sh\n{}\n```\n",
        paragraph(90, "pear"),
        "echo hello world again and again\n".repeat(14)
    );
    let out = explain(SMALL, &md);
    let reasons: Vec<&EndReason> = out.iter().map(|(_, r)| r).collect();
    assert!(reasons.contains(&&EndReason::TableBoundary), "{reasons:?}");
    assert!(reasons.contains(&&EndReason::CodeBoundary), "{reasons:?}");
    assert_eq!(reasons.last(), Some(&&EndReason::EndOfDocument));
}

/// The rules of every chunk of `file` (under tests/fixtures) by `profile`.
fn rules(profile: &str, file: &str) -> Vec<EndReason> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let md = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let (_, reasons) = engine()
        .explain(&md, &meta("t", "d", "v1"), Some(profile))
        .unwrap_or_else(|e| panic!("{profile} {file}: {e}"));
    reasons
}

#[test]
fn strategies_that_know_more_say_so() {
    let has = |profile: &str, file: &str, rule: &str| {
        let reasons = rules(profile, file);
        assert!(
            reasons.iter().any(|r| r.rule() == rule),
            "{profile} on {file}: no {rule} in {reasons:?}"
        );
    };
    has("recursive-v1", "17-russian-docs.md", "separator");
    has(
        "texttiling-v1",
        "semantic/interleaved-en-1.md",
        "topic_boundary",
    );
    has("c99-v1", "semantic/interleaved-en-1.md", "topic_boundary");
    has(
        "semantic-v1",
        "semantic/interleaved-en-1.md",
        "semantic_dip",
    );
    has("layout-v1", "layout/01-caps-report.md", "inferred_heading");
    has(
        "clinical-v1",
        "clinical/pmc-PMC3669111-abstract.md",
        "role_change",
    );
    has("hierarchy-v1", "20-grouped-table.md", "granularity");
    let cued = rules("discourse_segmenter-v1", "01-headings.md");
    assert!(
        cued.iter().any(|r| matches!(
            r,
            EndReason::TopicBoundary { cue: Some(_), confidence: Some(c), .. } if *c > 0.0
        )),
        "discourse_segmenter names its cue: {cued:?}"
    );
}
