//! The `/metrics` exposition: the counters of [`crate::ops::metrics`], then
//! gauges read at scrape time:
//!
//! * `chunking_memory_bytes`: resident memory of the process (Linux
//!   `/proc/self/statm`; absent elsewhere);
//! * `chunking_memory_budget_held_bytes`: how much of
//!   `worker.memory_budget_mb` the messages in flight hold now (at the
//!   budget, messages wait for one another: `crate::pipeline::memory`);
//! * `chunking_outbox_backlog`: events written but not yet confirmed by the
//!   broker;
//! * `chunking_outbox_oldest_age_seconds`: age of the oldest of them (0 when
//!   none);
//! * `chunking_failures_recorded`: rows in `chunking_failures` (dead-lettered
//!   messages ever recorded; grows with the dead-letter queue);
//! * `chunking_gpu_required`: 1 when a loaded profile sets `gpu_required`;
//! * `chunking_gpu_utilization_percent`: the share of wall time the
//!   embedding model spent in inference on the GPU since the previous scrape
//!   (0 without a GPU, or while it idles).
//!
//! and counters read at scrape time from the group writer of first
//! versions (`store::versions::group`):
//!
//! * `chunking_group_statements_total`: statements that wrote new
//!   documents' first versions;
//! * `chunking_group_documents_total`: the versions they wrote; divided by
//!   the statements, the mean batch (it grows with the load);
//!
//! and from the group pre-check (`store::versions::precheck`):
//!
//! * `chunking_precheck_queries_total`: queries that checked for stored
//!   versions before chunking;
//! * `chunking_precheck_keys_total`: the versions they checked.
//!
//! The database gauges are left out of a scrape when the database does not
//! answer within [`DB_TIMEOUT`]: a scrape never hangs on it, and a missing
//! series is better than a stale one.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use shared::Embedder;

use crate::context::Context;

/// The names of the scrape-time gauges.
pub const SCRAPE_GAUGES: [&str; 7] = [
    MEMORY,
    MEMORY_BUDGET_HELD,
    OUTBOX_BACKLOG,
    OUTBOX_AGE,
    FAILURES,
    GPU_REQUIRED,
    GPU_UTILIZATION,
];
const MEMORY: &str = "chunking_memory_bytes";
const MEMORY_BUDGET_HELD: &str = "chunking_memory_budget_held_bytes";
const OUTBOX_BACKLOG: &str = "chunking_outbox_backlog";
const OUTBOX_AGE: &str = "chunking_outbox_oldest_age_seconds";
const FAILURES: &str = "chunking_failures_recorded";
const GPU_REQUIRED: &str = "chunking_gpu_required";
const GPU_UTILIZATION: &str = "chunking_gpu_utilization_percent";

/// The names of the scrape-time counters, as exposed (with `_total`).
pub const SCRAPE_COUNTERS: [&str; 4] = [
    "chunking_group_statements_total",
    "chunking_group_documents_total",
    "chunking_precheck_queries_total",
    "chunking_precheck_keys_total",
];

/// How long a scrape waits for the database gauges.
const DB_TIMEOUT: Duration = Duration::from_secs(1);

/// Bytes per page of `/proc/self/statm` (4 KiB on the platforms we ship).
const PAGE_SIZE: u64 = 4096;

/// Resident memory of this process, when the platform tells.
pub fn resident_memory_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages.saturating_mul(PAGE_SIZE))
}

fn gauge(registry: &mut Registry, name: &str, help: &str, value: i64) {
    let g: Gauge = Gauge::default();
    g.set(value);
    registry.register(name, help, g);
}

fn counter(registry: &mut Registry, name: &str, help: &str, value: u64) {
    let c: Counter = Counter::default();
    c.inc_by(value);
    registry.register(name, help, c);
}

/// The whole exposition, OpenMetrics text format.
pub async fn render(ctx: &Context) -> String {
    let mut out = String::new();
    ctx.metrics.encode(&mut out);
    let mut scrape = Registry::default();
    if let Some(bytes) = resident_memory_bytes() {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        gauge(
            &mut scrape,
            MEMORY,
            "Resident memory of the worker process",
            bytes,
        );
    }
    gauge(
        &mut scrape,
        MEMORY_BUDGET_HELD,
        "Bytes of worker.memory_budget_mb the messages in flight hold (at the budget they wait)",
        i64::try_from(ctx.memory.held_bytes()).unwrap_or(i64::MAX),
    );
    let chunking = &ctx.settings.chunking;
    let gpu_required = chunking
        .engine
        .profiles()
        .iter()
        .any(|p| p.chunker().gpu_required());
    gauge(
        &mut scrape,
        GPU_REQUIRED,
        "1 when a loaded profile requires a GPU (gpu_required = true)",
        i64::from(gpu_required),
    );
    let busy: Gauge<f64, AtomicU64> = Gauge::default();
    if let Some(model) = chunking.model.as_ref().filter(|m| m.on_gpu()) {
        busy.set(ctx.metrics.gpu_busy_percent(model.stats().inference));
    }
    scrape.register(
        GPU_UTILIZATION,
        "Share of wall time in GPU inference since the previous scrape (0 without a GPU)",
        busy,
    );
    let (statements, documents) = ctx.first_versions.totals();
    counter(
        &mut scrape,
        "chunking_group_statements",
        "Statements that wrote new documents' first versions (group writer)",
        statements,
    );
    counter(
        &mut scrape,
        "chunking_group_documents",
        "First versions written by those statements; divided by them, the mean batch",
        documents,
    );
    let (queries, keys) = ctx.prechecks.totals();
    counter(
        &mut scrape,
        "chunking_precheck_queries",
        "Queries that checked for stored versions before chunking (group pre-check)",
        queries,
    );
    counter(
        &mut scrape,
        "chunking_precheck_keys",
        "Versions those queries checked; divided by them, the mean batch",
        keys,
    );
    let query = sqlx::query_as::<_, (i64, f64, i64)>(
        "SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL), \
                coalesce((SELECT extract(epoch FROM now() - created_at)::double precision \
                   FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 1), 0), \
                (SELECT count(*) FROM chunking_failures)",
    )
    .fetch_one(&ctx.pool);
    match tokio::time::timeout(DB_TIMEOUT, query).await {
        Ok(Ok((backlog, age, failures))) => {
            gauge(
                &mut scrape,
                OUTBOX_BACKLOG,
                "Events written but not yet confirmed by the broker",
                backlog,
            );
            let oldest: Gauge<f64, AtomicU64> = Gauge::default();
            oldest.set(age);
            scrape.register(
                OUTBOX_AGE,
                "Age of the oldest unpublished event (0 when none)",
                oldest,
            );
            gauge(
                &mut scrape,
                FAILURES,
                "Dead-lettered messages recorded in chunking_failures",
                failures,
            );
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "metrics: database gauges unavailable"),
        Err(_) => tracing::debug!("metrics: database gauges timed out"),
    }
    // Writing to a String cannot fail.
    let _ = encode_registry(&mut out, &scrape);
    let _ = encode_eof(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident_memory_bytes().is_some_and(|b| b > 0));
        }
    }
}
