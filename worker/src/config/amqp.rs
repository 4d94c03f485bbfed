//! `[amqp]`: the broker nodes (`amqp.urls`, or the one `amqp.url`), their
//! credentials from files, TLS, prefetch, delivery limit and retry delay.
//!
//! Which nodes, first rule that applies:
//! 1. `amqp.urls_file`: a file of URLs, one a line or comma-separated;
//! 2. `amqp.urls`: a TOML array, or one comma-separated string (as an
//!    environment variable gives it: `CHUNK_WORKER__AMQP__URLS=a,b,c`);
//! 3. `amqp.url_file`, then `amqp.url`: the one node of a single broker.
//!
//! `amqp.password_file` replaces the password of every node's URL. Errors
//! name the key and the entry (`amqp.urls` entry 2), never the URL: it may
//! hold a password.

use std::str::FromStr;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::error::{invalid, ConfigError};
use super::secrets::{pem_file, secret_file, with_password};

/// Most nodes `amqp.urls` may list (a node is a label value of
/// `chunking_broker_node`: bounded).
pub const MAX_NODES: usize = 32;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAmqp {
    pub(super) url: String,
    #[serde(default)]
    pub(super) urls: RawUrls,
    #[serde(default)]
    pub(super) urls_file: String,
    #[serde(default)]
    pub(super) url_file: String,
    #[serde(default)]
    pub(super) password_file: String,
    #[serde(default)]
    pub(super) tls_ca_file: String,
    #[serde(default)]
    pub(super) tls_cert_file: String,
    #[serde(default)]
    pub(super) tls_key_file: String,
    pub(super) prefetch: u32,
    pub(super) delivery_limit: u32,
    pub(super) retry_delay_ms: u64,
}

/// `amqp.urls` as read: a TOML array or one comma-separated string. No
/// `Debug`: the URLs may hold passwords.
#[derive(Default)]
pub(super) struct RawUrls(pub(super) Vec<String>);

impl<'de> Deserialize<'de> for RawUrls {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        Ok(Self(match Raw::deserialize(d)? {
            Raw::One(s) => split_list(&s),
            Raw::Many(v) => v
                .into_iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        }))
    }
}

/// The entries of a list given as text: split at commas and line ends,
/// trimmed, empty ones dropped (a comma inside a URL is written `%2C`).
fn split_list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Broker settings.
#[derive(Debug, Clone)]
pub struct AmqpSettings {
    /// The broker nodes, in the order they are tried (`amqp.urls`, or the
    /// one `amqp.url`); never empty.
    pub nodes: Vec<BrokerNode>,
    /// TLS of `amqps://` URIs.
    pub tls: AmqpTls,
    /// basic.qos prefetch count.
    pub prefetch: u16,
    /// Deliveries after which the worker dead-letters as `DELIVERY_LIMIT`.
    pub delivery_limit: u32,
    /// TTL of the retry queue.
    pub retry_delay: Duration,
}

/// One broker node: its URI (a secret: it may hold credentials) and a
/// label without them, `host:port`, for logs and metrics.
#[derive(Clone)]
pub struct BrokerNode {
    /// The AMQP URI, credentials included.
    pub url: SecretString,
    /// `host:port`: what logs and `chunking_broker_node{node}` show.
    pub label: String,
}

impl std::fmt::Debug for BrokerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerNode")
            .field("label", &self.label)
            .field("url", &self.url)
            .finish()
    }
}

/// TLS of an `amqps://` broker URI: the server certificate is verified
/// against `ca_pem` (else the system's roots) and the URI's host name; a
/// client certificate is presented when both halves are given.
#[derive(Debug, Clone, Default)]
pub struct AmqpTls {
    /// CA certificates (PEM) that sign the broker's certificate.
    pub ca_pem: Option<String>,
    /// Client certificate chain (PEM) for mutual TLS.
    pub cert_pem: Option<String>,
    /// Its private key (PEM, PKCS#8): a secret.
    pub key_pem: Option<SecretString>,
}

