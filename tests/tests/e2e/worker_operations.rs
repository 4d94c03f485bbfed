//! End-to-end tests of `chunk-worker run`: faults and operations. The
//! database or the broker going away, shutdown with work in flight, the
//! outbox (unroutable events, pruning), health, metrics and traces. Each
//! test has its own database and topology prefix.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use lapin::BasicProperties;
use tests::proxy::Proxy;
use tests::{eventually, message, sample_markdown, Options, TestApp, DEADLINE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use worker::ops::metrics::OperationOutcome as Outcome;

type R = anyhow::Result<()>;

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
    // Every delivery was acked, and counted once, whether its ack went
    // alone or in a `multiple` ack with others.
    assert_eq!(app.ctx.metrics.acks(), 5);
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
async fn published_outbox_rows_are_pruned_and_pending_ones_kept() -> R {
    let app = TestApp::spawn().await?;
    app.publish_json(&message("acme-prod", "doc-prune", "v1", "# P\n\nText.\n"))
        .await?;
    app.next_event().await?;
    // The relay marks the row published at most 100 ms after the confirm.
    app.outbox_marked().await?;
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

/// A gauge's value as `/metrics` renders it.
fn gauge(ctx: &worker::context::Context, name: &str) -> Option<i64> {
    ctx.metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leased_outbox_row_waits_for_its_lease_then_any_relay_publishes_it() -> R {
    let app = TestApp::spawn().await?;
    // What the relay handed over is written with its lease.
    app.publish_json(&message("acme-prod", "doc-lease", "v1", "# L\n\nText.\n"))
        .await?;
    app.next_event().await?;
    let leased: bool = sqlx::query_scalar(
        "SELECT next_attempt_at >= created_at + make_interval(secs => $1) FROM outbox",
    )
    .bind(f64::from(worker::outbox::HANDOVER_LEASE_SECS) - 1.0)
    .fetch_one(&app.pool)
    .await?;
    assert!(leased, "a handed-over row carries the hand-over lease");
    // A row another process committed and never published (it died): no
    // scan takes it while its lease runs, every scan may once it ran out.
    sqlx::query(
        "INSERT INTO outbox (event_id, exchange, routing_key, payload, next_attempt_at) \
         VALUES ($1, 'ingest.events', 'chunking.completed', \
                 '{\"schema\":\"chunking.completed/v1\",\"document_id\":\"doc-orphan\"}', \
                 now() + interval '2 seconds')",
    )
    .bind(uuid::Uuid::new_v4())
    .execute(&app.pool)
    .await?;
    // The test worker scans every 200 ms: five scans see the leased row.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(
        app.get(&app.events_queue).await?.is_none(),
        "a leased row was published before its lease ran out"
    );
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["document_id"], "doc-orphan");
    app.outbox_marked().await?;
    app.cleanup().await
}
