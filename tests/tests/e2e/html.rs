//! An HTML page through the queue (issue 10, the LangChain-style factory specification): a message with
//! `source_type = "html"`, or a `markdown_uri` ending in `.html`, is
//! converted to Markdown, which is the stored normalized document and what
//! the offsets refer to; its links (not the navigation's) feed `document_links`; the page's
//! `<title>` titles it when the metadata has none.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use serde_json::json;
use tests::{message, TestApp};

type R = anyhow::Result<()>;

const PAGE: &str = "<html><head><title>Escalation policy</title><script>track()</script></head><body>\
<nav><a href=\"/home\">Home</a></nav><h1>Escalation</h1><p>Page the <a href=\"https://acme.atlassian.net/wiki/spaces/ENG/pages/7/On-call\">on-call engineer</a> first.</p>\
<h2>Contacts</h2><table><tr><th>Team</th><th>Pager</th></tr><tr><td>Payments</td><td>pay-oncall</td></tr></table></body></html>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_page_is_stored_as_its_markdown_with_its_links() -> R {
    let app = TestApp::spawn().await?;
    let mut msg = message("acme-prod", "page-html", "v1", PAGE);
    msg["source_type"] = json!("html");
    msg["metadata"] = json!({});
    app.publish_json(&msg).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["schema"], "chunking.completed/v1", "{ev}");
    let (normalized, source_type): (String, Option<String>) = sqlx::query_as(
        "SELECT normalized_markdown, source_type FROM source_versions WHERE document_id = 'page-html'",
    )
    .fetch_one(&app.pool)
    .await?;
    assert!(normalized.starts_with("# Escalation"), "{normalized}");
    assert!(
        normalized.contains("| Team | Pager |") || normalized.contains("| Team"),
        "{normalized}"
    );
    assert!(!normalized.contains("track()") && !normalized.contains("Home"));
    assert_eq!(source_type.as_deref(), Some("html"));
    let embeds: Vec<String> =
        sqlx::query_scalar("SELECT embed_text FROM chunks WHERE document_id = 'page-html'")
            .fetch_all(&app.pool)
            .await?;
    assert!(
        embeds.iter().any(|e| e.starts_with("Escalation policy > ")),
        "{embeds:?}"
    );
    let links: Vec<(String, String)> = sqlx::query_as(
        "SELECT url, chunk_granularity FROM document_links WHERE source_document_id = 'page-html'",
    )
    .fetch_all(&app.pool)
    .await?;
    let url = "https://acme.atlassian.net/wiki/spaces/ENG/pages/7/On-call";
    assert_eq!(
        links,
        [(url.to_owned(), "section".to_owned())],
        "navigation links are left out"
    );

    // A markdown_uri ending in .html is converted too.
    let uri = app.write_source(
        "release.html",
        b"<h1>Release 4.2</h1><p>Two metrics added.</p>",
    )?;
    let mut by_uri = message("acme-prod", "page-uri", "v1", "");
    if let Some(o) = by_uri.as_object_mut() {
        o.remove("markdown");
        o.insert("markdown_uri".into(), json!(uri));
        o.insert("source_type".into(), json!("file"));
    }
    app.publish_json(&by_uri).await?;
    app.wait_stored("page-uri", "v1").await?;
    let text: String = sqlx::query_scalar(
        "SELECT chunk_text FROM chunks WHERE document_id = 'page-uri' ORDER BY ordinal LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(text, "# Release 4.2\n\nTwo metrics added.");
    app.cleanup().await
}