/// The node URLs and the key to name in their errors.
fn node_urls(raw: &RawAmqp) -> Result<(&'static str, Vec<SecretString>), ConfigError> {
    let list_given = !raw.urls.0.is_empty() || !raw.urls_file.trim().is_empty();
    if list_given && !raw.url_file.trim().is_empty() {
        return Err(invalid(
            "amqp.urls",
            "amqp.url_file and a node list (amqp.urls or amqp.urls_file) are both set: keep one",
        ));
    }
    if let Some(text) = secret_file("amqp.urls_file", &raw.urls_file)? {
        let urls = split_list(text.expose_secret());
        return Ok((
            "amqp.urls_file",
            urls.into_iter().map(SecretString::from).collect(),
        ));
    }
    if !raw.urls.0.is_empty() {
        let urls = raw.urls.0.iter().map(|u| SecretString::from(u.clone()));
        return Ok(("amqp.urls", urls.collect()));
    }
    match secret_file("amqp.url_file", &raw.url_file)? {
        Some(url) => Ok(("amqp.url", vec![url])),
        None => Ok(("amqp.url", vec![SecretString::from(raw.url.clone())])),
    }
}

/// The URL's `host:port`, IPv6 hosts in brackets.
fn label(uri: &lapin::uri::AMQPUri) -> String {
    let host = &uri.authority.host;
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{}", uri.authority.port)
    } else {
        format!("{host}:{}", uri.authority.port)
    }
}

/// The validated node list (credentials from `amqp.password_file` applied)
/// and whether its URIs are `amqps://`.
fn nodes(raw: &RawAmqp) -> Result<(Vec<BrokerNode>, bool), ConfigError> {
    let (key, urls) = node_urls(raw)?;
    if urls.len() > MAX_NODES {
        return Err(invalid(
            key,
            format!("lists {} nodes; at most {MAX_NODES}", urls.len()),
        ));
    }
    let password = secret_file("amqp.password_file", &raw.password_file)?;
    let many = urls.len() > 1;
    let entry = |i: usize| {
        if many {
            format!(" (entry {})", i + 1)
        } else {
            String::new()
        }
    };
    let mut nodes: Vec<BrokerNode> = Vec::with_capacity(urls.len());
    let mut tls = None;
    for (i, mut url) in urls.into_iter().enumerate() {
        if let Some(password) = &password {
            url = with_password(key, url.expose_secret(), password.expose_secret())?;
        }
        // Parse errors never quote the URI: it may hold a password.
        let uri = lapin::uri::AMQPUri::from_str(url.expose_secret()).map_err(|_| {
            invalid(
                key,
                format!("not an AMQP URI (amqp:// or amqps://){}", entry(i)),
            )
        })?;
        let uses_tls = matches!(uri.scheme, lapin::uri::AMQPScheme::AMQPS);
        if *tls.get_or_insert(uses_tls) != uses_tls {
            return Err(invalid(
                key,
                format!("mixes amqp:// and amqps:// nodes{}", entry(i)),
            ));
        }
        let label = label(&uri);
        if nodes.iter().any(|n| n.label == label) {
            return Err(invalid(
                key,
                format!("names the node {label} twice{}", entry(i)),
            ));
        }
        nodes.push(BrokerNode { url, label });
    }
    match tls {
        Some(tls) => Ok((nodes, tls)),
        None => Err(invalid(key, "names no broker node")),
    }
}

impl TryFrom<RawAmqp> for AmqpSettings {
    type Error = ConfigError;

