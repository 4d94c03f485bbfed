//! The command line with strategies and profiles (issue 9): every built-in
//! profile through `chunk`, profile files (`--profile-file`, `profiles show`
//! and `profiles check`), `--metadata`, and profile settings that stop the
//! worker at start-up with exit status 2.

#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/tests/fixtures")
        .join(name)
}

fn run<I, S>(args: I, envs: &[(&str, &str)]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

fn chunk_worker<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(args, &[])
}

fn records(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cw-cli-profiles-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, content).unwrap();
    path
}

#[test]
fn every_new_builtin_profile_chunks_a_file() {
    for (profile, strategy, max) in [
        ("recursive-v1", "recursive", 1000),
        ("token-v1", "token", 512),
        ("markdown-v1", "markdown_headers", 1000),
    ] {
        let out = chunk_worker([
            "chunk",
            "--profile",
            profile,
            fixture("15-runbook.md").to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", stderr(&out));
        let recs = records(&out);
        assert!(!recs.is_empty(), "{profile}");
        for r in &recs {
            assert_eq!(r["profile"], profile);
            assert!(r["chunker_version"].as_str().unwrap().starts_with(strategy));
            assert!(r["token_count"].as_u64().unwrap() <= max);
        }
    }
}

#[test]
fn a_profile_file_with_custom_budgets_is_used_and_printed_profiles_load_again() {
    let shown = chunk_worker(["profiles", "show", "recursive-v1"]);
    assert_eq!(shown.status.code(), Some(0));
    let toml = String::from_utf8_lossy(&shown.stdout)
        .replace("name = \"recursive-v1\"", "name = \"small-v1\"")
        .replace("chunk_size = 1000", "chunk_size = 120")
        .replace("chunk_overlap = 200", "chunk_overlap = 20");
    let file = temp("small.toml", &toml);
    let check = chunk_worker(["profiles", "check", file.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("small-v1"));

    let out = chunk_worker([
        "chunk",
        "--profile-file",
        file.to_str().unwrap(),
        fixture("15-runbook.md").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = records(&out);
    assert!(recs.len() > 3);
    for r in &recs {
        assert_eq!(r["profile"], "small-v1");
        assert!(r["token_count"].as_u64().unwrap() <= 120);
    }
    let listed = chunk_worker(["profiles", "--profile-file", file.to_str().unwrap()]);
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("small-v1 ") && l.contains("source=file")),
        "{listing}"
    );
    // `profiles show` of the built-in itself loads as a repeat of it.
    let same = temp("same.toml", &String::from_utf8_lossy(&shown.stdout));
    let out = chunk_worker([
        "chunk",
        "--profile-file",
        same.to_str().unwrap(),
        fixture("01-headings.md").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn bad_profile_files_are_usage_errors_naming_file_key_value_and_range() {
    // The whole list of strategies, in registration order.
    let unknown_strategy = format!(
        "unknown strategy \"agentic\"; valid strategies: {}",
        shared::Registry::builtin().names().join(", ")
    );
    let cases = [
        (
            "range.toml",
            "name = \"x\"\nstrategy = \"token\"\n[params]\nchunk_size = 50\n",
            "params.chunk_size = 50 is out of range; valid: 100..=4096",
        ),
        (
            "unknown.toml",
            "name = \"x\"\nstrategy = \"token\"\n[params]\nchunk_sise = 500\n",
            "unknown key params.chunk_sise; valid keys: chunk_size, chunk_overlap",
        ),
        (
            "strategy.toml",
            "name = \"x\"\nstrategy = \"agentic\"\n",
            unknown_strategy.as_str(),
        ),
        ("syntax.toml", "name = \"x\nstrategy", "not a valid profile"),
        (
            "overlap.toml",
            "name = \"x\"\nstrategy = \"recursive\"\n[params]\nchunk_size = 200\nchunk_overlap = 150\n",
            "params.chunk_overlap = 150 is out of range; valid: 0..=100",
        ),
    ];
    for (name, src, expected) in cases {
        let file = temp(name, src);
        for args in [
            vec!["profiles", "check", file.to_str().unwrap()],
            vec![
                "chunk",
                "--profile-file",
                file.to_str().unwrap(),
                "never-read.md",
            ],
        ] {
            let out = chunk_worker(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = stderr(&out);
            assert!(
                err.contains(expected) && err.contains(name),
                "{args:?}: {err}"
            );
        }
    }
    let out = chunk_worker(["chunk", "--profile", "nope-v1", "never-read.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out)
        .contains("recursive-v1, retrieval-v1, retrieval-minilm-v1, retrieval-lexical-v1, retrieval-minilm-v2, token-v1, markdown-v1"));
}

#[test]
fn metadata_from_a_file_is_carried_onto_every_record() {
    let meta = temp(
        "page.json",
        r#"{"title": "Deploy runbook", "space_key": "OPS", "page_id": 42, "labels": ["runbook"], "ignored": 1}"#,
    );
    let out = chunk_worker([
        "chunk",
        "--metadata",
        meta.to_str().unwrap(),
        fixture("15-runbook.md").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for r in records(&out) {
        assert_eq!(
            r["metadata"],
            serde_json::json!({"title": "Deploy runbook", "space_key": "OPS", "page_id": 42, "labels": ["runbook"]})
        );
    }
    let bad = temp("bad.json", "[1, 2]");
    let out = chunk_worker([
        "chunk",
        "--metadata",
        bad.to_str().unwrap(),
        fixture("15-runbook.md").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.json must hold a JSON object"));
    // Without --metadata the record has no metadata key (records as before).
    let out = chunk_worker(["chunk", fixture("15-runbook.md").to_str().unwrap()]);
    assert!(records(&out).iter().all(|r| r.get("metadata").is_none()));
}

#[test]
fn the_worker_refuses_to_start_with_a_profile_setting_it_cannot_use() {
    for (var, value, key) in [
        (
            "CHUNK_WORKER__CHUNKING__DEFAULT_PROFILE",
            "nope-v1",
            "chunking.default_profile",
        ),
        (
            "CHUNK_WORKER__CHUNKING__TENANTS__ACME__PROFILE",
            "spec-v9",
            "chunking.tenants.acme.profile",
        ),
        (
            "CHUNK_WORKER__PROFILES__DIR",
            "/nonexistent/profiles",
            "profiles.dir",
        ),
    ] {
        let out = run(["run"], &[(var, value)]);
        assert_eq!(out.status.code(), Some(2), "{var}: {}", stderr(&out));
        assert!(stderr(&out).contains(key), "{var}: {}", stderr(&out));
    }
}

#[test]
fn a_deprecated_profile_says_so_and_names_its_replacement() {
    let fixture = fixture("01-headings.md");
    let out = chunk_worker([
        "chunk".as_ref(),
        "--profile".as_ref(),
        "retrieval-v1".as_ref(),
        fixture.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!records(&out).is_empty());
    assert!(
        stderr(&out).contains("profile retrieval-v1 is deprecated; use retrieval-lexical-v1"),
        "{}",
        stderr(&out)
    );
    // Its replacement is not.
    let out = chunk_worker([
        "chunk".as_ref(),
        "--profile".as_ref(),
        "retrieval-lexical-v1".as_ref(),
        fixture.as_os_str(),
    ]);
    assert!(out.status.success() && !stderr(&out).contains("deprecated"));
    let listing = String::from_utf8_lossy(&chunk_worker(["profiles"]).stdout).into_owned();
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("retrieval-v1").contains("(deprecated: use retrieval-lexical-v1)"));
    assert!(!line("retrieval-lexical-v1").contains("deprecated"));
    assert!(line("retrieval-minilm-v1").contains("(deprecated: use retrieval-minilm-v2)"));
    assert!(!line("retrieval-minilm-v2").contains("deprecated"));
}
