//! End-to-end tests of `chunk-worker run` against the real RabbitMQ and
//! Postgres: every test has its own database and topology prefix.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use lapin::options::{BasicGetOptions, BasicNackOptions};
use lapin::BasicProperties;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shared::DocumentMeta;
use shared::Engine;
use sqlx::Row;
use tests::proxy::Proxy;
use tests::{eventually, message, meta_of, sample_markdown, Options, TestApp, DEADLINE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
    let pool = app.pool.clone();
    eventually("the outbox row to be marked published", DEADLINE, || {
        let pool = pool.clone();
        async move {
            let pending: i64 =
                sqlx::query_scalar("SELECT count(*) FROM outbox WHERE published_at IS NULL")
                    .fetch_one(&pool)
                    .await?;
            Ok((pending == 0).then_some(()))
        }
    })
    .await?;
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

/// Publishes `body`, then checks the three effects of a permanent failure.
async fn assert_dead_lettered(app: &TestApp, body: &[u8], code: &str) -> R {
    app.publish_raw(body).await?;
    let dl = app.next_dead_letter().await?;
    assert_eq!(dl.body, body, "{code}: body must be unchanged");
    assert_eq!(dl.header("x-error-code").as_deref(), Some(code));
    assert!(!dl.header("x-error-detail").unwrap_or_default().is_empty());
    assert_eq!(dl.header_u64("x-attempts"), Some(1));
    assert!(dl.header("x-first-failed-at").is_some());
    assert!(dl.header("x-failed-at").is_some());
    let event = app.next_event().await?;
    assert_eq!(event.routing_key, "chunking.failed");
    let ev = event.json()?;
    assert_eq!(ev["schema"], "chunking.failed/v1");
    assert_eq!(ev["error_code"], code);
    let sha = hex::encode(Sha256::digest(body));
    let rows: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM chunking_failures WHERE body_sha256 = $1 AND error_code = $2",
    )
    .bind(&sha)
    .bind(code)
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(rows, 1, "{code}: one chunking_failures row");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_input_error_code_is_dead_lettered_with_its_code() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![("LIMITS__MAX_DOCUMENT_BYTES".into(), "2000".into())],
        ..Options::default()
    })
    .await?;
    let ok = |doc: &str| message("acme-prod", doc, "v1", "# Hello\n\nWorld.\n");

    assert_dead_lettered(&app, b"this is not json {", "INVALID_MESSAGE").await?;

    let mut missing = ok("d-missing");
    missing.as_object_mut().unwrap().remove("source_version_id");
    assert_dead_lettered(&app, missing.to_string().as_bytes(), "INVALID_MESSAGE").await?;
    let detail_row: String = sqlx::query_scalar(
        "SELECT error_detail FROM chunking_failures WHERE document_id = 'd-missing'",
    )
    .fetch_one(&app.pool)
    .await?;
    assert!(detail_row.contains("source_version_id"), "{detail_row}");

    let mut bad_tenant = ok("d-tenant");
    bad_tenant["tenant_id"] = json!("NO");
    assert_dead_lettered(&app, bad_tenant.to_string().as_bytes(), "INVALID_MESSAGE").await?;

    let mut profile = ok("d-profile");
    profile["profile"] = json!("no-such-profile");
    assert_dead_lettered(&app, profile.to_string().as_bytes(), "UNKNOWN_PROFILE").await?;

    let large = ok_with_markdown("d-large", &"word ".repeat(1000));
    assert_dead_lettered(&app, large.to_string().as_bytes(), "DOCUMENT_TOO_LARGE").await?;

    let big_file = app.write_source("big.md", "word ".repeat(1000).as_bytes())?;
    let large_file = with_uri(ok("d-large-file"), &big_file);
    assert_dead_lettered(
        &app,
        large_file.to_string().as_bytes(),
        "DOCUMENT_TOO_LARGE",
    )
    .await?;

    let mut checksum = ok("d-sha");
    checksum["markdown_sha256"] = json!("0".repeat(64));
    assert_dead_lettered(&app, checksum.to_string().as_bytes(), "CHECKSUM_MISMATCH").await?;

    let latin1 = app.write_source("latin1.md", b"# Caf\xe9\n\nna\xefve\n")?;
    let utf8 = with_uri(ok("d-utf8"), &latin1);
    assert_dead_lettered(&app, utf8.to_string().as_bytes(), "INVALID_UTF8").await?;

    // Inline markdown with a byte that is not UTF-8: "W\xffrld."
    let mut raw = ok("d-utf8-inline").to_string().into_bytes();
    let at = raw.windows(6).position(|w| w == b"World.").unwrap();
    raw[at + 1] = 0xff;
    assert_dead_lettered(&app, &raw, "INVALID_UTF8").await?;

    let missing_file = format!("file://{}/nope.md", app.source_root.display());
    let unavailable = with_uri(ok("d-nofile"), &missing_file);
    assert_dead_lettered(
        &app,
        unavailable.to_string().as_bytes(),
        "SOURCE_UNAVAILABLE",
    )
    .await?;

    let outside = with_uri(ok("d-outside"), "file:///etc/passwd");
    assert_dead_lettered(&app, outside.to_string().as_bytes(), "INVALID_MESSAGE").await?;

    // Nothing was stored for any of them.
    let docs: i64 = sqlx::query_scalar("SELECT count(*) FROM documents")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(docs, 0);
    app.cleanup().await
}