    fn try_from(raw: RawAmqp) -> Result<Self, ConfigError> {
        let (nodes, uses_tls) = nodes(&raw)?;
        let tls = AmqpTls {
            ca_pem: pem_file("amqp.tls_ca_file", &raw.tls_ca_file)?,
            cert_pem: pem_file("amqp.tls_cert_file", &raw.tls_cert_file)?,
            key_pem: secret_file("amqp.tls_key_file", &raw.tls_key_file)?,
        };
        if tls.cert_pem.is_some() != tls.key_pem.is_some() {
            return Err(invalid(
                "amqp.tls_cert_file",
                "a client certificate needs both amqp.tls_cert_file and amqp.tls_key_file",
            ));
        }
        if !uses_tls && (tls.ca_pem.is_some() || tls.cert_pem.is_some()) {
            return Err(invalid(
                "amqp.tls_ca_file",
                "TLS files are set but the broker URLs are not amqps://",
            ));
        }
        let prefetch = u16::try_from(raw.prefetch)
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| {
                invalid(
                    "amqp.prefetch",
                    format!("must be 1..=65535, got {}", raw.prefetch),
                )
            })?;
        if !(1..=1000).contains(&raw.delivery_limit) {
            return Err(invalid(
                "amqp.delivery_limit",
                format!("must be 1..=1000, got {}", raw.delivery_limit),
            ));
        }
        if raw.retry_delay_ms == 0 || raw.retry_delay_ms > u64::from(u32::MAX) {
            return Err(invalid(
                "amqp.retry_delay_ms",
                format!("must be 1..=4294967295, got {}", raw.retry_delay_ms),
            ));
        }
        Ok(Self {
            nodes,
            tls,
            prefetch,
            delivery_limit: raw.delivery_limit,
            retry_delay: Duration::from_millis(raw.retry_delay_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    fn raw(url: &str, urls: &[&str]) -> RawAmqp {
        RawAmqp {
            url: url.into(),
            urls: RawUrls(urls.iter().map(|s| (*s).to_owned()).collect()),
            urls_file: String::new(),
            url_file: String::new(),
            password_file: String::new(),
            tls_ca_file: String::new(),
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            prefetch: 16,
            delivery_limit: 5,
            retry_delay_ms: 1000,
        }
    }

    fn labels(s: &AmqpSettings) -> Vec<&str> {
        s.nodes.iter().map(|n| n.label.as_str()).collect()
    }

    fn err(raw: RawAmqp) -> String {
        AmqpSettings::try_from(raw).err().unwrap().to_string()
    }

    #[test]
    fn one_url_is_a_list_of_one_node() {
        let s = AmqpSettings::try_from(raw("amqp://guest:guest@127.0.0.1:5672/%2f", &[])).unwrap();
        assert_eq!(labels(&s), ["127.0.0.1:5672"]);
        assert_eq!(
            s.nodes[0].url.expose_secret(),
            "amqp://guest:guest@127.0.0.1:5672/%2f"
        );
        // The default port of each scheme is in the label.
        let s = AmqpSettings::try_from(raw("amqps://mq.internal/%2f", &[])).unwrap();
        assert_eq!(labels(&s), ["mq.internal:5671"]);
    }

    #[test]
    fn a_node_list_wins_over_the_one_url_and_keeps_its_order() {
        let s = AmqpSettings::try_from(raw(
            "amqp://ignored:5672/%2f",
            &[
                "amqp://u:p@mq-2:5672/%2f",
                "amqp://u:p@mq-0:5673/%2f",
                "amqp://u:p@mq-1.internal:5674/%2f",
            ],
        ))
        .unwrap();
        assert_eq!(labels(&s), ["mq-2:5672", "mq-0:5673", "mq-1.internal:5674"]);
        assert_eq!(s.nodes[1].url.expose_secret(), "amqp://u:p@mq-0:5673/%2f");
    }

    #[test]
    fn a_comma_separated_string_is_a_list() {
        let urls: RawUrls =
            serde_json::from_str("\" amqp://a:5672/%2f ,amqp://b:5672/%2f,\"").unwrap();
        assert_eq!(urls.0, ["amqp://a:5672/%2f", "amqp://b:5672/%2f"]);
        let urls: RawUrls = serde_json::from_str("[\"amqp://a/%2f\", \" \"]").unwrap();
        assert_eq!(urls.0, ["amqp://a/%2f"]);
    }

    #[test]
    fn a_password_file_applies_to_every_node_and_nothing_prints_a_secret() {
        let dir = std::env::temp_dir().join(format!("cw-amqp-nodes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pw = dir.join("pw");
        std::fs::write(&pw, "node-secret-1\n").unwrap();
        let list = dir.join("urls");
        std::fs::write(
            &list,
            "amqp://app:list-secret-2@mq-1:5672/%2f\namqp://app:list-secret-2@mq-2:5672/%2f,\n",
        )
        .unwrap();
        let mut r = raw("amqp://guest:guest@h/%2f", &[]);
        r.urls_file = list.display().to_string();
        r.password_file = pw.display().to_string();
        let s = AmqpSettings::try_from(r).unwrap();
        assert_eq!(labels(&s), ["mq-1:5672", "mq-2:5672"]);
        for n in &s.nodes {
            assert!(n.url.expose_secret().contains(":node-secret-1@"), "{n:?}");
        }
        let debug = format!("{s:?}");
        assert!(
            !debug.contains("secret-1") && !debug.contains("secret-2"),
            "{debug}"
        );
        // The file wins over the plain list.
        let mut r = raw("amqp://h/%2f", &["amqp://other:5672/%2f"]);
        r.urls_file = list.display().to_string();
        assert_eq!(
            labels(&AmqpSettings::try_from(r).unwrap()),
            ["mq-1:5672", "mq-2:5672"]
        );
        // url_file beside a node list is ambiguous.
        let mut r = raw("amqp://h/%2f", &["amqp://other:5672/%2f"]);
        r.url_file = list.display().to_string();
        assert!(err(r).contains("amqp.urls"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_layers_give_the_list_as_an_environment_variable_or_a_toml_array() {
        use std::collections::HashMap;
        let load = |dir: &std::path::Path, env: Option<&str>, vars: &[(&str, &str)]| {
            let vars: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            super::super::Settings::load(dir, env, vars)
        };
        let none = std::path::Path::new("/nonexistent-config-dir");
        // The defaults: the one url, a list of one.
        let s = load(none, None, &[]).unwrap();
        assert_eq!(labels(&s.amqp), ["127.0.0.1:5672"]);
        let s = load(
            none,
            None,
            &[(
                "CHUNK_WORKER__AMQP__URLS",
                "amqp://u:p@127.0.0.1:5680/%2f,amqp://u:p@127.0.0.1:5681/%2f,amqp://u:p@127.0.0.1:5682/%2f",
            )],
        )
        .unwrap();
        assert_eq!(
            labels(&s.amqp),
            ["127.0.0.1:5680", "127.0.0.1:5681", "127.0.0.1:5682"]
        );
        let dir = std::env::temp_dir().join(format!("cw-amqp-layers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("cluster.toml"),
            "[amqp]\nurls = [\"amqp://mq-0:5672/%2f\", \"amqp://mq-1:5672/%2f\"]\n",
        )
        .unwrap();
        let s = load(&dir, Some("cluster"), &[]).unwrap();
        assert_eq!(labels(&s.amqp), ["mq-0:5672", "mq-1:5672"]);
        // A variable wins over the file, as for every key.
        let s = load(
            &dir,
            Some("cluster"),
            &[("CHUNK_WORKER__AMQP__URLS", "amqp://mq-9:5672/%2f")],
        )
        .unwrap();
        assert_eq!(labels(&s.amqp), ["mq-9:5672"]);
        let e = load(
            none,
            None,
            &[("CHUNK_WORKER__AMQP__URLS", "amqp://a/%2f,nope")],
        );
        let e = e.err().unwrap().to_string();
        assert!(e.contains("amqp.urls") && e.contains("entry 2"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_lists_name_the_key_and_entry_never_the_url() {
        let e = err(raw(
            "amqp://h/%2f",
            &["amqp://u:p@a/%2f", "http://u:hunter2@b/"],
        ));
        assert!(e.contains("amqp.urls") && e.contains("entry 2"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
        let e = err(raw("amqp://h/%2f", &["amqp://a/%2f", "amqps://b/%2f"]));
        assert!(e.contains("mixes"), "{e}");
        let e = err(raw(
            "amqp://h/%2f",
            &["amqp://a:5672/%2f", "amqp://x:y@a:5672/other"],
        ));
        assert!(e.contains("a:5672 twice") && !e.contains("x:y"), "{e}");
        let many: Vec<String> = (0..=MAX_NODES)
            .map(|i| format!("amqp://n{i}/%2f"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(err(raw("amqp://h/%2f", &many)).contains("at most"));
        let e = err(raw("nope://h", &[]));
        assert!(e.contains("amqp.url") && !e.contains("entry"), "{e}");
        let mut r = raw("amqp://h/%2f", &[]);
        r.prefetch = 0;
        assert!(err(r).contains("amqp.prefetch"));
    }
}
