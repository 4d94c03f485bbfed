//! `/metrics` exposes the Chunking System specification's series and the outbox/failure gauges, and
//! their values move as documents flow.

use lapin::types::{AMQPValue, FieldTable};
use lapin::BasicProperties;
use tests::{eventually, message, sample_markdown, Options, TestApp, DEADLINE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use worker::ops::metrics::OperationOutcome as Outcome;

type R = anyhow::Result<()>;

async fn scrape(addr: std::net::SocketAddr) -> anyhow::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut buf = Vec::new();
    stream.read_to_end(&mut buf).await?;
    let text = String::from_utf8(buf)?;
    Ok(text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default())
}

/// The value of the first sample whose name and labels start with `series`.
/// The sum of every series of a metric family (all label sets).
fn total(text: &str, family: &str) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next())
        .filter_map(|v| v.parse::<f64>().ok())
        .sum()
}

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

const INVALID_COUNTED: &str =
    "chunking_errors_total{tenant_id=\"unknown\",error_type=\"INVALID_MESSAGE\"} 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_as_documents_flow() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![("TELEMETRY__QUEUE_POLL_INTERVAL_MS".into(), "200".into())],
        ..Options::default()
    })
    .await?;
    let before = scrape(app.http_addr).await?;
    for name in [
        "chunking_operations_duration_seconds_bucket",
        "chunking_memory_bytes",
        "chunking_memory_budget_held_bytes",
        "chunking_outbox_backlog",
        "chunking_outbox_oldest_age_seconds",
        "chunking_failures_recorded",
        "chunking_transient_retries_total",
        "chunking_messages_consumed_total",
        "chunking_messages_acked_total",
        "chunking_messages_dead_lettered_total",
        "chunking_messages_in_flight",
        "chunking_events_published_total",
    ] {
        assert!(before.contains(name), "{name} missing:\n{before}");
    }
    assert!(value(&before, "chunking_memory_bytes").unwrap_or(0.0) > 0.0);
    assert_eq!(value(&before, "chunking_failures_recorded"), Some(0.0));
    assert_eq!(
        value(&before, "chunking_memory_budget_held_bytes"),
        Some(0.0),
        "nothing in flight holds any of the budget"
    );

    app.publish_json(&message("acme-prod", "m-1", "v1", &sample_markdown(1)))
        .await?;
    app.wait_stored("m-1", "v1").await?;
    app.publish_raw(b"not json").await?;
    let addr = app.http_addr;
    let after = eventually("the failure to be counted", DEADLINE, || async move {
        let text = scrape(addr).await?;
        // The failure row is written before the counters move: wait for both.
        let counted = value(&text, "chunking_failures_recorded") == Some(1.0)
            && text.contains(INVALID_COUNTED);
        Ok(counted.then_some(text))
    })
    .await?;
    assert!(
        value(
            &after,
            "chunking_operations_total{tenant_id=\"acme-prod\",strategy=\"structural\",granularity=\"section\",outcome=\"stored\"}"
        ) == Some(1.0),
        "{after}"
    );
    assert!(
        value(
            &after,
            "chunking_chunks_produced_total{tenant_id=\"acme-prod\",strategy=\"structural\",granularity=\"section\"}"
        )
        .unwrap_or(0.0)
            >= 1.0
    );
    assert!(after.contains(INVALID_COUNTED), "{after}");
    assert!(total(&after, "chunking_operations_duration_seconds_count") >= 2.0);
    assert_eq!(value(&after, "chunking_messages_consumed_total"), Some(2.0));
    assert_eq!(
        value(&after, "chunking_messages_dead_lettered_total"),
        Some(1.0)
    );
    assert!(
        value(
            &after,
            "chunking_chunk_size_tokens_count{strategy=\"structural\",granularity=\"section\"}"
        )
        .unwrap_or(0.0)
            >= 1.0,
        "{after}"
    );
    assert!(
        value(
            &after,
            "chunking_stage_duration_seconds_count{stage=\"store\"}"
        ) == Some(1.0),
        "{after}"
    );
    // Acked after the dead-letter copy is confirmed: wait for the second ack.
    eventually("both messages to be acked", DEADLINE, || async move {
        let text = scrape(addr).await?;
        Ok((value(&text, "chunking_messages_acked_total") == Some(2.0)).then_some(()))
    })
    .await?;
    // The broker's queue depths are polled (every 200 ms in this test).
    eventually("the dead-letter queue depth", DEADLINE, || async move {
        let text = scrape(addr).await?;
        Ok(
            (value(&text, "chunking_queue_messages{queue=\"dead_letter\"}") == Some(1.0))
                .then_some(()),
        )
    })
    .await?;
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_writer_counts_its_statements_and_documents() -> R {
    let app = TestApp::spawn().await?;
    let before = scrape(app.http_addr).await?;
    assert_eq!(value(&before, "chunking_group_statements_total"), Some(0.0));
    assert_eq!(value(&before, "chunking_group_documents_total"), Some(0.0));
    assert_eq!(value(&before, "chunking_precheck_keys_total"), Some(0.0));
    // A file without Confluence keys: its first version goes through the
    // group writer (a Confluence page takes part in link resolution and is
    // stored by the general transaction).
    for d in ["f-1", "f-2"] {
        let mut msg = message("acme-prod", d, "v1", &sample_markdown(3));
        msg["source_type"] = "file".into();
        msg["metadata"] = serde_json::json!({});
        app.publish_json(&msg).await?;
    }
    app.wait_stored("f-1", "v1").await?;
    app.wait_stored("f-2", "v1").await?;
    let after = scrape(app.http_addr).await?;
    let statements = value(&after, "chunking_group_statements_total").unwrap_or(0.0);
    assert_eq!(
        value(&after, "chunking_group_documents_total"),
        Some(2.0),
        "{after}"
    );
    assert!((1.0..=2.0).contains(&statements), "{after}");
    // First deliveries are not checked for before chunking.
    assert_eq!(
        value(&after, "chunking_precheck_keys_total"),
        Some(0.0),
        "{after}"
    );
    // A replayed copy (as `dlq replay` republishes) may repeat a handled
    // message: it is checked for by one query and found stored, without
    // a second write statement.
    let mut replayed = message("acme-prod", "f-1", "v1", &sample_markdown(3));
    replayed["source_type"] = "file".into();
    replayed["metadata"] = serde_json::json!({});
    let mut headers = FieldTable::default();
    headers.insert(
        "x-replay-id".into(),
        AMQPValue::LongString("replay-1".into()),
    );
    app.publish_with(
        replayed.to_string().as_bytes(),
        BasicProperties::default().with_headers(headers),
    )
    .await?;
    let addr = app.http_addr;
    let checked = eventually(
        "the replayed copy to be checked for",
        DEADLINE,
        || async move {
            let text = scrape(addr).await?;
            Ok((value(&text, "chunking_precheck_keys_total") == Some(1.0)).then_some(text))
        },
    )
    .await?;
    assert_eq!(
        value(&checked, "chunking_precheck_queries_total"),
        Some(1.0),
        "{checked}"
    );
    eventually(
        "the replayed copy to be acked as a duplicate",
        DEADLINE,
        || {
            let ctx = app.ctx.clone();
            async move { Ok((ctx.metrics.operations(Outcome::Duplicate) == 1).then_some(())) }
        },
    )
    .await?;
    let done = scrape(addr).await?;
    assert_eq!(
        value(&done, "chunking_group_statements_total"),
        Some(statements),
        "{done}"
    );
    assert_eq!(app.version_count("f-1").await?, 1);
    app.cleanup().await
}
