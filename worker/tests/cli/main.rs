//! End-to-end tests of the offline command line: the real `chunk-worker`
//! binary run on the fixtures in `shared/tests/fixtures/` and on temporary files.
//!
//! Tests about chunk content check structural properties (keys, ordinals,
//! offsets against `normalize`), so they hold whatever chunks the engine makes.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod failures;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::chunk_worker;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The docs/contract.md#chunk-record chunk record fields, in JSONL order (no `created_at`).
const CHUNK_KEYS: [&str; 28] = [
    "chunk_id",
    "tenant_id",
    "document_id",
    "source_version_id",
    "ordinal",
    "granularity",
    "chunk_type",
    "headings_path",
    "chunk_path",
    "chunk_text",
    "embed_text",
    "token_count",
    "char_start",
    "char_end",
    "byte_start",
    "byte_end",
    "block_start_idx",
    "block_end_idx",
    "overlap_prefix_chars",
    "closing_suffix_chars",
    "content_hash",
    "profile",
    "chunker_version",
    "tokenizer",
    "source_url",
    "file_path",
    "chunk_key",
    "is_table",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures")
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// Every Markdown fixture except the folder's README, sorted by name.
fn markdown_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some(OsStr::new("md")))
        .filter(|p| p.file_name() != Some(OsStr::new("README.md")))
        .collect();
    files.sort();
    files
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A fresh, empty directory under the system temp dir, unique per test and process.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chunk-worker-cli-{}-{test}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn parse_jsonl(jsonl: &str) -> Vec<serde_json::Map<String, Value>> {
    jsonl
        .lines()
        .map(|line| match serde_json::from_str(line) {
            Ok(Value::Object(map)) => map,
            other => panic!("not a JSON object: {other:?}\nline: {line}"),
        })
        .collect()
}

fn as_usize(v: &Value) -> usize {
    usize::try_from(v.as_u64().unwrap()).unwrap()
}

fn default_source_version(path: &Path) -> String {
    let digest = hex::encode(Sha256::digest(fs::read(path).unwrap()));
    format!("sha256:{}", &digest[..16])
}

/// Checks the chunks of one file: exactly the record's keys (docs/contract.md#chunk-record), the per-file
/// defaults, contiguous ordinals, increasing spans, and the docs/contract.md#chunk-record
/// invariant against the output of `chunk-worker normalize`.
fn check_chunks(path: &Path, chunks: &[serde_json::Map<String, Value>]) {
    let want_keys: BTreeSet<&str> = CHUNK_KEYS.into_iter().collect();
    let normalized = stdout(&chunk_worker([OsStr::new("normalize"), path.as_os_str()]));
    let chars: Vec<char> = normalized.chars().collect();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let mut last_end = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        let keys: BTreeSet<&str> = chunk.keys().map(String::as_str).collect();
        assert_eq!(keys, want_keys, "{}: chunk {i} keys", path.display());
        assert_eq!(
            chunk["ordinal"],
            i,
            "{}: ordinals contiguous",
            path.display()
        );
        assert_eq!(chunk["tenant_id"], "local");
        assert_eq!(chunk["document_id"], stem);
        assert_eq!(chunk["source_version_id"], default_source_version(path));
        assert_eq!(chunk["profile"], "spec-v1");
        assert_eq!(chunk["tokenizer"], "cl100k_base");
        assert_eq!(chunk["source_url"], Value::Null);
        assert_eq!(chunk["file_path"], path.to_str().unwrap());
        let id = chunk["chunk_id"].as_str().unwrap();
        assert!(
            id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        assert!(
            as_usize(&chunk["token_count"]) <= 520,
            "hard max of spec-v1"
        );

        let text: Vec<char> = chunk["chunk_text"].as_str().unwrap().chars().collect();
        let (start, end) = (as_usize(&chunk["char_start"]), as_usize(&chunk["char_end"]));
        let prefix = as_usize(&chunk["overlap_prefix_chars"]);
        let suffix = as_usize(&chunk["closing_suffix_chars"]);
        assert!(
            last_end <= start && start < end && end <= chars.len(),
            "{}: chunk {i} span {start}..{end} after {last_end}",
            path.display()
        );
        assert_eq!(
            text[prefix..text.len() - suffix],
            chars[start..end],
            "{}: chunk {i}: chunk_text is not prefix + normalized[char_start..char_end] + suffix",
            path.display()
        );
        last_end = end;
    }
}

