//! Traces over HTTPS (issue 15 item 2): with `telemetry.otlp_endpoint =
//! https://localhost:<port>` and `telemetry.otlp_ca_file` naming the test
//! CA, the exporter verifies the collector's certificate (issued for
//! `localhost` by that CA) and delivers its spans. Its own test binary: the
//! tracing subscriber is process-global.

use std::collections::HashMap;

use tests::otlp::{collector, exported_spans, tls_acceptor};
use tests::tls::Pki;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_an_https_collector_whose_certificate_the_configured_ca_signed(
) -> anyhow::Result<()> {
    let pki = Pki::generate()?;
    let acceptor = tls_acceptor(&pki.file("server.pem"), &pki.file("server.key"))?;
    let (addr, bodies) = collector(Some(acceptor)).await?;
    let vars: HashMap<String, String> = [
        (
            "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT",
            format!("https://localhost:{}", addr.port()),
        ),
        ("CHUNK_WORKER__TELEMETRY__OTLP_CA_FILE", pki.file("ca.pem")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let settings = worker::config::Settings::load(&tests::config_dir(), None, vars)?;
    let (log, telemetry) = (settings.log.clone(), settings.telemetry.clone());
    let guard =
        tokio::task::spawn_blocking(move || worker::ops::telemetry::init(&log, &telemetry)).await?;
    tracing::info_span!("tls-probe").in_scope(|| tracing::info!("inside"));
    // Dropping the guard flushes the exporter (blocking: off the runtime).
    tokio::task::spawn_blocking(move || drop(guard)).await?;
    let spans = exported_spans(&bodies)?;
    assert!(
        spans.iter().any(|s| s.name == "tls-probe"),
        "the span arrived over TLS: {spans:?}"
    );
    Ok(())
}
