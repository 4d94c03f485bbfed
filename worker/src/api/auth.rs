//! Bearer tokens: a JWT signed with the configured HS256 secret or one of
//! the configured RS256/ES256 public keys (PEM blocks, or a JWKS document;
//! the file is read again when it changes). Every key that may have signed
//! the token is tried: the keys with the token's `kid` when it has one (and
//! keys without a `kid`), else every key of the token's algorithm, so a
//! rotation can publish the old and the new key side by side. Then `exp` and
//! `nbf`; when an issuer or an audience is configured, the token must carry
//! that claim and it must match (a token without it is refused, not let
//! through); then the `ingest:write` scope (space-separated `scope`, or an
//! `scp` array), the tenant claim and `sub` (the user, for the per-user rate
//! limit). The token itself is never logged or echoed.

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

/// Public keys read from a file, with the file's modification time and
/// length (a rewrite within the clock's resolution still changes one).
#[derive(Default)]
struct KeyFile {
    modified: Option<(SystemTime, u64)>,
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
        let keys = self.keys_for(header.alg, header.kid.as_deref())?;
        let validation = self.validation(header.alg);
        let mut outcome = Err(jsonwebtoken::errors::ErrorKind::InvalidSignature.into());
        for key in &keys {
            outcome = jsonwebtoken::decode::<Value>(token, key, &validation);
            // The signature is checked before the claims: any other error
            // means this key signed it, and the claims are what is wrong.
            match &outcome {
                Err(e) if *e.kind() == jsonwebtoken::errors::ErrorKind::InvalidSignature => {}
                _ => break,
            }
        }
        let claims = outcome
            .map_err(|e| unauthorized(&refusal(e.kind())))?
            .claims;
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
        // The per-user rate limit needs a user: a token without one would
        // share a bucket with every other such token.
        let user_id = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| unauthorized("the token has no sub claim (the user, for rate limits)"))?
            .to_owned();
        Ok(Caller { tenant_id, user_id })
    }

    /// What a token's claims must satisfy: `exp` always; `iss` and `aud`
    /// present and equal when configured.
    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = 30;
        validation.validate_nbf = true;
        let mut required = vec!["exp"];
        if let Some(iss) = &self.settings.issuer {
            validation.set_issuer(&[iss]);
            required.push("iss");
        }
        match &self.settings.audience {
            Some(aud) => {
                validation.set_audience(&[aud]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        validation
    }

    /// The keys that may have signed a token with `alg` and `kid`, the ones
    /// named by `kid` first.
    fn keys_for(&self, alg: Algorithm, kid: Option<&str>) -> Result<Vec<DecodingKey>, Problem> {
        let refused = || {
            Problem::new(
                Kind::Unauthorized,
                format!("no configured key verifies {alg:?} tokens"),
            )
        };
        if alg == Algorithm::HS256 {
            return self.hs256.clone().map(|k| vec![k]).ok_or_else(refused);
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
        if stamp(path) != keys.modified {
            match load_keys(path) {
                Ok(k) => *keys = k,
                Err(e) => {
                    tracing::warn!(error = %e, "api.jwt.public_keys_file: keeping the previous keys")
                }
            }
        }
        let (mut named, mut others) = (Vec::new(), Vec::new());
        for (key_id, key_alg, key) in &keys.keys {
            if *key_alg != alg {
                continue;
            }
            match (kid, key_id.as_deref()) {
                (Some(want), Some(have)) if want == have => named.push(key.clone()),
                // A token's kid never picks a key published under another.
                (Some(_), Some(_)) => {}
                _ => others.push(key.clone()),
            }
        }
        named.append(&mut others);
        if named.is_empty() {
            return Err(refused());
        }
        Ok(named)
    }
}

/// Why a token was refused, for the problem's detail.
fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind as E;
    match kind {
        E::ExpiredSignature => "the token has expired".into(),
        E::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        E::InvalidIssuer => "the token's issuer is not the configured one".into(),
        E::InvalidAudience => "the token's audience is not the configured one".into(),
        E::InvalidSignature => {
            "the token's signature does not verify with any configured key".into()
        }
        E::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        _ => "the token does not verify".into(),
    }
}

/// A key file's modification time and length.
fn stamp(path: &PathBuf) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

fn load_keys(path: &PathBuf) -> Result<KeyFile, String> {
    let modified = stamp(path);
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
