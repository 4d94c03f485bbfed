//! Parity of the drop-in splitters with the frameworks themselves: every
//! case of `fixtures/adapters/<adapter>.json` (what the pinned Python
//! package returned for a document and a setting, made by
//! `scripts/peers/adapter_parity.py`) is chunked here with the profile of
//! the same name, the case's keyword arguments as `[params]`, the document
//! file's bytes exactly as input; the chunk texts are compared (and
//! LangChain's Markdown header metadata with the record's metadata).
//!
//! At least 95% of the cases of documents with content must be identical
//! (a whitespace-only document gives LangChain one chunk of whitespace and
//! us no record; the empty one gives LlamaIndex one empty node), and every
//! other one must differ only as the adapter documents (e.g. a character a
//! token window cuts, which LangChain decodes as U+FFFD and we keep whole). The figures
//! are printed (`--nocapture`) for BENCHMARKS.md.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use serde_json::Value;
use shared::{DocumentMeta, Embedder, Engine};

mod llama;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A keyword argument's value as TOML.
fn toml_value(k: &str, v: &Value) -> toml::Value {
    match v {
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) if n.is_i64() => toml::Value::Integer(n.as_i64().unwrap_or_default()),
        Value::Number(n) => toml::Value::Float(n.as_f64().unwrap_or_default()),
        Value::Array(a) => toml::Value::Array(a.iter().map(|x| toml_value(k, x)).collect()),
        Value::Object(o) => toml::Value::Table(
            o.iter()
                .map(|(kk, x)| (kk.clone(), toml_value(kk, x)))
                .collect(),
        ),
        Value::Null => panic!("{k} = null: no TOML for it"),
    }
}

/// The `[params]` table of a case's keyword arguments, and `extra` keys of
/// our own.
fn params(kwargs: &serde_json::Map<String, Value>, extra: &[(&str, toml::Value)]) -> String {
    let mut t = toml::Table::new();
    for (k, v) in kwargs {
        t.insert(k.clone(), toml_value(k, v));
    }
    for (k, v) in extra {
        t.insert((*k).to_owned(), v.clone());
    }
    toml::to_string(&t).unwrap_or_else(|e| panic!("{e}"))
}

/// Why `theirs` differs from `ours`, if that is a documented difference.
type Excuse = fn(&[String], &[String]) -> Option<&'static str>;

/// Runs every case of `adapter`, with `extra` parameters of our own added
/// to the framework's. Every difference must be explained; the share of
/// identical cases is the caller's to check ([`at_least_95`]).
fn parity(adapter: &str, extra: &[(&str, toml::Value)], excuse: Excuse) -> Stats {
    parity_of(adapter, extra, excuse, &[])
}

/// [`parity`] leaving out the cases of the `not_built` settings (each must
/// exist in the fixture: a renamed setting fails here, not silently).
fn parity_of(
    adapter: &str,
    extra: &[(&str, toml::Value)],
    excuse: Excuse,
    not_built: &[&str],
) -> Stats {
    run_cases(adapter, extra, excuse, not_built, None)
}

