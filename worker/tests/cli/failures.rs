//! How the CLI fails: a file that is not UTF-8 or cannot be read fails
//! alone, named, with the others still chunked; an unknown profile and bad
//! usage exit 2 before any file is read.

use std::ffi::OsStr;
use std::fs;

use crate::common::chunk_worker;
use crate::{fixture, stderr, temp_dir};

#[test]
fn invalid_utf8_fails_the_file_with_its_byte_offset_and_no_output() {
    let dir = temp_dir("utf8");
    let bad = dir.join("notes.md");
    fs::write(&bad, b"# ok\n\xff\xfe").unwrap();

    let out = chunk_worker([OsStr::new("chunk"), bad.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "CHUNKING_FAILED INVALID_UTF8: {}: ",
            bad.display()
        )) && first.contains("byte offset 5"),
        "{err}"
    );

    let out = chunk_worker([OsStr::new("normalize"), bad.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).starts_with("CHUNKING_FAILED INVALID_UTF8: "));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_file_fails_alone_and_the_other_files_are_still_chunked() {
    let good = fixture("01-headings.md");
    let missing = temp_dir("missing").join("absent.md");
    let alone = chunk_worker([OsStr::new("chunk"), good.as_os_str()]);
    let mixed = chunk_worker([OsStr::new("chunk"), missing.as_os_str(), good.as_os_str()]);
    assert_eq!(mixed.status.code(), Some(1));
    let err = stderr(&mixed);
    assert!(
        err.starts_with(&format!(
            "CHUNKING_FAILED SOURCE_UNAVAILABLE: {}: ",
            missing.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(mixed.stdout, alone.stdout);
}

#[test]
fn unknown_profile_is_a_usage_error_before_any_file_is_read() {
    let out = chunk_worker(["chunk", "--profile", "spec-v9", "does-not-exist.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("spec-v9") && err.contains("spec-v1"), "{err}");
    assert!(!err.contains("CHUNKING_FAILED"), "{err}");
}

#[test]
fn usage_errors_exit_with_status_2() {
    let one = fixture("01-headings.md");
    let two = fixture("02-nested-lists.md");
    for flag in ["--document-id", "--source-version", "--title"] {
        let out = chunk_worker([
            OsStr::new("chunk"),
            OsStr::new(flag),
            OsStr::new("x"),
            one.as_os_str(),
            two.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    let empty = temp_dir("no-inputs");
    fs::write(empty.join("notes.txt"), "not markdown").unwrap();
    let out = chunk_worker([OsStr::new("chunk"), empty.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no input files found"),
        "{}",
        stderr(&out)
    );

    assert_eq!(chunk_worker(["chunk"]).status.code(), Some(2));
    assert_eq!(
        chunk_worker(["chunk", "--bogus", "x.md"]).status.code(),
        Some(2)
    );
    let out = chunk_worker([
        OsStr::new("chunk"),
        OsStr::new("--tenant"),
        OsStr::new("Bad Tenant"),
        one.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    fs::remove_dir_all(empty).unwrap();
}
