//! Where the API meets the HTTP framework: the body limit is the document
//! limit (plus room for JSON escaping), every refusal under `/v1` (the
//! framework's own 404, 405, 413 and 415 too) is a versioned problem, each
//! refusal is logged once with its correlation id, and a user's allowance
//! is theirs within their tenant.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{json, Value};

use crate::{client, good, now, problem, problem_at, token, Server};

#[test]
fn a_document_within_the_limit_passes_however_it_is_escaped_and_a_larger_one_is_a_problem() {
    // The defaults: limits.max_document_bytes = 10 MiB.
    let s = Server::start(&[("API__DEADLINE_MS", "120000")]);
    let t = good("acme-prod", "lena");
    let paragraph = "Restart the agent, then check the queue depth on the dashboard.\n\n";
    let three_mib = paragraph.repeat(3 * 1024 * 1024 / paragraph.len());
    let r = s.post(
        Some(&t),
        json!({"document_id": "three", "markdown": three_mib}).to_string(),
    );
    assert_eq!(r.status().as_u16(), 200, "3 MiB under a 10 MiB limit");
    // Russian text sent as Python's json.dumps writes it by default: every
    // character escaped as \uXXXX, a body three times the document.
    let russian = "Перезапустите агент и проверьте глубину очереди.\n\n";
    let ru = russian.repeat(3 * 1024 * 1024 / russian.len());
    let escaped: String = ru
        .chars()
        .map(|c| match c {
            '\n' => "\\n".to_owned(),
            c if c.is_ascii() => c.to_string(),
            c => format!("\\u{:04x}", c as u32),
        })
        .collect();
    let body = format!("{{\"document_id\": \"ru\", \"markdown\": \"{escaped}\"}}");
    assert!(body.len() > 8 * 1024 * 1024, "{}", body.len());
    assert_eq!(s.post(Some(&t), body).status().as_u16(), 200);
    // 11 MiB: the document limit, as a problem naming the setting.
    let eleven = "x".repeat(11 * 1024 * 1024);
    let p = problem(
        s.post(
            Some(&t),
            json!({"document_id": "eleven", "markdown": eleven}).to_string(),
        ),
        413,
    );
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .contains("limits.max_document_bytes"),
        "{p}"
    );
    // A body declared far over any document's room is refused before it is
    // read (nothing is sent after the headers).
    let mut stream = std::net::TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    write!(
        stream,
        "POST /v1/chunk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = vec![0; 4096];
    let n = stream.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_lowercase();
    assert!(answer.starts_with("http/1.1 413"), "{answer}");
    assert!(
        answer.contains("content-type: application/problem+json"),
        "{answer}"
    );
    assert!(answer.contains("x-api-version: 1.0"), "{answer}");
}

#[test]
fn the_frameworks_own_refusals_are_problems_too() {
    let s = Server::start(&[]);
    let t = good("acme-prod", "mona");
    let p = problem_at(
        client()
            .get(format!("{}/v1/nope", s.base))
            .bearer_auth(&t)
            .send()
            .unwrap(),
        404,
    );
    assert_eq!(p["instance"], "/v1/nope");
    let r = client()
        .delete(format!("{}/v1/chunk", s.base))
        .bearer_auth(&t)
        .send()
        .unwrap();
    let allow = r.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("POST"), "{allow}");
    problem_at(r, 405);
    let r = client()
        .post(format!("{}/v1/profiles", s.base))
        .bearer_auth(&t)
        .send()
        .unwrap();
    problem_at(r, 405);
    let r = client()
        .post(format!("{}/v1/chunk", s.base))
        .bearer_auth(&t)
        .header("content-type", "text/plain")
        .body(json!({"document_id": "d", "markdown": "x"}).to_string())
        .send()
        .unwrap();
    problem_at(r, 415);
    // Success answers carry the version too.
    let r = client()
        .get(format!("{}/v1/openapi.json", s.base))
        .send()
        .unwrap();
    assert_eq!(r.headers()["x-api-version"], "1.0");
}

