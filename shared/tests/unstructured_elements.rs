//! `unstructured.by_title` in two stages against the fixture
//! (`fixtures/adapters/unstructured.by_title.json`): `chunk_by_title` over
//! the recorded `partition_md` elements (chunk types and texts of every
//! case), and `partition_md` of each document against its recorded
//! elements. The figures are printed (`--nocapture`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use shared::strategy::unstructured_by_title::chunking::{chunk_by_title, Element, Kind, Options};
use shared::strategy::unstructured_by_title::element::{Row, Table};
use shared::strategy::unstructured_by_title::stext::SText;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/adapters/unstructured.by_title.json");
    serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// The rows of a recorded `text_as_html` (Unstructured's own simple form).
fn parse_table(html: &str) -> Table {
    let mut rows = Vec::new();
    let mut header = false;
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        let Some(j) = rest[i..].find('>') else { break };
        let tag = &rest[i + 1..i + j];
        rest = &rest[i + j + 1..];
        match tag {
            "thead" => header = true,
            "/thead" => header = false,
            "tr" => rows.push(Row {
                header,
                cells: Vec::new(),
            }),
            "td/" | "th/" => {
                if let Some(r) = rows.last_mut() {
                    r.cells.push(SText::default());
                }
            }
            "td" | "th" => {
                let end = rest.find("</t").unwrap_or(rest.len());
                let text = unescape(&rest[..end]);
                if let Some(r) = rows.last_mut() {
                    r.cells.push(SText::plain(&text, 0).normalized());
                }
                rest = &rest[end..];
            }
            _ => {}
        }
    }
    Table {
        rows,
        source_html: html.to_owned(),
    }
}

fn kind(name: &str) -> Kind {
    match name {
        "Title" => Kind::Title,
        "ListItem" => Kind::ListItem,
        "Table" => Kind::Table,
        "CodeSnippet" => Kind::CodeSnippet,
        "Image" => Kind::Image,
        _ => Kind::Text,
    }
}

fn recorded(v: &Value) -> Vec<Element> {
    v.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| Element {
            kind: kind(e["type"].as_str().unwrap_or_default()),
            text: SText::plain(e["text"].as_str().unwrap_or_default(), 0),
            depth: e["category_depth"].as_u64().unwrap_or(0) as usize,
            table: e["text_as_html"].as_str().map(parse_table),
        })
        .collect()
}

fn options(kwargs: &Value) -> Options {
    let n = |k: &str| kwargs.get(k).and_then(Value::as_u64).map(|n| n as usize);
    Options {
        max_characters: n("max_characters").unwrap_or(500),
        new_after_n_chars: n("new_after_n_chars"),
        combine_text_under_n_chars: n("combine_text_under_n_chars"),
        overlap: n("overlap").unwrap_or(0),
        overlap_all: kwargs
            .get("overlap_all")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Options::default()
    }
}

#[test]
fn chunk_by_title_over_the_recorded_elements() {
    let data = fixture();
    let (mut same, mut total, mut html_same, mut html_total) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in data["cases"].as_array().cloned().unwrap_or_default() {
        let doc = case["document"].as_str().unwrap_or_default();
        let setting = data["settings"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == case["settings"]).cloned())
            .unwrap_or_default();
        let els = recorded(&data["elements"][doc]);
        let ours = chunk_by_title(&els, &options(&setting["kwargs"]));
        let theirs = case["chunks"].as_array().cloned().unwrap_or_default();
        let ours_t: Vec<(String, String)> = ours
            .iter()
            .map(|c| (c.kind.name().to_owned(), c.text.text()))
            .collect();
        let theirs_t: Vec<(String, String)> = theirs
            .iter()
            .map(|c| {
                (
                    c["type"].as_str().unwrap_or_default().to_owned(),
                    c["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        total += 1;
        if ours_t == theirs_t {
            same += 1;
            for (o, t) in ours.iter().zip(&theirs) {
                if let Some(h) = t["text_as_html"].as_str() {
                    html_total += 1;
                    html_same += usize::from(o.html.as_deref() == Some(h));
                    if o.html.as_deref() != Some(h) {
                        println!(
                            "{doc} {}: html ours {:?}\n theirs {h:?}",
                            case["settings"], o.html
                        );
                    }
                }
            }
        } else {
            let at = ours_t
                .iter()
                .zip(&theirs_t)
                .position(|(a, b)| a != b)
                .unwrap_or(ours_t.len().min(theirs_t.len()));
            failures.push(format!(
                "{doc} {} ({} chunks, theirs {}): chunk {at} ours {:?} theirs {:?}",
                case["settings"],
                ours_t.len(),
                theirs_t.len(),
                ours_t.get(at),
                theirs_t.get(at)
            ));
        }
    }
    println!("chunk_by_title over recorded elements: {same} of {total} cases identical (types and texts); table HTML equal on {html_same} of {html_total} table chunks");
    for f in &failures {
        println!("{f}");
    }
    assert!(failures.is_empty(), "{} cases differ", failures.len());
    let _ = fixtures_dir();
}

#[test]
fn partition_md_against_the_recorded_elements() {
    let data = fixture();
    let (mut same, mut total, mut elements) = (0, 0, 0);
    let mut diffs = Vec::new();
    for doc in data["documents"].as_array().cloned().unwrap_or_default() {
        let name = doc["name"].as_str().unwrap_or_default();
        let text =
            std::fs::read_to_string(fixtures_dir().join(doc["path"].as_str().unwrap_or_default()))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = shared::strategy::unstructured_by_title::partition::element_texts(&text);
        let theirs: Vec<(String, String)> = data["elements"][name]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or_default().to_owned(),
                    e["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let ours: Vec<(String, String)> =
            ours.into_iter().map(|(k, t)| (k.to_owned(), t)).collect();
        elements += theirs.len();
        total += 1;
        if ours == theirs {
            same += 1;
        } else {
            let at = ours
                .iter()
                .zip(&theirs)
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(theirs.len()));
            diffs.push(format!(
                "{name} ({} elements, theirs {}): element {at}\n  ours   {:?}\n  theirs {:?}",
                ours.len(),
                theirs.len(),
                ours.get(at),
                theirs.get(at)
            ));
        }
    }
    assert!(total == 22 && same > 0);
    println!("partition_md: {same} of {total} documents give the recorded element list (types and texts; {elements} elements)");
    for d in &diffs {
        println!("{d}");
    }
}
