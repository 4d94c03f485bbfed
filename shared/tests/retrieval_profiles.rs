//! Issue 17's "no waste" findings on the shipped retrieval-first profiles
//! (`recursive` with `stub_tokens` and the `<sentence>` separator): on every
//! fixture, no chunk of a document that has several is a stub (under 8
//! tokens) or headings only, and no chunk starts with the end punctuation of
//! a sentence cut before it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{engine, fixtures, meta};

const PROFILES: [&str; 4] = [
    "retrieval-v1",
    "retrieval-minilm-v1",
    "retrieval-lexical-v1",
    "retrieval-minilm-v2",
];

fn headings_only(text: &str) -> bool {
    text.lines().filter(|l| !l.trim().is_empty()).all(|l| {
        let l = l.trim_start();
        let hashes = l.bytes().take_while(|&b| b == b'#').count();
        (1..=6).contains(&hashes) && matches!(l.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
    })
}

#[test]
fn retrieval_profiles_leave_no_stub_and_no_cut_punctuation() {
    let files = fixtures();
    let mut checked = 0;
    for profile in PROFILES {
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            let doc = engine()
                .chunk(&bytes, &meta("t", &name, "v1"), Some(profile))
                .unwrap_or_else(|e| panic!("{profile} {name}: {e}"));
            if doc.chunks.len() < 2 {
                continue;
            }
            for c in &doc.chunks {
                checked += 1;
                assert!(
                    c.token_count >= 8,
                    "{profile} {name}: stub of {} tokens: {:?}",
                    c.token_count,
                    c.chunk_text
                );
                assert!(
                    !headings_only(&c.chunk_text),
                    "{profile} {name}: headings only: {:?}",
                    c.chunk_text
                );
                assert!(
                    !c.chunk_text.starts_with(['.', '!', '?']),
                    "{profile} {name}: starts with punctuation: {:?}",
                    &c.chunk_text[..c.chunk_text.len().min(60)]
                );
            }
        }
    }
    assert!(checked > 50, "only {checked} chunks checked");
}

/// Prose of `n` distinct sentences in paragraphs of five.
fn prose(n: usize) -> String {
    (0..n)
        .map(|i| {
            let end = if i % 5 == 4 { "\n\n" } else { " " };
            format!("Sentence {i} tells the reader about valve {i} and its pressure limit.{end}")
        })
        .collect()
}

#[test]
fn retrieval_lexical_takes_larger_chunks_in_documents_with_sections() {
    let max_tokens = |text: &str| {
        let doc = engine()
            .chunk(
                text.as_bytes(),
                &meta("t", "d.md", "v1"),
                Some("retrieval-lexical-v1"),
            )
            .unwrap();
        assert!(doc.chunks.len() > 3, "{} chunks", doc.chunks.len());
        doc.chunks.iter().map(|c| c.token_count).max().unwrap()
    };
    // Plain text: chunk_size 250.
    let plain = prose(200);
    let most = max_tokens(&plain);
    assert!((200..=250).contains(&most), "plain: largest chunk {most}");
    // Two headings make sections: sectioned_chunk_size 360.
    let sectioned = format!("# Valves\n\n{}## Limits\n\n{}", prose(100), prose(100));
    let most = max_tokens(&sectioned);
    assert!(
        (300..=360).contains(&most),
        "sectioned: largest chunk {most}"
    );
    // One heading is not enough.
    let one = format!("# Valves\n\n{}", prose(200));
    assert!(max_tokens(&one) <= 250);
}

#[test]
fn sectioned_overlap_without_a_size_is_refused() {
    let toml = "name = \"x-v1\"\nstrategy = \"recursive\"\n\n[params]\nchunk_size = 200\nsectioned_chunk_overlap = 20\n";
    let err = shared::Profile::parse(
        toml,
        shared::ProfileOrigin::Builtin,
        &shared::Registry::builtin(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("sectioned_chunk_size"), "{err}");
}

fn recursive_profile(name: &str, extra: &str) -> String {
    format!(
        "name = \"{name}\"\nstrategy = \"recursive\"\nbreadcrumb_mode = \"none\"\n\n[params]\nchunk_size = 100\nchunk_overlap = 0\nseparators = [\"\\n\\n\", \"<sentence>\", \"\\n\", \" \", \"\"]\nstub_tokens = 4\n{extra}"
    )
}

#[test]
fn wrap_aware_cuts_at_line_ends_where_lines_are_paragraphs_and_at_sentences_where_wrapped() {
    let engine = shared::Engine::builder()
        .profile_source(
            "a.toml",
            recursive_profile("aware-v1", "wrap_aware = true\n"),
        )
        .profile_source("b.toml", recursive_profile("plain-v1", ""))
        .build()
        .unwrap();
    let chunks = |text: &str, profile: &str| -> Vec<String> {
        engine
            .chunk(text.as_bytes(), &meta("t", "d.md", "v1"), Some(profile))
            .unwrap()
            .chunks
            .into_iter()
            .map(|c| c.chunk_text)
            .collect()
    };
    // One paragraph per line (a speech): lines of three sentences, about
    // 30 tokens each, so a chunk of 100 holds three lines and a fraction.
    let speech: String = (0..8)
        .map(|i| {
            format!(
                "Paragraph {i} opens on the harbour. It then turns to the bridge and its toll. It closes with the ferry at noon.\n"
            )
        })
        .collect();
    let aware = chunks(&speech, "aware-v1");
    assert!(aware.len() >= 3, "{aware:?}");
    for c in &aware {
        assert!(
            c.starts_with("Paragraph") && c.ends_with("noon."),
            "a chunk of whole lines: {c:?}"
        );
    }
    // Without wrap_aware, sentences come first and a chunk ends mid-line.
    let plain = chunks(&speech, "plain-v1");
    assert!(
        plain.iter().any(|c| !c.ends_with("noon.")),
        "sentence packing crosses line ends: {plain:?}"
    );
    // Hard-wrapped prose: the same chunks either way (sentences first).
    let wrapped: String = (0..12)
        .map(|i| {
            format!(
                "In the year {i} the cathedral chapter resolved to rebuild the\nnave in the new style, and the towers were added later on.\n"
            )
        })
        .collect();
    assert_eq!(chunks(&wrapped, "aware-v1"), chunks(&wrapped, "plain-v1"));
}

#[test]
fn wrap_aware_without_sentences_before_line_breaks_is_refused() {
    let toml = "name = \"x-v1\"\nstrategy = \"recursive\"\n\n[params]\nchunk_size = 200\nwrap_aware = true\n";
    let err = shared::Profile::parse(
        toml,
        shared::ProfileOrigin::Builtin,
        &shared::Registry::builtin(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("wrap_aware") && err.contains("<sentence>"),
        "{err}"
    );
}