#[test]
fn an_error_names_the_field_that_is_wrong() {
    let s = Server::start(&[]);
    let t = good("acme-prod", "nina");
    let field = |body: Value, status: u16| -> String {
        let p = problem(s.post(Some(&t), body.to_string()), status);
        p["errors"][0]["field"].as_str().unwrap_or("").to_owned()
    };
    assert_eq!(
        field(
            json!({"document_id": "", "markdown": "x", "html": "y"}),
            422
        ),
        "document_id"
    );
    assert_eq!(
        field(
            json!({"document_id": "d".repeat(257), "markdown": "x"}),
            422
        ),
        "document_id"
    );
    assert_eq!(
        field(json!({"document_id": "a\u{7}b", "markdown": "x"}), 422),
        "document_id"
    );
    assert_eq!(
        field(
            json!({"document_id": "d", "markdown": "x", "source_version_id": ""}),
            422
        ),
        "source_version_id"
    );
    assert_eq!(
        field(
            json!({"document_id": "d", "markdown": "x", "tenant_id": "ACME"}),
            422
        ),
        "tenant_id"
    );
    assert_eq!(
        field(
            json!({"document_id": "d", "markdown": "x", "html": "y"}),
            422
        ),
        "html"
    );
    // Null is absent: a client sending its empty optionals is fine.
    let r = s.post(
        Some(&t),
        json!({"document_id": "d", "markdown": "# A\n\nB.\n", "html": null, "title": null, "profile": null})
            .to_string(),
    );
    assert_eq!(r.status().as_u16(), 200);
}

#[test]
fn each_refusal_is_logged_once_with_its_correlation_id_and_no_token() {
    let log = std::env::temp_dir().join(format!("cw-api-log-{}.jsonl", std::process::id()));
    let s = Server::start_logged(&[], &log);
    let t = good("acme-prod", "olga");
    let send = |path: &str, id: &str, body: &str, auth: bool| {
        let mut r = client()
            .post(format!("{}{path}", s.base))
            .header("x-correlation-id", id)
            .header("content-type", "application/json")
            .body(body.to_owned());
        if auth {
            r = r.bearer_auth(&t);
        }
        r.send().unwrap().status().as_u16()
    };
    let cases = [
        ("/v1/chunk", "corr-401", "{}", false, 401),
        ("/v1/chunk", "corr-400", "{not json", true, 400),
        (
            "/v1/chunk",
            "corr-422",
            "{\"document_id\": \"\", \"markdown\": \"x\"}",
            true,
            422,
        ),
        (
            "/v1/chunk",
            "corr-413",
            &json!({"document_id": "d", "markdown": "x".repeat(11 << 20)}).to_string(),
            true,
            413,
        ),
        ("/v1/nope", "corr-404", "{}", true, 404),
        ("/v1/profiles", "corr-405", "{}", true, 405),
    ];
    for (path, id, body, auth, status) in &cases {
        assert_eq!(send(path, id, body, *auth), *status, "{id}");
    }
    drop(s);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&t), "the token is never logged");
    for (_, id, _, _, status) in &cases {
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.to_string().contains(id))
            .collect();
        assert_eq!(lines.len(), 1, "{id}: {lines:?}");
        assert_eq!(lines[0]["status"], *status, "{id}: {}", lines[0]);
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn a_users_allowance_is_theirs_within_their_tenant_and_a_token_needs_a_user() {
    let s = Server::start(&[
        ("API__RATE_LIMITS__PER_USER_PER_MINUTE", "1"),
        ("API__RATE_LIMITS__BURST", "2"),
        ("API__RATE_LIMITS__PER_TENANT_PER_MINUTE", "1000"),
    ]);
    let body = json!({"document_id": "d", "markdown": "# A\n\nB.\n"}).to_string();
    let status = |t: &str| s.post(Some(t), body.clone()).status().as_u16();
    let a = good("acme-prod", "same-user");
    assert_eq!(status(&a), 200);
    assert_eq!(status(&a), 200);
    assert_eq!(status(&a), 429, "the user's burst is spent");
    let b = good("beta-corp", "same-user");
    assert_eq!(
        status(&b),
        200,
        "the same sub in another tenant is another user"
    );
    let no_sub =
        token(&json!({"tenant_id": "acme-prod", "scope": "ingest:write", "exp": now() + 600}));
    let p = problem(s.post(Some(&no_sub), body.clone()), 401);
    assert!(p["detail"].as_str().unwrap().contains("sub"), "{p}");
}
