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
