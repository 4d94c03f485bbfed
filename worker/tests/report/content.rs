//! What the page shows: every chunk once and the whole document, profiles
//! side by side, every piece of document text escaped.

use std::fs;

use crate::column::check_column;
use crate::common::fixture;
use crate::page::{page_columns, tokenize};
use crate::{report, temp_dir};

#[test]
fn one_profile_shows_every_chunk_once_and_the_whole_document() {
    let files = [
        fixture("01-headings.md"),
        fixture("03-big-table.md"),
        fixture("05-code-block.md"),
    ];
    let (page, run) = report("one", &files, &["spec-v1"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cols = page_columns(&page);
    assert_eq!(cols.len(), files.len());
    for ((profile, col), file) in cols.iter().zip(&files) {
        assert_eq!(profile, "spec-v1");
        check_column(file, profile, col);
    }
    // A histogram per column, stating the hard max.
    assert_eq!(page.matches("<svg class=\"hist\"").count(), files.len());
    assert!(page.contains("hard max 520"));
    // The big table is split with its header repeated: shown as badges.
    assert!(page.contains("data-l=\"repeated table header\""));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("report.html") && stderr.contains("3 files"),
        "{stderr}"
    );
}

#[test]
fn two_profiles_are_columns_side_by_side() {
    let files = [fixture("03-big-table.md"), fixture("04-no-headings.md")];
    let profiles = ["spec-v1", "recursive-v1"];
    let (page, run) = report("two", &files, &profiles);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 4);
    for (i, (profile, col)) in cols.iter().enumerate() {
        assert_eq!(profile, profiles[i % 2], "one column per profile, per file");
        check_column(&files[i / 2], profile, col);
    }
    assert_eq!(
        page.matches("<div class=\"cols\" style=\"--n:2\">").count(),
        2
    );
    assert!(page.contains("recursive:") && page.contains("structural:"));
    // recursive-v1 overlaps: marked in the document, not as badges.
    assert!(cols[1].1.overlaps.iter().any(|(_, t)| !t.is_empty()));
    assert!(page.contains("hard max 1000"));
}

#[test]
fn document_text_and_headings_are_escaped() {
    let dir = temp_dir("escape");
    let file = dir.join("nasty.md");
    let md = "# Title \"quoted\" & <b>bold</b>\n\n\
              Text with <script>alert(1)</script> and &amp; and a \"quote\".\n\n\
              ## Sub <img src=\"http://example.com/x.png\">\n\n\
              <a href=\"https://example.com\">a link</a> and `</div></span>` in code.\n";
    fs::write(&file, md).unwrap();
    let (page, run) = report("escape", std::slice::from_ref(&file), &["spec-v1"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let toks = tokenize(&page);
    // Only the page's own script element; the document's is text.
    assert_eq!(toks.iter().filter(|t| t.is_open("script")).count(), 1);
    assert!(!toks.iter().any(|t| t.is_open("img")
        || t.is_open("a") && t.attr("href").is_some_and(|h| h.starts_with("http"))));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 1);
    check_column(&file, "spec-v1", &cols[0].1);
    assert!(cols[0].1.text.contains("<script>alert(1)</script>"));
    // Attribute values (the heading path: plain text) round-trip too.
    assert!(page.contains("data-path=\"Title &quot;quoted&quot; &amp; bold"));
    assert!(cols[0]
        .1
        .chunks
        .iter()
        .any(|c| c.open.attr("data-path") == Some("Title \"quoted\" & bold")));
}

#[test]
fn each_chunk_says_on_hover_why_it_ends() {
    let files = [fixture("01-headings.md")];
    let (page, run) = report("why", &files, &["spec-v1"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let chunks = page.matches("<span class=\"c k").count();
    assert!(chunks >= 2, "{chunks} chunks");
    assert_eq!(page.matches(" title=\"chunk ").count(), chunks);
    assert!(
        page.contains("ends: the next chunk starts at heading"),
        "no heading reason"
    );
    assert_eq!(page.matches("ends: the document ends\"").count(), 1);
}
