//! `chunk-worker demo`: the whole pipeline on the local services in one
//! command. It starts the worker in-process (topology prefix `demo.`, so a
//! worker already running on the same broker is left alone), publishes the
//! sample documents to `demo.ingest.events` exactly as the upstream
//! NORMALIZE_MARKDOWN stage would, waits until each source version is
//! stored (or dead-lettered), prints what got stored, and stops.
//!
//! Source version ids are content hashes, so running the demo twice stores
//! nothing new: redelivery of the same version is a no-op.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use futures_util::StreamExt;
use lapin::BasicProperties;
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use crate::amqp::publisher::Publisher;
use crate::commands::inprocess::{event_consumer, InProcessWorker};
use crate::config::Settings;

/// Tenant the demo documents are stored under.
const TENANT: &str = "demo";
/// How long the demo waits for the worker to store everything.
const DEADLINE: Duration = Duration::from_secs(120);

/// Runs the demo over `inputs` (files, or directories walked for `*.md`).
pub async fn run(settings: Settings, inputs: Vec<PathBuf>) -> anyhow::Result<()> {
    let files = markdown_files(&inputs);
    if files.is_empty() {
        bail!("no *.md files found in {}", display_list(&inputs));
    }
    let (worker, settings) = InProcessWorker::start(settings, "demo.").await?;
    let pool = worker.pool.clone();
    println!(
        "worker ready (database {}, exchange {}ingest.events); publishing {} documents",
        settings.database.describe(),
        settings.topology_prefix,
        files.len()
    );
    let result = publish_and_report(&settings, &pool, &files).await;
    worker.stop().await?;
    result
}

async fn publish_and_report(
    settings: &Settings,
    pool: &PgPool,
    files: &[PathBuf],
) -> anyhow::Result<()> {
    let connection = crate::amqp::connect(&settings.amqp, "chunk-worker demo").await?;
    let publisher = Publisher::open(&connection).await?;
    let exchange = format!("{}ingest.events", settings.topology_prefix);
    // Stand in for the downstream embedder, so events are routable and
    // can be counted.
    let keys = ["chunking.completed", "chunking.failed"];
    let mut consumer = event_consumer(&connection, &exchange, &keys, "demo").await?;
    let mut expected: BTreeMap<String, String> = BTreeMap::new();
    let mut before = std::collections::BTreeSet::new();
    for path in files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let Ok(markdown) = String::from_utf8(bytes.clone()) else {
            println!(
                "skipping {} (not UTF-8: the worker would dead-letter it as INVALID_UTF8)",
                path.display()
            );
            continue;
        };
        let stem = path
            .file_stem()
            .map_or_else(|| "doc".into(), |s| s.to_string_lossy().into_owned());
        let document_id = format!("demo:{stem}");
        let version = format!("sha256:{}", &hex::encode(Sha256::digest(&bytes))[..16]);
        // A version stored by an earlier run is a duplicate: the worker acks
        // it and publishes nothing, so no event is waited for.
        if already_stored(pool, &document_id, &version).await? {
            before.insert(document_id.clone());
        }
        let event_id = uuid::Uuid::new_v4().to_string();
        let body = json!({
            "schema": "normalize_markdown.completed/v1",
            "event_id": event_id,
            "tenant_id": TENANT,
            "document_id": document_id,
            "source_version_id": version,
            "source_type": "file",
            "markdown": markdown,
            "metadata": { "title": stem, "file_path": path.display().to_string() },
            "correlation_id": format!("demo-{event_id}"),
            "occurred_at": time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        });
        let props = BasicProperties::default()
            .with_content_type("application/json".into())
            .with_delivery_mode(2)
            .with_message_id(event_id.into());
        publisher
            .publish(
                &exchange,
                "normalize_markdown.completed",
                body.to_string().as_bytes(),
                props,
            )
            .await
            .with_context(|| format!("publishing {}", path.display()))?;
        expected.insert(document_id, version);
    }
    let rows = wait_for(pool, &expected).await?;
    // Every stored version has its chunking.completed event (at least once).
    let mut event_docs = std::collections::BTreeSet::new();
    let started = Instant::now();
    let awaited = rows.keys().filter(|d| !before.contains(*d)).count();
    while event_docs.len() < awaited && started.elapsed() < DEADLINE {
        let next = tokio::time::timeout(Duration::from_secs(1), consumer.next()).await;
        if let Ok(Some(Ok(delivery))) = next {
            let event: serde_json::Value =
                serde_json::from_slice(&delivery.data).unwrap_or_default();
            if let Some(doc) = event.get("document_id").and_then(|d| d.as_str()) {
                event_docs.insert(doc.to_owned());
            }
        }
    }
    println!(
        "\n{:<28} {:<26} {:<14} {:>7} {:>8}  status",
        "document", "version", "profile", "chunks", "tokens"
    );
    for (doc, version) in &expected {
        match rows.get(doc) {
            Some(Outcome::Stored {
                chunks,
                tokens,
                profile,
            }) => {
                let status = if before.contains(doc) {
                    "already stored (an earlier run)"
                } else {
                    "stored"
                };
                println!("{doc:<28} {version:<26} {profile:<14} {chunks:>7} {tokens:>8}  {status}")
            }
            Some(Outcome::Failed(code)) => println!(
                "{doc:<28} {version:<26} {:<14} {:>7} {:>8}  {code}",
                "-", "-", "-"
            ),
            None => println!(
                "{doc:<28} {version:<26} {:<14} {:>7} {:>8}  not stored in time",
                "-", "-", "-"
            ),
        }
    }
    println!(
        "\n{} chunking.completed/failed events received downstream.",
        event_docs.len()
    );
    if !before.is_empty() {
        println!(
            "{} document(s) were stored by an earlier run: the worker acked them as duplicates, with no new event.",
            before.len()
        );
    }
    println!(
        "\nInspect them with SQL, e.g.:\n  psql {} -c \"SELECT document_id, ordinal, chunk_type, token_count, left(chunk_text, 60) FROM chunks WHERE tenant_id = 'demo' ORDER BY 1, 2 LIMIT 20\"",
        settings.database.describe()
    );
    if rows.len() < expected.len() {
        bail!(
            "{} of {} documents were not stored within {DEADLINE:?}",
            expected.len() - rows.len(),
            expected.len()
        );
    }
    Ok(())
}

