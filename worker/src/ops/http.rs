//! The operations endpoint: `/healthz` (the process is alive), `/readyz`
//! (broker and database reachable, consumption started) and `/metrics`;
//! the API's `/v1` routes are merged in ([`crate::api::routes`]).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::context::Context;

/// Content type of the exposition (Prometheus scrapes it natively).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long `/readyz` waits for the database probe.
const DB_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves until `stop` is cancelled, with `api` (the `/v1` routes) beside.
pub async fn serve(listener: TcpListener, ctx: Arc<Context>, api: Router, stop: CancellationToken) {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(ctx)
        .merge(api);
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stop.cancelled_owned())
        .await
    {
        tracing::error!(error = %e, "http endpoint failed");
    }
}

/// Whether the worker is ready: consuming, broker up, database answering.
pub async fn is_ready(ctx: &Context) -> Result<(), &'static str> {
    if !ctx.health.broker() {
        return Err("broker unreachable");
    }
    if !ctx.health.consuming() {
        return Err("not consuming");
    }
    let probe = tokio::time::timeout(
        DB_PROBE_TIMEOUT,
        sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&ctx.pool),
    )
    .await;
    match probe {
        Ok(Ok(_)) => {
            ctx.health.set_database(true);
            Ok(())
        }
        _ => {
            ctx.health.set_database(false);
            Err("database unreachable")
        }
    }
}

async fn readyz(State(ctx): State<Arc<Context>>) -> impl IntoResponse {
    match is_ready(&ctx).await {
        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

async fn metrics(State(ctx): State<Arc<Context>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, OPENMETRICS)],
        crate::ops::scrape::render(&ctx).await,
    )
}
