//! The semantic strategy in the running worker (issue 11): documents stored
//! with `semantic-v1` exactly as the engine chunks them when the model is
//! configured, and a `gpu_required` profile stopping start-up on a machine
//! without a GPU. Skips, saying so, without the model
//! (`scripts/fetch-model.sh`).

use std::path::PathBuf;
use std::sync::Arc;

use shared::{DocumentMeta, Engine};
use tests::{config_dir, message, sample_markdown, Options, TestApp};
use worker::config::Settings;

type R = anyhow::Result<()>;

fn model_dir() -> Option<PathBuf> {
    testkit::model_dir()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_are_stored_with_semantic_v1_when_it_is_configured() -> R {
    let Some(dir) = model_dir() else {
        return Ok(());
    };
    let app = TestApp::spawn_with(Options {
        vars: vec![
            ("CHUNKING__DEFAULT_PROFILE".into(), "semantic-v1".into()),
            ("SEMANTIC__MODEL_DIR".into(), dir.display().to_string()),
        ],
        ..Options::default()
    })
    .await?;
    let md: String = (0..30)
        .map(sample_markdown)
        .collect::<Vec<_>>()
        .join("\n\n");
    let msg = message("acme-prod", "doc-semantic", "v1", &md);
    app.publish_json(&msg).await?;
    let event = app.next_event().await?.json()?;
    assert_eq!(event["profile"], "semantic-v1");

    let model = embed::MiniLm::load(&dir, embed::Options::default())?;
    let engine = Engine::builder().embedder(Arc::new(model)).build()?;
    let meta = DocumentMeta {
        tenant_id: "acme-prod".into(),
        document_id: "doc-semantic".into(),
        source_version_id: "v1".into(),
        title: msg["metadata"]["title"].as_str().map(str::to_owned),
        source_url: msg["metadata"]["source_url"].as_str().map(str::to_owned),
        file_path: msg["metadata"]["file_path"].as_str().map(str::to_owned),
        metadata: DocumentMeta::carried_metadata(&msg["metadata"]),
    };
    let expected = engine.chunk(md.as_bytes(), &meta, Some("semantic-v1"))?;
    assert_eq!(event["chunker_version"], expected.chunker_version.as_str());
    let ids: Vec<String> = expected.chunks.iter().map(|c| c.chunk_id.clone()).collect();
    assert!(ids.len() > 1);
    assert_eq!(event["chunk_ids"], serde_json::json!(ids));
    let stored: Vec<(String, String)> = sqlx::query_as(
        "SELECT chunk_id, profile FROM chunks WHERE document_id = $1 ORDER BY ordinal",
    )
    .bind("doc-semantic")
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(stored.len(), ids.len());
    assert!(stored.iter().all(|(_, p)| p == "semantic-v1"));
    app.cleanup().await
}

#[test]
fn a_gpu_required_profile_stops_start_up_without_a_gpu() -> R {
    let profiles = std::env::temp_dir().join(format!("cw-gpu-{}", tests::random_suffix()));
    std::fs::create_dir_all(&profiles)?;
    std::fs::write(
        profiles.join("semantic-gpu.toml"),
        "name = \"semantic-gpu\"\nstrategy = \"semantic\"\n[params]\ngpu_required = true\n",
    )?;
    // With the model (on the CPU) or without it, start-up is refused.
    let mut vars = std::collections::HashMap::new();
    vars.insert(
        "CHUNK_WORKER__PROFILES__DIR".to_owned(),
        profiles.display().to_string(),
    );
    if let Some(dir) = model_dir() {
        vars.insert(
            "CHUNK_WORKER__SEMANTIC__MODEL_DIR".to_owned(),
            dir.display().to_string(),
        );
    }
    let has_model = vars.contains_key("CHUNK_WORKER__SEMANTIC__MODEL_DIR");
    let err = Settings::load(&config_dir(), None, vars).expect_err("start-up is refused");
    let msg = err.to_string();
    if has_model {
        assert!(
            msg.contains("semantic-gpu") && msg.contains("gpu_required"),
            "{msg}"
        );
    } else {
        // Without the model the refusal names the missing model first.
        assert!(msg.contains("fetch-model.sh"), "{msg}");
    }
    std::fs::remove_dir_all(&profiles)?;
    Ok(())
}