enum Outcome {
    Stored {
        chunks: i64,
        tokens: i64,
        profile: String,
    },
    Failed(String),
}

/// Whether this version of the document is stored already.
async fn already_stored(pool: &PgPool, document: &str, version: &str) -> anyhow::Result<bool> {
    let found: Option<(i32,)> = sqlx::query_as(
        "SELECT 1 FROM source_versions
         WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3",
    )
    .bind(TENANT)
    .bind(document)
    .bind(version)
    .fetch_optional(pool)
    .await?;
    Ok(found.is_some())
}

/// Polls until every expected version is stored or has failed.
async fn wait_for(
    pool: &PgPool,
    expected: &BTreeMap<String, String>,
) -> anyhow::Result<BTreeMap<String, Outcome>> {
    let started = Instant::now();
    loop {
        let mut found = BTreeMap::new();
        for (doc, version) in expected {
            let stored: Option<(i64, i64, String)> = sqlx::query_as(
                "SELECT chunk_count::bigint, total_tokens::bigint, profile FROM source_versions
                 WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3",
            )
            .bind(TENANT)
            .bind(doc)
            .bind(version)
            .fetch_optional(pool)
            .await?;
            if let Some((chunks, tokens, profile)) = stored {
                found.insert(
                    doc.clone(),
                    Outcome::Stored {
                        chunks,
                        tokens,
                        profile,
                    },
                );
                continue;
            }
            let failed: Option<(String,)> = sqlx::query_as(
                "SELECT error_code FROM chunking_failures
                 WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3
                 ORDER BY failed_at DESC LIMIT 1",
            )
            .bind(TENANT)
            .bind(doc)
            .bind(version)
            .fetch_optional(pool)
            .await?;
            if let Some((code,)) = failed {
                found.insert(doc.clone(), Outcome::Failed(code));
            }
        }
        if found.len() == expected.len() || started.elapsed() > DEADLINE {
            return Ok(found);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Files named, and `*.md` under directories named (walked like
/// `chunk-worker chunk` does: recursively, sorted, hidden entries skipped).
pub(crate) fn markdown_files(inputs: &[PathBuf]) -> Vec<PathBuf> {
    crate::commands::offline::collect_inputs(inputs)
        .into_iter()
        .filter(|i| i.listing_error.is_none())
        .map(|i| i.path)
        .collect()
}

fn display_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A database URL without its password, for printing.
/// The default inputs: the project's sample documents.
pub fn default_inputs() -> Vec<PathBuf> {
    // The sample documents themselves: the top level of the fixtures folder
    // (its subfolders hold parity data and generated regression inputs).
    let dir = Path::new("shared/tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        files.push(dir.to_path_buf());
    }
    files
}
