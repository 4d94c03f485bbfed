//! Operating the worker: `/healthz`, `/readyz` and `/metrics` ([`http`]),
//! the counters and histograms ([`metrics`]; which broker node each link
//! uses: [`broker_metrics`]) and the scrape-time exposition
//! ([`scrape`]), JSON logs and OpenTelemetry export ([`telemetry`]), W3C
//! trace context from messages to events ([`trace`]).

pub mod api_metrics;
pub mod broker_metrics;
pub mod http;
pub mod metrics;
pub mod scrape;
pub mod telemetry;
pub mod trace;
