//! Process metrics, rendered in the Prometheus text format on `/metrics`,
//! under seed 001's names:
//!
//! * `chunking_operations_total{tenant_id, outcome}`: messages handled
//!   (`stored`, `duplicate`, `failed`, `parked`);
//! * `chunking_operations_duration_seconds`: handling latency histogram with
//!   seed 001's buckets;
//! * `chunking_errors_total{tenant_id, error_type}`: dead-lettered messages by
//!   SPEC 2.3 code;
//! * `chunking_chunks_produced_total{tenant_id}`: chunks stored;
//!
//! plus the worker's own `chunking_transient_retries_total` and
//! `chunking_events_published_total`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use shared::ErrorCode;

/// Histogram buckets of seed 001, in seconds.
const DURATION_BUCKETS: [f64; 6] = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0];

/// Label used when a message names no valid tenant (keeps label values
/// bounded to real tenants).
const UNKNOWN_TENANT: &str = "unknown";

/// Counters of a running worker.
#[derive(Debug, Default)]
pub struct Metrics {
    // std Mutex: held for a map update or a render, never across an await.
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    operations: BTreeMap<(String, &'static str), u64>,
    errors: BTreeMap<(String, &'static str), u64>,
    chunks: BTreeMap<String, u64>,
    duration_buckets: [u64; DURATION_BUCKETS.len()],
    duration_count: u64,
    duration_sum: f64,
    transient_retries: u64,
    events_published: u64,
}

fn tenant_label(tenant: Option<&str>) -> String {
    match tenant {
        Some(t) if shared::contract::is_tenant_id(t) => t.to_owned(),
        _ => UNKNOWN_TENANT.to_owned(),
    }
}

impl Metrics {
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        // A poisoned lock only means another thread panicked mid-update of a
        // counter; the counters are still usable.
        let mut guard = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    fn operation(&self, tenant: Option<&str>, outcome: &'static str) {
        self.with(|m| {
            *m.operations
                .entry((tenant_label(tenant), outcome))
                .or_default() += 1
        });
    }

    /// A version was stored with `chunks` chunks.
    pub fn stored(&self, tenant: Option<&str>, chunks: u64) {
        self.operation(tenant, "stored");
        self.with(|m| *m.chunks.entry(tenant_label(tenant)).or_default() += chunks);
    }

    /// A message repeated a version already stored.
    pub fn duplicate(&self, tenant: Option<&str>) {
        self.operation(tenant, "duplicate");
    }

    /// A message was parked in the retry queue at shutdown.
    pub fn parked(&self, tenant: Option<&str>) {
        self.operation(tenant, "parked");
    }

    /// A message was dead-lettered with `code`.
    pub fn failed(&self, tenant: Option<&str>, code: ErrorCode) {
        self.operation(tenant, "failed");
        self.with(|m| {
            *m.errors
                .entry((tenant_label(tenant), code.as_str()))
                .or_default() += 1
        });
    }

    /// How long handling one message took.
    pub fn observe_duration(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        self.with(|m| {
            for (bucket, le) in m.duration_buckets.iter_mut().zip(DURATION_BUCKETS) {
                if secs <= le {
                    *bucket += 1;
                }
            }
            m.duration_count += 1;
            m.duration_sum += secs;
        });
    }

    /// A transient fault made a message wait for a retry.
    pub fn transient_retry(&self) {
        self.with(|m| m.transient_retries += 1);
    }

    /// Transient retries so far.
    pub fn transient_retries(&self) -> u64 {
        self.with(|m| m.transient_retries)
    }

    /// Messages handled with `outcome` (all tenants).
    pub fn operations(&self, outcome: &str) -> u64 {
        self.with(|m| {
            m.operations
                .iter()
                .filter(|((_, o), _)| *o == outcome)
                .map(|(_, n)| n)
                .sum()
        })
    }

    /// `n` events were confirmed by the broker.
    pub fn events_published(&self, n: u64) {
        self.with(|m| m.events_published += n);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        self.with(|m| {
            let mut out = String::new();
            out.push_str("# HELP chunking_operations_total Messages handled, by outcome.\n");
            out.push_str("# TYPE chunking_operations_total counter\n");
            for ((tenant, outcome), n) in &m.operations {
                let _ = writeln!(
                    out,
                    "chunking_operations_total{{tenant_id=\"{tenant}\",outcome=\"{outcome}\"}} {n}"
                );
            }
            out.push_str("# HELP chunking_operations_duration_seconds Time to handle one message.\n");
            out.push_str("# TYPE chunking_operations_duration_seconds histogram\n");
            for (le, n) in DURATION_BUCKETS.iter().zip(m.duration_buckets) {
                let _ = writeln!(
                    out,
                    "chunking_operations_duration_seconds_bucket{{le=\"{le}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "chunking_operations_duration_seconds_bucket{{le=\"+Inf\"}} {}",
                m.duration_count
            );
            let _ = writeln!(out, "chunking_operations_duration_seconds_sum {}", m.duration_sum);
            let _ = writeln!(out, "chunking_operations_duration_seconds_count {}", m.duration_count);
            out.push_str("# HELP chunking_errors_total Dead-lettered messages, by SPEC 2.3 code.\n");
            out.push_str("# TYPE chunking_errors_total counter\n");
            for ((tenant, code), n) in &m.errors {
                let _ = writeln!(
                    out,
                    "chunking_errors_total{{tenant_id=\"{tenant}\",error_type=\"{code}\"}} {n}"
                );
            }
            out.push_str("# HELP chunking_chunks_produced_total Chunks stored.\n");
            out.push_str("# TYPE chunking_chunks_produced_total counter\n");
            for (tenant, n) in &m.chunks {
                let _ = writeln!(out, "chunking_chunks_produced_total{{tenant_id=\"{tenant}\"}} {n}");
            }
            out.push_str("# HELP chunking_transient_retries_total Retries after transient faults (database or broker down).\n");
            out.push_str("# TYPE chunking_transient_retries_total counter\n");
            let _ = writeln!(out, "chunking_transient_retries_total {}", m.transient_retries);
            out.push_str("# HELP chunking_events_published_total Events confirmed by the broker.\n");
            out.push_str("# TYPE chunking_events_published_total counter\n");
            let _ = writeln!(out, "chunking_events_published_total {}", m.events_published);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_with_their_labels() {
        let m = Metrics::default();
        m.stored(Some("acme-prod"), 3);
        m.failed(Some("NOT A TENANT"), ErrorCode::InvalidMessage);
        m.observe_duration(Duration::from_millis(300));
        let text = m.render();
        assert!(text
            .contains("chunking_operations_total{tenant_id=\"acme-prod\",outcome=\"stored\"} 1"));
        assert!(text.contains("chunking_chunks_produced_total{tenant_id=\"acme-prod\"} 3"));
        assert!(text.contains(
            "chunking_errors_total{tenant_id=\"unknown\",error_type=\"INVALID_MESSAGE\"} 1"
        ));
        assert!(text.contains("chunking_operations_duration_seconds_bucket{le=\"0.1\"} 0"));
        assert!(text.contains("chunking_operations_duration_seconds_bucket{le=\"0.5\"} 1"));
        assert_eq!(m.operations("stored"), 1);
    }
}