/// [`parity_of`] with a sentence embedder in the engine.
fn run_cases(
    adapter: &str,
    extra: &[(&str, toml::Value)],
    excuse: Excuse,
    not_built: &[&str],
    embedder: Option<Arc<dyn Embedder>>,
) -> Stats {
    let path = fixtures().join(format!("adapters/{adapter}.json"));
    let data: Value = serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = data["documents"].as_array().cloned().unwrap_or_default();
    let settings = data["settings"].as_array().cloned().unwrap_or_default();
    let (mut same, mut explained, mut total) = (0, 0, 0);
    let (mut content, mut same_content) = (0, 0);
    let mut failures = Vec::new();
    let mut metadata_checked = 0;
    let mut types_checked = 0;
    for name in not_built {
        assert!(
            settings.iter().any(|s| s["name"] == *name),
            "{adapter}: no setting {name} in the fixture"
        );
    }
    let mut left_out = 0;
    for case in data["cases"].as_array().cloned().unwrap_or_default() {
        if not_built.iter().any(|n| case["settings"] == *n) {
            left_out += 1;
            continue;
        }
        let doc = docs
            .iter()
            .find(|d| d["name"] == case["document"])
            .unwrap_or_else(|| panic!("no document {}", case["document"]));
        let setting = settings
            .iter()
            .find(|s| s["name"] == case["settings"])
            .unwrap_or_else(|| panic!("no settings {}", case["settings"]));
        let bytes = std::fs::read(fixtures().join(doc["path"].as_str().unwrap_or_default()))
            .unwrap_or_else(|e| panic!("{}: {e}", doc["path"]));
        let src = format!(
            "name = \"parity\"\nstrategy = \"{adapter}\"\n[params]\n{}",
            params(
                setting["kwargs"]
                    .as_object()
                    .unwrap_or(&serde_json::Map::new()),
                extra
            )
        );
        let mut builder = Engine::builder().profile_source("parity.toml", src);
        if let Some(e) = &embedder {
            builder = builder.embedder(Arc::clone(e));
        }
        let engine = builder
            .build()
            .unwrap_or_else(|e| panic!("{adapter} {}: {e}", case["settings"]));
        let chunks = engine
            .chunk(&bytes, &DocumentMeta::default(), Some("parity"))
            .unwrap_or_else(|e| panic!("{adapter} {} {}: {e}", case["document"], case["settings"]))
            .chunks;
        let theirs_chunks = case["chunks"].as_array().cloned().unwrap_or_default();
        // LangChain's Markdown header metadata: the record's metadata, key
        // for key (the documents carry none of their own here).
        for (i, (c, t)) in chunks.iter().zip(&theirs_chunks).enumerate() {
            let Some(want) = t.get("metadata") else {
                break;
            };
            let got = c
                .metadata
                .as_deref()
                .cloned()
                .unwrap_or(Value::Object(Default::default()));
            metadata_checked += usize::from(want.as_object().is_some_and(|m| !m.is_empty()));
            if got != *want && c.chunk_text == t["text"] {
                failures.push(format!(
                    "{} {} chunk {i}: metadata {got} theirs {want}",
                    case["document"], case["settings"]
                ));
            }
        }
        // Unstructured's chunk type and a table's text_as_html: the
        // record's metadata (`element_type`, `text_as_html`).
        for (i, (c, t)) in chunks.iter().zip(&theirs_chunks).enumerate() {
            let Some(want) = t.get("type") else {
                break;
            };
            let meta = c.metadata.as_deref();
            let got = meta.and_then(|m| m.get("element_type"));
            let html = meta.and_then(|m| m.get("text_as_html"));
            let want_html = t.get("text_as_html").filter(|h| !h.is_null());
            types_checked += 1;
            if c.chunk_text == t["text"] && (got != Some(want) || html != want_html) {
                failures.push(format!(
                    "{} {} chunk {i}: type {got:?} html {html:?}, theirs {want} {want_html:?}",
                    case["document"], case["settings"]
                ));
            }
        }
        let ours: Vec<String> = chunks.into_iter().map(|c| c.chunk_text).collect();
        let theirs: Vec<String> = theirs_chunks
            .iter()
            .map(|c| c["text"].as_str().unwrap_or_default().to_owned())
            .collect();
        total += 1;
        // A document without content (empty, or whitespace that LangChain
        // may give back as a chunk) has no record to hold it.
        let has_content = !bytes.iter().all(u8::is_ascii_whitespace);
        content += usize::from(has_content);
        if ours == theirs {
            same += 1;
            same_content += usize::from(has_content);
        } else if let Some(why) = excuse(&ours, &theirs) {
            explained += 1;
            println!(
                "{adapter} {} {}: differs, {why}",
                case["document"], case["settings"]
            );
        } else {
            let at = ours
                .iter()
                .zip(&theirs)
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(theirs.len()));
            failures.push(format!(
                "{} {} ({} chunks, theirs {}): chunk {at} ours {:?} theirs {:?}",
                case["document"],
                case["settings"],
                ours.len(),
                theirs.len(),
                ours.get(at)
                    .map(|s| s.chars().take(120).collect::<String>()),
                theirs
                    .get(at)
                    .map(|s| s.chars().take(120).collect::<String>()),
            ));
        }
    }
    println!(
        "{adapter}: {same} of {total} cases identical ({:.1}%), {explained} differ as documented; {same_content} of the {content} cases of documents with content ({:.1}%)",
        100.0 * same as f64 / total.max(1) as f64,
        100.0 * same_content as f64 / content.max(1) as f64
    );
    if left_out > 0 {
        println!(
            "{adapter}: {left_out} cases of settings not built yet ({}) left out",
            not_built.join(", ")
        );
    }
    if adapter == "unstructured.by_title" {
        println!("{adapter}: chunk type and text_as_html equal on {types_checked} chunks");
        assert!(types_checked > 700, "{adapter}: types compared");
    }
    if adapter == "langchain.markdown" {
        println!("{adapter}: header metadata equal on {metadata_checked} chunks");
        assert!(metadata_checked > 100, "{adapter}: metadata compared");
    }
    assert!(
        failures.is_empty(),
        "{adapter}: unexplained differences:\n{}",
        failures.join("\n")
    );
    Stats {
        adapter: adapter.to_owned(),
        content,
        same_content,
    }
}

