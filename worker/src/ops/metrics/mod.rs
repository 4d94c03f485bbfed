//! Process metrics on `/metrics`, kept with the `prometheus-client` crate and
//! rendered in the OpenMetrics text format, under the Chunking System specification's names:
//!
//! * `chunking_operations_total{tenant_id, strategy, granularity, outcome}`:
//!   messages handled (`stored`, `duplicate`, `failed`, `parked`);
//! * `chunking_operations_duration_seconds{strategy, granularity}`: time to
//!   handle one message, delivery to settlement (buckets from 5 ms: a median
//!   document takes about 10 ms);
//! * `chunking_stage_duration_seconds{stage}`: the `chunk` (engine) and
//!   `store` (one transaction) stages of a stored version;
//! * `chunking_errors_total{tenant_id, error_type}`: dead-lettered messages by
//!   error code (docs/contract.md#error-codes);
//! * `chunking_chunks_produced_total{tenant_id, strategy, granularity}` and
//!   `chunking_chunk_size_tokens{strategy, granularity}` (the Chunking System specification's
//!   `chunks_created` and `chunk_size_tokens`);
//! * queue figures: `chunking_messages_consumed_total`,
//!   `chunking_messages_acked_total`, `chunking_messages_dead_lettered_total`,
//!   `chunking_transient_retries_total`, `chunking_messages_in_flight`,
//!   `chunking_broker_connected`, `chunking_database_connected`,
//!   `chunking_broker_node{link, node}` (which node of `amqp.urls` each
//!   link uses, [`super::broker_metrics`]),
//!   `chunking_queue_messages{queue}` (ready messages in the requests, retry
//!   and dead-letter queues, polled from the broker);
//! * `chunking_events_published_total`: events confirmed by the broker.
//!
//! The scrape-time gauges (memory, outbox, failures) are in
//! [`crate::ops::scrape`].
//!
//! Label cardinality is bounded: `strategy` and `granularity` come from the
//! profiles, `error_type` from the error codes (docs/contract.md#error-codes), `stage` and `queue` are fixed,
//! and `tenant_id` keeps the first `telemetry.max_tenant_labels` tenants seen
//! (later ones are counted under `other`; invalid ones under `unknown`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use shared::ErrorCode;

mod labels;

use labels::{
    duration_histogram, token_histogram, ChunkLabels, ErrorLabels, OperationLabels, QueueLabels,
    StageLabels, TenantLabels,
};
pub use labels::{OperationOutcome, QueueKind, Stage, StrategyLabels};
/// The metrics of a running worker.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    tenants: TenantLabels,
    operations: Family<OperationLabels, Counter>,
    /// Per-outcome totals over all labels, for tests and summaries (a
    /// `Family` cannot be summed).
    outcome_totals: [AtomicU64; 4],
    duration: Family<StrategyLabels, Histogram>,
    stages: Family<StageLabels, Histogram>,
    errors: Family<ErrorLabels, Counter>,
    chunks: Family<ChunkLabels, Counter>,
    chunk_tokens: Family<StrategyLabels, Histogram>,
    consumed: Counter,
    acked: Counter,
    dead_lettered: Counter,
    retries: Counter,
    in_flight: Gauge,
    /// 1 while the consumer's broker connection is up, else 0.
    pub broker_connected: Gauge,
    /// 1 while the database answers, else 0.
    pub database_connected: Gauge,
    queues: Family<QueueLabels, Gauge>,
    events_published: Counter,
    /// Inference time and wall time at the previous GPU reading.
    gpu_last: Mutex<Option<(std::time::Instant, std::time::Duration)>>,
    /// The synchronous API's series.
    pub api: super::api_metrics::ApiMetrics,
    /// The broker node each link uses.
    pub broker: super::broker_metrics::BrokerMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new(100)
    }
}

