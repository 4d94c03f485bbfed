//! `chunk-worker serve`: the synchronous API alone, without the queue
//! consumer, the database or the broker: `/v1/chunk`, `/v1/profiles`,
//! `/healthz`, `/readyz` (ready once listening) and `/metrics` on
//! `http.addr`, until SIGTERM/SIGINT.

use std::sync::Arc;

use anyhow::Context as _;
use axum::http::header;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

use crate::api::ApiState;
use crate::config::Settings;
use crate::ops::metrics::Metrics;

/// Content type of the exposition.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves the API until a shutdown signal.
pub async fn run(settings: Settings) -> anyhow::Result<()> {
    let metrics = Arc::new(Metrics::new(settings.telemetry.max_tenant_labels));
    metrics.prime(&settings.chunking.engine);
    let breakers = crate::api::breakers(&metrics);
    let Some(api) = ApiState::new(&settings, Arc::clone(&metrics), breakers)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        anyhow::bail!(
            "the API is off: set api.enabled = true and api.jwt.hs256_secret(_file) or api.jwt.public_keys_file \
             (CHUNK_WORKER__API__ENABLED=true, CHUNK_WORKER__API__JWT__HS256_SECRET_FILE=...)"
        );
    };
    let listener = TcpListener::bind(settings.http_addr)
        .await
        .with_context(|| format!("binding http.addr {}", settings.http_addr))?;
    let addr = listener
        .local_addr()
        .context("reading the bound http address")?;
    let render = Arc::clone(&metrics);
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(|| async { "ready\n" }))
        .route(
            "/metrics",
            get(move || {
                let m = Arc::clone(&render);
                async move { ([(header::CONTENT_TYPE, OPENMETRICS)], m.render()) }
            }),
        )
        .merge(crate::api::routes(Some(api)));
    tracing::info!(http_addr = %addr, "chunk-worker serving the API");
    axum::serve(listener, app)
        .with_graceful_shutdown(crate::startup::shutdown_signal())
        .await
        .context("serving the API")?;
    tracing::info!("chunk-worker API stopped");
    Ok(())
}
