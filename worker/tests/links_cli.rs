//! End-to-end tests of `chunk-worker links`: the real binary on temporary
//! files, every URL shape of docs/contract.md#links, chunk ids equal to `chunk`'s, and the
//! usage errors.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

mod common;

use std::ffi::OsStr;
use std::fs;
use std::path::PathBuf;
use std::process::Output;

use common::chunk_worker;
use serde_json::{json, Value};

fn temp_file(test: &str, name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "chunk-worker-links-cli-{}-{test}",
        std::process::id()
    ));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, content).unwrap();
    path
}

fn jsonl(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const PAGE: &str = "# Deploy Guide\n\n\
Start with the [Runbook](https://acme.atlassian.net/wiki/spaces/OPS/pages/200/Runbook+Index#step-2) \
and the [Ops Home](https://confluence.acme.com/display/OPS/Runbook+Index).\n\n\
## References\n\n\
- [Viewpage](https://confluence.acme.com/pages/viewpage.action?pageId=300)\n\
- [Tiny](https://acme.atlassian.net/wiki/x/yAA)\n\
- ![diagram](https://confluence.acme.com/download/attachments/200/diagram.png?version=1)\n\
- [OPS space](https://confluence.acme.com/display/OPS)\n\
- [OPS-1234](https://jira.acme.com/browse/OPS-1234)\n\
- [below](#rollback)\n\
- [local](./runbooks/queue-backlog.md)\n\
- [Other](../../pages/555/Other)\n\
- [Example](https://example.com/a)\n";

#[test]
fn every_url_shape_is_classified_with_its_chunk() {
    let path = temp_file("shapes", "guide.md", PAGE);
    let out = chunk_worker([
        OsStr::new("links"),
        path.as_os_str(),
        OsStr::new("--tenant"),
        OsStr::new("acme-prod"),
        OsStr::new("--source-url"),
        OsStr::new("https://acme.atlassian.net/wiki/spaces/ENG/pages/100/Deploy+Guide"),
        OsStr::new("--confluence-base-url"),
        OsStr::new("https://confluence.acme.com"),
        OsStr::new("--jira-base-url"),
        OsStr::new("https://jira.acme.com"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let links = jsonl(&out);
    let got: Vec<Value> = links
        .iter()
        .map(|l| {
            json!([
                l["link_ordinal"],
                l["link_type"],
                l["target"]["space_key"],
                l["target"]["page_id"],
                l["target"]["title"],
                l["target"]["anchor"],
                l["target"]["issue_key"],
                l["is_image"]
            ])
        })
        .collect();
    let want = vec![
        json!([
            0,
            "confluence_page",
            "OPS",
            "200",
            "Runbook Index",
            "step-2",
            null,
            false
        ]),
        json!([
            1,
            "confluence_page",
            "OPS",
            null,
            "Runbook Index",
            null,
            null,
            false
        ]),
        json!([2, "confluence_page", null, "300", null, null, null, false]),
        json!([3, "confluence_tiny", null, "200", null, null, null, false]),
        json!([
            4,
            "confluence_attachment",
            null,
            "200",
            "diagram.png",
            null,
            null,
            true
        ]),
        json!([5, "confluence_space", "OPS", null, null, null, null, false]),
        json!([6, "jira_issue", null, null, null, null, "OPS-1234", false]),
        json!([7, "anchor", null, null, null, "rollback", null, false]),
        json!([8, "relative", null, null, null, null, null, false]),
        json!([
            9,
            "confluence_page",
            "ENG",
            "555",
            "Other",
            null,
            null,
            false
        ]),
        json!([10, "external", null, null, null, null, null, false]),
    ];
    assert_eq!(got, want);

    // Ids are those `chunk` prints for the same file and flags.
    let chunks = chunk_worker([
        OsStr::new("chunk"),
        path.as_os_str(),
        OsStr::new("--tenant"),
        OsStr::new("acme-prod"),
    ]);
    let chunks = jsonl(&chunks);
    for l in &links {
        assert_eq!(l["tenant_id"], "acme-prod");
        assert_eq!(l["document_id"], "guide");
        let ordinal = l["chunk_ordinal"].as_u64().unwrap() as usize;
        assert_eq!(l["chunk_id"], chunks[ordinal]["chunk_id"], "{l}");
        assert_eq!(l["source_version_id"], chunks[ordinal]["source_version_id"]);
    }
    assert_eq!(links[3]["url"], "https://acme.atlassian.net/wiki/x/yAA");
    assert_eq!(
        links[9]["resolved_url"],
        "https://acme.atlassian.net/wiki/spaces/ENG/pages/555/Other"
    );
}

#[test]
fn without_configured_sites_only_the_own_site_is_confluence() {
    let path = temp_file("nosites", "guide.md", PAGE);
    let out = chunk_worker([
        OsStr::new("links"),
        path.as_os_str(),
        OsStr::new("--source-url"),
        OsStr::new("https://acme.atlassian.net/wiki/spaces/ENG/pages/100/Deploy+Guide"),
    ]);
    assert!(out.status.success());
    let types: Vec<String> = jsonl(&out)
        .iter()
        .map(|l| l["link_type"].as_str().unwrap().to_owned())
        .collect();
    // The server-site, Jira and space links are plain external links now;
    // the server attachment image is dropped (images are kept only as
    // attachments or relative files).
    assert_eq!(
        types,
        [
            "confluence_page",
            "external",
            "external",
            "confluence_tiny",
            "external",
            "external",
            "anchor",
            "relative",
            "confluence_page",
            "external"
        ]
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let path = temp_file("usage", "guide.md", PAGE);
    let out = chunk_worker([
        OsStr::new("links"),
        path.as_os_str(),
        OsStr::new("--jira-base-url"),
        OsStr::new("ftp://jira.acme.com"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jira-base-url"));
    let out = chunk_worker([
        OsStr::new("links"),
        path.as_os_str(),
        path.as_os_str(),
        OsStr::new("--source-url"),
        OsStr::new("https://acme.atlassian.net/wiki/spaces/ENG/pages/100/X"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--source-url"));
    assert!(out.stdout.is_empty());
}
