//! The OpenAPI description: committed as generated, served as generated,
//! and every documented status answered by a real request.

use std::path::Path;

use reqwest::blocking::Response;
use serde_json::{json, Value};

use crate::{client, good, now, slow_markdown, token, Server, DOC};

/// What one documented answer needs: a request against one of two servers.
fn status_of(r: Response) -> u16 {
    r.status().as_u16()
}

#[test]
fn the_openapi_description_is_committed_and_every_documented_status_answers() {
    let main = Server::start(&[
        ("API__RATE_LIMITS__BURST", "1000"),
        ("API__RATE_LIMITS__PER_TENANT_PER_MINUTE", "100000"),
        ("API__RATE_LIMITS__PER_USER_PER_MINUTE", "100000"),
        ("LIMITS__MAX_DOCUMENT_BYTES", "100000"),
    ]);
    let tight = Server::start(&[("API__DEADLINE_MS", "40"), ("API__RATE_LIMITS__BURST", "3")]);
    // The description a server with the default profiles serves is the
    // committed one.
    let generated = client()
        .get(format!("{}/v1/openapi.json", main.base))
        .send()
        .unwrap()
        .text()
        .unwrap();
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
    let slow = slow_markdown();
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
        ("post", "/v1/chunk", 415, {
            let r = client()
                .post(format!("{}/v1/chunk", main.base))
                .bearer_auth(&t)
                .header("content-type", "text/markdown")
                .body(DOC)
                .send()
                .unwrap();
            status_of(r)
        }),
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