fn ok_with_markdown(doc: &str, md: &str) -> Value {
    message("acme-prod", doc, "v1", md)
}

fn with_uri(mut msg: Value, uri: &str) -> Value {
    let obj = msg.as_object_mut().unwrap();
    obj.remove("markdown");
    obj.insert("markdown_uri".into(), json!(uri));
    obj.insert("source_type".into(), json!("file"));
    msg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_of_another_tenant_is_a_tenant_mismatch() -> R {
    let app = TestApp::spawn().await?;
    app.publish_json(&message(
        "acme-prod",
        "shared-doc",
        "v1",
        "# A\n\nOwned by acme.\n",
    ))
    .await?;
    app.next_event().await?;
    let intruder = message("other-co", "shared-doc", "v2", "# B\n\nNot yours.\n");
    assert_dead_lettered(&app, intruder.to_string().as_bytes(), "TENANT_MISMATCH").await?;
    assert_eq!(
        app.current_version("shared-doc").await?.as_deref(),
        Some("v1")
    );
    let owner: String =
        sqlx::query_scalar("SELECT tenant_id FROM documents WHERE document_id = 'shared-doc'")
            .fetch_one(&app.pool)
            .await?;
    assert_eq!(owner, "acme-prod");
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_redelivered_past_the_limit_is_dead_lettered_as_delivery_limit() -> R {
    let mut app = TestApp::spawn_with(Options {
        vars: vec![("AMQP__DELIVERY_LIMIT".into(), "3".into())],
        defer_start: true,
        ..Options::default()
    })
    .await?;
    let msg = message("acme-prod", "doc-crash", "v1", &sample_markdown(3));
    app.publish_json(&msg).await?;
    // Three deliveries that end without an ack, as if the worker died each
    // time it took the message.
    let queue = app.topology.requests_queue();
    for _ in 0..3 {
        let ch = app.amqp.create_channel().await?;
        let got = eventually("the message", DEADLINE, || {
            let ch = ch.clone();
            let queue = queue.clone();
            async move {
                Ok(ch
                    .basic_get(&queue, BasicGetOptions { no_ack: false })
                    .await?)
            }
        })
        .await?;
        ch.basic_nack(
            got.delivery.delivery_tag,
            BasicNackOptions {
                requeue: true,
                multiple: false,
            },
        )
        .await?;
        ch.close(200, "crash").await?;
    }
    app.start().await?;
    let dl = app.next_dead_letter().await?;
    assert_eq!(dl.header("x-error-code").as_deref(), Some("DELIVERY_LIMIT"));
    assert_eq!(dl.header_u64("x-attempts"), Some(4));
    assert_eq!(dl.body, msg.to_string().as_bytes());
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["error_code"], "DELIVERY_LIMIT");
    assert_eq!(ev["document_id"], "doc-crash");
    assert_eq!(app.version_count("doc-crash").await?, 0);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_going_away_pauses_the_worker_without_losing_anything() -> R {
    let proxy = Proxy::start(tests::PG_ADDR).await?;
    let app = TestApp::spawn_with(Options {
        pg_addr: Some(proxy.addr()),
        ..Options::default()
    })
    .await?;
    app.publish_json(&message(
        "acme-prod",
        "doc-before",
        "v1",
        &sample_markdown(40),
    ))
    .await?;
    app.next_event().await?;

    proxy.cut();
    for i in 0..3 {
        let m = message(
            "acme-prod",
            &format!("doc-outage-{i}"),
            "v1",
            &sample_markdown(41 + i),
        );
        app.publish_json(&m).await?;
    }
    // Not ready while the database is away; nothing dead-lettered meanwhile.
    let ctx = app.ctx.clone();
    eventually("readiness to drop", DEADLINE, || {
        let ctx = ctx.clone();
        async move {
            Ok(worker::ops::http::is_ready(&ctx)
                .await
                .is_err()
                .then_some(()))
        }
    })
    .await?;
    let ctx = app.ctx.clone();
    eventually("the held messages to be retried", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((ctx.metrics.transient_retries() >= 9).then_some(())) }
    })
    .await?;
    assert!(app.get(&app.topology.failed_queue()).await?.is_none());
    assert_eq!(
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM documents")
            .fetch_one(&app.pool)
            .await?,
        1
    );
    // The outage shows on /metrics (a write that was already under way when
    // the link was cut may report the database up once more first).
    let ctx = app.ctx.clone();
    eventually("the outage to show on /metrics", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((gauge(&ctx, "chunking_database_connected") == Some(0)).then_some(())) }
    })
    .await?;

    proxy.restore();
    for i in 0..3 {
        app.wait_stored(&format!("doc-outage-{i}"), "v1").await?;
    }
    app.events(3).await?;
    assert!(app.get(&app.topology.failed_queue()).await?.is_none());
    app.wait_ready().await?;
    assert_eq!(gauge(&app.ctx, "chunking_database_connected"), Some(1));
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_reconnects_after_the_broker_connection_drops() -> R {
    let proxy = Proxy::start(tests::AMQP_ADDR).await?;
    let app = TestApp::spawn_with(Options {
        amqp_addr: Some(proxy.addr()),
        ..Options::default()
    })
    .await?;
    app.publish_json(&message("acme-prod", "doc-b1", "v1", &sample_markdown(50)))
        .await?;
    app.next_event().await?;

    proxy.cut();
    let ctx = app.ctx.clone();
    eventually("the worker to notice", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((!ctx.health.broker()).then_some(())) }
    })
    .await?;
    assert_eq!(gauge(&app.ctx, "chunking_broker_connected"), Some(0));
    // Published while the worker is disconnected: waits in the quorum queue.
    app.publish_json(&message("acme-prod", "doc-b2", "v1", &sample_markdown(51)))
        .await?;
    proxy.restore();
    app.wait_stored("doc-b2", "v1").await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["document_id"], "doc-b2");
    app.wait_ready().await?;
    assert_eq!(gauge(&app.ctx, "chunking_broker_connected"), Some(1));
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_in_flight_work_and_flushes_the_outbox() -> R {
    let mut app = TestApp::spawn().await?;
    for i in 0..5 {
        app.publish_json(&message(
            "acme-prod",
            &format!("doc-stop-{i}"),
            "v1",
            &sample_markdown(60 + i),
        ))
        .await?;
    }
    app.wait_stored("doc-stop-0", "v1").await?;
    app.stop_worker().await?;
    // Everything the broker had pushed to the worker was settled, not handed
    // back (a return would count as a delivery attempt), and every stored
    // version's event was published before the worker stopped.
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM source_versions")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(stored, 5);
    assert_eq!(
        ready_messages(&app, &app.topology.requests_queue()).await?,
        0
    );
    let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(pending, 0);
    assert_eq!(app.events(stored as usize).await?.len(), stored as usize);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_are_served_over_http() -> R {
    let app = TestApp::spawn().await?;
    let (status, body) = http_get(app.http_addr, "/healthz").await?;
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_get(app.http_addr, "/readyz").await?;
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_get(app.http_addr, "/metrics").await?;
    assert_eq!(status, 200);
    // Before any message the per-profile histograms exist at zero (an
    // absent series is not a zero one to PromQL); the exposition is complete.
    assert!(
        body.contains("chunking_operations_duration_seconds_count{strategy=\"structural\",granularity=\"section\"} 0"),
        "{body}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    app.cleanup().await
}

async fn http_get(addr: std::net::SocketAddr, path: &str) -> anyhow::Result<(u16, String)> {
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).await?;
    let status = buf
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = buf.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    Ok((status, body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_without_content_type_or_message_id_is_still_processed() -> R {
    let app = TestApp::spawn().await?;
    let msg = message("acme-prod", "doc-bare", "v1", "# Bare\n\nText.\n");
    app.publish_with(msg.to_string().as_bytes(), BasicProperties::default())
        .await?;
    app.wait_stored("doc-bare", "v1").await?;
    app.cleanup().await
}

async fn ready_messages(app: &TestApp, queue: &str) -> anyhow::Result<u32> {
    let q = app
        .channel
        .queue_declare(
            queue,
            lapin::options::QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            lapin::types::FieldTable::default(),
        )
        .await?;
    Ok(q.message_count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_while_the_database_is_down_parks_the_message_for_later() -> R {
    let proxy = Proxy::start(tests::PG_ADDR).await?;
    let mut app = TestApp::spawn_with(Options {
        pg_addr: Some(proxy.addr()),
        ..Options::default()
    })
    .await?;
    proxy.cut();
    let msg = message("acme-prod", "doc-park", "v1", &sample_markdown(70));
    app.publish_json(&msg).await?;
    // The worker took it and holds it while retrying.
    let queue = app.topology.requests_queue();
    let ctx = app.ctx.clone();
    eventually("the worker to retry the message", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((ctx.metrics.transient_retries() > 0).then_some(())) }
    })
    .await?;
    assert_eq!(ready_messages(&app, &queue).await?, 0);
    app.stop_worker().await?;
    assert_eq!(app.ctx.metrics.operations(Outcome::Parked), 1);
    // Parked in the retry queue, it comes back to the requests queue after
    // the delay, byte for byte; nothing was dead-lettered.
    let back = app.next(&queue, DEADLINE).await?;
    assert_eq!(back.body, msg.to_string().as_bytes());
    assert_eq!(
        back.header_u64("x-delivery-count").unwrap_or(0),
        0,
        "{:?}",
        back.properties.headers()
    );
    assert!(app.get(&app.topology.failed_queue()).await?.is_none());
    // Exactly one copy: the original was acked once the copy was confirmed.
    tokio::time::sleep(app.settings.amqp.retry_delay * 2).await;
    assert_eq!(ready_messages(&app, &queue).await?, 0);
    assert_eq!(ready_messages(&app, &app.topology.retry_queue()).await?, 0);
    proxy.restore();
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_nobody_is_bound_for_stays_in_the_outbox_until_someone_is() -> R {
    let app = TestApp::spawn().await?;
    let events_exchange = app.topology.events_exchange();
    app.channel
        .queue_unbind(
            &app.events_queue,
            &events_exchange,
            "chunking.#",
            lapin::types::FieldTable::default(),
        )
        .await?;
    app.publish_json(&message(
        "acme-prod",
        "doc-unbound",
        "v1",
        &sample_markdown(80),
    ))
    .await?;
    app.wait_stored("doc-unbound", "v1").await?;
    let pool = app.pool.clone();
    eventually("the unroutable publish to be recorded", DEADLINE, || {
        let pool = pool.clone();
        async move {
            let row: Option<(Option<String>, bool)> = sqlx::query_as(
                "SELECT last_error, published_at IS NULL FROM outbox WHERE attempts >= 1",
            )
            .fetch_optional(&pool)
            .await?;
            Ok(row.filter(|(e, pending)| {
                *pending && e.as_deref().is_some_and(|e| e.contains("unroutable"))
            }))
        }
    })
    .await?;
    app.channel
        .queue_bind(
            &app.events_queue,
            &events_exchange,
            "chunking.#",
            lapin::options::QueueBindOptions::default(),
            lapin::types::FieldTable::default(),
        )
        .await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["document_id"], "doc-unbound");
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_failure_keeps_its_first_failure_time() -> R {
    let app = TestApp::spawn().await?;
    let first = "2026-01-02T03:04:05Z";
    let props = BasicProperties::default().with_headers(tests::headers(&[(
        "x-first-failed-at",
        lapin::types::AMQPValue::LongString(first.into()),
    )]));
    app.publish_with(b"{\"schema\": 1}", props).await?;
    let dl = app.next_dead_letter().await?;
    assert_eq!(
        dl.header("x-error-code").as_deref(),
        Some("INVALID_MESSAGE")
    );
    assert_eq!(dl.header("x-first-failed-at").as_deref(), Some(first));
    let stored: time::OffsetDateTime =
        sqlx::query_scalar("SELECT first_failed_at FROM chunking_failures")
            .fetch_one(&app.pool)
            .await?;
    assert_eq!(stored, time::macros::datetime!(2026-01-02 03:04:05 UTC));
    app.cleanup().await
}

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
async fn published_outbox_rows_are_pruned_and_pending_ones_kept() -> R {
    let app = TestApp::spawn().await?;
    app.publish_json(&message("acme-prod", "doc-prune", "v1", "# P\n\nText.\n"))
        .await?;
    app.next_event().await?;
    // A pending row nobody can route stays, whatever its age.
    sqlx::query(
        "INSERT INTO outbox (event_id, exchange, routing_key, payload, created_at, next_attempt_at) \
         VALUES ($1, 'ingest.events', 'chunking.completed', '{}', now() - interval '30 days', now() + interval '1 day')",
    )
    .bind(uuid::Uuid::new_v4())
    .execute(&app.pool)
    .await?;
    assert_eq!(
        worker::outbox::prune(&app.pool, std::time::Duration::from_secs(3600)).await?,
        0,
        "a fresh published row is kept"
    );
    assert_eq!(
        worker::outbox::prune(&app.pool, std::time::Duration::ZERO).await?,
        1
    );
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(left, 1);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_trace_continues_on_the_events() -> R {
    let app = TestApp::spawn().await?;
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let traced = |body: Vec<u8>| {
        let props = BasicProperties::default().with_headers(tests::headers(&[
            (
                "traceparent",
                lapin::types::AMQPValue::LongString(parent.into()),
            ),
            (
                "tracestate",
                lapin::types::AMQPValue::LongString("congo=t61".into()),
            ),
        ]));
        (body, props)
    };
    let (body, props) = traced(
        message("acme-prod", "doc-trace", "v1", "# T\n\nText.\n")
            .to_string()
            .into_bytes(),
    );
    app.publish_with(&body, props).await?;
    let ev = app.next_event().await?;
    let tp = ev.header("traceparent").unwrap_or_default();
    assert_eq!(&tp[..36], &parent[..36], "same trace id: {tp}");
    assert_ne!(tp, parent, "a new parent id");
    assert_eq!(ev.header("tracestate").as_deref(), Some("congo=t61"));

    let (body, props) = traced(b"not json".to_vec());
    app.publish_with(&body, props).await?;
    let dl = app.next_dead_letter().await?;
    assert_eq!(
        dl.header("traceparent").as_deref(),
        Some(parent),
        "dead letter keeps its headers"
    );
    let failed = app.next_event().await?;
    assert_eq!(failed.routing_key, "chunking.failed");
    assert_eq!(
        &failed.header("traceparent").unwrap_or_default()[..36],
        &parent[..36]
    );
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

/// A gauge's value as `/metrics` renders it.
fn gauge(ctx: &worker::context::Context, name: &str) -> Option<i64> {
    ctx.metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}
