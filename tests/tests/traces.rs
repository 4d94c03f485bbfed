//! With `telemetry.otlp_endpoint` set, the worker exports its `consume`,
//! `chunk`, `store` and `publish` spans over OTLP/HTTP under the upstream
//! trace id, and the event carries the `consume` span as its parent.
//!
//! The collector is a minimal HTTP server in this test that keeps every
//! request body (OTLP protobuf), decoded with the OTLP message types. Its own test binary: the tracing subscriber is
//! process-global.

use lapin::types::AMQPValue;
use lapin::BasicProperties;
use tests::otlp::{collector, exported_spans};
use tests::{eventually, message, Options, TestApp, DEADLINE};

type R = anyhow::Result<()>;

const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_exported_under_the_upstream_trace() -> R {
    let (addr, bodies) = collector(None).await?;
    let endpoint = format!("http://{addr}");
    let app = TestApp::spawn_with(Options {
        vars: vec![("TELEMETRY__OTLP_ENDPOINT".into(), endpoint)],
        defer_start: true,
        ..Options::default()
    })
    .await?;
    let mut app = app;
    // The exporter's blocking HTTP client lives on its own threads: build and
    // flush it off the runtime, as the binary does.
    let (log, telemetry) = (app.settings.log.clone(), app.settings.telemetry.clone());
    let guard =
        tokio::task::spawn_blocking(move || worker::ops::telemetry::init(&log, &telemetry)).await?;
    app.start().await?;

    let props = BasicProperties::default().with_headers(tests::headers(&[(
        "traceparent",
        AMQPValue::LongString(PARENT.into()),
    )]));
    let body = message("acme-prod", "doc-otel", "v1", "# Traced\n\nSome text.\n").to_string();
    app.publish_with(body.as_bytes(), props).await?;
    let ev = app.next_event().await?;
    let tp = ev.header("traceparent").unwrap_or_default();
    assert_eq!(&tp[..36], &PARENT[..36], "same trace id: {tp}");
    assert_ne!(&tp[36..52], &PARENT[36..52], "our span is the parent");

    // Let the consume span close (after the ack), then flush the exporter.
    let ctx = app.ctx.clone();
    eventually("the message to be settled", DEADLINE, || {
        let ctx = ctx.clone();
        async move {
            Ok((ctx
                .metrics
                .operations(worker::ops::metrics::OperationOutcome::Stored)
                == 1)
                .then_some(()))
        }
    })
    .await?;
    app.stop_worker().await?;
    tokio::task::spawn_blocking(move || drop(guard)).await?;

    let spans = exported_spans(&bodies)?;
    let find = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| anyhow::anyhow!("span {name} not exported; got {spans:?}"))
    };
    let trace_id = hex::decode(&PARENT[3..35])?;
    let consume = find("consume")?;
    assert_eq!(consume.trace_id, trace_id, "the upstream trace id");
    assert_eq!(
        consume.parent_span_id,
        hex::decode(&PARENT[36..52])?,
        "upstream span is the parent"
    );
    assert_eq!(
        consume.span_id,
        hex::decode(&tp[36..52])?,
        "the event names the consume span"
    );
    for name in ["chunk", "store"] {
        let span = find(name)?;
        assert_eq!(span.trace_id, trace_id, "{name}");
        assert_eq!(
            span.parent_span_id, consume.span_id,
            "{name} is inside consume"
        );
    }
    let publish = find("publish")?;
    assert_eq!(publish.trace_id, trace_id);
    assert_eq!(
        publish.parent_span_id, consume.span_id,
        "publish continues the stored context"
    );
    app.cleanup().await
}
