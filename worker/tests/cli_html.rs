//! HTML pages on the command line (issue 10, the LangChain-style factory specification): `chunk`, `normalize`
//! and `links` convert `.html` / `.htm` files to Markdown first, take the
//! page's `<title>`, report on stderr what the conversion left out, and
//! `--granularity` filters a multi-granularity profile's output.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod common;

use common::{chunk_worker, fixture};
use serde_json::Value;

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_html_page_is_chunked_as_its_markdown_and_what_was_left_out_is_reported() {
    let page = fixture("html/02-messy.html");
    let out = chunk_worker(["chunk".as_ref(), page.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let chunks = lines(&out.stdout);
    assert!(!chunks.is_empty());
    let text: String = chunks
        .iter()
        .map(|c| c["chunk_text"].as_str().unwrap())
        .collect();
    assert!(text.contains("# Release notes"), "{text}");
    assert!(text.contains("[ING-101](https://jira.example.org/browse/ING-101)"));
    assert!(!text.contains("gtag") && !text.contains("Search"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("converted from HTML; left out: 1 head, 2 script"),
        "{stderr}"
    );
    // The page's <title> titles the breadcrumbs of conditional embed texts.
    assert!(
        chunks.iter().any(|c| c["embed_text"]
            .as_str()
            .unwrap()
            .starts_with("Release notes – 4.2 | Acme Docs")),
        "{chunks:?}"
    );

    let norm = chunk_worker(["normalize".as_ref(), page.as_os_str()]);
    assert!(norm.status.success());
    assert!(String::from_utf8_lossy(&norm.stdout).starts_with("# Release notes"));

    let links = chunk_worker(["links".as_ref(), page.as_os_str()]);
    assert!(
        links.status.success(),
        "{}",
        String::from_utf8_lossy(&links.stderr)
    );
    let urls: Vec<String> = lines(&links.stdout)
        .iter()
        .map(|l| l["url"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        urls.contains(&"https://jira.example.org/browse/ING-117".to_owned()),
        "{urls:?}"
    );
    assert!(
        !urls.iter().any(|u| u == "/docs"),
        "navigation links are left out: {urls:?}"
    );
}

#[test]
fn granularity_filters_a_multi_granularity_profile() {
    let out = chunk_worker([
        "chunk".as_ref(),
        "--profile".as_ref(),
        "hierarchy-v1".as_ref(),
        "--granularity".as_ref(),
        "section,table".as_ref(),
        fixture("20-grouped-table.md").as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds: Vec<String> = lines(&out.stdout)
        .iter()
        .map(|c| c["granularity"].as_str().unwrap().to_owned())
        .collect();
    assert!(kinds.contains(&"section".to_owned()) && kinds.contains(&"table".to_owned()));
    assert!(
        kinds.iter().all(|k| k == "section" || k == "table"),
        "{kinds:?}"
    );
}
