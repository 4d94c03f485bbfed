//! One conversion per settings section, raw (as deserialized) to validated:
//! each checks its own keys and names the key in its error. Checks across
//! sections (worker.concurrency: 1..=amqp.prefetch) are in
//! `Settings::validate`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;

use secrecy::{ExposeSecret, SecretString};

use super::error::{invalid, ConfigError};
use super::secrets::secret_file;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorker {
    concurrency: u32,
    memory_budget_mb: u64,
    retry_min_delay_ms: u64,
    retry_max_delay_ms: u64,
    source_retry_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDatabase {
    url: String,
    #[serde(default)]
    url_file: String,
    #[serde(default)]
    password_file: String,
    max_connections: u32,
    acquire_timeout_ms: u64,
    create_if_missing: bool,
    write_slots: u32,
    write_batch: u32,
    #[serde(default)]
    service_role: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutbox {
    poll_interval_ms: u64,
    batch_size: u32,
    flush_timeout_ms: u64,
    retention_hours: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLog {
    format: String,
    level: String,
}

/// Processing settings.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Messages processed at once.
    pub concurrency: usize,
    /// Bytes the messages in flight may hold together
    /// ([`crate::pipeline::memory`]).
    pub memory_budget: u64,
    /// First backoff delay for transient faults.
    pub retry_min_delay: Duration,
    /// Largest backoff delay for transient faults.
    pub retry_max_delay: Duration,
    /// How long a missing `markdown_uri` file is retried.
    pub source_retry: Duration,
}

impl WorkerSettings {
    /// The backoff for transient faults (broker or database away): from
    /// `retry_min_delay` to `retry_max_delay`, jittered, never giving up.
    pub fn backoff(&self) -> backon::ExponentialBackoff {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::default()
            .with_min_delay(self.retry_min_delay)
            .with_max_delay(self.retry_max_delay)
            .with_jitter()
            .without_max_times()
            .build()
    }
}

/// Database settings.
#[derive(Clone)]
pub struct DatabaseSettings {
    /// Connection URL (`database.url`, `database.url_file`); may hold
    /// credentials: a secret. TLS is set in it as libpq does
    /// (`sslmode=verify-full&sslrootcert=...`).
    pub url: SecretString,
    /// Parsed connection options (with `database.password_file` applied).
    pub options: PgConnectOptions,
    /// Pool size.
    pub max_connections: u32,
    /// How long acquiring a pooled connection may take.
    pub acquire_timeout: Duration,
    /// Create the database at start-up when missing.
    pub create_if_missing: bool,
    /// Statements writing new documents' first versions at once.
    pub write_slots: usize,
    /// Largest number of first versions one such statement writes.
    pub write_batch: usize,
    /// The role the worker runs as, made a member of
    /// `chunk_worker_service` by `chunk-worker migrate`
    /// (`database.service_role`; `None`: the role that connects).
    pub service_role: Option<String>,
}

/// `PgConnectOptions` prints its password in Debug: shown as [`describe`]
/// instead, the secret URL as `[REDACTED]`.
///
/// [`describe`]: DatabaseSettings::describe
impl std::fmt::Debug for DatabaseSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseSettings")
            .field("url", &self.url)
            .field("server", &self.describe())
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("create_if_missing", &self.create_if_missing)
            .field("write_slots", &self.write_slots)
            .field("write_batch", &self.write_batch)
            .field("service_role", &self.service_role)
            .finish()
    }
}

