//! Bearer tokens: a JWT signed with the configured HS256 secret or one of
//! the configured RS256/ES256 public keys (PEM blocks, or a JWKS document;
//! the file is read again when it changes), with `exp`/`nbf` and the
//! configured issuer and audience checked, then the `ingest:write` scope
//! (space-separated `scope`, or an `scp` array) and the tenant claim. The
//! token itself is never logged or echoed.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use secrecy::ExposeSecret;
use serde_json::Value;

use super::problem::{Kind, Problem};
use crate::config::JwtSettings;

/// The scope a caller needs.
pub const SCOPE: &str = "ingest:write";

/// Who is calling, from a verified token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The tenant claim.
    pub tenant_id: String,
    /// `sub`.
    pub user_id: String,
}

/// Public keys read from a file, with the file's modification time.
#[derive(Default)]
struct KeyFile {
    modified: Option<SystemTime>,
    keys: Vec<(Option<String>, Algorithm, DecodingKey)>,
}

/// Verifies bearer tokens.
pub struct Verifier {
    settings: JwtSettings,
    hs256: Option<DecodingKey>,
    keys: Mutex<KeyFile>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("hs256", &self.hs256.is_some())
            .field("public_keys_file", &self.settings.public_keys_file)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier for `settings`; the key file is read now, so a broken one
    /// stops start-up.
    pub fn new(settings: &JwtSettings) -> Result<Self, String> {
        let hs256 = settings
            .hs256_secret
            .as_ref()
            .map(|s| DecodingKey::from_secret(s.expose_secret().as_bytes()));
        let v = Self {
            settings: settings.clone(),
            hs256,
            keys: Mutex::new(KeyFile::default()),
        };
        if let Some(path) = &settings.public_keys_file {
            let loaded = load_keys(path)?;
            if let Ok(mut k) = v.keys.lock() {
                *k = loaded;
            }
        }
        Ok(v)
    }

    /// The caller of a request with this `Authorization` header value.
    pub fn verify(&self, authorization: Option<&str>) -> Result<Caller, Problem> {
        let unauthorized = |d: &str| Problem::new(Kind::Unauthorized, d);
        let token = authorization
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unauthorized("send Authorization: Bearer <JWT>"))?;
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| unauthorized("the bearer token is not a JWT"))?;
        let key = self.key_for(header.alg, header.kid.as_deref())?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = 30;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp"]);
        if let Some(iss) = &self.settings.issuer {
            validation.set_issuer(&[iss]);
        }
        match &self.settings.audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        let data = jsonwebtoken::decode::<Value>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as E;
            let why = match e.kind() {
                E::ExpiredSignature => "the token has expired",
                E::ImmatureSignature => "the token is not valid yet (nbf)",
                E::InvalidIssuer => "the token's issuer is not the configured one",
                E::InvalidAudience => "the token's audience is not the configured one",
                E::InvalidSignature => "the token's signature does not verify",
                E::MissingRequiredClaim(_) => "the token has no exp claim",
                _ => "the token does not verify",
            };
            unauthorized(why)
        })?;
        let claims = data.claims;
        let scopes: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(s)), _) => s.split_whitespace().collect(),
            (_, Some(Value::Array(a))) => a.iter().filter_map(Value::as_str).collect(),
            (_, Some(Value::String(s))) => s.split_whitespace().collect(),
            _ => Vec::new(),
        };
        if !scopes.contains(&SCOPE) {
            return Err(Problem::new(
                Kind::Forbidden,
                format!("the token lacks the {SCOPE} scope"),
            ));
        }
        let tenant_id = claims
            .get(&self.settings.tenant_claim)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                Problem::new(
                    Kind::Forbidden,
                    format!("the token has no {} claim", self.settings.tenant_claim),
                )
            })?
            .to_owned();
        let user_id = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        Ok(Caller { tenant_id, user_id })
    }

    fn key_for(&self, alg: Algorithm, kid: Option<&str>) -> Result<DecodingKey, Problem> {
        let refused = || {
            Problem::new(
                Kind::Unauthorized,
                format!("no configured key verifies {alg:?} tokens"),
            )
        };
        if alg == Algorithm::HS256 {
            return self.hs256.clone().ok_or_else(refused);
        }
        if !matches!(alg, Algorithm::RS256 | Algorithm::ES256) {
            return Err(refused());
        }
        let Some(path) = &self.settings.public_keys_file else {
            return Err(refused());
        };
        let mut keys = self.keys.lock().map_err(|_| refused())?;
        // Reloaded when the file changed (a key rotation); a broken new file
        // keeps the old keys.
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if modified != keys.modified {
            match load_keys(path) {
                Ok(k) => *keys = k,
                Err(e) => {
                    tracing::warn!(error = %e, "api.jwt.public_keys_file: keeping the previous keys")
                }
            }
        }
        keys.keys
            .iter()
            .find(|(k, a, _)| *a == alg && (kid.is_none() || k.is_none() || k.as_deref() == kid))
            .map(|(_, _, key)| key.clone())
            .ok_or_else(refused)
    }
}

fn load_keys(path: &PathBuf) -> Result<KeyFile, String> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("api.jwt.public_keys_file {}: {e}", path.display()))?;
    let mut keys = Vec::new();
    if text.trim_start().starts_with('{') {
        let set: JwkSet = serde_json::from_str(&text)
            .map_err(|e| format!("api.jwt.public_keys_file: not a JWKS document: {e}"))?;
        for jwk in &set.keys {
            let alg = match &jwk.algorithm {
                jsonwebtoken::jwk::AlgorithmParameters::RSA(_) => Algorithm::RS256,
                jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(_) => Algorithm::ES256,
                _ => continue,
            };
            let key = DecodingKey::from_jwk(jwk)
                .map_err(|e| format!("api.jwt.public_keys_file: a key does not load: {e}"))?;
            keys.push((jwk.common.key_id.clone(), alg, key));
        }
    } else {
        for block in text.split_inclusive("-----END PUBLIC KEY-----") {
            let Some(start) = block.find("-----BEGIN PUBLIC KEY-----") else {
                continue;
            };
            let pem = &block[start..];
            if let Ok(k) = DecodingKey::from_rsa_pem(pem.as_bytes()) {
                keys.push((None, Algorithm::RS256, k));
            } else if let Ok(k) = DecodingKey::from_ec_pem(pem.as_bytes()) {
                keys.push((None, Algorithm::ES256, k));
            } else {
                return Err(
                    "api.jwt.public_keys_file: a PEM block is neither an RSA nor an EC public key"
                        .into(),
                );
            }
        }
    }
    if keys.is_empty() {
        return Err(format!(
            "api.jwt.public_keys_file {}: no RS256 or ES256 public key in it",
            path.display()
        ));
    }
    Ok(KeyFile { modified, keys })
}
