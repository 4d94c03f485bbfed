//! `chunk-worker explain`: a table line and a JSON line per chunk, the
//! chunks those of `chunk`, and the exit statuses of `chunk`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{chunk_worker, fixture};
use serde_json::Value;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_table_has_a_line_per_chunk_with_its_reason() {
    let file = fixture("01-headings.md");
    let chunked = chunk_worker(["chunk", file.to_str().unwrap()]);
    let chunks = stdout(&chunked).lines().count();
    let out = chunk_worker(["explain", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("spec-v1 structural:"), "{text}");
    assert!(lines[1].contains("why it ends"), "{text}");
    assert_eq!(lines.len(), 2 + chunks, "{text}");
    assert!(lines[2].trim_start().starts_with("0 "), "{text}");
    assert!(lines[2].contains("\"# Operating the Ingestion"), "{text}");
    assert!(text.contains("the next chunk starts at heading"), "{text}");
    assert!(
        lines.last().unwrap().ends_with("the document ends"),
        "{text}"
    );
}

#[test]
fn json_lines_carry_the_chunk_id_the_reason_and_the_sentence() {
    let file = fixture("17-russian-docs.md");
    let chunked = chunk_worker(["chunk", "--profile", "recursive-v1", file.to_str().unwrap()]);
    let records: Vec<Value> = stdout(&chunked)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let out = chunk_worker([
        "explain",
        "--profile",
        "recursive-v1",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), records.len());
    for (line, record) in lines.iter().zip(&records) {
        assert_eq!(line["chunk_id"], record["chunk_id"]);
        assert_eq!(line["ordinal"], record["ordinal"]);
        assert_eq!(line["char_start"], record["char_start"]);
        assert!(line["reason"]["rule"].is_string(), "{line}");
        assert!(!line["explanation"].as_str().unwrap().is_empty());
    }
    assert!(
        lines.iter().any(|l| l["reason"]["rule"] == "separator"),
        "recursive-v1 names its separators"
    );
    assert_eq!(lines.last().unwrap()["reason"]["rule"], "end_of_document");
}

#[test]
fn usage_errors_exit_2_and_an_unreadable_file_1() {
    let file = fixture("01-headings.md");
    let unknown = chunk_worker(["explain", "--profile", "no-such-v9", file.to_str().unwrap()]);
    assert_eq!(unknown.status.code(), Some(2));
    let missing = chunk_worker(["explain"]);
    assert_eq!(missing.status.code(), Some(2));
    let gone = chunk_worker(["explain", "/nonexistent/file.md"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("CHUNKING_FAILED"));
}
