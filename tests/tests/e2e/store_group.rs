//! The group writer (`FirstVersions`): a crowd of new documents' first
//! versions stored in shared statements, each exactly once whatever else
//! shares its batch, and the pre-check that decides which versions may take
//! that path. The single-version paths are in `store_paths.rs`.

use serde_json::json;
use shared::Engine;
use tests::{Options, TestApp};
use worker::store::versions::{self, OwnedVersion, StoreOutcome};

use super::store_paths::chunk;

type R = anyhow::Result<()>;

fn owned(engine: &Engine, doc: &str, id: &str, seq: i64) -> anyhow::Result<OwnedVersion> {
    let (chunked, links) = chunk(engine, doc, id)?;
    Ok(OwnedVersion {
        tenant_id: "acme".into(),
        document_id: doc.into(),
        source_version_id: id.into(),
        source_version_seq: Some(seq),
        occurred_at: None,
        source_type: Some("file"),
        causation_id: format!("cause-{doc}-{id}"),
        correlation_id: None,
        content_sha256: "ab".repeat(32),
        normalized: chunked.normalized.clone(),
        metadata: json!({"title": "Runbook"}),
        profile: "hierarchy-v1".into(),
        chunker_version: "hierarchy:1.0.0".into(),
        tokenizer: "cl100k_base".into(),
        chunks: chunked.chunks,
        event_headers: json!({}),
        links,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_writer_stores_every_version_once_whatever_shares_a_batch() -> R {
    let engine = Engine::builtin()?;
    let app = TestApp::spawn_with(Options {
        defer_start: true,
        ..Options::default()
    })
    .await?;
    // One writer slot: the versions queue up behind each other and share
    // statements. Two versions of one new document (g-1), a document stored
    // before (g-0), a document of another tenant (g-9 under "other").
    let pre = owned(&engine, "g-0", "v1", 1)?;
    versions::store_version_with_links(&app.pool, &pre.view(), &pre.links).await?;
    let mut other = owned(&engine, "g-9", "v1", 1)?;
    other.tenant_id = "other".into();
    for c in &mut other.chunks {
        c.tenant_id = "other".into();
    }
    versions::store_version_with_links(&app.pool, &other.view(), &other.links).await?;

    let writer = std::sync::Arc::new(versions::FirstVersions::new(1, 3));
    let mut wanted = vec![
        owned(&engine, "g-1", "v1", 1)?,
        owned(&engine, "g-1", "v2", 2)?,
        owned(&engine, "g-0", "v2", 2)?,
        owned(&engine, "g-9", "v1", 1)?,
    ];
    for d in 2..8 {
        wanted.push(owned(&engine, &format!("g-{d}"), "v1", 1)?);
    }
    let per_version = i64::try_from(pre.chunks.len())?;
    let n = wanted.len();
    let mut tasks = tokio::task::JoinSet::new();
    for v in wanted {
        let (writer, pool) = (writer.clone(), app.pool.clone());
        tasks.spawn(async move {
            let key = (v.document_id.clone(), v.source_version_id.clone());
            (key, writer.store(&pool, v).await)
        });
    }
    let mut outcomes = Vec::new();
    while let Some(done) = tasks.join_next().await {
        outcomes.push(done?);
    }
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(outcomes.len(), n);
    for ((doc, version), outcome) in &outcomes {
        match (doc.as_str(), outcome) {
            ("g-9", Err(versions::StoreError::TenantMismatch { .. })) => {}
            ("g-9", other) => panic!("another tenant's document: {other:?}"),
            (_, Ok(StoreOutcome::Stored { .. })) => {}
            (_, other) => panic!("{doc} {version}: {other:?}"),
        }
    }
    let stored: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT document_id, source_version_id, status FROM source_versions \
         WHERE tenant_id = 'acme' ORDER BY 1, 2",
    )
    .fetch_all(&app.pool)
    .await?;
    let mut expected = vec![
        ("g-0".to_owned(), "v1".to_owned(), "superseded".to_owned()),
        ("g-0".into(), "v2".into(), "current".into()),
        ("g-1".into(), "v1".into(), "superseded".into()),
        ("g-1".into(), "v2".into(), "current".into()),
    ];
    for d in 2..8 {
        expected.push((format!("g-{d}"), "v1".into(), "current".into()));
    }
    assert_eq!(stored, expected);
    let (events, chunks): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM outbox WHERE tenant_id = 'acme'), \
                (SELECT count(*) FROM chunks WHERE tenant_id = 'acme')",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(events, 10, "one event per stored version");
    assert_eq!(chunks, 10 * per_version);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_writer_stores_a_crowd_once_with_statements_side_by_side() -> R {
    let engine = Engine::builtin()?;
    let app = TestApp::spawn_with(Options {
        defer_start: true,
        ..Options::default()
    })
    .await?;
    // Three slots and small batches: handlers write, wait behind running
    // statements and start statements beside them, in every order.
    let writer = std::sync::Arc::new(versions::FirstVersions::new(3, 4));
    let n = 40;
    let mut tasks = tokio::task::JoinSet::new();
    for d in 0..n {
        let v = owned(&engine, &format!("crowd-{d}"), "v1", 1)?;
        let (writer, pool) = (writer.clone(), app.pool.clone());
        tasks.spawn(async move { writer.store(&pool, v).await });
    }
    let mut stored = 0;
    while let Some(done) = tasks.join_next().await {
        match done? {
            Ok(StoreOutcome::Stored { .. }) => stored += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(stored, n);
    let (versions, events, statements): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM source_versions WHERE tenant_id = 'acme'), \
                (SELECT count(*) FROM outbox WHERE tenant_id = 'acme'), \
                (SELECT count(DISTINCT created_at) FROM documents WHERE tenant_id = 'acme')",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!((versions, events), (40, 40));
    // A statement's rows share its start time: at most 4 documents each.
    assert!(statements >= 10, "{statements} statements for 40 documents");
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pre_check_keeps_one_generic_plan_instead_of_planning_each_check() -> R {
    let app = TestApp::spawn_with(Options {
        defer_start: true,
        ..Options::default()
    })
    .await?;
    // One connection, so that every check and the look at its prepared
    // statements happen on the same backend.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with(app.settings.database.options.clone())
        .await?;
    let checks = versions::Prechecks::new();
    for i in 0..8 {
        let document = format!("plan-{i}");
        let key = versions::NewVersionKey {
            tenant_id: "acme",
            document_id: &document,
            source_version_id: "v1",
        };
        assert_eq!(
            checks.check(&pool, &key).await?,
            versions::Existing::NewDocument
        );
    }
    let (generic, custom): (i64, i64) = sqlx::query_as(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements \
         WHERE statement LIKE '%FROM source_versions s%'",
    )
    .fetch_one(&pool)
    .await?;
    // Postgres tries five custom plans, then keeps the generic one when no
    // custom plan was cheaper; a custom plan that could see the keys would
    // always look cheaper, and every check would be planned.
    assert_eq!((generic, custom), (3, 5));
    pool.close().await;
    app.cleanup().await
}
