//! Parity of the `recursive` strategy with LangChain's own
//! `RecursiveCharacterTextSplitter` (issue 9).
//!
//! `fixtures/langchain/recursive.jsonl` holds LangChain 1.1.3's chunk texts
//! for 50 corpus documents (normalized by us, front matter removed), made by
//! `scripts/peers/langchain_parity.py`; see the README beside it. We run our
//! port on the same text with the same parameters and compare the texts.
//!
//! At least 97% of (document, configuration) pairs must be identical, and
//! every difference must be one of the deliberate improvements:
//! - `over_limit`: LangChain emitted a chunk over `chunk_size` when counted
//!   whole (it sums the counts of pieces measured apart); ours cuts it;
//! - `contained`: LangChain repeated text already wholly in the previous
//!   chunk; ours drops a chunk with nothing new.
//!
//! Any other difference fails the test with the first diverging chunk.

use std::fmt::Write as _;

use shared::normalize::normalize;
use shared::{chunk_document, DocumentMeta, Profile, ProfileOrigin, Registry};
use tiktoken_rs::cl100k_base_singleton;

#[derive(serde::Deserialize)]
struct Case {
    document: String,
    config: String,
    chunk_size: usize,
    chunk_overlap: usize,
    text: String,
    chunks: Vec<String>,
}

fn profile(case: &Case) -> Profile {
    let separators = match case.config.as_str() {
        "markdown" => "separators = \"markdown\"\n",
        _ => "",
    };
    let src = format!(
        "name = \"parity\"\nstrategy = \"recursive\"\nbreadcrumb_mode = \"none\"\n[params]\nchunk_size = {}\nchunk_overlap = {}\n{separators}",
        case.chunk_size, case.chunk_overlap
    );
    match Profile::parse(&src, ProfileOrigin::Builtin, &Registry::builtin()) {
        Ok(p) => p,
        Err(e) => panic!("parity profile: {e}"),
    }
}

/// Why LangChain's output differs from ours, if it is a deliberate improvement.
fn explain(ours: &[String], theirs: &[String], size: usize) -> Option<&'static str> {
    let bpe = cl100k_base_singleton();
    let over = theirs
        .iter()
        .any(|c| bpe.encode_with_special_tokens(c).len() > size);
    if over {
        return Some("over_limit");
    }
    // Theirs minus chunks wholly inside the previous one equals ours.
    let kept: Vec<&String> = theirs
        .iter()
        .enumerate()
        .filter(|(i, c)| *i == 0 || !theirs[i - 1].contains(c.as_str()))
        .map(|(_, c)| c)
        .collect();
    if kept.len() < theirs.len() && kept.iter().copied().eq(ours.iter()) {
        return Some("contained");
    }
    None
}

#[test]
fn recursive_matches_langchain_text_for_text() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/langchain/recursive.jsonl"
    );
    let data = match std::fs::read_to_string(path) {
        Ok(d) => d,
        Err(e) => panic!("{path}: {e}"),
    };
    let mut total = 0usize;
    let mut identical = 0usize;
    let mut explained: Vec<String> = Vec::new();
    let mut unexplained = String::new();
    for (line_no, line) in data.lines().enumerate() {
        let case: Case = match serde_json::from_str(line) {
            Ok(c) => c,
            Err(e) => panic!("{path}:{}: {e}", line_no + 1),
        };
        let doc = match normalize(case.text.as_bytes()) {
            Ok(d) => d,
            Err(e) => panic!("{}: {e}", case.document),
        };
        assert_eq!(
            doc.text, case.text,
            "{}: the fixture text is not normalized (regenerate it)",
            case.document
        );
        let profile = profile(&case);
        let ours: Vec<String> = match chunk_document(&doc, &DocumentMeta::default(), &profile, None)
        {
            Ok(d) => d.chunks.into_iter().map(|c| c.chunk_text).collect(),
            Err(e) => panic!("{} ({}): {e}", case.document, case.config),
        };
        total += 1;
        if ours == case.chunks {
            identical += 1;
            continue;
        }
        match explain(&ours, &case.chunks, case.chunk_size) {
            Some(why) => explained.push(format!("{} ({}): {why}", case.document, case.config)),
            None => {
                let i = ours
                    .iter()
                    .zip(&case.chunks)
                    .position(|(a, b)| a != b)
                    .unwrap_or(ours.len().min(case.chunks.len()));
                let _ = writeln!(
                    unexplained,
                    "{} ({}): {} chunks vs LangChain's {}; first difference at chunk {i}:\n  ours:   {:?}\n  theirs: {:?}",
                    case.document,
                    case.config,
                    ours.len(),
                    case.chunks.len(),
                    ours.get(i).map(|s| s.chars().take(160).collect::<String>()),
                    case.chunks.get(i).map(|s| s.chars().take(160).collect::<String>()),
                );
            }
        }
    }
    println!(
        "LangChain parity: {identical}/{total} identical; explained differences: {explained:?}"
    );
    assert!(total >= 100, "the fixture has {total} cases");
    assert!(
        unexplained.is_empty(),
        "unexplained differences:\n{unexplained}"
    );
    assert!(
        identical * 100 >= total * 97,
        "only {identical}/{total} identical"
    );
}
