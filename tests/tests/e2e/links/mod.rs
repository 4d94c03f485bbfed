//! End-to-end tests of Confluence link storage (docs/contract.md#links, issue #4):
//! Confluence-exported pages published through the worker give exactly the
//! expected `document_links` rows and `cross_links` edges; late targets
//! resolve; other tenants' pages never do; re-publishing changes nothing; a
//! new version replaces the outgoing links.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

mod concurrency;
mod file_documents;
mod lifecycle;
mod readme_queries;
mod title_links;

use serde_json::{json, Value};
use tests::TestApp;

type R = anyhow::Result<()>;

const ACME: &str = "acme-prod";
const GLOBEX: &str = "globex";
const A: &str = "confluence:ENG:100";
const B: &str = "confluence:OPS:200";
const C: &str = "confluence:ENG:300";
const G: &str = "globex:FIN:300";

/// A Confluence page as upstream publishes it.
#[allow(clippy::too_many_arguments)] // reason: one message field each
fn page(
    tenant: &str,
    document: &str,
    version: &str,
    seq: i64,
    page_id: &str,
    space: &str,
    title: &str,
    source_url: &str,
    markdown: &str,
) -> Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": uuid::Uuid::new_v4().to_string(),
        "tenant_id": tenant,
        "document_id": document,
        "source_version_id": version,
        "source_version_seq": seq,
        "source_type": "confluence",
        "markdown": markdown,
        "metadata": {"title": title, "source_url": source_url, "space_key": space, "page_id": page_id},
        "correlation_id": format!("corr-{document}-{version}"),
        "occurred_at": "2026-11-20T10:00:01Z"
    })
}

/// `(link_ordinal, link_type, space, page id, title, anchor, issue key, target document)`.
type Row = (
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn row(ordinal: i32, link_type: &str, target: [Option<&str>; 5], resolved: Option<&str>) -> Row {
    let s = |o: Option<&str>| o.map(str::to_owned);
    (
        ordinal,
        link_type.to_owned(),
        s(target[0]),
        s(target[1]),
        s(target[2]),
        s(target[3]),
        s(target[4]),
        s(resolved),
    )
}

async fn links_of(app: &TestApp, document: &str) -> Vec<Row> {
    sqlx::query_as(
        "SELECT link_ordinal, link_type, target_space_key, target_page_id, target_title, target_anchor, \
           target_issue_key, target_document_id \
         FROM document_links WHERE source_document_id = $1 ORDER BY link_ordinal",
    )
    .bind(document)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

async fn edges(app: &TestApp) -> Vec<(String, String, String, i32)> {
    sqlx::query_as(
        "SELECT tenant_id, source_document_id, target_document_id, link_count FROM cross_links \
         ORDER BY tenant_id, source_document_id, target_document_id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

async fn publish_and_wait(app: &TestApp, msg: &Value) -> R {
    app.publish_json(msg).await?;
    app.wait_stored(
        msg["document_id"].as_str().unwrap(),
        msg["source_version_id"].as_str().unwrap(),
    )
    .await
}

fn edge(tenant: &str, from: &str, to: &str, n: i32) -> (String, String, String, i32) {
    (tenant.to_owned(), from.to_owned(), to.to_owned(), n)
}
