//! Gauges read at scrape time, appended to `/metrics` after the counters of
//! [`crate::metrics`]:
//!
//! * `chunking_memory_bytes`: resident memory of the process (Linux
//!   `/proc/self/statm`; absent elsewhere);
//! * `chunking_outbox_backlog`: events written but not yet confirmed by the
//!   broker;
//! * `chunking_outbox_oldest_age_seconds`: age of the oldest of them (0 when
//!   none);
//! * `chunking_failures_recorded`: rows in `chunking_failures` (dead-lettered
//!   messages ever recorded; grows with the dead-letter queue).
//!
//! The database gauges are left out of a scrape when the database does not
//! answer within [`DB_TIMEOUT`]: a scrape never hangs on it.

use std::fmt::Write as _;
use std::time::Duration;

use crate::context::Context;

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

/// The scrape-time gauges in the Prometheus text format.
pub async fn render(ctx: &Context) -> String {
    let mut out = String::new();
    if let Some(bytes) = resident_memory_bytes() {
        out.push_str("# HELP chunking_memory_bytes Resident memory of the worker process.\n");
        out.push_str("# TYPE chunking_memory_bytes gauge\n");
        let _ = writeln!(out, "chunking_memory_bytes {bytes}");
    }
    let query = sqlx::query_as::<_, (i64, f64, i64)>(
        "SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL), \
                (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::double precision \
                   FROM outbox WHERE published_at IS NULL), \
                (SELECT count(*) FROM chunking_failures)",
    )
    .fetch_one(&ctx.pool);
    match tokio::time::timeout(DB_TIMEOUT, query).await {
        Ok(Ok((backlog, age, failures))) => {
            out.push_str(
                "# HELP chunking_outbox_backlog Events written but not yet confirmed by the broker.\n",
            );
            out.push_str("# TYPE chunking_outbox_backlog gauge\n");
            let _ = writeln!(out, "chunking_outbox_backlog {backlog}");
            out.push_str("# HELP chunking_outbox_oldest_age_seconds Age of the oldest unpublished event (0 when none).\n");
            out.push_str("# TYPE chunking_outbox_oldest_age_seconds gauge\n");
            let _ = writeln!(out, "chunking_outbox_oldest_age_seconds {age}");
            out.push_str("# HELP chunking_failures_recorded Dead-lettered messages recorded in chunking_failures.\n");
            out.push_str("# TYPE chunking_failures_recorded gauge\n");
            let _ = writeln!(out, "chunking_failures_recorded {failures}");
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "metrics: database gauges unavailable"),
        Err(_) => tracing::debug!("metrics: database gauges timed out"),
    }
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
