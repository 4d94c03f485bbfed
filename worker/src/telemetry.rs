//! Tracing subscriber set-up: JSON lines by default, human-readable on a
//! terminal. Log events carry ids (tenant, document, version, event id,
//! correlation id), never document text.

use std::io::IsTerminal;

use tracing_subscriber::{fmt, EnvFilter};

use crate::config::{LogFormat, LogSettings};

/// Installs the global subscriber (once; later calls are no-ops so tests and
/// the binary can both call it). `RUST_LOG` wins over the configured level.
pub fn init(settings: &LogSettings) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let json = match settings.format {
        LogFormat::Json => true,
        LogFormat::Pretty => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    // `try_init` fails only when a subscriber is already installed, which is
    // fine: the first one wins.
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        builder.try_init()
    };
}