/// What [`parity`] found.
struct Stats {
    adapter: String,
    /// Cases of documents with content.
    content: usize,
    /// Those whose chunk texts are identical.
    same_content: usize,
}

/// At least 95% of the cases of documents with content are identical.
fn at_least_95(s: &Stats) {
    assert!(
        s.same_content * 100 >= s.content * 95,
        "{}: only {} of {} cases of documents with content identical",
        s.adapter,
        s.same_content,
        s.content
    );
}

/// A character a token window cut: LangChain decodes its bytes as U+FFFD on
/// both sides; ours keeps it whole. Equal once each replacement run and
/// whatever stands in our text at its place are set aside: compare with
/// the U+FFFD runs as wildcards.
fn cut_character(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    if ours.len() != theirs.len() || !theirs.iter().any(|t| t.contains('\u{fffd}')) {
        return None;
    }
    let fits = |o: &str, t: &str| {
        let parts: Vec<&str> = t.split('\u{fffd}').filter(|p| !p.is_empty()).collect();
        let mut at = 0;
        parts.iter().all(|p| match o[at..].find(p) {
            Some(i) => {
                at += i + p.len();
                true
            }
            None => false,
        })
    };
    ours.iter()
        .zip(theirs)
        .all(|(o, t)| o == t || (t.contains('\u{fffd}') && fits(o, t)))
        .then_some("a window edge cuts a character (U+FFFD in LangChain's text)")
}

/// Whitespace-only chunks LangChain keeps and records never are.
fn whitespace_only(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    let kept: Vec<&String> = theirs.iter().filter(|t| !t.trim().is_empty()).collect();
    (kept.len() < theirs.len() && kept.iter().copied().eq(ours.iter()))
        .then_some("a chunk of whitespace alone is not a record")
}

#[test]
fn langchain_token_matches_langchain_text_for_text() {
    at_least_95(&parity("langchain.token", &[], |o, t| {
        cut_character(o, t).or_else(|| whitespace_only(o, t))
    }));
}

#[test]
fn langchain_character_matches_langchain_text_for_text() {
    at_least_95(&parity("langchain.character", &[], whitespace_only));
}

/// Lines inside code fences keep their indentation here
/// (`keep_code_indentation`, on by default): equal line for line once each
/// line's leading whitespace is set aside.
fn code_indentation(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    let unindented = |s: &String| {
        s.split('\n')
            .map(|l| l.trim_start().to_owned())
            .collect::<Vec<_>>()
    };
    (ours.len() == theirs.len()
        && ours
            .iter()
            .zip(theirs)
            .all(|(o, t)| unindented(o) == unindented(t)))
    .then_some("lines inside code fences keep their indentation (keep_code_indentation)")
}

/// A document of stripped header lines alone: LangChain returns nothing
/// (and loses them), we one record of the document's text.
fn headers_alone(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    (theirs.is_empty()
        && ours.len() == 1
        && ours[0]
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')))
    .then_some("header lines alone are one record here, nothing in LangChain")
}

#[test]
fn langchain_markdown_matches_langchain_text_for_text() {
    // LangChain's text exactly, code indentation stripped as it strips it.
    at_least_95(&parity(
        "langchain.markdown",
        &[("keep_code_indentation", toml::Value::Boolean(false))],
        headers_alone,
    ));
    // The default differs only where code is indented.
    parity("langchain.markdown", &[], |o, t| {
        code_indentation(o, t).or_else(|| headers_alone(o, t))
    });
}

#[test]
fn haystack_split_matches_haystack_text_for_text() {
    at_least_95(&parity("haystack.split", &[], whitespace_only));
}

#[test]
fn langchain_recursive_matches_langchain_text_for_text() {
    at_least_95(&parity("langchain.recursive", &[], whitespace_only));
}

/// The empty document: LlamaIndex's `split_text("")` returns `[""]`, one
/// node with empty text; an empty chunk is never a record.
fn empty_document(ours: &[String], theirs: &[String]) -> Option<&'static str> {
    (ours.is_empty() && theirs.len() == 1 && theirs[0].is_empty())
        .then_some("the empty document is one empty node to LlamaIndex and no record here")
}

#[test]
fn llama_sentence_matches_llamaindex_text_for_text() {
    at_least_95(&parity("llama.sentence", &[], empty_document));
}

#[test]
fn unstructured_by_title_matches_unstructured_text_for_text() {
    at_least_95(&parity("unstructured.by_title", &[], |_, _| None));
}
