//! The synchronous API over real HTTP against the running binary
//! (`chunk-worker serve`), with tokens signed here: every refusal is an RFC
//! 7807 problem with the right status and headers; a token for one tenant
//! cannot chunk as another; quick requests over the limit get 429 with an
//! honest `Retry-After`; a strategy that keeps failing (operations past the
//! deadline) opens its circuit (503 fast) and recovers; the chunks equal the
//! CLI's for the same input.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

mod auth;
mod chunking;
mod disabled;
mod explain;
mod guard;
mod limits;
mod openapi;
mod profiles;

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
        Self::spawn(vars, None)
    }

    /// A server whose JSON log goes to `log`.
    fn start_logged(vars: &[(&str, &str)], log: &Path) -> Self {
        Self::spawn(vars, Some(log))
    }

    fn spawn(vars: &[(&str, &str)], log: Option<&Path>) -> Self {
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
            .stderr(match log {
                Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
                None => Stdio::null(),
            });
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

/// Markdown that takes far longer to chunk than the tests' deadlines (40
/// and 150 ms), with a margin in a test build: 1.8 MB (under the HTTP body
/// limit of 2 MB) of sections of pseudo-random words, so that almost every
/// word is a piece the token cache has not seen. About 0.5 s in a test
/// build on a 2-core box. Before: 20,000 sections of one repeated sentence
/// (1.4 MB), which once chunked under the guard test's 300 ms deadline on a
/// fast moment of that box; earlier still 3,000 sections, under 40 ms once
/// issue 18's engine cuts landed.
fn slow_markdown() -> String {
    // A fixed linear congruential generator: the same document every run.
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut slow = String::with_capacity(1_900_000);
    let mut i = 0;
    while slow.len() < 1_800_000 {
        let words: Vec<String> = (0..12)
            .map(|_| {
                let n = 4 + next() % 9;
                (0..n)
                    .map(|_| char::from(b'a' + (next() % 26) as u8))
                    .collect()
            })
            .collect();
        slow.push_str(&format!(
            "## Section {i} {}\n\n{}.\n\n",
            words[0],
            words[1..].join(" ")
        ));
        i += 1;
    }
    slow
}

/// Asserts a problem response of `/v1/chunk`: status, media type, body
/// fields, headers.
fn problem(r: Response, status: u16) -> Value {
    let body = problem_at(r, status);
    assert_eq!(body["instance"], "/v1/chunk");
    body
}

/// Asserts a problem response of any path.
fn problem_at(r: Response, status: u16) -> Value {
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