#[test]
fn help_explains_every_option_and_the_exit_statuses() {
    let out = chunk_worker(["chunk", "--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    for needle in [
        "--profile",
        "--tenant",
        "--document-id",
        "--source-version",
        "--title",
        "<FILE>",
        "Examples:",
        "Exit status:",
        "  0  ",
        "  1  ",
        "  2  ",
        "CHUNKING_FAILED <CODE>",
        "sha256",
    ] {
        assert!(
            help.contains(needle),
            "chunk --help lacks {needle:?}:\n{help}"
        );
    }

    let help = stdout(&chunk_worker(["--help"]));
    for needle in [
        "chunk",
        "normalize",
        "profiles",
        "Exit status:",
        "usage error",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
    let help = stdout(&chunk_worker(["normalize", "--help"]));
    assert!(
        help.contains("<FILE>") && help.contains("Exit status:"),
        "{help}"
    );

    let out = chunk_worker(["--version"]);
    assert!(out.status.success());
    assert!(
        stdout(&out).starts_with("chunk-worker "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn every_fixture_chunks_into_jsonl_with_exactly_the_spec_fields() {
    let files = markdown_fixtures();
    assert!(files.len() >= 17, "fixtures missing: {files:?}");
    // Every fixture is run before failing, so one report names all broken ones.
    let mut failed = Vec::new();
    for file in &files {
        let out = chunk_worker([OsStr::new("chunk"), file.as_os_str()]);
        if out.status.code() != Some(0) || !out.stderr.is_empty() {
            failed.push(format!(
                "{}: exit {:?}: {}",
                file.display(),
                out.status.code(),
                stderr(&out).trim_end()
            ));
            continue;
        }
        let text = stdout(&out);
        assert!(!text.contains("\"created_at\""), "{}", file.display());
        check_chunks(file, &parse_jsonl(&text));
    }
    assert!(
        failed.is_empty(),
        "fixtures that did not chunk cleanly:\n{}",
        failed.join("\n")
    );
}

#[test]
fn output_is_byte_identical_across_runs() {
    let files = [fixture("01-headings.md"), fixture("06-confluence-page.md")];
    let first = chunk_worker(std::iter::once(PathBuf::from("chunk")).chain(files.clone()));
    let second = chunk_worker(std::iter::once(PathBuf::from("chunk")).chain(files));
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(first.stdout, second.stdout);
}

/// `chunk` on one core (here `taskset -c 0`) chunks each file as it is
/// written, without the chunking thread: the output, the failures and the
/// exit status are those of the two-thread run.
#[test]
fn one_core_writes_what_two_threads_write() {
    let Ok(probe) = Command::new("taskset").args(["-c", "0", "true"]).output() else {
        testkit::missing::<()>("taskset", "install util-linux");
        return;
    };
    assert!(probe.status.success());
    let dir = temp_dir("one-core");
    let missing = dir.join("absent.md");
    let mut args: Vec<PathBuf> = vec![PathBuf::from("chunk"), missing];
    args.extend(markdown_fixtures());
    let two = chunk_worker(&args);
    let one = Command::new("taskset")
        .args(["-c", "0"])
        .arg(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(two.status.code(), Some(1), "{}", stderr(&two));
    assert_eq!(one.status.code(), two.status.code(), "{}", stderr(&one));
    assert!(!two.stdout.is_empty());
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(stderr(&one), stderr(&two));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_same_file_elsewhere_differs_only_in_file_path() {
    let dir = temp_dir("copy");
    let original = fixture("15-runbook.md");
    let copy = dir.join("15-runbook.md");
    fs::copy(&original, &copy).unwrap();

    let a = chunk_worker([OsStr::new("chunk"), original.as_os_str()]);
    let b = chunk_worker([OsStr::new("chunk"), copy.as_os_str()]);
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    let (mut a, mut b) = (parse_jsonl(&stdout(&a)), parse_jsonl(&stdout(&b)));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        assert_eq!(x.remove("file_path").unwrap(), original.to_str().unwrap());
        assert_eq!(y.remove("file_path").unwrap(), copy.to_str().unwrap());
    }
    assert_eq!(a, b);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn per_document_flags_apply_to_a_single_file() {
    let file = fixture("01-headings.md");
    let out = chunk_worker([
        OsStr::new("chunk"),
        OsStr::new("--tenant"),
        OsStr::new("acme-prod"),
        OsStr::new("--document-id"),
        OsStr::new("confluence:ENG:123456"),
        OsStr::new("--source-version"),
        OsStr::new("v42"),
        OsStr::new("--title"),
        OsStr::new("Deploy Guide"),
        file.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for chunk in parse_jsonl(&stdout(&out)) {
        assert_eq!(chunk["tenant_id"], "acme-prod");
        assert_eq!(chunk["document_id"], "confluence:ENG:123456");
        assert_eq!(chunk["source_version_id"], "v42");
    }
}

/// Walk order is observed through the failure lines: every file is invalid
/// UTF-8, so each one walked leaves exactly one `CHUNKING_FAILED` line.
#[test]
fn directories_are_walked_for_markdown_in_path_order() {
    let dir = temp_dir("walk");
    let bad = b"\xff";
    for rel in [
        "b.md",
        "a.md",
        "a-b/z.md",
        "a/c.MD",
        "a/sub/d.md",
        ".hidden/e.md",
        "a/.f.md",
        "a/notes.txt",
    ] {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bad).unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("a"), dir.join("link")).unwrap();
    let explicit = dir.join("a/notes.txt");

    let out = chunk_worker([OsStr::new("chunk"), explicit.as_os_str(), dir.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let failed: Vec<String> = stderr(&out)
        .lines()
        .map(|l| {
            let rest = l.strip_prefix("CHUNKING_FAILED INVALID_UTF8: ").unwrap();
            rest.split(": ").next().unwrap().to_owned()
        })
        .collect();
    let want: Vec<String> = [
        "a/notes.txt",
        "a/c.MD",
        "a/sub/d.md",
        "a-b/z.md",
        "a.md",
        "b.md",
    ]
    .iter()
    .map(|rel| dir.join(rel).display().to_string())
    .collect();
    assert_eq!(failed, want);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn normalize_writes_lf_only_text_of_a_crlf_document() {
    let crlf = fixture("08-crlf.md");
    assert!(fs::read(&crlf).unwrap().windows(2).any(|w| w == b"\r\n"));
    let out = chunk_worker([OsStr::new("normalize"), crlf.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.is_empty() && !text.contains('\r'), "{text:?}");
    assert!(text.starts_with("# "), "{text:?}");
}

#[test]
fn normalize_is_byte_exact_and_idempotent() {
    let source = fixture("07-pdf-export.md");
    let once = chunk_worker([OsStr::new("normalize"), source.as_os_str()]);
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    let dir = temp_dir("idempotent");
    let normalized = dir.join("normalized.md");
    fs::write(&normalized, &once.stdout).unwrap();
    let twice = chunk_worker([OsStr::new("normalize"), normalized.as_os_str()]);
    assert_eq!(once.stdout, twice.stdout);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    // Larger than a pipe buffer, so the write cannot finish without a reader.
    let big = fixture("05-code-block.md");
    assert!(fs::metadata(&big).unwrap().len() > 64 * 1024);
    for sub in ["normalize", "chunk"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
            .args([OsStr::new(sub), big.as_os_str()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{sub}");
    }
}

#[test]
fn profiles_lists_the_budgets_one_profile_per_line() {
    let out = chunk_worker(["profiles"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let spec = text.lines().find(|l| l.starts_with("spec-v1 ")).unwrap();
    assert!(
        spec.contains("strategy=structural")
            && spec.contains("tokenizer=cl100k_base")
            && spec.contains("target=350")
            && spec.contains("soft_max_tokens=450")
            && spec.contains("hard_max=520")
            && spec.contains("overlap="),
        "{text}"
    );
    for name in ["recursive-v1 ", "token-v1 ", "markdown-v1 "] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
    assert!(
        text.lines().any(|l| l.starts_with("enterprise-v1 ")),
        "{text}"
    );
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    let mut args = vec![PathBuf::from("chunk")];
    args.extend(markdown_fixtures().into_iter().take(5));
    let out = chunk_worker(args);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
}
