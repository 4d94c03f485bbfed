//! Documents linking each other, stored concurrently straight at the
//! store: every link resolves, no deadlock.

use serde_json::json;
use tests::TestApp;

use super::{ACME, R};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_linking_each_other_stored_concurrently_resolve_without_deadlocks() -> R {
    // Straight at the store: 12 pages that all link to each other, two
    // versions each, released at once. Whatever the interleaving, every link
    // resolves and every edge exists exactly once.
    use shared::links::{extract_links, Classifier, LinkConfig};
    use shared::DocumentMeta;
    use shared::Engine;

    const N: usize = 12;
    let app = TestApp::spawn().await?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .connect(&format!("{}/{}", tests::PG_SERVER, app.db_name))
        .await?;
    let engine = Engine::builtin()?;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(N * 2));
    let mut tasks = Vec::new();
    for d in 0..N {
        for v in 0..2usize {
            let doc = format!("confluence:ENG:{}", 1000 + d);
            let version = format!("v{v}");
            let source_url = format!(
                "https://acme.atlassian.net/wiki/spaces/ENG/pages/{}/P",
                1000 + d
            );
            let mut md = format!("# Page {d} v{v}\n\n");
            for other in (0..N).filter(|o| *o != d) {
                md.push_str(&format!(
                    "- [p{other}](https://acme.atlassian.net/wiki/spaces/ENG/pages/{})\n",
                    1000 + other
                ));
            }
            let meta = DocumentMeta {
                tenant_id: ACME.into(),
                document_id: doc.clone(),
                source_version_id: version.clone(),
                source_url: Some(source_url.clone()),
                ..DocumentMeta::default()
            };
            let chunked = engine.chunk(md.as_bytes(), &meta, None)?;
            let classifier = Classifier::new(&LinkConfig::default(), Some(&source_url));
            let links = extract_links(&chunked.normalized, &chunked.chunks, &classifier);
            assert_eq!(links.len(), N - 1);
            let (pool, barrier) = (pool.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let new = worker::store::versions::NewVersion {
                    tenant_id: ACME,
                    document_id: &doc,
                    source_version_id: &version,
                    source_version_seq: Some(v as i64),
                    occurred_at: None,
                    source_type: Some("confluence"),
                    causation_id: "c",
                    correlation_id: None,
                    content_sha256: String::new(),
                    normalized: &chunked.normalized,
                    metadata: json!({"source_url": source_url, "title": format!("Page {d}")}),
                    profile: "spec-v1",
                    chunker_version: "structural:1.3.0",
                    tokenizer: "cl100k_base",
                    chunks: &chunked.chunks,
                    event_headers: json!({}),
                };
                barrier.wait().await;
                worker::store::versions::store_version_with_links(&pool, &new, &links)
                    .await
                    .map_err(|e| anyhow::anyhow!("{doc}@{version}: {e}"))
            }));
        }
    }
    for t in tasks {
        t.await??;
    }
    let (links, unresolved, stale_version, edges, counts): (i64, i64, i64, i64, i64) =
        sqlx::query_as(
            "SELECT (SELECT count(*) FROM document_links), \
               (SELECT count(*) FROM document_links WHERE target_document_id IS NULL), \
               (SELECT count(*) FROM document_links WHERE source_version_id <> 'v1'), \
               (SELECT count(*) FROM cross_links), \
               (SELECT count(*) FROM cross_links WHERE link_count <> 1)",
        )
        .fetch_one(&app.pool)
        .await?;
    let n = N as i64;
    assert_eq!(
        (links, unresolved, stale_version, edges, counts),
        (n * (n - 1), 0, 0, n * (n - 1), 0)
    );
    pool.close().await;
    app.cleanup().await
}
