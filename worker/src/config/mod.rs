//! Layered settings: raw values deserialized from `config/default.toml`, an
//! optional environment file and `CHUNK_WORKER__<SECTION>__<KEY>` variables,
//! then validated once into [`Settings`]. A bad value stops start-up with a
//! message naming the key.

mod amqp;
mod api;
mod error;
mod links;
mod secrets;
mod sections;
mod telemetry;

use amqp::RawAmqp;
pub use amqp::{AmqpSettings, AmqpTls, BrokerNode};
use api::{validate_api, RawApi};
pub use api::{ApiSettings, JwtSettings, RateLimits};
use error::invalid;
pub use error::ConfigError;
use links::{validate_links, RawLinks};
pub use links::{LinkSettings, TenantLinkSettings};
pub use sections::{DatabaseSettings, LogFormat, LogSettings, OutboxSettings, WorkerSettings};
use sections::{RawDatabase, RawLog, RawOutbox, RawWorker};
pub use telemetry::TelemetrySettings;
use telemetry::{validate_telemetry, RawTelemetry};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The defaults, compiled in so the binary runs from any directory; a
/// `default.toml` in the config directory, when present, is layered on top.
const EMBEDDED_DEFAULTS: &str = include_str!("../../../config/default.toml");

/// Environment variable selecting the environment file (`config/<env>.toml`).
pub const ENV_SELECTOR: &str = "CHUNK_WORKER_ENV";
/// Environment variable overriding the config directory (default `./config`).
pub const CONFIG_DIR_VAR: &str = "CHUNK_WORKER_CONFIG_DIR";
/// Prefix of setting overrides: `CHUNK_WORKER__AMQP__URL`.
pub const ENV_PREFIX: &str = "CHUNK_WORKER";

#[derive(Deserialize)]
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
    #[serde(default)]
    semantic: crate::semantic::RawSemantic,
    #[serde(default)]
    api: RawApi,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    prefix: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    addr: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_document_bytes: u64,
    #[serde(default = "default_max_operation_bytes")]
    max_operation_bytes: u64,
}

