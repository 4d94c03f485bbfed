//! Profiles in the running worker (issue 9): every built-in profile is
//! stored as the engine produces it, profiles are chosen by message, tenant
//! and source type, and the message metadata reaches the event and SQL.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use shared::Engine;
use tests::{eventually, message, meta_of, sample_markdown, Options, TestApp};

type R = anyhow::Result<()>;

/// Events by document id, waiting for `n` of them.
async fn events_by_document(app: &TestApp, n: usize) -> anyhow::Result<HashMap<String, Value>> {
    let mut out = HashMap::new();
    for e in app.events(n).await? {
        let v = e.json()?;
        let doc = v["document_id"].as_str().unwrap_or_default().to_owned();
        out.insert(doc, v);
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_builtin_profile_is_stored_exactly_as_the_engine_chunks() -> R {
    let app = TestApp::spawn().await?;
    let engine = Engine::builtin()?;
    // A document long enough that every profile cuts it into several chunks.
    let md: String = (0..60)
        .map(sample_markdown)
        .collect::<Vec<_>>()
        .join("\n\n");
    // Semantic profiles need the model and experimental ones the opt-in:
    // tests/tests/e2e/semantic.rs covers those.
    let names: Vec<String> = engine
        .profiles()
        .names()
        .into_iter()
        .filter(|n| engine.profile(Some(n)).is_ok())
        .collect();
    let mut msgs = Vec::new();
    for name in &names {
        let mut msg = message("acme-prod", &format!("doc-{name}"), "v1", &md);
        msg["profile"] = Value::String(name.clone());
        app.publish_json(&msg).await?;
        msgs.push(msg);
    }
    let events = events_by_document(&app, names.len()).await?;
    for (name, msg) in names.iter().zip(&msgs) {
        let doc_id = format!("doc-{name}");
        let ev = &events[&doc_id];
        let expected = engine.chunk(md.as_bytes(), &meta_of(msg), Some(name))?;
        assert_eq!(ev["profile"], name.as_str());
        assert_eq!(ev["chunker_version"], expected.chunker_version.as_str());
        let ids: Vec<String> = expected.chunks.iter().map(|c| c.chunk_id.clone()).collect();
        assert_eq!(ev["chunk_ids"], serde_json::json!(ids), "{name}");
        let rows: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT chunk_id, chunk_text, profile, granularity FROM chunks \
             WHERE document_id = $1 ORDER BY chunk_id",
        )
        .bind(&doc_id)
        .fetch_all(&app.pool)
        .await?;
        assert_eq!(rows.len(), expected.chunks.len(), "{name}");
        // The document granularity alone is one chunk per document.
        let whole = name == "document-v1";
        assert!(whole || rows.len() > 1, "{name}: {} chunk(s)", rows.len());
        // Several granularities share ordinals: compare by id.
        let mut by_id: Vec<&shared::Chunk> = expected.chunks.iter().collect();
        by_id.sort_by(|a, b| a.chunk_id.cmp(&b.chunk_id));
        for (row, chunk) in rows.iter().zip(by_id) {
            assert_eq!(row.0, chunk.chunk_id, "{name}");
            assert_eq!(row.1, chunk.chunk_text, "{name}");
            assert_eq!(row.2, name.as_str());
            assert_eq!(row.3, chunk.granularity.as_str(), "{name}");
        }
    }
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_are_chosen_by_message_then_tenant_then_source_type_then_default() -> R {
    let vars = [
        ("CHUNKING__DEFAULT_PROFILE", "docs-v1"),
        ("CHUNKING__PROFILES_BY_SOURCE_TYPE__FILE", "token-v1"),
        ("CHUNKING__TENANTS__ACME-PROD__PROFILE", "enterprise-v1"),
        (
            "CHUNKING__TENANTS__ACME-PROD__PROFILES_BY_SOURCE_TYPE__FILE",
            "markdown-v1",
        ),
    ];
    let app = TestApp::spawn_with(Options {
        vars: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Options::default()
    })
    .await?;
    let cases = [
        ("acme-prod", "confluence", None, "enterprise-v1"),
        ("acme-prod", "file", None, "markdown-v1"),
        ("globex", "file", None, "token-v1"),
        ("globex", "confluence", None, "docs-v1"),
        ("acme-prod", "file", Some("recursive-v1"), "recursive-v1"),
    ];
    for (i, (tenant, source_type, profile, _)) in cases.iter().enumerate() {
        let mut msg = message(tenant, &format!("pick-{i}"), "v1", &sample_markdown(i));
        msg["source_type"] = Value::String((*source_type).to_owned());
        if let Some(p) = profile {
            msg["profile"] = Value::String((*p).to_owned());
        }
        app.publish_json(&msg).await?;
    }
    let events = events_by_document(&app, cases.len()).await?;
    for (i, (tenant, source_type, profile, want)) in cases.iter().enumerate() {
        let ev = &events[&format!("pick-{i}")];
        assert_eq!(
            ev["profile"], *want,
            "{tenant} / {source_type} / message profile {profile:?}"
        );
    }
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_metadata_reaches_the_event_once_and_the_current_chunks_view() -> R {
    let app = TestApp::spawn().await?;
    let mut msg = message("acme-prod", "confluence:ENG:77", "v1", &sample_markdown(3));
    msg["metadata"] = serde_json::json!({
        "title": "Runbook",
        "space_key": "ENG",
        "page_id": "77",
        "labels": ["runbook", "ops"],
        "author": "Ann",
        "updated_at": "2026-11-20T10:00:00Z",
        "unrelated": {"kept": "in storage only"}
    });
    app.publish_json(&msg).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["metadata"]["space_key"], "ENG");
    assert_eq!(
        ev["metadata"]["labels"],
        serde_json::json!(["runbook", "ops"])
    );
    assert!(ev["metadata"].get("unrelated").is_none(), "{ev}");
    let rows: Vec<(Value,)> = eventually("current chunks", Duration::from_secs(10), || async {
        let rows: Vec<(Value,)> =
            sqlx::query_as("SELECT document_metadata FROM current_chunks WHERE document_id = $1")
                .bind("confluence:ENG:77")
                .fetch_all(&app.pool)
                .await?;
        Ok((!rows.is_empty()).then_some(rows))
    })
    .await?;
    for (m,) in &rows {
        assert_eq!(m["page_id"], "77");
        assert_eq!(m["author"], "Ann");
    }
    app.cleanup().await
}
