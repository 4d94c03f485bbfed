//! The SQL cookbook of docs/sql.md, run against a database the worker filled:
//! the queries are parsed out of docs/sql.md (the `## SQL cookbook` section)
//! so the guide and this test cannot drift, and each runs as the read-only
//! `chunk_worker_analyst` role and gives the answer the guide promises.

use sqlx::postgres::PgRow;
use sqlx::Row;
use tests::cookbook::{cookbook, fill};
use tests::TestApp;

type R = anyhow::Result<()>;

/// Runs `sql` as the analyst role (read-only), in a transaction rolled back.
async fn as_analyst(app: &TestApp, sql: &str) -> anyhow::Result<Vec<PgRow>> {
    let mut tx = app.pool.begin().await?;
    sqlx::query("SET LOCAL ROLE chunk_worker_analyst")
        .execute(&mut *tx)
        .await?;
    let rows = sqlx::query(sql).fetch_all(&mut *tx).await;
    tx.rollback().await?;
    Ok(rows?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cookbook_query_runs_and_gives_the_documented_answer() -> R {
    let queries = cookbook()?;
    assert!(
        queries.len() >= 8,
        "the cookbook has {} queries",
        queries.len()
    );
    let app = TestApp::spawn().await?;
    fill(&app).await?;

    let current_chunks: i32 = sqlx::query_scalar(
        "SELECT chunk_count FROM source_versions WHERE document_id = 'runbook-1' AND source_version_id = 'v2'",
    )
    .fetch_one(&app.pool)
    .await?;

    for (question, sql) in &queries {
        let rows = as_analyst(&app, sql)
            .await
            .map_err(|e| anyhow::anyhow!("{question}\n{sql}\n{e:#}"))?;
        assert!(!rows.is_empty(), "no answer to: {question}");
        let q = question.to_lowercase();
        if q.starts_with("which documents does a tenant have") {
            let docs: Vec<String> = rows.iter().map(|r| r.get("document_id")).collect();
            assert_eq!(docs.len(), 4, "{docs:?}");
            assert!(!docs.contains(&"other-1".to_owned()), "tenant isolation");
            let r1 = rows
                .iter()
                .find(|r| r.get::<String, _>("document_id") == "runbook-1");
            let r1 = r1.ok_or_else(|| anyhow::anyhow!("runbook-1 missing"))?;
            assert_eq!(
                r1.get::<Option<String>, _>("current_source_version_id")
                    .as_deref(),
                Some("v2")
            );
            assert_eq!(r1.get::<i64, _>("version_count"), 2);
        } else if q.starts_with("what are the chunks of a document's current version") {
            assert_eq!(rows.len(), usize::try_from(current_chunks)?);
        } else if q.starts_with("which versions of a document") {
            assert_eq!(rows.len(), 2);
            assert_eq!(rows[0].get::<String, _>("status"), "current");
        } else if q.starts_with("which documents failed and were never stored") {
            let docs: Vec<String> = rows.iter().map(|r| r.get("document_id")).collect();
            assert_eq!(docs, ["d-missing"]);
        } else if q.starts_with("who replayed") {
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].get::<String, _>("operator"), "analyst-test");
            assert_eq!(rows[0].get::<i32, _>("replayed"), 1);
        } else if q.starts_with("what are the section chunks of a multi-granularity") {
            let ordinals: Vec<i32> = rows.iter().map(|r| r.get("ordinal")).collect();
            assert_eq!(ordinals, (0..ordinals.len() as i32).collect::<Vec<_>>());
        } else if q.starts_with("which chunk contains each small chunk") {
            let parents: Vec<String> = rows.iter().map(|r| r.get("parent_granularity")).collect();
            assert!(parents.iter().any(|g| g == "section"), "{parents:?}");
            assert!(parents.iter().all(|g| g != "window"), "{parents:?}");
        } else if q.starts_with("how many chunks of each granularity") {
            let handbook: Vec<String> = rows
                .iter()
                .filter(|r| r.get::<String, _>("document_id") == "handbook-1")
                .map(|r| r.get("granularity"))
                .collect();
            assert_eq!(handbook, ["document", "section", "table", "window"]);
        } else if q.starts_with("which failures does each tenant have") {
            let total: i64 = rows.iter().map(|r| r.get::<i64, _>("failures")).sum();
            assert_eq!(total, 3);
        }
    }

    // Every table, view and column of the core schema carries a comment.
    let uncommented: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname || coalesce('.' || a.attname, '') \
         FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' \
         LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
         WHERE c.relname IN ('documents', 'source_versions', 'chunks', 'chunking_failures', 'outbox', \
                             'dlq_replays', 'current_chunks', 'document_overview', 'failure_summary', \
                             'outbox_backlog', 'orphan_chunks', 'orphan_links') \
           AND c.relkind IN ('r', 'v') \
           AND (obj_description(c.oid, 'pg_class') IS NULL \
                OR (a.attname IS NOT NULL AND c.relkind = 'r' AND col_description(c.oid, a.attnum) IS NULL)) \
         ORDER BY 1",
    )
    .fetch_all(&app.pool)
    .await?;
    assert!(uncommented.is_empty(), "without a comment: {uncommented:?}");

    // The audit of the dropped foreign key (issue 18): empty after the
    // worker stored versions, and it names a chunk row whose version is gone.
    let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM orphan_chunks")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(orphans, 0, "every stored chunk has its version");
    let mut tx = app.pool.begin().await?;
    sqlx::query(
        "UPDATE source_versions SET source_version_id = source_version_id || '-moved' \
         WHERE (tenant_id, document_id, source_version_id) IN \
           (SELECT tenant_id, document_id, source_version_id FROM chunks LIMIT 1)",
    )
    .execute(&mut *tx)
    .await?;
    let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM orphan_chunks")
        .fetch_one(&mut *tx)
        .await?;
    assert!(orphans > 0, "a chunk without its version is listed");
    tx.rollback().await?;

    // The analyst role reads, never writes.
    let denied = as_analyst(&app, "DELETE FROM chunks").await;
    assert!(denied.is_err(), "the analyst role must not write");
    app.cleanup().await
}
