//! End-to-end tests of `chunk-worker run`: permanent failures. Every input
//! error code is dead-lettered with its code, a failure row and a
//! `chunking.failed` event; replays keep the first failure time. Each test
//! has its own database and topology prefix.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use lapin::options::{BasicGetOptions, BasicNackOptions};
use lapin::BasicProperties;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tests::{eventually, message, sample_markdown, Options, TestApp, DEADLINE};

type R = anyhow::Result<()>;

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
