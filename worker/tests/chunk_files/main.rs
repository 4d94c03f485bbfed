//! `chunk-worker chunk --format files`: per-chunk JSON files, run
//! through the real binary. Every output validates against its JSON Schema
//! in `schemas/`; `sourcePosition` round-trips to the original file for
//! every chunk of every fixture; two documents are golden snapshots; writes
//! are safe (stale files removed, a failure keeps the previous files).
//!
//! `UPDATE_GOLDEN=1 cargo test -p worker --test chunk_files` rewrites the
//! snapshots under `tests/golden/files/`; review the diff like code.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

#[path = "../common/mod.rs"]
mod common;

mod chains;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::root;
use serde_json::Value;
use shared::normalize::normalize;

/// Runs the binary from the repository root (so `source.filePath` is the
/// relative path given).
fn chunk_worker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .current_dir(root())
        // `llm_chaptering` profiles ask a local stand-in for a chat model.
        .env("CHUNK_WORKER_LLM_ENDPOINT", toy_chat())
        .args(args)
        .output()
        .unwrap()
}

/// The URL of this test binary's stand-in chat model (started once).
fn toy_chat() -> &'static str {
    static SERVER: std::sync::OnceLock<testkit::chat::ChatServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(testkit::chat::ChatServer::toy).url()
}

/// `chunk --format files --out OUT ARGS...`.
fn chunk_files(out: &Path, args: &[&str]) -> Output {
    let out = out.display().to_string();
    let mut all = vec!["chunk", "--format", "files", "--out", &out];
    all.extend_from_slice(args);
    chunk_worker(&all)
}

fn temp_dir(test: &str) -> PathBuf {
    common::temp_dir("files", test)
}

