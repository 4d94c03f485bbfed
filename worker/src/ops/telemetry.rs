//! Tracing subscriber set-up: JSON lines by default, human-readable on a
//! terminal; and, when `telemetry.otlp_endpoint` is set, OpenTelemetry spans
//! (`consume`, `chunk`, `store`, `publish`) exported over OTLP/HTTP. Log
//! events carry ids (tenant, document, version, event id, correlation id),
//! never document text.

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

use crate::config::{LogFormat, LogSettings, TelemetrySettings};

/// Keeps the trace exporter alive; dropping it flushes the spans not yet
/// exported (bounded by the exporter's timeout).
#[derive(Debug, Default)]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            if let Err(e) = provider.shutdown() {
                eprintln!("warning: flushing traces failed: {e}");
            }
        }
    }
}

/// Installs the global subscriber (once; later calls are no-ops so tests and
/// the binary can both call it). `RUST_LOG` wins over the configured level.
pub fn init(log: &LogSettings, telemetry: &TelemetrySettings) -> TelemetryGuard {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&log.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let json = match log.format {
        LogFormat::Json => true,
        LogFormat::Pretty => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    let fmt_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let fmt_layer = if json {
        fmt_layer
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .boxed()
    } else {
        fmt_layer.boxed()
    };
    let provider = telemetry
        .otlp_traces_endpoint
        .as_deref()
        .and_then(|endpoint| {
            tracer_provider(
                endpoint,
                telemetry.otlp_ca_pem.as_deref(),
                &telemetry.service_name,
            )
        });
    let otel_layer = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("chunk-worker"))
            .with_tracked_inactivity(false)
    });
    // `try_init` fails only when a subscriber is already installed, which is
    // fine: the first one wins.
    let installed = tracing_subscriber::registry()
        .with(otel_layer)
        .with(fmt_layer)
        .with(filter)
        .try_init()
        .is_ok();
    if installed {
        if let Some(endpoint) = &telemetry.otlp_traces_endpoint {
            tracing::info!(endpoint = %endpoint, "exporting traces over OTLP/HTTP");
        }
    }
    TelemetryGuard {
        provider: provider.filter(|_| installed),
    }
}

fn tracer_provider(
    endpoint: &str,
    ca_pem: Option<&str>,
    service_name: &str,
) -> Option<SdkTracerProvider> {
    let client = match http_client(ca_pem) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("warning: cannot build the OTLP HTTP client for {endpoint}: {e}; traces are not exported");
            return None;
        }
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .build();
    match exporter {
        Ok(exporter) => Some(
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(
                    Resource::builder()
                        .with_service_name(service_name.to_owned())
                        .build(),
                )
                .build(),
        ),
        Err(e) => {
            // Traces are an aid, not a duty: the worker runs without them.
            eprintln!("warning: cannot build the OTLP trace exporter for {endpoint}: {e}; traces are not exported");
            None
        }
    }
}

/// The exporter's blocking HTTP client: TLS through rustls (ring), the
/// server's certificate verified against `ca_pem` when given, else the
/// system's roots. Built on its own thread: a blocking client must not be
/// created or dropped on an async runtime's thread.
fn http_client(ca_pem: Option<&str>) -> Result<reqwest::blocking::Client, String> {
    // Every TLS client of the process uses ring; installing it twice is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca = match ca_pem {
        Some(pem) => Some(
            reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|e| format!("telemetry.otlp_ca_file: {e}"))?,
        ),
        None => None,
    };
    std::thread::spawn(move || {
        let mut builder = reqwest::blocking::Client::builder();
        if let Some(certs) = ca {
            builder = builder.tls_certs_only(certs);
        }
        builder.build().map_err(|e| e.to_string())
    })
    .join()
    .map_err(|_| "the client builder panicked".to_owned())?
}
