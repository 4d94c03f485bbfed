//! Races: two workers on one document's copies and versions, and many new
//! documents' first versions stored at once. Whatever the interleaving,
//! every copy is handled once, the rows stay consistent and nothing
//! conflicts (the single-worker paths are in `worker_flow.rs`).
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use serde_json::json;
use shared::{DocumentMeta, Engine};
use tests::{eventually, message, sample_markdown, Options, TestApp, DEADLINE};
use worker::ops::metrics::OperationOutcome as Outcome;

type R = anyhow::Result<()>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_racing_on_one_document_keep_it_consistent() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![("WORKER__CONCURRENCY".into(), "4".into())],
        ..Options::default()
    })
    .await?;
    let sibling = app.spawn_sibling().await?;
    // 12 versions in scrambled order, each published twice: two replicas with
    // four slots each race on the same document row.
    let order = [7, 3, 11, 0, 9, 4, 1, 10, 6, 2, 8, 5];
    let mut msgs = Vec::new();
    for seq in order {
        let mut m = message(
            "acme-prod",
            "doc-replicas",
            &format!("v{seq}"),
            &sample_markdown(200 + seq),
        );
        m["source_version_seq"] = json!(seq);
        msgs.push(m);
    }
    for m in msgs.iter().chain(msgs.iter()) {
        app.publish_json(m).await?;
    }
    let pool = app.pool.clone();
    eventually("every copy to be handled", DEADLINE, || {
        let (a, b) = (app.ctx.clone(), sibling.ctx.clone());
        async move {
            let handled = [Outcome::Stored, Outcome::Duplicate]
                .iter()
                .map(|o| a.metrics.operations(*o) + b.metrics.operations(*o))
                .sum::<u64>();
            Ok((handled == 24).then_some(()))
        }
    })
    .await?;
    let stored = app.ctx.metrics.operations(Outcome::Stored)
        + sibling.ctx.metrics.operations(Outcome::Stored);
    assert_eq!(stored, 12, "each version stored exactly once");
    for ctx in [&app.ctx, &sibling.ctx] {
        let handled =
            ctx.metrics.operations(Outcome::Stored) + ctx.metrics.operations(Outcome::Duplicate);
        assert!(handled > 0, "both replicas took part");
    }
    assert_eq!(app.version_count("doc-replicas").await?, 12);
    assert_eq!(
        app.current_version("doc-replicas").await?.as_deref(),
        Some("v11")
    );
    let (current, chunk_mismatch): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'current'), \
           count(*) FILTER (WHERE chunk_count <> (SELECT count(*) FROM chunks c \
             WHERE c.document_id = s.document_id AND c.source_version_id = s.source_version_id)) \
         FROM source_versions s WHERE document_id = 'doc-replicas'",
    )
    .fetch_one(&pool)
    .await?;
    assert_eq!((current, chunk_mismatch), (1, 0));
    let events = app.events(12).await?;
    let ids: std::collections::BTreeSet<String> = events
        .iter()
        .map(|e| {
            e.json().unwrap()["source_version_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 12);
    sibling.stop().await?;
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_versions_of_a_new_document_stored_concurrently_never_conflict() -> R {
    // Straight at the store: eight versions of each of 30 brand-new documents
    // released at once, so the document row's first insert races every time.
    let app = TestApp::spawn().await?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .connect(&format!("{}/{}", tests::PG_SERVER, app.db_name))
        .await?;
    let engine = Engine::builtin()?;
    let mut tasks = Vec::new();
    for d in 0..30 {
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
        for v in 0..8 {
            let doc = format!("doc-new-{d}");
            let version = format!("v{v}");
            let meta = DocumentMeta {
                tenant_id: "acme-prod".into(),
                document_id: doc.clone(),
                source_version_id: version.clone(),
                ..DocumentMeta::default()
            };
            let chunked = engine.chunk(sample_markdown(d * 10 + v).as_bytes(), &meta, None)?;
            let (pool, barrier) = (pool.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let new = worker::store::versions::NewVersion {
                    tenant_id: "acme-prod",
                    document_id: &doc,
                    source_version_id: &version,
                    source_version_seq: Some(v as i64),
                    occurred_at: None,
                    source_type: None,
                    causation_id: "c",
                    correlation_id: None,
                    content_sha256: String::new(),
                    normalized: &chunked.normalized,
                    metadata: json!({}),
                    profile: "spec-v1",
                    chunker_version: "structural:1.3.0",
                    tokenizer: "cl100k_base",
                    chunks: &chunked.chunks,
                    event_headers: json!({}),
                };
                barrier.wait().await;
                worker::store::versions::store_version(&pool, &new)
                    .await
                    .map_err(|e| anyhow::anyhow!("{doc}@{version}: {e}"))
            }));
        }
    }
    for t in tasks {
        t.await??;
    }
    let (docs, versions, current): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM source_versions), \
           (SELECT count(*) FROM documents WHERE current_source_version_id = 'v7')",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!((docs, versions, current), (30, 240, 30));
    pool.close().await;
    app.cleanup().await
}
