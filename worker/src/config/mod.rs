//! Layered settings: raw values deserialized from `config/default.toml`, an
//! optional environment file and `CHUNK_WORKER__<SECTION>__<KEY>` variables,
//! then validated once into [`Settings`]. A bad value stops start-up with a
//! message naming the key.

mod links;
mod telemetry;

use links::{validate_links, RawLinks};
pub use links::{LinkSettings, TenantLinkSettings};
pub use telemetry::TelemetrySettings;
use telemetry::{validate_telemetry, RawTelemetry};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use sqlx::postgres::PgConnectOptions;

/// The defaults, compiled in so the binary runs from any directory; a
/// `default.toml` in the config directory, when present, is layered on top.
const EMBEDDED_DEFAULTS: &str = include_str!("../../../config/default.toml");

/// Environment variable selecting the environment file (`config/<env>.toml`).
pub const ENV_SELECTOR: &str = "CHUNK_WORKER_ENV";
/// Environment variable overriding the config directory (default `./config`).
pub const CONFIG_DIR_VAR: &str = "CHUNK_WORKER_CONFIG_DIR";
/// Prefix of setting overrides: `CHUNK_WORKER__AMQP__URL`.
pub const ENV_PREFIX: &str = "CHUNK_WORKER";

/// A setting that is missing, malformed or out of range.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The layers could not be read or merged, or a value has the wrong type.
    #[error("cannot load settings: {0}")]
    Load(#[from] config::ConfigError),
    /// A profile setting names a profile that cannot be used, or a profile
    /// file is invalid.
    #[error(transparent)]
    Profile(#[from] crate::profiles::ProfileSettingError),
    /// A value parsed but is not acceptable.
    #[error("invalid setting `{key}`: {reason}")]
    Invalid {
        /// Dotted key, e.g. `amqp.prefetch`.
        key: &'static str,
        /// Why it is rejected.
        reason: String,
    },
}

fn invalid(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        reason: reason.into(),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    amqp: RawAmqp,
    worker: RawWorker,
    database: RawDatabase,
    topology: RawTopology,
    http: RawHttp,
    limits: RawLimits,
    source: RawSource,
    outbox: RawOutbox,
    log: RawLog,
    telemetry: RawTelemetry,
    #[serde(default)]
    links: RawLinks,
    #[serde(default)]
    chunking: crate::profiles::RawChunking,
    #[serde(default)]
    profiles: crate::profiles::RawProfiles,
    #[serde(default)]
    experimental: crate::profiles::RawExperimental,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAmqp {
    url: String,
    prefetch: u32,
    delivery_limit: u32,
    retry_delay_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorker {
    concurrency: u32,
    retry_min_delay_ms: u64,
    retry_max_delay_ms: u64,
    source_retry_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDatabase {
    url: String,
    max_connections: u32,
    acquire_timeout_ms: u64,
    create_if_missing: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    prefix: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    addr: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_document_bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    root: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutbox {
    poll_interval_ms: u64,
    batch_size: u32,
    flush_timeout_ms: u64,
    retention_hours: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    format: String,
    level: String,
}

/// Validated settings; every field is ready to use.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Broker settings.
    pub amqp: AmqpSettings,
    /// Processing settings.
    pub worker: WorkerSettings,
    /// Database settings.
    pub database: DatabaseSettings,
    /// Prefix of every exchange and queue name.
    pub topology_prefix: String,
    /// Address of the health/metrics endpoint.
    pub http_addr: SocketAddr,
    /// Largest markdown accepted, in bytes.
    pub max_document_bytes: u64,
    /// The only directory `file://` URIs may point into.
    pub source_root: PathBuf,
    /// Outbox relay settings.
    pub outbox: OutboxSettings,
    /// Logging settings.
    pub log: LogSettings,
    /// Traces and metrics.
    pub telemetry: TelemetrySettings,
    /// Confluence / Jira sites for link classification.
    pub links: LinkSettings,
    /// The chunking engine and which profile each message gets.
    pub chunking: crate::profiles::ChunkingSettings,
}

/// Broker settings.
#[derive(Clone)]
pub struct AmqpSettings {
    /// AMQP URI (holds credentials: never logged).
    pub url: String,
    /// basic.qos prefetch count.
    pub prefetch: u16,
    /// Deliveries after which the worker dead-letters as `DELIVERY_LIMIT`.
    pub delivery_limit: u32,
    /// TTL of the retry queue.
    pub retry_delay: Duration,
}

impl std::fmt::Debug for AmqpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmqpSettings")
            .field("url", &"<redacted>")
            .field("prefetch", &self.prefetch)
            .field("delivery_limit", &self.delivery_limit)
            .field("retry_delay", &self.retry_delay)
            .finish()
    }
}

/// Processing settings.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Messages processed at once.
    pub concurrency: usize,
    /// First backoff delay for transient faults.
    pub retry_min_delay: Duration,
    /// Largest backoff delay for transient faults.
    pub retry_max_delay: Duration,
    /// How long a missing `markdown_uri` file is retried.
    pub source_retry: Duration,
}

/// Database settings.
#[derive(Clone)]
pub struct DatabaseSettings {
    /// Connection URL (may hold credentials: never logged).
    pub url: String,
    /// Parsed connection options.
    pub options: PgConnectOptions,
    /// Pool size.
    pub max_connections: u32,
    /// How long acquiring a pooled connection may take.
    pub acquire_timeout: Duration,
    /// Create the database at start-up when missing.
    pub create_if_missing: bool,
}

impl std::fmt::Debug for DatabaseSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseSettings")
            .field("url", &"<redacted>")
            .field("database", &self.options.get_database())
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("create_if_missing", &self.create_if_missing)
            .finish()
    }
}

