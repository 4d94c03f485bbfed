//! The synchronous API over real HTTP against the running binary
//! (`chunk-worker serve`), with tokens signed here: every refusal is an RFC
//! 7807 problem with the right status and headers; a token for one tenant
//! cannot chunk as another; quick requests over the limit get 429 with an
//! honest `Retry-After`; a strategy that keeps failing (operations past the
//! deadline) opens its circuit (503 fast) and recovers; the chunks equal the
//! CLI's for the same input.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{encode, EncodingKey, Header};
use reqwest::blocking::{Client, Response};
use serde_json::{json, Value};

const SECRET: &str = "0123456789abcdef0123456789abcdef-test-secret";

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(vars: &[(&str, &str)]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chunk-worker"));
        cmd.arg("serve")
            .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
            .env("CHUNK_WORKER__HTTP__ADDR", format!("127.0.0.1:{port}"))
            .env("CHUNK_WORKER__API__ENABLED", "true")
            .env("CHUNK_WORKER__API__JWT__HS256_SECRET", SECRET)
            .env("CHUNK_WORKER__LOG__FORMAT", "json")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in vars {
            cmd.env(format!("CHUNK_WORKER__{k}"), v);
        }
        let child = cmd.spawn().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let end = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < end, "the API did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, base }
    }

    fn post(&self, token: Option<&str>, body: impl Into<reqwest::blocking::Body>) -> Response {
        let mut req = client()
            .post(format!("{}/v1/chunk", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking HTTP client (rustls needs its crypto provider chosen first).
fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::new()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn token(claims: &Value) -> String {
    encode(
        &Header::default(),
        claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

fn good(tenant: &str, user: &str) -> String {
    token(
        &json!({"sub": user, "tenant_id": tenant, "scope": "read ingest:write", "exp": now() + 600}),
    )
}

/// Asserts a problem response: status, media type, body fields, headers.
fn problem(r: Response, status: u16) -> Value {
    assert_eq!(r.status().as_u16(), status);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "application/problem+json");
    assert_eq!(h["x-api-version"], "1.0");
    let body: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
    assert_eq!(body["status"], status);
    assert!(body["type"]
        .as_str()
        .unwrap()
        .starts_with("urn:chunk-worker:problem:"));
    assert!(!body["title"].as_str().unwrap().is_empty());
    assert!(!body["detail"].as_str().unwrap().is_empty());
    assert_eq!(body["instance"], "/v1/chunk");
    assert_eq!(
        body["correlation_id"].as_str(),
        h["x-correlation-id"].to_str().ok()
    );
    if status == 401 {
        assert!(h.contains_key("www-authenticate"));
    }
    if matches!(status, 429 | 503) {
        assert!(h["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    }
    body
}

const DOC: &str = "# Runbook\n\nThis page explains how the service is operated.\n\n## Setup\n\nInstall the agent, then run `setup`.\n\n- first\n- second\n";

#[test]
fn refusals_are_problems_and_results_equal_the_cli() {
    let s = Server::start(&[
        ("API__RATE_LIMITS__PER_TENANT_PER_MINUTE", "100000"),
        ("API__RATE_LIMITS__PER_USER_PER_MINUTE", "100000"),
        ("API__RATE_LIMITS__BURST", "1000"),
        ("LIMITS__MAX_DOCUMENT_BYTES", "100000"),
        ("LIMITS__MAX_OPERATION_BYTES", "3200000"),
    ]);
    let body =
        json!({"document_id": "runbook-1", "markdown": DOC, "source_version_id": "v1"}).to_string();
    let t = good("acme-prod", "alice");

    // 401: no token, a wrong signature, an expired token.
    problem(s.post(None, body.clone()), 401);
    let forged = encode(
        &Header::default(),
        &json!({"sub": "x", "tenant_id": "acme-prod", "scope": "ingest:write", "exp": now() + 600}),
        &EncodingKey::from_secret(b"another-secret-another-secret-another"),
    )
    .unwrap();
    problem(s.post(Some(&forged), body.clone()), 401);
    let expired = token(
        &json!({"sub": "a", "tenant_id": "acme-prod", "scope": "ingest:write", "exp": now() - 3600}),
    );
    problem(s.post(Some(&expired), body.clone()), 401);
    // 403: no scope; another tenant.
    let no_scope =
        token(&json!({"sub": "a", "tenant_id": "acme-prod", "scope": "read", "exp": now() + 600}));
    problem(s.post(Some(&no_scope), body.clone()), 403);
    let other = json!({"document_id": "d", "markdown": DOC, "tenant_id": "beta-corp"}).to_string();
    let p = problem(s.post(Some(&t), other), 403);
    assert!(p["detail"].as_str().unwrap().contains("beta-corp"));
    // 400: not JSON, not UTF-8, a missing field.
    problem(s.post(Some(&t), "{not json"), 400);
    problem(s.post(Some(&t), vec![b'{', 0xff, 0xfe, b'}']), 400);
    problem(s.post(Some(&t), json!({"markdown": DOC}).to_string()), 400);
    // 413: over limits.max_document_bytes.
    let big = json!({"document_id": "big", "markdown": "word ".repeat(30_000)}).to_string();
    problem(s.post(Some(&t), big), 413);
    // 503: under the size limit, but over the memory estimate (64 bytes per
    // byte of markdown against limits.max_operation_bytes), refused before
    // any work.
    let heavy = json!({"document_id": "heavy", "markdown": "y ".repeat(30_000)}).to_string();
    let p = problem(s.post(Some(&t), heavy), 503);
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .contains("max_operation_bytes"),
        "{p}"
    );
    // 422: an unknown profile and an unknown field, with suggestions.
    let p = problem(
        s.post(
            Some(&t),
            json!({"document_id": "d", "markdown": DOC, "profile": "spec-v2"}).to_string(),
        ),
        422,
    );
    assert_eq!(p["errors"][0]["field"], "profile");
    assert_eq!(p["errors"][0]["suggestions"][0], "spec-v1");
    let p = problem(
        s.post(
            Some(&t),
            json!({"document_id": "d", "markdown": DOC, "profle": "spec-v1"}).to_string(),
        ),
        422,
    );
    assert_eq!(p["errors"][0]["field"], "profle");
    assert_eq!(p["errors"][0]["suggestions"][0], "profile");

    // 200: the CLI's records, byte for byte (the CLI adds the file's path).
    let r = client()
        .post(format!("{}/v1/chunk", s.base))
        .bearer_auth(&t)
        .header("accept", "application/vnd.medkg.chunk.v1+json")
        .header("x-correlation-id", "corr-42")
        .body(body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "application/vnd.medkg.chunk.v1+json"
    );
    assert_eq!(r.headers()["x-api-version"], "1.0");
    assert_eq!(r.headers()["x-correlation-id"], "corr-42");
    let got: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
    assert_eq!(got["profile"], "spec-v1");
    assert_eq!(got["tokenizer"], "cl100k_base");
    assert!(got["chunker_version"].as_str().is_some());
    let dir = std::env::temp_dir().join(format!("cw-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("runbook-1.md");
    std::fs::write(&file, DOC).unwrap();
    let cli = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(["chunk", "--tenant", "acme-prod", "--source-version", "v1"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let cli_records: Vec<String> = String::from_utf8(cli.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("file_path");
            v.to_string()
        })
        .collect();
    let api_records: Vec<String> = got["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.as_object_mut().unwrap().remove("file_path");
            c.to_string()
        })
        .collect();
    assert!(!api_records.is_empty());
    assert_eq!(api_records, cli_records);

    // The profiles the caller may use.
    let r = client()
        .get(format!("{}/v1/profiles", s.base))
        .bearer_auth(&t)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let list: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
    assert!(list["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "spec-v1"));
}

#[test]
fn quick_requests_over_the_limit_get_an_honest_retry_after() {
    let s = Server::start(&[]);
    let t = good("acme-prod", "bob");
    let body = json!({"document_id": "d", "markdown": "# A\n\nB.\n"}).to_string();
    let retry_after = |r: Response| -> u64 {
        let wait = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        problem(r, 429);
        wait
    };
    let limited = (0..101)
        .filter(|_| s.post(Some(&t), body.clone()).status().as_u16() == 429)
        .count();
    assert!(limited > 0, "101 quick requests of one tenant are limited");
    // The wait that counts is the latest refusal's: on a slow machine a cell
    // comes back during the loop and a later request spends it, so an
    // earlier refusal's Retry-After may be stale.
    let wait = (0..100)
        .find_map(|_| {
            let r = s.post(Some(&t), body.clone());
            (r.status().as_u16() == 429).then(|| retry_after(r))
        })
        .expect("the allowance is spent again");
    // Another tenant is not affected.
    assert_eq!(
        s.post(Some(&good("beta-corp", "carol")), body.clone())
            .status()
            .as_u16(),
        200
    );
    std::thread::sleep(Duration::from_secs(wait));
    assert_eq!(
        s.post(Some(&t), body).status().as_u16(),
        200,
        "a retry after Retry-After passes"
    );
}

#[test]
fn a_failing_strategy_opens_its_circuit_then_recovers() {
    // Operations past a 40 ms deadline count as failures of the strategy.
    let s = Server::start(&[
        ("API__DEADLINE_MS", "40"),
        ("API__RATE_LIMITS__BURST", "1000"),
    ]);
    let t = good("acme-prod", "dave");
    let mut slow = String::new();
    for i in 0..3000 {
        slow.push_str(&format!(
            "## Section {i}\n\nParagraph {i} says something long enough to count.\n\n"
        ));
    }
    let slow = json!({"document_id": "slow", "markdown": slow}).to_string();
    for _ in 0..5 {
        let p = problem(s.post(Some(&t), slow.clone()), 503);
        assert!(p["detail"].as_str().unwrap().contains("deadline"), "{p}");
    }
    // Open: refused before any chunking, even a document that would pass.
    let quick = json!({"document_id": "quick", "markdown": "# Q\n\nShort.\n"}).to_string();
    let p = problem(s.post(Some(&t), quick.clone()), 503);
    assert!(
        p["detail"].as_str().unwrap().contains("circuit open"),
        "{p}"
    );
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        s.post(Some(&t), quick.clone()).status().as_u16(),
        200,
        "the trial closes the circuit"
    );
    assert_eq!(s.post(Some(&t), quick).status().as_u16(), 200);
}

#[test]
fn the_api_is_off_without_a_key_and_refuses_a_short_secret() {
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__API__ENABLED", "true")
        .env("CHUNK_WORKER__API__JWT__HS256_SECRET", "too-short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("api.jwt.hs256_secret"));
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__HTTP__ADDR", "127.0.0.1:0")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "serve without the API is an error"
    );
}

fn openssl(dir: &Path, args: &[&str]) {
    let ok = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl {args:?}");
}

#[test]
fn rs256_and_es256_keys_verify_and_a_changed_key_file_is_read_again() {
    let dir = std::env::temp_dir().join(format!("cw-api-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    openssl(
        &dir,
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            "rsa.key",
        ],
    );
    openssl(
        &dir,
        &["pkey", "-in", "rsa.key", "-pubout", "-out", "rsa.pub"],
    );
    openssl(
        &dir,
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            "ec.key",
        ],
    );
    openssl(
        &dir,
        &["pkey", "-in", "ec.key", "-pubout", "-out", "ec.pub"],
    );
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let keys = dir.join("keys.pem");
    std::fs::write(&keys, read("rsa.pub")).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__HTTP__ADDR", format!("127.0.0.1:{port}"))
        .env("CHUNK_WORKER__API__ENABLED", "true")
        .env("CHUNK_WORKER__API__JWT__PUBLIC_KEYS_FILE", &keys)
        .env("CHUNK_WORKER__API__JWT__ISSUER", "https://idp.example.com")
        .env("CHUNK_WORKER__API__JWT__AUDIENCE", "chunk-worker")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "the API did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let claims = |iss: &str| {
        json!({"sub": "erin", "tenant_id": "acme-prod", "scp": ["ingest:write"], "exp": now() + 600,
               "iss": iss, "aud": "chunk-worker"})
    };
    let rs = |iss: &str| {
        encode(
            &Header::new(jsonwebtoken::Algorithm::RS256),
            &claims(iss),
            &EncodingKey::from_rsa_pem(&read("rsa.key")).unwrap(),
        )
        .unwrap()
    };
    let es = encode(
        &Header::new(jsonwebtoken::Algorithm::ES256),
        &claims("https://idp.example.com"),
        &EncodingKey::from_ec_pem(&read("ec.key")).unwrap(),
    )
    .unwrap();
    let post = |t: &str| {
        client()
            .post(format!("http://127.0.0.1:{port}/v1/chunk"))
            .bearer_auth(t)
            .body(json!({"document_id": "k", "markdown": "# K\n\nKeys.\n"}).to_string())
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(
        post(&rs("https://idp.example.com")),
        200,
        "RS256 with the configured key"
    );
    assert_eq!(post(&rs("https://evil.example.com")), 401, "another issuer");
    assert_eq!(post(&es), 401, "ES256 before its key is configured");
    assert_eq!(
        post(&good("acme-prod", "erin")),
        401,
        "HS256 without a secret"
    );
    // Key rotation: the file now holds both keys; no restart.
    let mut both = read("rsa.pub");
    both.extend(read("ec.pub"));
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&keys, both).unwrap();
    assert_eq!(post(&es), 200, "ES256 once the file has its key");
    assert_eq!(post(&rs("https://idp.example.com")), 200);
    // A JWKS document instead (the RSA key, kid k1): tokens naming that kid
    // verify, tokens naming another do not, and the EC key is gone.
    let modulus = Command::new("openssl")
        .args(["rsa", "-pubin", "-noout", "-modulus", "-in"])
        .arg(dir.join("rsa.pub"))
        .output()
        .unwrap();
    let hex = String::from_utf8(modulus.stdout).unwrap();
    let hex = hex.trim().trim_start_matches("Modulus=");
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let jwks = json!({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
        "n": base64url(&n), "e": "AQAB"}]});
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&keys, jwks.to_string()).unwrap();
    let with_kid = |kid: &str| {
        let mut h = Header::new(jsonwebtoken::Algorithm::RS256);
        h.kid = Some(kid.to_owned());
        encode(
            &h,
            &claims("https://idp.example.com"),
            &EncodingKey::from_rsa_pem(&read("rsa.key")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(post(&with_kid("k1")), 200, "the JWKS key, by kid");
    assert_eq!(post(&with_kid("k2")), 401, "an unknown kid");
    assert_eq!(post(&es), 401, "the EC key left with the PEM file");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `chunk-worker run` without the API answers every /v1 path with a 404
/// problem (the routes are those `run` merges into its HTTP server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_api_every_v1_path_is_a_404_problem() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, worker::api::routes(None)).await;
    });
    let r = tokio::task::spawn_blocking(move || {
        client()
            .post(format!("http://{addr}/v1/chunk"))
            .body("{}")
            .send()
            .unwrap()
    })
    .await
    .unwrap();
    let body = tokio::task::spawn_blocking(move || problem(r, 404))
        .await
        .unwrap();
    assert!(body["detail"].as_str().unwrap().contains("api.enabled"));
}

#[test]
fn a_deprecated_profile_answers_with_deprecation_and_successor_headers() {
    let dir = std::env::temp_dir().join(format!("cw-api-deprecated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shown = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(["profiles", "show", "spec-v1"])
        .output()
        .unwrap();
    let toml = String::from_utf8(shown.stdout)
        .unwrap()
        .replace("name = \"spec-v1\"", "name = \"old-v1\"")
        .replace(
            "\n[params]",
            "deprecated = true\nreplacement = \"spec-v1\"\n\n[params]",
        );
    std::fs::write(dir.join("old-v1.toml"), toml).unwrap();
    let s = Server::start(&[("PROFILES__DIR", dir.to_str().unwrap())]);
    let t = good("acme-prod", "frank");
    let r = s.post(
        Some(&t),
        json!({"document_id": "d", "markdown": DOC, "profile": "old-v1"}).to_string(),
    );
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["deprecation"], "true");
    assert_eq!(
        r.headers()["link"],
        "</v1/profiles/spec-v1>; rel=\"successor-version\""
    );
    let r = s.post(
        Some(&t),
        json!({"document_id": "d", "markdown": DOC}).to_string(),
    );
    assert!(r.headers().get("deprecation").is_none());
    let listed: Value = serde_json::from_str(
        &client()
            .get(format!("{}/v1/profiles/old-v1", s.base))
            .bearer_auth(&t)
            .send()
            .unwrap()
            .text()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(listed["deprecated"], true);
    assert_eq!(listed["replacement"], "spec-v1");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What one documented answer needs: a request against one of two servers.
fn status_of(r: Response) -> u16 {
    r.status().as_u16()
}

#[test]
fn the_openapi_description_is_committed_and_every_documented_status_answers() {
    let generated = worker::api::openapi::json();
    let committed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&committed_path, format!("{generated}\n")).unwrap();
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert_eq!(
        committed.trim_end(),
        generated,
        "docs/openapi.json is stale: UPDATE_OPENAPI=1 cargo test -p worker --test api"
    );
    let doc: Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(doc["openapi"].as_str().map(|v| &v[..3]), Some("3.1"));

    let main = Server::start(&[
        ("API__RATE_LIMITS__BURST", "1000"),
        ("API__RATE_LIMITS__PER_TENANT_PER_MINUTE", "100000"),
        ("API__RATE_LIMITS__PER_USER_PER_MINUTE", "100000"),
        ("LIMITS__MAX_DOCUMENT_BYTES", "100000"),
    ]);
    let tight = Server::start(&[("API__DEADLINE_MS", "40"), ("API__RATE_LIMITS__BURST", "3")]);
    let served = client()
        .get(format!("{}/v1/openapi.json", main.base))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(served, generated, "served as generated");

    let t = good("acme-prod", "gina");
    let get = |s: &Server, path: &str, token: Option<&str>| {
        let mut r = client().get(format!("{}{path}", s.base));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        status_of(r.send().unwrap())
    };
    let no_scope =
        token(&json!({"sub": "g", "tenant_id": "acme-prod", "scope": "read", "exp": now() + 600}));
    let burst = |path: &str, tenant: &str| {
        let t = good(tenant, &format!("{tenant}-user"));
        (0..10)
            .map(|_| get(&tight, path, Some(&t)))
            .find(|s| *s == 429)
            .unwrap_or(0)
    };
    let mut slow = String::new();
    for i in 0..3000 {
        slow.push_str(&format!(
            "## Section {i}\n\nParagraph {i} says something long enough.\n\n"
        ));
    }
    let chunk = |s: &Server, t: Option<&str>, body: String| status_of(s.post(t, body));
    let doc_body = json!({"document_id": "d", "markdown": DOC}).to_string();
    let answers: Vec<(&str, &str, u16, u16)> = vec![
        (
            "post",
            "/v1/chunk",
            200,
            chunk(&main, Some(&t), doc_body.clone()),
        ),
        ("post", "/v1/chunk", 400, chunk(&main, Some(&t), "{".into())),
        (
            "post",
            "/v1/chunk",
            401,
            chunk(&main, None, doc_body.clone()),
        ),
        (
            "post",
            "/v1/chunk",
            403,
            chunk(&main, Some(&no_scope), doc_body.clone()),
        ),
        (
            "post",
            "/v1/chunk",
            413,
            chunk(
                &main,
                Some(&t),
                json!({"document_id": "b", "markdown": "x ".repeat(60_000)}).to_string(),
            ),
        ),
        (
            "post",
            "/v1/chunk",
            422,
            chunk(
                &main,
                Some(&t),
                json!({"document_id": "d", "markdown": DOC, "profile": "nope"}).to_string(),
            ),
        ),
        ("post", "/v1/chunk", 429, {
            let t = good("burst-tenant", "burst-user");
            (0..10)
                .map(|_| {
                    chunk(
                        &tight,
                        Some(&t),
                        json!({"document_id": "q", "markdown": "# Q\n\nq.\n"}).to_string(),
                    )
                })
                .find(|s| *s == 429)
                .unwrap_or(0)
        }),
        (
            "post",
            "/v1/chunk",
            503,
            chunk(
                &tight,
                Some(&good("slow-tenant", "slow-user")),
                json!({"document_id": "slow", "markdown": slow}).to_string(),
            ),
        ),
        (
            "get",
            "/v1/profiles",
            200,
            get(&main, "/v1/profiles", Some(&t)),
        ),
        ("get", "/v1/profiles", 401, get(&main, "/v1/profiles", None)),
        (
            "get",
            "/v1/profiles",
            403,
            get(&main, "/v1/profiles", Some(&no_scope)),
        ),
        (
            "get",
            "/v1/profiles",
            429,
            burst("/v1/profiles", "list-tenant"),
        ),
        (
            "get",
            "/v1/profiles/{name}",
            200,
            get(&main, "/v1/profiles/spec-v1", Some(&t)),
        ),
        (
            "get",
            "/v1/profiles/{name}",
            401,
            get(&main, "/v1/profiles/spec-v1", None),
        ),
        (
            "get",
            "/v1/profiles/{name}",
            404,
            get(&main, "/v1/profiles/nope", Some(&t)),
        ),
    ];
    for (method, path, want, got) in &answers {
        assert_eq!(got, want, "{method} {path}");
    }
    // Every documented status is one of those answers, except 500: only an
    // engine fault gives it (the circuit breaker tests inject one).
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for status in op["responses"].as_object().unwrap().keys() {
                let status: u16 = status.parse().unwrap();
                let checked = answers
                    .iter()
                    .any(|(m, p, s, _)| m == method && p == path && *s == status);
                assert!(
                    checked || status == 500,
                    "{method} {path} {status} is documented but not checked"
                );
            }
        }
    }
}

/// Base64url without padding (JWK members).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((v >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[test]
fn a_multi_granularity_profile_answers_every_granularity_or_the_one_asked_for() {
    let server = Server::start(&[]);
    let t = good("acme-prod", "gina");
    let md = "# Handbook\n\nOne paragraph of text about incidents and how they are handled.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    let body = |g: Option<&str>| {
        let mut b = json!({"document_id": "h", "markdown": md, "profile": "hierarchy-v1"});
        if let Some(g) = g {
            b["granularity"] = json!(g);
        }
        b.to_string()
    };
    let all: Value =
        serde_json::from_str(&server.post(Some(&t), body(None)).text().unwrap()).unwrap();
    let kinds: Vec<&str> = all["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["granularity"].as_str().unwrap())
        .collect();
    for g in ["document", "section", "table", "window"] {
        assert!(kinds.contains(&g), "{g} in {kinds:?}");
    }
    let windows: Value =
        serde_json::from_str(&server.post(Some(&t), body(Some("window"))).text().unwrap()).unwrap();
    let chunks = windows["chunks"].as_array().unwrap();
    assert!(!chunks.is_empty());
    assert!(chunks.iter().all(|c| c["granularity"] == "window"));
    // An HTML page instead of Markdown: converted, and what was left out
    // is answered beside the chunks.
    let page = json!({"document_id": "p", "html": "<html><head><title>Ops</title><script>x()</script></head><body><nav>Home</nav><h1>Runbook</h1><p>Restart the <b>agent</b>.</p></body></html>"});
    let r: Value =
        serde_json::from_str(&server.post(Some(&t), page.to_string()).text().unwrap()).unwrap();
    assert_eq!(r["html_left_out"], "1 head, 1 script, 1 nav", "{r}");
    let text = r["chunks"][0]["chunk_text"].as_str().unwrap();
    assert!(
        text.starts_with("# Runbook") && text.contains("**agent**") && !text.contains("Home"),
        "{text}"
    );
    let both = json!({"document_id": "p", "html": "<p>x</p>", "markdown": "x"});
    let refused = problem(server.post(Some(&t), both.to_string()), 422);
    assert_eq!(refused["errors"][0]["field"], "html");
    let refused = problem(server.post(Some(&t), body(Some("paragraph"))), 422);
    assert_eq!(refused["errors"][0]["field"], "granularity");
    assert_eq!(
        refused["errors"][0]["suggestions"],
        json!(["document", "section", "table", "window"])
    );
}
