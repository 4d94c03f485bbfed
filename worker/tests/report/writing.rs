//! How the page is written: a failed file reported while the others are
//! shown, the page replaced whole, its size, and usage errors before
//! anything is written.

use std::fs;

use crate::column::check_column;
use crate::common::{chunk_worker, fixture};
use crate::page::page_columns;
use crate::{report, temp_dir};

#[test]
fn a_failed_file_is_reported_and_the_others_still_shown() {
    let dir = temp_dir("failed");
    let bad = dir.join("bad.md");
    fs::write(&bad, b"# Bad\n\n\xff\xfe not UTF-8\n").unwrap();
    let missing = dir.join("missing.md");
    let good = fixture("01-headings.md");
    let (page, run) = report("failed", &[bad, missing, good.clone()], &["spec-v1"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let lines: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("CHUNKING_FAILED "))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("CHUNKING_FAILED INVALID_UTF8: "),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("CHUNKING_FAILED SOURCE_UNAVAILABLE: "),
        "{stderr}"
    );
    // The page names both failures and shows the good file.
    assert!(page.contains("CHUNKING_FAILED INVALID_UTF8"));
    assert!(page.contains("CHUNKING_FAILED SOURCE_UNAVAILABLE"));
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 1);
    check_column(&good, "spec-v1", &cols[0].1);
}

#[test]
fn the_page_is_written_whole_and_replaces_an_old_one() {
    let dir = temp_dir("atomic");
    let out = dir.join("page.html");
    fs::write(&out, "old").unwrap();
    let run = chunk_worker([
        "report",
        fixture("16-headings-only.md").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--title",
        "My <title>",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page = fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert!(page.contains("<title>My &lt;title&gt;</title>"));
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["page.html"], "no temporary file left behind");
}

#[test]
fn the_page_stays_small() {
    let file = fixture("05-code-block.md");
    let doc = fs::metadata(&file).unwrap().len() as usize;
    let (page, run) = report("small", std::slice::from_ref(&file), &["spec-v1"]);
    assert!(run.status.success());
    // CSS and script are about 12 KB; the rest grows with the document.
    assert!(
        page.len() < 3 * doc + 16 * 1024,
        "{} bytes of HTML for a {doc}-byte document",
        page.len()
    );
}

#[test]
fn usage_errors_exit_2_before_writing_anything() {
    let dir = temp_dir("usage");
    let out = dir.join("r.html");
    let good = fixture("01-headings.md");
    let good = good.to_str().unwrap();
    let cases: [Vec<&str>; 4] = [
        vec![
            "report",
            good,
            "--profile",
            "no-such-profile",
            "-o",
            out.to_str().unwrap(),
        ],
        vec!["report", good],
        vec!["report", good, "-o", "/nonexistent-dir-for-report/r.html"],
        vec!["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()],
    ];
    for args in cases {
        let run = chunk_worker(&args);
        assert_eq!(
            run.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(!out.exists(), "{args:?} wrote a page");
    }
}
