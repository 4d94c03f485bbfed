//! A file document without Confluence keys: the fast path still stores
//! and replaces its links.

use serde_json::json;
use tests::TestApp;

use super::{edges, links_of, publish_and_wait, Row, ACME, R};

/// A file document with no Confluence keys and no page links takes the fast
/// path (no tenant lock): its links are still stored, and replaced by its
/// next version.
#[tokio::test]
async fn a_document_without_confluence_keys_still_stores_and_replaces_its_links() -> R {
    let app = TestApp::spawn().await?;
    let file = |version: &str, seq: i64, markdown: &str| {
        json!({
            "schema": "normalize_markdown.completed/v1",
            "event_id": uuid::Uuid::new_v4().to_string(),
            "tenant_id": ACME,
            "document_id": "file:notes",
            "source_version_id": version,
            "source_version_seq": seq,
            "source_type": "file",
            "markdown": markdown,
            "metadata": {"file_path": "notes.md"},
            "occurred_at": "2026-11-20T10:00:01Z"
        })
    };
    publish_and_wait(
        &app,
        &file("v1", 1, "# Notes\n\nSee [the docs](https://example.com/docs), [a file](../other.md) and [here](#notes).\n"),
    )
    .await?;
    let types = |rows: Vec<Row>| rows.into_iter().map(|r| r.1).collect::<Vec<_>>();
    assert_eq!(
        types(links_of(&app, "file:notes").await),
        ["external", "relative", "anchor"]
    );
    publish_and_wait(
        &app,
        &file(
            "v2",
            2,
            "# Notes\n\nOnly [one link](https://example.com/x) now.\n",
        ),
    )
    .await?;
    assert_eq!(types(links_of(&app, "file:notes").await), ["external"]);
    assert!(edges(&app).await.is_empty());
    app.cleanup().await
}