impl DatabaseSettings {
    /// `postgres://user@host:port/database`: where the worker connects,
    /// without the password, for messages to a person (and `psql`).
    pub fn describe(&self) -> String {
        format!(
            "postgres://{}@{}:{}/{}",
            self.options.get_username(),
            self.options.get_host(),
            self.options.get_port(),
            self.options.get_database().unwrap_or("")
        )
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

impl TryFrom<RawWorker> for WorkerSettings {
    type Error = ConfigError;

    fn try_from(raw: RawWorker) -> Result<Self, ConfigError> {
        if raw.retry_min_delay_ms == 0 {
            return Err(invalid("worker.retry_min_delay_ms", "must be positive"));
        }
        if raw.retry_max_delay_ms < raw.retry_min_delay_ms {
            return Err(invalid(
                "worker.retry_max_delay_ms",
                format!(
                    "must be at least worker.retry_min_delay_ms ({}), got {}",
                    raw.retry_min_delay_ms, raw.retry_max_delay_ms
                ),
            ));
        }
        if raw.memory_budget_mb == 0 {
            return Err(invalid("worker.memory_budget_mb", "must be positive"));
        }
        Ok(Self {
            concurrency: raw.concurrency as usize,
            memory_budget: raw.memory_budget_mb.saturating_mul(1024 * 1024),
            retry_min_delay: Duration::from_millis(raw.retry_min_delay_ms),
            retry_max_delay: Duration::from_millis(raw.retry_max_delay_ms),
            source_retry: Duration::from_millis(raw.source_retry_ms),
        })
    }
}

impl TryFrom<RawDatabase> for DatabaseSettings {
    type Error = ConfigError;

    fn try_from(raw: RawDatabase) -> Result<Self, ConfigError> {
        let url = match secret_file("database.url_file", &raw.url_file)? {
            Some(url) => url,
            None => SecretString::from(raw.url),
        };
        // Parse errors never quote the URL: it may hold a password.
        let mut options = PgConnectOptions::from_str(url.expose_secret()).map_err(|_| {
            invalid(
                "database.url",
                "not a Postgres URL (postgres://user@host:port/database)",
            )
        })?;
        if let Some(password) = secret_file("database.password_file", &raw.password_file)? {
            options = options.password(password.expose_secret());
        }
        if options.get_database().is_none_or(str::is_empty) {
            return Err(invalid("database.url", "must name a database"));
        }
        if raw.max_connections == 0 {
            return Err(invalid("database.max_connections", "must be positive"));
        }
        if raw.acquire_timeout_ms == 0 {
            return Err(invalid("database.acquire_timeout_ms", "must be positive"));
        }
        if raw.write_slots == 0 || raw.write_slots > raw.max_connections {
            return Err(invalid(
                "database.write_slots",
                "must be between 1 and database.max_connections",
            ));
        }
        if !(1..=64).contains(&raw.write_batch) {
            return Err(invalid("database.write_batch", "must be between 1 and 64"));
        }
        Ok(Self {
            url,
            options,
            max_connections: raw.max_connections,
            acquire_timeout: Duration::from_millis(raw.acquire_timeout_ms),
            create_if_missing: raw.create_if_missing,
            write_slots: raw.write_slots as usize,
            write_batch: raw.write_batch as usize,
            service_role: Some(raw.service_role.trim().to_owned()).filter(|r| !r.is_empty()),
        })
    }
}

impl TryFrom<RawOutbox> for OutboxSettings {
    type Error = ConfigError;

    fn try_from(raw: RawOutbox) -> Result<Self, ConfigError> {
        if raw.poll_interval_ms == 0 {
            return Err(invalid("outbox.poll_interval_ms", "must be positive"));
        }
        if !(1..=10_000).contains(&raw.batch_size) {
            return Err(invalid(
                "outbox.batch_size",
                format!("must be 1..=10000, got {}", raw.batch_size),
            ));
        }
        Ok(Self {
            poll_interval: Duration::from_millis(raw.poll_interval_ms),
            batch_size: i64::from(raw.batch_size),
            flush_timeout: Duration::from_millis(raw.flush_timeout_ms),
            retention: (raw.retention_hours > 0)
                .then(|| Duration::from_secs(u64::from(raw.retention_hours) * 3600)),
        })
    }
}

impl TryFrom<RawLog> for LogSettings {
    type Error = ConfigError;

    fn try_from(raw: RawLog) -> Result<Self, ConfigError> {
        let format = match raw.format.as_str() {
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
        if tracing_subscriber::EnvFilter::try_new(&raw.level).is_err() {
            return Err(invalid(
                "log.level",
                format!("not a tracing filter directive: {:?}", raw.level),
            ));
        }
        Ok(Self {
            format,
            level: raw.level,
        })
    }
}

/// `topology.prefix`: at most 64 of `[A-Za-z0-9._-]`.
pub(super) fn topology_prefix(prefix: String) -> Result<String, ConfigError> {
    let ok = prefix.len() <= 64
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if ok {
        Ok(prefix)
    } else {
        Err(invalid(
            "topology.prefix",
            format!("must be at most 64 of [A-Za-z0-9._-], got {prefix:?}"),
        ))
    }
}

/// `http.addr`: a socket address.
pub(super) fn http_addr(addr: &str) -> Result<SocketAddr, ConfigError> {
    SocketAddr::from_str(addr)
        .map_err(|e| invalid("http.addr", format!("not a socket address ({e}): {addr:?}")))
}

/// `source.root`: an absolute path.
pub(super) fn source_root(root: &str) -> Result<PathBuf, ConfigError> {
    let path = PathBuf::from(root);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(invalid(
            "source.root",
            format!("must be an absolute path, got {root:?}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(e: ConfigError) -> String {
        match e {
            ConfigError::Invalid { key, .. } => key.to_owned(),
            other => format!("{other}"),
        }
    }

    #[test]
    fn each_section_names_its_bad_key() {
        let db = |url: &str| RawDatabase {
            url: url.into(),
            url_file: String::new(),
            password_file: String::new(),
            max_connections: 1,
            acquire_timeout_ms: 1,
            create_if_missing: false,
            write_slots: 1,
            write_batch: 1,
            service_role: String::new(),
        };
        let e = DatabaseSettings::try_from(db("postgres://h:5432")).err();
        assert_eq!(e.map(key_of).as_deref(), Some("database.url"));
        let log = |format: &str| RawLog {
            format: format.into(),
            level: "info".into(),
        };
        let e = LogSettings::try_from(log("xml")).err();
        assert_eq!(e.map(key_of).as_deref(), Some("log.format"));
        assert_eq!(
            topology_prefix("a b".into()).err().map(key_of).as_deref(),
            Some("topology.prefix")
        );
        assert_eq!(
            source_root("relative/dir").err().map(key_of).as_deref(),
            Some("source.root")
        );
        assert!(http_addr("127.0.0.1:0").is_ok());
    }
}
