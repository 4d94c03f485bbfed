//! End-to-end tests of `chunk-worker run` against the real RabbitMQ and
//! Postgres: the happy path, idempotency, version ordering, change sets and
//! races of versions. Two workers or many first versions at once are in
//! `worker_races.rs`, permanent failures in `worker_failures.rs`, faults and
//! operations in `worker_operations.rs`. Every test has its own database and
//! topology prefix.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use serde_json::json;
use sha2::{Digest, Sha256};
use shared::Engine;
use sqlx::Row;
use tests::{eventually, message, meta_of, sample_markdown, Options, TestApp, DEADLINE};
use worker::ops::metrics::OperationOutcome as Outcome;

type R = anyhow::Result<()>;

/// `(ordinal, chunk_id, chunk_text, content_hash, token_count, char_start, char_end, headings_path)`.
type StoredChunk = (i32, String, String, String, i32, i64, i64, Vec<String>);

async fn stored_chunks(app: &TestApp, document: &str, version: &str) -> Vec<StoredChunk> {
    sqlx::query_as(
        "SELECT ordinal, chunk_id, chunk_text, content_hash, token_count, char_start, char_end, headings_path \
         FROM chunks WHERE document_id = $1 AND source_version_id = $2 ORDER BY ordinal",
    )
    .bind(document)
    .bind(version)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happy_path_stores_what_the_engine_produces_and_publishes_one_event() -> R {
    let app = TestApp::spawn().await?;
    let md = sample_markdown(1);
    let msg = message("acme-prod", "confluence:ENG:1", "v1", &md);
    app.publish_json(&msg).await?;

    let event = app.next_event().await?;
    assert_eq!(event.routing_key, "chunking.completed");
    assert_eq!(
        event.properties.content_type().as_ref().map(|c| c.as_str()),
        Some("application/json")
    );
    let ev = event.json()?;
    assert_eq!(ev["schema"], "chunking.completed/v1");
    assert_eq!(ev["causation_id"], msg["event_id"]);
    assert_eq!(ev["tenant_id"], "acme-prod");
    assert_eq!(ev["document_id"], "confluence:ENG:1");
    assert_eq!(ev["source_version_id"], "v1");
    assert_eq!(ev["correlation_id"], msg["correlation_id"]);
    assert_eq!(ev["profile"], "spec-v1");
    assert_eq!(ev["is_current"], true);

    // The stored rows are exactly what the engine returns for the same input.
    let expected = Engine::builtin()?.chunk(md.as_bytes(), &meta_of(&msg), None)?;
    let rows = stored_chunks(&app, "confluence:ENG:1", "v1").await;
    assert_eq!(rows.len(), expected.chunks.len());
    for (row, chunk) in rows.iter().zip(&expected.chunks) {
        assert_eq!(row.0 as u32, chunk.ordinal);
        assert_eq!(row.1, chunk.chunk_id);
        assert_eq!(row.2, chunk.chunk_text);
        assert_eq!(row.3, chunk.content_hash);
        assert_eq!(row.4 as u32, chunk.token_count);
        assert_eq!(row.5 as u64, chunk.char_start);
        assert_eq!(row.6 as u64, chunk.char_end);
        assert_eq!(row.7, chunk.headings_path);
    }
    let ids: Vec<String> = expected.chunks.iter().map(|c| c.chunk_id.clone()).collect();
    assert_eq!(ev["chunk_ids"], json!(ids));
    assert_eq!(ev["chunk_count"], json!(rows.len()));
    assert_eq!(
        ev["changed_chunk_ids"],
        json!(ids),
        "a first version is all new"
    );
    let total: u64 = expected
        .chunks
        .iter()
        .map(|c| u64::from(c.token_count))
        .sum();
    assert_eq!(ev["total_tokens"], json!(total));

    let row = sqlx::query(
        "SELECT d.tenant_id, d.current_source_version_id, s.normalized_markdown, s.chunk_count, s.status, \
           s.content_sha256, s.profile, s.tokenizer \
         FROM documents d JOIN source_versions s USING (tenant_id, document_id) \
         WHERE d.document_id = $1",
    )
    .bind("confluence:ENG:1")
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(row.get::<String, _>("tenant_id"), "acme-prod");
    assert_eq!(
        row.get::<Option<String>, _>("current_source_version_id")
            .as_deref(),
        Some("v1")
    );
    assert_eq!(
        row.get::<String, _>("normalized_markdown"),
        expected.normalized
    );
    assert_eq!(
        row.get::<i32, _>("chunk_count") as usize,
        expected.chunks.len()
    );
    assert_eq!(row.get::<String, _>("status"), "current");
    assert_eq!(
        row.get::<String, _>("content_sha256"),
        hex::encode(Sha256::digest(md.as_bytes()))
    );
    assert_eq!(row.get::<String, _>("tokenizer"), "cl100k_base");

    // Every own span is reproducible with SQL substring() on the stored document.
    let spans_ok: bool = sqlx::query_scalar(
        "SELECT coalesce(bool_and(substring(c.chunk_text from c.overlap_prefix_chars + 1 \
             for (c.char_end - c.char_start)::int) \
           = substring(s.normalized_markdown from (c.char_start + 1)::int for (c.char_end - c.char_start)::int)), true) \
         FROM chunks c JOIN source_versions s USING (tenant_id, document_id, source_version_id)",
    )
    .fetch_one(&app.pool)
    .await?;
    assert!(spans_ok);

    // The relay marks the row published after the broker's confirm, which
    // can come a moment after the event reached our consumer.
    app.outbox_marked().await?;
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_uris_under_the_source_root_are_read_and_checksummed() -> R {
    let app = TestApp::spawn().await?;
    let md = sample_markdown(7);
    let uri = app.write_source("doc-7.md", md.as_bytes())?;
    let mut msg = message("acme-prod", "file:7", "v1", "");
    let obj = msg.as_object_mut().unwrap();
    obj.remove("markdown");
    obj.insert("markdown_uri".into(), json!(uri));
    obj.insert(
        "markdown_sha256".into(),
        json!(hex::encode(Sha256::digest(md.as_bytes()))),
    );
    obj.insert("source_type".into(), json!("file"));
    app.publish_json(&msg).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["schema"], "chunking.completed/v1");
    let expected = Engine::builtin()?.chunk(md.as_bytes(), &meta_of(&msg), None)?;
    assert_eq!(
        stored_chunks(&app, "file:7", "v1").await.len(),
        expected.chunks.len()
    );
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redelivered_message_does_not_duplicate_rows_or_events() -> R {
    let app = TestApp::spawn().await?;
    let msg = message("acme-prod", "doc-dup", "v1", &sample_markdown(2));
    app.publish_json(&msg).await?;
    let first = app.next_event().await?.json()?;
    // The same message again (an upstream retry), and a copy with another
    // event id (a re-run upstream): both are the same source version.
    app.publish_json(&msg).await?;
    let mut again = msg.clone();
    again["event_id"] = json!(uuid::Uuid::new_v4().to_string());
    app.publish_json(&again).await?;

    let pool = app.pool.clone();
    eventually("both duplicates to be acked", DEADLINE, || {
        let ctx = app.ctx.clone();
        async move { Ok((ctx.metrics.operations(Outcome::Duplicate) == 2).then_some(())) }
    })
    .await?;
    assert_eq!(app.version_count("doc-dup").await?, 1);
    let chunks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM chunks WHERE document_id = 'doc-dup'")
            .fetch_one(&pool)
            .await?;
    assert_eq!(chunks, first["chunk_count"].as_i64().unwrap());
    let outbox: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox")
        .fetch_one(&pool)
        .await?;
    assert_eq!(outbox, 1, "one event per version");
    assert!(
        app.get(&app.events_queue).await?.is_none(),
        "no second event"
    );
    assert!(app.get(&app.topology.failed_queue()).await?.is_none());
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_version_never_replaces_the_current_one() -> R {
    let app = TestApp::spawn().await?;
    let mut v2 = message("acme-prod", "doc-order", "v2", &sample_markdown(22));
    v2["source_version_seq"] = json!(2);
    let mut v1 = message("acme-prod", "doc-order", "v1", &sample_markdown(21));
    v1["source_version_seq"] = json!(1);
    app.publish_json(&v2).await?;
    app.wait_stored("doc-order", "v2").await?;
    app.publish_json(&v1).await?;
    app.wait_stored("doc-order", "v1").await?;
    let events = app.events(2).await?;
    let late = events
        .iter()
        .map(|e| e.json().unwrap())
        .find(|e| e["source_version_id"] == "v1")
        .unwrap();
    assert_eq!(late["is_current"], false);
    assert_eq!(
        app.current_version("doc-order").await?.as_deref(),
        Some("v2")
    );
    let statuses: Vec<(String, String)> = sqlx::query_as(
        "SELECT source_version_id, status FROM source_versions WHERE document_id = 'doc-order' ORDER BY 1",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(
        statuses,
        vec![
            ("v1".into(), "superseded".into()),
            ("v2".into(), "current".into())
        ]
    );

    // Without sequence numbers, occurred_at decides.
    let mut b = message("acme-prod", "doc-time", "b", &sample_markdown(31));
    b["occurred_at"] = json!("2026-11-20T12:00:00Z");
    let mut a = message("acme-prod", "doc-time", "a", &sample_markdown(30));
    a["occurred_at"] = json!("2026-11-20T11:00:00Z");
    app.publish_json(&b).await?;
    app.wait_stored("doc-time", "b").await?;
    app.publish_json(&a).await?;
    app.wait_stored("doc-time", "a").await?;
    assert_eq!(app.current_version("doc-time").await?.as_deref(), Some("b"));
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_versions_of_one_document_leave_the_newest_current() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![("WORKER__CONCURRENCY".into(), "4".into())],
        ..Options::default()
    })
    .await?;
    // Delivery order scrambled on purpose; four workers race on one document.
    let order = [5, 2, 9, 1, 7, 3, 8, 4, 6, 0];
    for seq in order {
        let mut m = message(
            "acme-prod",
            "doc-race",
            &format!("v{seq}"),
            &sample_markdown(100 + seq),
        );
        m["source_version_seq"] = json!(seq);
        app.publish_json(&m).await?;
    }
    let pool = app.pool.clone();
    eventually("all ten versions", DEADLINE, || {
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM source_versions WHERE document_id = 'doc-race'",
            )
            .fetch_one(&pool)
            .await?;
            Ok((n == 10).then_some(()))
        }
    })
    .await?;
    assert_eq!(
        app.current_version("doc-race").await?.as_deref(),
        Some("v9")
    );
    let current: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM source_versions WHERE document_id = 'doc-race' AND status = 'current'",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(current, 1);
    let failures: i64 = sqlx::query_scalar("SELECT count(*) FROM chunking_failures")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(failures, 0);
    app.events(10).await?;
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_lists_only_new_or_changed_chunks() -> R {
    let app = TestApp::spawn().await?;
    let v1_md = "# Guide\n\nIntro paragraph that stays the same.\n\n## Part A\n\nAlpha text.\n\n## Part B\n\nBeta text.\n";
    let v2_md = "# Guide\n\nIntro paragraph that stays the same.\n\n## Part A\n\nAlpha text, now changed.\n\n## Part B\n\nBeta text.\n";
    let mut v1 = message("acme-prod", "doc-diff", "v1", v1_md);
    v1["source_version_seq"] = json!(1);
    let mut v2 = message("acme-prod", "doc-diff", "v2", v2_md);
    v2["source_version_seq"] = json!(2);
    app.publish_json(&v1).await?;
    app.next_event().await?;
    app.publish_json(&v2).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["previous_source_version_id"], "v1");

    // Expected from the engine's content hashes, whatever the chunking is.
    let engine = Engine::builtin()?;
    let old = engine.chunk(v1_md.as_bytes(), &meta_of(&v1), None)?.chunks;
    let new = engine.chunk(v2_md.as_bytes(), &meta_of(&v2), None)?.chunks;
    let old_hashes: Vec<&str> = old.iter().map(|c| c.content_hash.as_str()).collect();
    let expected_changed: Vec<&str> = new
        .iter()
        .filter(|c| !old_hashes.contains(&c.content_hash.as_str()))
        .map(|c| c.chunk_id.as_str())
        .collect();
    assert_eq!(ev["changed_chunk_ids"], json!(expected_changed));
    assert_eq!(
        ev["unchanged_chunks"].as_array().unwrap().len() + expected_changed.len(),
        new.len()
    );
    for pair in ev["unchanged_chunks"].as_array().unwrap() {
        let prev = old
            .iter()
            .find(|c| c.chunk_id == pair["previous_chunk_id"])
            .unwrap();
        let cur = new.iter().find(|c| c.chunk_id == pair["chunk_id"]).unwrap();
        assert_eq!(prev.content_hash, cur.content_hash);
    }
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_larger_than_the_memory_budget_are_all_stored_and_give_it_back() -> R {
    // A 1 MiB budget: each document below holds about 9x its 200 KB, more
    // than the whole budget, so each holds all of it and waits until no
    // other holds any (the waiting itself: `pipeline::memory`'s unit
    // tests). Here: none is left waiting forever, and every share returns.
    let app = TestApp::spawn_with(Options {
        vars: vec![
            ("WORKER__MEMORY_BUDGET_MB".into(), "1".into()),
            ("WORKER__CONCURRENCY".into(), "4".into()),
        ],
        ..Options::default()
    })
    .await?;
    let all = app.ctx.memory.available_units();
    assert_eq!(all, 1024, "1 MiB in KiB units");
    let mut md = String::new();
    while md.len() < 200_000 {
        md.push_str(&sample_markdown(md.len() / 1000 % 9 + 1));
        md.push_str("\n\n");
    }
    for i in 0..5 {
        app.publish_json(&message("acme-prod", &format!("big-{i}"), "v1", &md))
            .await?;
    }
    // And one read from a file.
    let uri = app.write_source("big-file.md", md.as_bytes())?;
    let mut msg = message("acme-prod", "big-file", "v1", "");
    let obj = msg.as_object_mut().unwrap();
    obj.remove("markdown");
    obj.insert("markdown_uri".into(), json!(uri));
    app.publish_json(&msg).await?;
    let events = app.events(6).await?;
    assert_eq!(events.len(), 6);
    for i in 0..5 {
        app.wait_stored(&format!("big-{i}"), "v1").await?;
    }
    app.wait_stored("big-file", "v1").await?;
    // Every share was given back.
    eventually("the budget to be whole again", DEADLINE, || async {
        Ok((app.ctx.memory.available_units() == all).then_some(()))
    })
    .await?;
    app.cleanup().await
}
