//! `[api]`: the synchronous chunking API (`POST /v1/chunk`, issue 14). Off
//! unless a key to verify tokens with is configured; a shared HS256 secret
//! shorter than 32 bytes is refused at start-up.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::error::{invalid, ConfigError};
use super::secrets::secret_file;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawApi {
    #[serde(default)]
    enabled: bool,
    #[serde(default = "default_deadline_ms")]
    deadline_ms: u64,
    #[serde(default)]
    max_concurrent: u32,
    #[serde(default)]
    jwt: RawJwt,
    #[serde(default)]
    rate_limits: RawRateLimits,
}

fn default_deadline_ms() -> u64 {
    10_000
}

impl Default for RawApi {
    fn default() -> Self {
        Self {
            enabled: false,
            deadline_ms: default_deadline_ms(),
            max_concurrent: 0,
            jwt: RawJwt::default(),
            rate_limits: RawRateLimits::default(),
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJwt {
    #[serde(default)]
    hs256_secret: String,
    #[serde(default)]
    hs256_secret_file: String,
    #[serde(default)]
    public_keys_file: String,
    #[serde(default)]
    issuer: String,
    #[serde(default)]
    audience: String,
    #[serde(default)]
    tenant_claim: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRateLimits {
    #[serde(default = "per_tenant")]
    per_tenant_per_minute: u32,
    #[serde(default = "per_user")]
    per_user_per_minute: u32,
    #[serde(default = "burst")]
    burst: u32,
}

fn per_tenant() -> u32 {
    100
}
fn per_user() -> u32 {
    50
}
fn burst() -> u32 {
    20
}

impl Default for RawRateLimits {
    fn default() -> Self {
        Self {
            per_tenant_per_minute: per_tenant(),
            per_user_per_minute: per_user(),
            burst: burst(),
        }
    }
}

/// `[api]`, validated.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Whether `/v1/*` is served (`api.enabled` and a key configured).
    pub enabled: bool,
    /// How long one chunking operation may take before it is abandoned
    /// (503 with `Retry-After`).
    pub deadline: Duration,
    /// Chunking operations running at once (the bounded blocking pool);
    /// `api.max_concurrent`, 0 = twice the cores.
    pub max_concurrent: usize,
    /// How tokens are verified.
    pub jwt: JwtSettings,
    /// Per-tenant and per-user rate limits.
    pub rate_limits: RateLimits,
}

/// Token verification.
#[derive(Debug, Clone)]
pub struct JwtSettings {
    /// HS256 shared secret (at least 32 bytes).
    pub hs256_secret: Option<SecretString>,
    /// PEM public keys (RS256/ES256) or a JWKS JSON file, reloaded when it
    /// changes.
    pub public_keys_file: Option<PathBuf>,
    /// Required `iss`, when set.
    pub issuer: Option<String>,
    /// Required `aud`, when set.
    pub audience: Option<String>,
    /// The claim naming the caller's tenant (`tenant_id`).
    pub tenant_claim: String,
}

/// GCRA quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Operations per minute per tenant.
    pub per_tenant_per_minute: u32,
    /// Operations per minute per user (`sub`).
    pub per_user_per_minute: u32,
    /// Operations allowed at once above the steady rate.
    pub burst: u32,
}

/// The shortest HS256 secret accepted (RFC 7518 3.2: a key of the hash's size).
pub const MIN_HS256_SECRET_BYTES: usize = 32;

pub(super) fn validate_api(raw: RawApi) -> Result<ApiSettings, ConfigError> {
    let secret = match secret_file("api.jwt.hs256_secret_file", &raw.jwt.hs256_secret_file)? {
        Some(s) => Some(s),
        None if raw.jwt.hs256_secret.is_empty() => None,
        None => Some(SecretString::from(raw.jwt.hs256_secret)),
    };
    if let Some(s) = &secret {
        if s.expose_secret().len() < MIN_HS256_SECRET_BYTES {
            return Err(invalid(
                "api.jwt.hs256_secret",
                format!(
                    "must be at least {MIN_HS256_SECRET_BYTES} bytes, got {}",
                    s.expose_secret().len()
                ),
            ));
        }
    }
    let keys = raw.jwt.public_keys_file.trim();
    let public_keys_file = if keys.is_empty() {
        None
    } else {
        let path = PathBuf::from(keys);
        if !path.is_file() {
            return Err(invalid(
                "api.jwt.public_keys_file",
                format!("{keys} is not a readable file"),
            ));
        }
        Some(path)
    };
    let has_key = secret.is_some() || public_keys_file.is_some();
    if raw.enabled && !has_key {
        return Err(invalid(
            "api.enabled",
            "the API needs api.jwt.hs256_secret(_file) or api.jwt.public_keys_file",
        ));
    }
    if raw.deadline_ms == 0 {
        return Err(invalid("api.deadline_ms", "must be positive"));
    }
    let r = raw.rate_limits;
    for (key, v) in [
        (
            "api.rate_limits.per_tenant_per_minute",
            r.per_tenant_per_minute,
        ),
        ("api.rate_limits.per_user_per_minute", r.per_user_per_minute),
        ("api.rate_limits.burst", r.burst),
    ] {
        if v == 0 {
            return Err(invalid(key, "must be positive"));
        }
    }
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let tenant_claim = raw.jwt.tenant_claim.trim();
    Ok(ApiSettings {
        enabled: raw.enabled && has_key,
        deadline: Duration::from_millis(raw.deadline_ms),
        max_concurrent: if raw.max_concurrent == 0 {
            cores * 2
        } else {
            raw.max_concurrent as usize
        },
        jwt: JwtSettings {
            hs256_secret: secret,
            public_keys_file,
            issuer: Some(raw.jwt.issuer.trim().to_owned()).filter(|s| !s.is_empty()),
            audience: Some(raw.jwt.audience.trim().to_owned()).filter(|s| !s.is_empty()),
            tenant_claim: if tenant_claim.is_empty() {
                "tenant_id".to_owned()
            } else {
                tenant_claim.to_owned()
            },
        },
        rate_limits: RateLimits {
            per_tenant_per_minute: r.per_tenant_per_minute,
            per_user_per_minute: r.per_user_per_minute,
            burst: r.burst,
        },
    })
}