/// Outbox relay settings.
#[derive(Debug, Clone)]
pub struct OutboxSettings {
    /// How often the relay looks for pending rows without being woken.
    pub poll_interval: Duration,
    /// Rows published per batch.
    pub batch_size: i64,
    /// How long shutdown waits for pending rows.
    pub flush_timeout: Duration,
    /// Published rows older than this are deleted (`None`: kept forever).
    pub retention: Option<Duration>,
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// JSON, or human-readable on a terminal.
    Auto,
    /// Always JSON lines.
    Json,
    /// Always human-readable.
    Pretty,
}

/// Logging settings.
#[derive(Debug, Clone)]
pub struct LogSettings {
    /// Output format.
    pub format: LogFormat,
    /// Default filter directive.
    pub level: String,
}

impl Settings {
    /// Loads settings from the process environment: the config directory is
    /// `$CHUNK_WORKER_CONFIG_DIR` or `./config`, the environment file is
    /// chosen by `$CHUNK_WORKER_ENV`.
    pub fn from_env() -> Result<Self, ConfigError> {
        let dir = std::env::var_os(CONFIG_DIR_VAR)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("config"));
        let env_name = std::env::var(ENV_SELECTOR).ok().filter(|s| !s.is_empty());
        let vars: HashMap<String, String> = std::env::vars()
            .filter(|(k, _)| k.starts_with(&format!("{ENV_PREFIX}__")))
            .collect();
        Self::load(&dir, env_name.as_deref(), vars)
    }

    /// Loads settings from explicit inputs: the embedded defaults, then
    /// `<dir>/default.toml` if present, then `<dir>/<env_name>.toml` (required
    /// when `env_name` is given), then `vars` (`CHUNK_WORKER__SECTION__KEY`).
    pub fn load(
        dir: &Path,
        env_name: Option<&str>,
        vars: HashMap<String, String>,
    ) -> Result<Self, ConfigError> {
        let mut builder = config::Config::builder()
            .add_source(config::File::from_str(
                EMBEDDED_DEFAULTS,
                config::FileFormat::Toml,
            ))
            .add_source(config::File::from(dir.join("default.toml")).required(false));
        if let Some(env_name) = env_name {
            builder = builder.add_source(config::File::from(dir.join(format!("{env_name}.toml"))));
        }
        let vars: config::Map<String, String> = vars.into_iter().collect();
        builder = builder.add_source(
            config::Environment::with_prefix(ENV_PREFIX)
                .prefix_separator("__")
                .separator("__")
                .try_parsing(false)
                .source(Some(vars)),
        );
        let raw: RawSettings = builder.build()?.try_deserialize()?;
        Self::validate(raw)
    }

    fn validate(raw: RawSettings) -> Result<Self, ConfigError> {
        let amqp_uri = lapin::uri::AMQPUri::from_str(&raw.amqp.url)
            .map_err(|e| invalid("amqp.url", format!("not an AMQP URI: {e}")))?;
        if !matches!(amqp_uri.scheme, lapin::uri::AMQPScheme::AMQP) {
            return Err(invalid(
                "amqp.url",
                "only amqp:// is supported by this build (no TLS)",
            ));
        }
        let prefetch = u16::try_from(raw.amqp.prefetch)
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| {
                invalid(
                    "amqp.prefetch",
                    format!("must be 1..=65535, got {}", raw.amqp.prefetch),
                )
            })?;
        if !(1..=1000).contains(&raw.amqp.delivery_limit) {
            return Err(invalid(
                "amqp.delivery_limit",
                format!("must be 1..=1000, got {}", raw.amqp.delivery_limit),
            ));
        }
        if raw.amqp.retry_delay_ms == 0 || raw.amqp.retry_delay_ms > u64::from(u32::MAX) {
            return Err(invalid(
                "amqp.retry_delay_ms",
                format!("must be 1..=4294967295, got {}", raw.amqp.retry_delay_ms),
            ));
        }
        let concurrency = raw.worker.concurrency;
        if concurrency == 0 || concurrency > raw.amqp.prefetch.max(1) {
            return Err(invalid(
                "worker.concurrency",
                format!(
                    "must be 1..=amqp.prefetch ({}), got {concurrency}",
                    raw.amqp.prefetch
                ),
            ));
        }
        if raw.worker.retry_min_delay_ms == 0 {
            return Err(invalid("worker.retry_min_delay_ms", "must be positive"));
        }
        if raw.worker.retry_max_delay_ms < raw.worker.retry_min_delay_ms {
            return Err(invalid(
                "worker.retry_max_delay_ms",
                format!(
                    "must be at least worker.retry_min_delay_ms ({}), got {}",
                    raw.worker.retry_min_delay_ms, raw.worker.retry_max_delay_ms
                ),
            ));
        }
        let db_options = PgConnectOptions::from_str(&raw.database.url)
            .map_err(|e| invalid("database.url", format!("not a Postgres URL: {e}")))?;
        if db_options.get_database().is_none_or(str::is_empty) {
            return Err(invalid("database.url", "must name a database"));
        }
        if raw.database.max_connections == 0 {
            return Err(invalid("database.max_connections", "must be positive"));
        }
        if raw.database.acquire_timeout_ms == 0 {
            return Err(invalid("database.acquire_timeout_ms", "must be positive"));
        }
        let prefix = raw.topology.prefix;
        if prefix.len() > 64
            || !prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        {
            return Err(invalid(
                "topology.prefix",
                format!("must be at most 64 of [A-Za-z0-9._-], got {prefix:?}"),
            ));
        }
        let http_addr = SocketAddr::from_str(&raw.http.addr).map_err(|e| {
            invalid(
                "http.addr",
                format!("not a socket address ({e}): {:?}", raw.http.addr),
            )
        })?;
        if raw.limits.max_document_bytes == 0 {
            return Err(invalid("limits.max_document_bytes", "must be positive"));
        }
        let source_root = PathBuf::from(&raw.source.root);
        if !source_root.is_absolute() {
            return Err(invalid(
                "source.root",
                format!("must be an absolute path, got {:?}", raw.source.root),
            ));
        }
        if raw.outbox.poll_interval_ms == 0 {
            return Err(invalid("outbox.poll_interval_ms", "must be positive"));
        }
        if !(1..=10_000).contains(&raw.outbox.batch_size) {
            return Err(invalid(
                "outbox.batch_size",
                format!("must be 1..=10000, got {}", raw.outbox.batch_size),
            ));
        }
        let format = match raw.log.format.as_str() {
            "auto" => LogFormat::Auto,
            "json" => LogFormat::Json,
            "pretty" => LogFormat::Pretty,
            other => {
                return Err(invalid(
                    "log.format",
                    format!("must be auto, json or pretty, got {other:?}"),
                ))
            }
        };
        if tracing_subscriber::EnvFilter::try_new(&raw.log.level).is_err() {
            return Err(invalid(
                "log.level",
                format!("not a tracing filter directive: {:?}", raw.log.level),
            ));
        }
        let links = validate_links(raw.links)?;
        let telemetry = validate_telemetry(raw.telemetry)?;
        let chunking = crate::profiles::validate(raw.chunking, raw.profiles, raw.experimental)?;
        Ok(Self {
            amqp: AmqpSettings {
                url: raw.amqp.url,
                prefetch,
                delivery_limit: raw.amqp.delivery_limit,
                retry_delay: Duration::from_millis(raw.amqp.retry_delay_ms),
            },
            worker: WorkerSettings {
                concurrency: concurrency as usize,
                retry_min_delay: Duration::from_millis(raw.worker.retry_min_delay_ms),
                retry_max_delay: Duration::from_millis(raw.worker.retry_max_delay_ms),
                source_retry: Duration::from_millis(raw.worker.source_retry_ms),
            },
            database: DatabaseSettings {
                url: raw.database.url,
                options: db_options,
                max_connections: raw.database.max_connections,
                acquire_timeout: Duration::from_millis(raw.database.acquire_timeout_ms),
                create_if_missing: raw.database.create_if_missing,
            },
            topology_prefix: prefix,
            http_addr,
            max_document_bytes: raw.limits.max_document_bytes,
            source_root,
            outbox: OutboxSettings {
                poll_interval: Duration::from_millis(raw.outbox.poll_interval_ms),
                batch_size: i64::from(raw.outbox.batch_size),
                flush_timeout: Duration::from_millis(raw.outbox.flush_timeout_ms),
                retention: (raw.outbox.retention_hours > 0)
                    .then(|| Duration::from_secs(u64::from(raw.outbox.retention_hours) * 3600)),
            },
            log: LogSettings {
                format,
                level: raw.log.level,
            },
            telemetry,
            links,
            chunking,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    fn load(vars: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        let vars = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::load(Path::new("/nonexistent-config-dir"), None, vars)
    }

    #[test]
    fn defaults_match_the_documented_values() {
        let s = load(&[]).unwrap();
        assert_eq!(s.amqp.url, "amqp://guest:guest@127.0.0.1:5672/%2f");
        assert_eq!(
            s.database.url,
            "postgres://postgres@127.0.0.1:5432/chunk_worker"
        );
        assert_eq!(s.topology_prefix, "");
        assert_eq!(s.http_addr.to_string(), "127.0.0.1:9464");
        assert_eq!(s.max_document_bytes, 10 * 1024 * 1024);
    }

    #[test]
    fn telemetry_endpoints_get_the_traces_path_and_need_http() {
        let s = load(&[]).unwrap();
        assert_eq!(s.telemetry.otlp_traces_endpoint, None);
        let s = load(&[(
            "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT",
            "http://collector:4318/",
        )])
        .unwrap();
        assert_eq!(
            s.telemetry.otlp_traces_endpoint.as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        let e = load(&[(
            "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT",
            "https://collector:4318",
        )])
        .unwrap_err();
        assert!(e.to_string().contains("telemetry.otlp_endpoint"), "{e}");
        let e = load(&[("CHUNK_WORKER__TELEMETRY__MAX_TENANT_LABELS", "0")]).unwrap_err();
        assert!(e.to_string().contains("telemetry.max_tenant_labels"), "{e}");
    }

    #[test]
    fn environment_variables_override_files() {
        let s = load(&[
            ("CHUNK_WORKER__TOPOLOGY__PREFIX", "p."),
            ("CHUNK_WORKER__LIMITS__MAX_DOCUMENT_BYTES", "1024"),
            ("CHUNK_WORKER__AMQP__PREFETCH", "3"),
            ("CHUNK_WORKER__WORKER__CONCURRENCY", "2"),
        ])
        .unwrap();
        assert_eq!(s.topology_prefix, "p.");
        assert_eq!(s.max_document_bytes, 1024);
        assert_eq!(s.amqp.prefetch, 3);
        assert_eq!(s.worker.concurrency, 2);
    }

    #[test]
    fn numeric_looking_strings_stay_strings() {
        let s = load(&[
            ("CHUNK_WORKER__TOPOLOGY__PREFIX", "1."),
            ("CHUNK_WORKER__DATABASE__CREATE_IF_MISSING", "false"),
        ])
        .unwrap();
        assert_eq!(s.topology_prefix, "1.");
        assert!(!s.database.create_if_missing);
    }

    #[test]
    fn bad_values_name_their_key() {
        let cases = [
            ("CHUNK_WORKER__AMQP__PREFETCH", "0", "amqp.prefetch"),
            ("CHUNK_WORKER__AMQP__URL", "http://x", "amqp.url"),
            ("CHUNK_WORKER__DATABASE__URL", "nope", "database.url"),
            ("CHUNK_WORKER__TOPOLOGY__PREFIX", "a b", "topology.prefix"),
            ("CHUNK_WORKER__HTTP__ADDR", "localhost", "http.addr"),
            ("CHUNK_WORKER__SOURCE__ROOT", "relative/dir", "source.root"),
            (
                "CHUNK_WORKER__LIMITS__MAX_DOCUMENT_BYTES",
                "0",
                "limits.max_document_bytes",
            ),
            ("CHUNK_WORKER__LOG__FORMAT", "xml", "log.format"),
            (
                "CHUNK_WORKER__WORKER__CONCURRENCY",
                "100",
                "worker.concurrency",
            ),
        ];
        for (var, value, key) in cases {
            let err = load(&[(var, value)]).unwrap_err().to_string();
            assert!(err.contains(key), "{var}={value}: {err}");
        }
    }

    #[test]
    fn link_sites_are_comma_separated_lists_with_tenant_overrides() {
        let s = load(&[]).unwrap();
        assert_eq!(s.links, LinkSettings::default());
        let s = load(&[
            (
                "CHUNK_WORKER__LINKS__CONFLUENCE_BASE_URLS",
                "https://confluence.acme.com, https://acme.atlassian.net/wiki",
            ),
            (
                "CHUNK_WORKER__LINKS__JIRA_BASE_URLS",
                "https://jira.acme.com",
            ),
            (
                "CHUNK_WORKER__LINKS__TENANTS__GLOBEX__CONFLUENCE_BASE_URLS",
                "https://wiki.globex.com",
            ),
        ])
        .unwrap();
        let acme = s.links.for_tenant("acme-prod");
        assert_eq!(
            acme.confluence_base_urls,
            [
                "https://confluence.acme.com",
                "https://acme.atlassian.net/wiki"
            ]
        );
        assert_eq!(acme.jira_base_urls, ["https://jira.acme.com"]);
        let globex = s.links.for_tenant("globex");
        assert_eq!(globex.confluence_base_urls, ["https://wiki.globex.com"]);
        assert_eq!(globex.jira_base_urls, ["https://jira.acme.com"]);
    }

    #[test]
    fn link_sites_in_toml_files_are_arrays_with_tenant_tables() {
        let dir = std::env::temp_dir().join(format!("cw-config-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("links.toml"),
            "[links]\nconfluence_base_urls = [\"https://confluence.acme.com\"]\n\
             [links.tenants.acme-prod]\njira_base_urls = [\"https://jira.acme.com\", \"https://jira2.acme.com\"]\n",
        )
        .unwrap();
        let s = Settings::load(&dir, Some("links"), HashMap::new()).unwrap();
        let acme = s.links.for_tenant("acme-prod");
        assert_eq!(acme.confluence_base_urls, ["https://confluence.acme.com"]);
        assert_eq!(
            acme.jira_base_urls,
            ["https://jira.acme.com", "https://jira2.acme.com"]
        );
        assert!(s.links.for_tenant("other").jira_base_urls.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn link_sites_must_be_http_urls_and_errors_name_the_key() {
        let cases = [
            (
                "CHUNK_WORKER__LINKS__CONFLUENCE_BASE_URLS",
                "https://ok.example.com,not a url",
                "links.confluence_base_urls",
            ),
            (
                "CHUNK_WORKER__LINKS__JIRA_BASE_URLS",
                "ftp://jira.example.com",
                "links.jira_base_urls",
            ),
            (
                "CHUNK_WORKER__LINKS__TENANTS__X_Y__JIRA_BASE_URLS",
                "https://x.example.com",
                "links.tenants.x_y",
            ),
            (
                "CHUNK_WORKER__LINKS__TENANTS__GLOBEX__JIRA_BASE_URLS",
                "mailto:x@example.com",
                "links.tenants.globex.jira_base_urls",
            ),
        ];
        for (var, value, key) in cases {
            let err = load(&[(var, value)]).unwrap_err().to_string();
            assert!(err.contains(key), "{var}={value}: {err}");
        }
    }

    #[test]
    fn wrong_type_names_the_key() {
        let err = load(&[("CHUNK_WORKER__AMQP__PREFETCH", "many")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("prefetch"), "{err}");
    }

    #[test]
    fn environment_file_is_layered_and_required_when_named() {
        let dir = std::env::temp_dir().join(format!("cw-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("staging.toml"), "[topology]\nprefix = \"stg.\"\n").unwrap();
        let s = Settings::load(&dir, Some("staging"), HashMap::new()).unwrap();
        assert_eq!(s.topology_prefix, "stg.");
        assert!(Settings::load(&dir, Some("missing"), HashMap::new()).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
