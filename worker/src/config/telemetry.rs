//! `[telemetry]`: trace export, metric label bounds, queue polling.

use std::time::Duration;

use serde::Deserialize;

use super::error::{invalid, ConfigError};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    otlp_endpoint: String,
    #[serde(default)]
    otlp_ca_file: String,
    service_name: String,
    max_tenant_labels: u32,
    queue_poll_interval_ms: u64,
}

/// `[telemetry]`: trace export and metric labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetrySettings {
    /// OTLP/HTTP traces endpoint (`.../v1/traces`); `None`: no export.
    pub otlp_traces_endpoint: Option<String>,
    /// CA certificates (PEM) that sign an `https://` collector's certificate
    /// (`None`: the system's roots).
    pub otlp_ca_pem: Option<String>,
    /// `service.name` of the exported spans.
    pub service_name: String,
    /// Distinct `tenant_id` label values on `/metrics`.
    pub max_tenant_labels: usize,
    /// How often queue depths are read from the broker.
    pub queue_poll_interval: Duration,
}

/// OTLP/HTTP sends traces to `<base>/v1/traces`: a base URL gets the path
/// appended, a URL that already ends with it is kept.
pub(super) fn validate_telemetry(raw: RawTelemetry) -> Result<TelemetrySettings, ConfigError> {
    let endpoint = raw.otlp_endpoint.trim();
    let otlp_traces_endpoint = if endpoint.is_empty() {
        None
    } else {
        let url = url::Url::parse(endpoint).map_err(|e| {
            invalid(
                "telemetry.otlp_endpoint",
                format!("not a URL ({e}): {endpoint:?}"),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(
                "telemetry.otlp_endpoint",
                format!("must be an http:// or https:// OTLP/HTTP endpoint, got {endpoint:?}"),
            ));
        }
        let base = endpoint.trim_end_matches('/');
        Some(if base.ends_with("/v1/traces") {
            base.to_owned()
        } else {
            format!("{base}/v1/traces")
        })
    };
    if raw.service_name.trim().is_empty() {
        return Err(invalid("telemetry.service_name", "must not be empty"));
    }
    if !(1..=10_000).contains(&raw.max_tenant_labels) {
        return Err(invalid(
            "telemetry.max_tenant_labels",
            format!("must be 1..=10000, got {}", raw.max_tenant_labels),
        ));
    }
    if raw.queue_poll_interval_ms < 100 {
        return Err(invalid(
            "telemetry.queue_poll_interval_ms",
            format!("must be at least 100, got {}", raw.queue_poll_interval_ms),
        ));
    }
    let otlp_ca_pem = super::secrets::pem_file("telemetry.otlp_ca_file", &raw.otlp_ca_file)?;
    if otlp_ca_pem.is_some()
        && !otlp_traces_endpoint
            .as_deref()
            .is_some_and(|e| e.starts_with("https://"))
    {
        return Err(invalid(
            "telemetry.otlp_ca_file",
            "set, but telemetry.otlp_endpoint is not https://",
        ));
    }
    Ok(TelemetrySettings {
        otlp_traces_endpoint,
        otlp_ca_pem,
        service_name: raw.service_name,
        max_tenant_labels: raw.max_tenant_labels as usize,
        queue_poll_interval: Duration::from_millis(raw.queue_poll_interval_ms),
    })
}