fn default_max_operation_bytes() -> u64 {
    2 << 30
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    root: String,
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
    /// Largest estimated memory of one API operation (`limits.max_operation_bytes`).
    pub max_operation_bytes: u64,
    /// The synchronous API.
    pub api: ApiSettings,
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
        let prefetch = raw.amqp.prefetch;
        let amqp = AmqpSettings::try_from(raw.amqp)?;
        let worker = WorkerSettings::try_from(raw.worker)?;
        if worker.concurrency == 0 || worker.concurrency > prefetch.max(1) as usize {
            return Err(invalid(
                "worker.concurrency",
                format!(
                    "must be 1..=amqp.prefetch ({prefetch}), got {}",
                    worker.concurrency
                ),
            ));
        }
        let database = DatabaseSettings::try_from(raw.database)?;
        let topology_prefix = sections::topology_prefix(raw.topology.prefix)?;
        let http_addr = sections::http_addr(&raw.http.addr)?;
        if raw.limits.max_document_bytes == 0 {
            return Err(invalid("limits.max_document_bytes", "must be positive"));
        }
        let source_root = sections::source_root(&raw.source.root)?;
        let outbox = OutboxSettings::try_from(raw.outbox)?;
        let log = LogSettings::try_from(raw.log)?;
        let links = validate_links(raw.links)?;
        let telemetry = validate_telemetry(raw.telemetry)?;
        let chunking =
            crate::profiles::validate(raw.chunking, raw.profiles, raw.experimental, raw.semantic)?;
        Ok(Self {
            amqp,
            worker,
            database,
            topology_prefix,
            http_addr,
            max_document_bytes: raw.limits.max_document_bytes,
            max_operation_bytes: raw.limits.max_operation_bytes,
            api: validate_api(raw.api)?,
            source_root,
            outbox,
            log,
            telemetry,
            links,
            chunking,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use secrecy::ExposeSecret;

    use super::*;

    /// Fails to compile when a type implements `Debug`: the trait below has
    /// two blanket impls, and a call through it is ambiguous exactly when
    /// the second one applies too (the `static_assertions` device).
    macro_rules! assert_no_debug {
        ($($t:ty),+) => {$({
            trait AmbiguousIfDebug<A> {
                fn some_item() {}
            }
            impl<T: ?Sized> AmbiguousIfDebug<()> for T {}
            #[allow(dead_code)]
            struct Invalid;
            impl<T: ?Sized + std::fmt::Debug> AmbiguousIfDebug<Invalid> for T {}
            let _ = <$t as AmbiguousIfDebug<_>>::some_item;
        })+};
    }

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
        assert_eq!(
            s.amqp.nodes[0].url.expose_secret(),
            "amqp://guest:guest@127.0.0.1:5672/%2f"
        );
        assert_eq!(s.amqp.nodes.len(), 1);
        assert_eq!(
            s.database.url.expose_secret(),
            "postgres://postgres@127.0.0.1:5432/chunk_worker?sslmode=disable"
        );
        assert_eq!(s.topology_prefix, "");
        assert_eq!(s.http_addr.to_string(), "127.0.0.1:9464");
        assert_eq!(s.max_document_bytes, 10 * 1024 * 1024);
    }

    #[test]
    fn secrets_come_from_files_and_never_show_in_debug() {
        let dir = std::env::temp_dir().join(format!("cw-config-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, content: &str| {
            let p = dir.join(name);
            std::fs::write(&p, content).unwrap();
            p.display().to_string()
        };
        let db_url = file(
            "db-url",
            "postgres://app:url-secret-1@db.internal:5432/chunks\n",
        );
        let db_pw = file("db-pw", "file-secret-2\n");
        let amqp_pw = file("amqp-pw", "amqp-secret-3");
        let s = load(&[
            ("CHUNK_WORKER__DATABASE__URL_FILE", db_url.as_str()),
            ("CHUNK_WORKER__DATABASE__PASSWORD_FILE", db_pw.as_str()),
            (
                "CHUNK_WORKER__AMQP__URL",
                "amqp://app:url-secret-4@mq.internal:5672/%2f",
            ),
            ("CHUNK_WORKER__AMQP__PASSWORD_FILE", amqp_pw.as_str()),
            (
                "CHUNK_WORKER__API__JWT__HS256_SECRET",
                "jwt-secret-6-0123456789abcdef0123456789",
            ),
        ])
        .unwrap();
        assert_eq!(s.database.options.get_host(), "db.internal");
        assert_eq!(
            s.database.describe(),
            "postgres://app@db.internal:5432/chunks"
        );
        assert_eq!(
            s.amqp.nodes[0].url.expose_secret(),
            "amqp://app:amqp-secret-3@mq.internal:5672/%2f"
        );
        let debug = format!("{s:?}");
        for secret in [
            "url-secret-1",
            "file-secret-2",
            "amqp-secret-3",
            "url-secret-4",
            "jwt-secret-6",
        ] {
            assert!(!debug.contains(secret), "{secret} in {debug}");
        }
        // The raw settings (plain strings, secrets included, as read) have
        // no Debug at all: nothing can print them.
        assert_no_debug!(RawSettings, RawAmqp, RawDatabase, api::RawApi);
        // A file that cannot be read names its key.
        let e = load(&[("CHUNK_WORKER__AMQP__URL_FILE", "/nonexistent/amqp-url")]).unwrap_err();
        assert!(e.to_string().contains("amqp.url_file"), "{e}");
        // A malformed URL from a file is refused without quoting it.
        let bad = file("bad-url", "postgres://app:url-secret-5@db:notaport/x");
        let e = load(&[("CHUNK_WORKER__DATABASE__URL_FILE", bad.as_str())]).unwrap_err();
        assert!(!e.to_string().contains("url-secret-5"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
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
        let s = load(&[(
            "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT",
            "https://collector:4318",
        )])
        .unwrap();
        assert_eq!(
            s.telemetry.otlp_traces_endpoint.as_deref(),
            Some("https://collector:4318/v1/traces")
        );
        let e = load(&[(
            "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT",
            "grpc://collector:4317",
        )])
        .unwrap_err();
        assert!(e.to_string().contains("telemetry.otlp_endpoint"), "{e}");
        let e = load(&[(
            "CHUNK_WORKER__TELEMETRY__OTLP_CA_FILE",
            "/nonexistent/ca.pem",
        )])
        .unwrap_err();
        assert!(e.to_string().contains("telemetry.otlp_ca_file"), "{e}");
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
        let s = load(&[("CHUNK_WORKER__WORKER__MEMORY_BUDGET_MB", "3")]).unwrap();
        assert_eq!(s.worker.memory_budget, 3 * 1024 * 1024);
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
            (
                "CHUNK_WORKER__WORKER__MEMORY_BUDGET_MB",
                "0",
                "worker.memory_budget_mb",
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
