//! `POST /v1/chunk`: every refusal an RFC 7807 problem with the right
//! status, a token for one tenant cannot chunk as another, and the records
//! equal the CLI's.

use std::process::Command;

use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::{json, Value};

use crate::{client, good, now, problem, token, Server, DOC};

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