impl Metrics {
    /// Metrics with at most `max_tenant_labels` distinct `tenant_id` values.
    pub fn new(max_tenant_labels: usize) -> Self {
        let mut registry = Registry::default();
        let operations = Family::<OperationLabels, Counter>::default();
        registry.register(
            "chunking_operations",
            "Messages handled, by outcome",
            operations.clone(),
        );
        let duration = Family::<StrategyLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        registry.register(
            "chunking_operations_duration_seconds",
            "Time to handle one message, delivery to settlement",
            duration.clone(),
        );
        let stages = Family::<StageLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        registry.register(
            "chunking_stage_duration_seconds",
            "Time spent in the chunk and store stages of a stored version",
            stages.clone(),
        );
        let errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "chunking_errors",
            "Dead-lettered messages, by error code",
            errors.clone(),
        );
        let chunks = Family::<ChunkLabels, Counter>::default();
        registry.register("chunking_chunks_produced", "Chunks stored", chunks.clone());
        let chunk_tokens = Family::<StrategyLabels, Histogram>::new_with_constructor(
            token_histogram as fn() -> Histogram,
        );
        registry.register(
            "chunking_chunk_size_tokens",
            "Tokens per stored chunk",
            chunk_tokens.clone(),
        );
        let consumed = Counter::default();
        registry.register(
            "chunking_messages_consumed",
            "Deliveries received from the input queue (redeliveries included)",
            consumed.clone(),
        );
        let acked = Counter::default();
        registry.register(
            "chunking_messages_acked",
            "Deliveries acknowledged (stored, duplicate, dead-lettered or parked)",
            acked.clone(),
        );
        let dead_lettered = Counter::default();
        registry.register(
            "chunking_messages_dead_lettered",
            "Messages sent to the dead-letter queue",
            dead_lettered.clone(),
        );
        let retries = Counter::default();
        registry.register(
            "chunking_transient_retries",
            "Retries after transient faults (database or broker down)",
            retries.clone(),
        );
        let broker_connected = Gauge::default();
        registry.register(
            "chunking_broker_connected",
            "1 while the consumer's broker connection is up, 0 while it is lost",
            broker_connected.clone(),
        );
        let database_connected = Gauge::default();
        registry.register(
            "chunking_database_connected",
            "1 while the database answers, 0 while it cannot be reached",
            database_connected.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "chunking_messages_in_flight",
            "Messages being handled now",
            in_flight.clone(),
        );
        let queues = Family::<QueueLabels, Gauge>::default();
        registry.register(
            "chunking_queue_messages",
            "Ready messages in the worker's queues, as last polled from the broker",
            queues.clone(),
        );
        let events_published = Counter::default();
        registry.register(
            "chunking_events_published",
            "Events confirmed by the broker",
            events_published.clone(),
        );
        let api = super::api_metrics::ApiMetrics::register(&mut registry);
        let broker = super::broker_metrics::BrokerMetrics::register(&mut registry);
        Self {
            registry,
            tenants: TenantLabels {
                max: max_tenant_labels,
                seen: Mutex::new(HashSet::new()),
            },
            operations,
            outcome_totals: Default::default(),
            duration,
            stages,
            errors,
            chunks,
            chunk_tokens,
            consumed,
            acked,
            dead_lettered,
            retries,
            in_flight,
            broker_connected,
            database_connected,
            queues,
            events_published,
            gpu_last: Mutex::new(None),
            api,
            broker,
        }
    }

    /// The share (percent) of wall time since the previous call that the
    /// embedding model spent in inference, from its cumulative inference
    /// time `busy` (0 on the first call).
    pub fn gpu_busy_percent(&self, busy: Duration) -> f64 {
        let now = std::time::Instant::now();
        let mut last = self.gpu_last.lock().unwrap_or_else(|e| e.into_inner());
        let percent = match *last {
            Some((at, before)) => {
                let wall = now.duration_since(at).as_secs_f64();
                let spent = busy.saturating_sub(before).as_secs_f64();
                if wall > 0.0 {
                    (spent / wall * 100.0).clamp(0.0, 100.0)
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        *last = Some((now, busy));
        percent
    }

    /// Creates the series of every profile's labels at zero, so dashboards
    /// and alerts see them before the first message (an absent series is
    /// not a zero one to PromQL).
    pub fn prime(&self, engine: &shared::Engine) {
        for profile in engine.profiles().iter() {
            let labels = StrategyLabels::of(profile);
            drop(self.duration.get_or_create(&labels));
            drop(self.chunk_tokens.get_or_create(&labels));
            // Every circuit shows from the start, closed.
            self.api.breaker_state(&profile.strategy, 0);
        }
        for stage in ["chunk", "store"] {
            drop(self.stages.get_or_create(&StageLabels { stage }));
        }
    }

    /// A message ended with `outcome`.
    pub fn operation(
        &self,
        tenant: Option<&str>,
        strategy: &StrategyLabels,
        outcome: OperationOutcome,
    ) {
        self.operations
            .get_or_create(&OperationLabels {
                tenant_id: self.tenants.label(tenant),
                strategy: strategy.strategy.clone(),
                granularity: strategy.granularity.clone(),
                outcome: outcome.as_str(),
            })
            .inc();
        self.outcome_totals[outcome.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// A message was dead-lettered with `code`.
    pub fn failed(&self, tenant: Option<&str>, strategy: &StrategyLabels, code: ErrorCode) {
        self.operation(tenant, strategy, OperationOutcome::Failed);
        self.errors
            .get_or_create(&ErrorLabels {
                tenant_id: self.tenants.label(tenant),
                error_type: code.as_str(),
            })
            .inc();
        self.dead_lettered.inc();
    }

    /// A version was stored with chunks of these token counts.
    pub fn chunks_stored(
        &self,
        tenant: Option<&str>,
        strategy: &StrategyLabels,
        token_counts: impl IntoIterator<Item = u32>,
    ) {
        let sizes = self.chunk_tokens.get_or_create(strategy);
        let mut n = 0u64;
        for tokens in token_counts {
            sizes.observe(f64::from(tokens));
            n += 1;
        }
        self.chunks
            .get_or_create(&ChunkLabels {
                tenant_id: self.tenants.label(tenant),
                strategy: strategy.strategy.clone(),
                granularity: strategy.granularity.clone(),
            })
            .inc_by(n);
    }

    /// How long handling one message took.
    pub fn observe_duration(&self, strategy: &StrategyLabels, elapsed: Duration) {
        self.duration
            .get_or_create(strategy)
            .observe(elapsed.as_secs_f64());
    }

    /// How long a stage of storing a version took.
    pub fn observe_stage(&self, stage: Stage, elapsed: Duration) {
        let stage = match stage {
            Stage::Chunk => "chunk",
            Stage::Store => "store",
        };
        self.stages
            .get_or_create(&StageLabels { stage })
            .observe(elapsed.as_secs_f64());
    }

    /// A delivery arrived; the returned guard counts it in flight until
    /// dropped.
    pub fn consumed(&self) -> InFlight<'_> {
        self.consumed.inc();
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    /// `n` deliveries were acknowledged (one ack frame may settle several).
    pub fn acked(&self, n: u64) {
        self.acked.inc_by(n);
    }

    /// Deliveries acknowledged so far.
    pub fn acks(&self) -> u64 {
        self.acked.get()
    }

    /// A transient fault made a message wait for a retry.
    pub fn transient_retry(&self) {
        self.retries.inc();
    }

    /// Transient retries so far.
    pub fn transient_retries(&self) -> u64 {
        self.retries.get()
    }

    /// Messages handled with `outcome` (all labels).
    pub fn operations(&self, outcome: OperationOutcome) -> u64 {
        self.outcome_totals[outcome.index()].load(Ordering::Relaxed)
    }

    /// `n` events were confirmed by the broker.
    pub fn events_published(&self, n: u64) {
        self.events_published.inc_by(n);
    }

    /// The broker reported `messages` ready in `queue`.
    pub fn set_queue_depth(&self, queue: QueueKind, messages: u32) {
        self.queues
            .get_or_create(&QueueLabels {
                queue: queue.as_str(),
            })
            .set(i64::from(messages));
    }

    /// Appends the registry's metric families to `out` (no `# EOF`).
    pub fn encode(&self, out: &mut String) {
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode_registry(out, &self.registry);
    }

    /// The registry's exposition, complete (with `# EOF`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.encode(&mut out);
        let _ = prometheus_client::encoding::text::encode_eof(&mut out);
        out
    }
}

/// Counts a message in flight while alive.
#[derive(Debug)]
pub struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn structural() -> StrategyLabels {
        StrategyLabels {
            strategy: "structural".into(),
            granularity: "section".into(),
        }
    }

    #[test]
    fn counters_render_with_their_labels() {
        let m = Metrics::default();
        let s = structural();
        m.operation(Some("acme-prod"), &s, OperationOutcome::Stored);
        m.chunks_stored(Some("acme-prod"), &s, [300, 40, 500]);
        m.failed(Some("NOT A TENANT"), &s, ErrorCode::InvalidMessage);
        m.observe_duration(&s, Duration::from_millis(30));
        let text = m.render();
        assert!(text.contains(
            "chunking_operations_total{tenant_id=\"acme-prod\",strategy=\"structural\",granularity=\"section\",outcome=\"stored\"} 1"
        ), "{text}");
        assert!(text.contains(
            "chunking_chunks_produced_total{tenant_id=\"acme-prod\",strategy=\"structural\",granularity=\"section\"} 3"
        ), "{text}");
        assert!(text.contains(
            "chunking_errors_total{tenant_id=\"unknown\",error_type=\"INVALID_MESSAGE\"} 1"
        ));
        assert!(text.contains("chunking_messages_dead_lettered_total 1"));
        assert!(text.contains(
            "chunking_operations_duration_seconds_bucket{le=\"0.02\",strategy=\"structural\",granularity=\"section\"} 0"
        ) || text.contains(
            "chunking_operations_duration_seconds_bucket{strategy=\"structural\",granularity=\"section\",le=\"0.02\"} 0"
        ), "{text}");
        assert!(text.contains("chunking_chunk_size_tokens_count{strategy=\"structural\",granularity=\"section\"} 3"), "{text}");
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(m.operations(OperationOutcome::Stored), 1);
        assert_eq!(m.operations(OperationOutcome::Failed), 1);
        assert_eq!(m.operations(OperationOutcome::Duplicate), 0);
    }

    #[test]
    fn tenant_labels_are_bounded() {
        let m = Metrics::new(2);
        let s = structural();
        for t in ["t-a", "t-b", "t-c", "t-a", "t-d"] {
            m.operation(Some(t), &s, OperationOutcome::Duplicate);
        }
        let text = m.render();
        assert!(text.contains("tenant_id=\"t-a\",strategy=\"structural\",granularity=\"section\",outcome=\"duplicate\"} 2"), "{text}");
        assert!(text.contains("tenant_id=\"t-b\","));
        assert!(!text.contains("tenant_id=\"t-c\""));
        assert!(text.contains("tenant_id=\"other\",strategy=\"structural\",granularity=\"section\",outcome=\"duplicate\"} 2"), "{text}");
    }

    #[test]
    fn in_flight_falls_back_when_the_guard_drops() {
        let m = Metrics::default();
        let guard = m.consumed();
        assert!(m.render().contains("chunking_messages_in_flight 1"));
        drop(guard);
        let text = m.render();
        assert!(text.contains("chunking_messages_in_flight 0"));
        assert!(text.contains("chunking_messages_consumed_total 1"));
    }
}