/// Every Markdown fixture (the folder and its regressions), relative to the
/// repository root.
fn fixtures() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["shared/tests/fixtures", "shared/tests/fixtures/regressions"] {
        for e in fs::read_dir(root().join(dir)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && name != "README.md" {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// The files a run wrote, by name.
fn read_files(out: &Path) -> BTreeMap<String, Value> {
    fs::read_dir(out.join("chunks"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                serde_json::from_slice(&fs::read(&p).unwrap()).unwrap(),
            )
        })
        .collect()
}

fn schema(name: &str) -> (boon::Schemas, boon::SchemaIndex) {
    let path = root().join("schemas").join(name);
    let value: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler.add_resource(name, value).unwrap();
    let idx = compiler.compile(name, &mut schemas).unwrap();
    (schemas, idx)
}

fn assert_valid(schemas: &(boon::Schemas, boon::SchemaIndex), what: &str, v: &Value) {
    if let Err(e) = schemas.0.validate(v, schemas.1) {
        panic!("{what} does not validate against its schema: {e}");
    }
}

/// The UTF-16 offset `units` of `text` as a byte offset.
fn byte_of_utf16(text: &str, units: usize) -> usize {
    let mut seen = 0;
    for (i, c) in text.char_indices() {
        if seen >= units {
            assert_eq!(seen, units, "offset inside a surrogate pair");
            return i;
        }
        seen += c.len_utf16();
    }
    assert_eq!(seen, units, "offset past the end");
    text.len()
}

fn norm(s: &str) -> String {
    normalize(s.as_bytes()).unwrap().text
}

#[test]
fn every_output_validates_and_positions_round_trip() {
    let files_schema = schema("chunk-file.schema.json");
    let record_schema = schema("chunk-record.schema.json");
    let inputs = fixtures();
    let (mut checked, mut strict) = (0, 0);
    for profile in [
        "spec-v1",
        "enterprise-v1",
        "docs-v1",
        "recursive-v1",
        "token-v1",
        "markdown-v1",
        "retrieval-v1",
    ] {
        let out = temp_dir(&format!("roundtrip-{profile}"));
        let mut args = vec!["--profile", profile];
        args.extend(inputs.iter().map(String::as_str));
        let run = chunk_files(&out, &args);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let files = read_files(&out);

        // The JSONL of the same run: records validate, and the files carry
        // the same texts and ids.
        let mut args = vec!["chunk", "--profile", profile];
        args.extend(inputs.iter().map(String::as_str));
        let jsonl = chunk_worker(&args);
        assert!(jsonl.status.success());
        let mut records: BTreeMap<(String, u64), Value> = BTreeMap::new();
        for line in String::from_utf8(jsonl.stdout).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            assert_valid(&record_schema, "a JSONL record", &r);
            let key = (
                r["document_id"].as_str().unwrap().to_owned(),
                r["ordinal"].as_u64().unwrap(),
            );
            records.insert(key, r);
        }
        assert_eq!(files.len(), records.len(), "{profile}: one file per record");

        let mut originals: BTreeMap<String, (String, String)> = BTreeMap::new();
        for (name, f) in &files {
            assert_valid(&files_schema, name, f);
            let n = f["chunkNumber"].as_u64().unwrap();
            let doc = f["parentId"]
                .as_str()
                .unwrap()
                .strip_prefix("doc:")
                .unwrap();
            assert_eq!(name, &format!("doc_{doc}__ch{n}.json"));
            assert_eq!(f["id"], format!("doc:{doc}::ch{n}").as_str());
            let r = &records[&(doc.to_owned(), n)];
            assert_eq!(f["originalText"], r["chunk_text"], "{name}");
            assert_eq!(f["embedText"], r["embed_text"], "{name}");
            assert_eq!(f["chunkWorker"]["chunk_id"], r["chunk_id"], "{name}");
            assert_eq!(f["headerPath"], r["headings_path"], "{name}");
            assert_eq!(f["tokenStats"]["tokens"], r["token_count"], "{name}");
            let path: Vec<&str> = f["headerPath"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(f["headerBreadcrumb"], path.join(" > ").as_str());
            assert_eq!(f["headerDepths"].as_array().unwrap().len(), path.len());
            assert_eq!(f["headerSlugs"].as_array().unwrap().len(), path.len());
            assert_eq!(
                f["sectionSlug"],
                f["headerSlugs"]
                    .as_array()
                    .unwrap()
                    .last()
                    .cloned()
                    .unwrap_or("".into())
            );
            assert_eq!(f["sectionTitle"], path.last().copied().unwrap_or(""));
            let prev = n.checked_sub(1).map(|p| format!("doc:{doc}::ch{p}"));
            assert_eq!(f["prevId"].as_str(), prev.as_deref(), "{name}");
            let next_exists = files.contains_key(&format!("doc_{doc}__ch{}.json", n + 1));
            assert_eq!(f["nextId"].is_null(), !next_exists, "{name}");

            // sourcePosition: the original text between charStart and
            // charEnd (UTF-16) normalizes to the chunk's own span.
            let file_path = f["source"]["filePath"].as_str().unwrap();
            let (original, normalized) = originals
                .entry(file_path.to_owned())
                .or_insert_with(|| {
                    let o = String::from_utf8(fs::read(root().join(file_path)).unwrap()).unwrap();
                    let n = norm(&o);
                    (o, n)
                })
                .clone();
            let pos = &f["sourcePosition"];
            let total = pos["totalChars"].as_u64().unwrap() as usize;
            assert_eq!(total, original.encode_utf16().count());
            let start = byte_of_utf16(&original, pos["charStart"].as_u64().unwrap() as usize);
            let end = byte_of_utf16(&original, pos["charEnd"].as_u64().unwrap() as usize);
            let own = &normalized[f["chunkWorker"]["byte_start"].as_u64().unwrap() as usize
                ..f["chunkWorker"]["byte_end"].as_u64().unwrap() as usize];
            let slice = &original[start..end];
            // Normalizing a slice on its own can differ from normalizing it
            // in its document (a slice that starts inside a code block is
            // prose to the parser): then the non-whitespace text must match
            // exactly, and the boundaries must not cut into it.
            if norm(slice) == norm(own) {
                strict += 1;
            } else {
                let visible =
                    |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
                assert_eq!(visible(slice), visible(own), "{profile} {name}: {slice:?}");
                let lead = |s: &str| s.len() - s.trim_start().len();
                assert_eq!(lead(slice), lead(own), "{profile} {name}: {slice:?}");
                assert_eq!(slice.trim_end(), slice, "{profile} {name}: {slice:?}");
            }
            // Lines: the slice starts on startLine and ends on endLine.
            let line_of = |b: usize| original[..b].matches('\n').count() + 1;
            if !original.contains('\r') {
                assert_eq!(
                    f["source"]["startLine"].as_u64().unwrap() as usize,
                    line_of(start)
                );
                assert_eq!(
                    f["source"]["endLine"].as_u64().unwrap() as usize,
                    line_of(original[..end].char_indices().last().map_or(0, |(i, _)| i))
                );
            }
            checked += 1;
        }
        fs::remove_dir_all(&out).ok();
    }
    assert!(checked > 500, "only {checked} files checked");
    // Context-dependent normalization is the rare exception.
    assert!(
        strict * 100 >= checked * 97,
        "{strict} of {checked} round-trip strictly"
    );
    println!("{strict} of {checked} chunk positions round-trip strictly");
}

#[test]
fn golden_files_of_fixture_01_and_seed_002s_four_chunk_example() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let golden = root().join("worker/tests/golden/files");
    let mut differ = Vec::new();
    for (input, chunks) in [
        ("shared/tests/fixtures/01-headings.md", None),
        ("worker/tests/fixtures/strategy.md", Some(4)),
    ] {
        let out = temp_dir("golden");
        let run = chunk_files(&out, &[input]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let mut names: Vec<String> = fs::read_dir(out.join("chunks"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if let Some(n) = chunks {
            assert_eq!(names.len(), n, "{names:?}");
            let stem = "doc_strategy__ch";
            let files = read_files(&out);
            let id = |k: usize| Value::from(format!("doc:strategy::ch{k}"));
            for k in 0..n {
                let f = &files[&format!("{stem}{k}.json")];
                let prev = if k == 0 { Value::Null } else { id(k - 1) };
                let next = if k + 1 == n { Value::Null } else { id(k + 1) };
                assert_eq!((&f["prevId"], &f["nextId"]), (&prev, &next));
            }
        }
        for name in names {
            let got = fs::read_to_string(out.join("chunks").join(&name)).unwrap();
            let want_path = golden.join(&name);
            if update {
                fs::create_dir_all(&golden).unwrap();
                fs::write(&want_path, &got).unwrap();
            } else if fs::read_to_string(&want_path).ok().as_deref() != Some(got.as_str()) {
                differ.push(name);
            }
        }
        fs::remove_dir_all(&out).ok();
    }
    assert!(
        differ.is_empty(),
        "golden files differ: {differ:?}; if intended, review and run\n  UPDATE_GOLDEN=1 cargo test -p worker --test chunk_files"
    );
}

#[test]
fn rerun_replaces_files_removes_stale_ones_and_failures_keep_the_previous() {
    let dir = temp_dir("safe");
    let out = dir.join("out");
    let input = dir.join("guide.md");
    let input_s = input.display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["--profile", "token-v1"];
        args.extend_from_slice(extra);
        args.push(&input_s);
        chunk_files(&out, &args)
    };
    let long: String = (0..120)
        .map(|i| {
            format!("Paragraph {i} explains one more step of the installation in plain words.\n\n")
        })
        .collect();
    fs::write(&input, format!("# Guide\n\n{long}")).unwrap();
    assert!(run(&[]).status.success());
    let first = read_files(&out);
    assert!(first.len() >= 2, "{}", first.len());

    // Shorter now: the higher-numbered files go.
    fs::write(&input, "# Guide\n\nOne short paragraph.\n").unwrap();
    assert!(run(&[]).status.success());
    let second = read_files(&out);
    assert_eq!(second.keys().collect::<Vec<_>>(), ["doc_guide__ch0.json"]);

    // Broken input: a failure line, exit 1, the previous files untouched.
    let before = fs::read(out.join("chunks/doc_guide__ch0.json")).unwrap();
    fs::write(&input, b"# Guide\n\nbad \xff byte\n").unwrap();
    let failed = run(&[]);
    assert_eq!(failed.status.code(), Some(1));
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.starts_with("CHUNKING_FAILED INVALID_UTF8: "), "{err}");
    assert_eq!(
        fs::read(out.join("chunks/doc_guide__ch0.json")).unwrap(),
        before
    );
    // No temporary directory is left behind.
    let leftovers: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "chunks")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Timestamps only when asked for; the default is the same bytes each run,
    // and a file already in place is left alone (its mtime kept).
    let ch0 = out.join("chunks/doc_guide__ch0.json");
    let mtime = || fs::metadata(&ch0).unwrap().modified().unwrap();
    let first_mtime = mtime();
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::write(&input, "# Guide\n\nOne short paragraph.\n").unwrap();
    assert!(run(&[]).status.success());
    assert_eq!(fs::read(&ch0).unwrap(), before);
    assert_eq!(mtime(), first_mtime);
    // A changed document's files are replaced.
    assert!(run(&["--breadcrumb-mode", "always"]).status.success());
    assert_ne!(fs::read(&ch0).unwrap(), before);
    assert!(run(&[]).status.success());
    assert_eq!(fs::read(&ch0).unwrap(), before);
    assert!(run(&["--timestamps"]).status.success());
    let stamped = &read_files(&out)["doc_guide__ch0.json"];
    assert!(stamped["metadata"]["processedAt"].is_string());
    assert!(stamped["metadata"]["pipeline"]["processingTimeMs"].is_u64());
    assert_valid(&schema("chunk-file.schema.json"), "a stamped file", stamped);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_inputs_with_one_doc_name_are_a_usage_error_and_write_nothing() {
    let dir = temp_dir("clash");
    for sub in ["a", "b"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
        fs::write(dir.join(sub).join("readme.md"), "# Readme\n\ntext\n").unwrap();
    }
    let out = dir.join("out");
    let run = chunk_files(
        &out,
        &[
            &dir.join("a").display().to_string(),
            &dir.join("b").display().to_string(),
        ],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("readme"));
    assert!(!out.join("chunks").exists() || read_files(&out).is_empty());
    // Named by their paths below the directory argument, both are written.
    let run = chunk_files(&out, &["--doc-name", "path", &dir.display().to_string()]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let files = read_files(&out);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["doc_a.readme__ch0.json", "doc_b.readme__ch0.json"]
    );
    assert_eq!(files["doc_a.readme__ch0.json"]["id"], "doc:a.readme::ch0");
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn breadcrumb_mode_flag_overrides_the_profile() {
    let input = "worker/tests/fixtures/strategy.md";
    let records = |mode: &str| -> Vec<Value> {
        let run = chunk_worker(&["chunk", "--breadcrumb-mode", mode, input]);
        assert!(run.status.success());
        String::from_utf8(run.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    for r in records("none") {
        assert_eq!(r["embed_text"], r["chunk_text"]);
    }
    for r in records("always") {
        let path: Vec<&str> = r["headings_path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        // The title is the first heading: the breadcrumb is the path.
        let want = format!(
            "{}\n\n{}",
            path.join(" > "),
            r["chunk_text"].as_str().unwrap()
        );
        assert_eq!(r["embed_text"].as_str().unwrap(), want);
    }
    // `--format files` takes the same mode.
    let out = temp_dir("mode-files");
    let run = chunk_files(&out, &["--breadcrumb-mode", "none", input]);
    assert!(run.status.success());
    for f in read_files(&out).values() {
        assert_eq!(f["embedText"], f["originalText"]);
        assert_eq!(f["metadata"]["chunkingOptions"]["breadcrumbMode"], "none");
    }
    fs::remove_dir_all(&out).ok();
}
