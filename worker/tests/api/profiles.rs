//! Profiles through the API: a deprecated profile's headers, and a
//! multi-granularity profile (every granularity, or the one asked for).

use std::process::Command;

use serde_json::{json, Value};

use crate::{client, good, problem, Server, DOC};

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

#[test]
fn a_tei_paper_is_read_and_a_chat_model_that_is_down_answers_503() {
    // A profile whose chat model no one serves (a port just freed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!("cw-api-llm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("llm-down.toml"),
        format!(
            "name = \"llm-down-v1\"\nstrategy = \"llm_chaptering\"\n[params]\nendpoint = \"http://127.0.0.1:{port}/v1/chat/completions\"\ncoherence = \"lexical\"\nattempts = 2\nretry_base_ms = 10\ntimeout_ms = 500\n"
        ),
    )
    .unwrap();
    let s = Server::start(&[
        ("PROFILES__DIR", dir.to_str().unwrap()),
        ("EXPERIMENTAL__ENABLED", "true"),
    ]);
    let t = good("acme-prod", "hanna");
    // GROBID's TEI XML: read into Markdown, which the chunks refer to.
    let xml = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/tests/fixtures/tei/short-paper.tei.xml"),
    )
    .unwrap();
    let r = s.post(
        Some(&t),
        json!({"document_id": "paper", "tei": xml}).to_string(),
    );
    assert_eq!(r.status().as_u16(), 200);
    let r: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
    let chunks = r["chunks"].as_array().unwrap();
    assert!(
        chunks[0]["chunk_text"]
            .as_str()
            .unwrap()
            .starts_with("# Chunk Boundaries and Retrieval Quality in Technical Manuals"),
        "{r}"
    );
    assert!(chunks
        .iter()
        .all(|c| !c["chunk_text"].as_str().unwrap().contains("<TEI")));
    let both = json!({"document_id": "p", "markdown": "x", "tei": xml});
    let refused = problem(s.post(Some(&t), both.to_string()), 422);
    assert_eq!(refused["errors"][0]["field"], "tei");
    let bad = json!({"document_id": "p", "tei": "<html><body>x</body></html>"});
    let refused = problem(s.post(Some(&t), bad.to_string()), 422);
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("INVALID_MESSAGE"),
        "{refused}"
    );
    // The chat model is down: 503 with Retry-After, naming the code.
    let r = s.post(
        Some(&t),
        json!({"document_id": "d", "markdown": DOC, "profile": "llm-down-v1"}).to_string(),
    );
    assert!(r.headers().get("retry-after").is_some());
    let down = problem(r, 503);
    assert!(
        down["detail"].as_str().unwrap().contains("LLM_UNAVAILABLE"),
        "{down}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
