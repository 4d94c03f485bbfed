//! The API's series on `/metrics`: `chunking_rate_limited_total{scope}`,
//! `chunking_circuit_breaker_state{strategy}` (0 closed, 1 open, 2
//! half-open) and `chunking_api_requests_total{status}`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ScopeLabels {
    scope: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BreakerLabels {
    strategy: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: u16,
}

/// The API's counters and gauges.
#[derive(Debug, Default)]
pub struct ApiMetrics {
    rate_limited: Family<ScopeLabels, Counter>,
    breaker: Family<BreakerLabels, Gauge>,
    requests: Family<StatusLabels, Counter>,
}

impl ApiMetrics {
    /// Registers the series in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self::default();
        registry.register(
            "chunking_rate_limited",
            "API operations refused by a rate limit, by scope (tenant, user)",
            m.rate_limited.clone(),
        );
        registry.register(
            "chunking_circuit_breaker_state",
            "Circuit breaker per strategy: 0 closed, 1 open, 2 half-open",
            m.breaker.clone(),
        );
        registry.register(
            "chunking_api_requests",
            "API requests answered, by HTTP status",
            m.requests.clone(),
        );
        m
    }

    /// One refusal by the `scope` limit.
    pub fn rate_limited(&self, scope: &'static str) {
        self.rate_limited
            .get_or_create(&ScopeLabels { scope })
            .inc();
    }

    /// `strategy`'s circuit is now in `state` (0, 1, 2).
    pub fn breaker_state(&self, strategy: &str, state: i64) {
        self.breaker
            .get_or_create(&BreakerLabels {
                strategy: strategy.to_owned(),
            })
            .set(state);
    }

    /// One answer with `status`.
    pub fn answered(&self, status: u16) {
        self.requests.get_or_create(&StatusLabels { status }).inc();
    }
}
