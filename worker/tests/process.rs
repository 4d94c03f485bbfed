//! The real `chunk-worker run` binary against the real RabbitMQ and Postgres:
//! SIGKILL in the middle of a stream of 60 documents, a restart, and then
//! every document is stored exactly once and has its event; SIGTERM exits 0.
//! (In the `worker` crate because only its tests can locate the binary.)
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lapin::options::{
    BasicGetOptions, BasicPublishOptions, ExchangeDeleteOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use lapin::BasicProperties;
use serde_json::json;
use sqlx::{Connection as _, PgConnection, PgPool};
use worker::amqp::topology::Topology;

const DOCS: usize = 60;
const DEADLINE: Duration = Duration::from_secs(60);

struct Worker {
    child: Child,
}

impl Worker {
    fn start(db: &str, prefix: &str, log: &Path) -> Self {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
            .arg("run")
            .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
            .env(
                "CHUNK_WORKER__DATABASE__URL",
                format!("postgres://postgres@127.0.0.1:5432/{db}"),
            )
            .env("CHUNK_WORKER__TOPOLOGY__PREFIX", prefix)
            .env("CHUNK_WORKER__HTTP__ADDR", "127.0.0.1:0")
            .env("CHUNK_WORKER__SOURCE__ROOT", std::env::temp_dir())
            .env("CHUNK_WORKER__AMQP__PREFETCH", "4")
            .env("CHUNK_WORKER__WORKER__CONCURRENCY", "2")
            .env("CHUNK_WORKER__OUTBOX__POLL_INTERVAL_MS", "200")
            .env("CHUNK_WORKER__LOG__FORMAT", "json")
            .stdout(Stdio::null())
            .stderr(log.try_clone().unwrap())
            .spawn()
            .unwrap();
        Self { child }
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit; returns its exit code.
    async fn wait(&mut self) -> Option<i32> {
        let end = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < end, "worker did not exit");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // A worker left over by a failed assertion must not outlive the test.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap_or(-1)
}

async fn wait_for(what: &str, mut f: impl AsyncFnMut() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !f().await {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn markdown(i: usize) -> String {
    // Long enough that chunking takes a moment, so the kill lands mid-stream.
    let mut md = format!("# Document {i}\n\nIntro of document {i}.\n\n");
    for s in 0..30 {
        md.push_str(&format!(
            "## Section {s}\n\nParagraph {s} of document {i} explains one step of the procedure in some detail, \
             with enough words to need real token counting. The second sentence adds more words.\n\n\
             - item {s}.1\n- item {s}.2\n\n"
        ));
    }
    md
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_stream_then_restart_stores_every_document_exactly_once() {
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let db = format!("cw_test_{suffix}");
    let prefix = format!("t{suffix}.");
    let topology = Topology::new(prefix.clone());
    let log = std::env::temp_dir().join(format!("cw_process_{suffix}.log"));

    // The test's own view of the broker: topology + a queue capturing events.
    let (amqp, ch) = tests::confirmed_channel().await.unwrap();
    topology
        .declare(&ch, 5, Duration::from_millis(5000))
        .await
        .unwrap();
    let events = topology.name("test.events");
    ch.queue_declare(
        &events,
        QueueDeclareOptions {
            exclusive: true,
            auto_delete: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await
    .unwrap();
    ch.queue_bind(
        &events,
        &topology.events_exchange(),
        "chunking.completed",
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await
    .unwrap();

    let mut first = Worker::start(&db, &prefix, &log);
    // The worker creates and migrates the database.
    let url = format!("postgres://postgres@127.0.0.1:5432/{db}");
    let mut pool = None;
    wait_for("the database", async || match PgPool::connect(&url).await {
        Ok(p) if count(&p, "SELECT count(*) FROM source_versions").await >= 0 => {
            pool = Some(p);
            true
        }
        _ => false,
    })
    .await;
    let pool = pool.unwrap();

    for i in 0..DOCS {
        let body = json!({
            "schema": "normalize_markdown.completed/v1",
            "event_id": uuid::Uuid::new_v4().to_string(),
            "tenant_id": "acme-prod",
            "document_id": format!("doc-{i:02}"),
            "source_version_id": "v1",
            "source_version_seq": 1,
            "source_type": "confluence",
            "markdown": markdown(i),
            "metadata": {"title": format!("Another title {i}"), "source_url": format!("https://acme.atlassian.net/wiki/spaces/ENG/pages/{i}")},
            "occurred_at": "2026-11-20T10:00:01Z"
        });
        ch.basic_publish(
            &topology.events_exchange(),
            "normalize_markdown.completed",
            BasicPublishOptions {
                mandatory: true,
                ..Default::default()
            },
            body.to_string().as_bytes(),
            BasicProperties::default()
                .with_content_type("application/json".into())
                .with_delivery_mode(2),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }

    wait_for("a few documents", async || {
        count(&pool, "SELECT count(*) FROM source_versions").await >= 3
    })
    .await;
    first.child.kill().unwrap(); // SIGKILL
    first.wait().await;
    let at_kill = count(&pool, "SELECT count(*) FROM source_versions").await;
    assert!(
        at_kill < DOCS as i64,
        "the kill must land mid-stream (stored {at_kill})"
    );

    let mut second = Worker::start(&db, &prefix, &log);
    wait_for("all documents", async || {
        count(&pool, "SELECT count(*) FROM source_versions").await == DOCS as i64
    })
    .await;
    wait_for("the outbox to drain", async || {
        count(
            &pool,
            "SELECT count(*) FROM outbox WHERE published_at IS NULL",
        )
        .await
            == 0
    })
    .await;

    // Exactly once: one version and one document row per document, chunk
    // rows matching each version's count, one outbox row per version.
    assert_eq!(
        count(
            &pool,
            "SELECT count(DISTINCT document_id) FROM source_versions"
        )
        .await,
        DOCS as i64
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM documents").await,
        DOCS as i64
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM outbox").await,
        DOCS as i64
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM source_versions s WHERE s.chunk_count <> \
             (SELECT count(*) FROM chunks c WHERE c.document_id = s.document_id AND c.source_version_id = s.source_version_id)"
        )
        .await,
        0
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM chunking_failures").await,
        0
    );

    // Every document has its event (a re-publish after the crash is a
    // duplicate with the same event id).
    let mut docs = BTreeSet::new();
    let mut event_ids = BTreeSet::new();
    wait_for("every event", async || {
        while let Some(m) = ch
            .basic_get(&events, BasicGetOptions { no_ack: true })
            .await
            .unwrap()
        {
            let ev: serde_json::Value = serde_json::from_slice(&m.delivery.data).unwrap();
            docs.insert(ev["document_id"].as_str().unwrap().to_owned());
            event_ids.insert(ev["event_id"].as_str().unwrap().to_owned());
        }
        docs.len() == DOCS
    })
    .await;
    assert_eq!(event_ids.len(), DOCS);

    // The stored chunk ids are those `chunk-worker chunk` computes offline
    // for the same document, tenant and version.
    let md_path = std::env::temp_dir().join(format!("cw_doc_{suffix}.md"));
    std::fs::write(&md_path, markdown(0)).unwrap();
    let offline = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args([
            "chunk",
            "--tenant",
            "acme-prod",
            "--document-id",
            "doc-00",
            "--source-version",
            "v1",
        ])
        .arg(&md_path)
        .output()
        .unwrap();
    assert!(
        offline.status.success(),
        "{}",
        String::from_utf8_lossy(&offline.stderr)
    );
    let offline_ids: Vec<String> = String::from_utf8(offline.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["chunk_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let stored_ids: Vec<String> = sqlx::query_scalar(
        "SELECT chunk_id FROM chunks WHERE document_id = 'doc-00' AND source_version_id = 'v1' ORDER BY ordinal",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(stored_ids, offline_ids);
    let _ = std::fs::remove_file(&md_path);

    // SIGTERM: graceful stop, exit status 0.
    second.signal("TERM");
    assert_eq!(second.wait().await, Some(0));

    pool.close().await;
    for q in [
        topology.requests_queue(),
        topology.failed_queue(),
        topology.retry_queue(),
    ] {
        let _ = ch.queue_delete(&q, QueueDeleteOptions::default()).await;
    }
    for x in [topology.events_exchange(), topology.dead_letter_exchange()] {
        let _ = ch
            .exchange_delete(&x, ExchangeDeleteOptions::default())
            .await;
    }
    let _ = amqp.close(200, "done").await;
    if let Ok(mut admin) =
        PgConnection::connect("postgres://postgres@127.0.0.1:5432/postgres").await
    {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
            .execute(&mut admin)
            .await;
    }
    // Logs are JSON lines that name documents but never carry their text.
    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.contains("doc-"), "logs name the documents");
    assert!(
        !logs.contains("procedure in some detail"),
        "no document text in logs"
    );
    for line in logs.lines().filter(|l| !l.trim().is_empty()) {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn invalid_settings_stop_the_worker_naming_the_key() {
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("run")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__AMQP__PREFETCH", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("amqp.prefetch"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_creates_the_database_and_its_tables() {
    let db = format!(
        "cw_test_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("migrate")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            format!("postgres://postgres@127.0.0.1:5432/{db}"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pool = PgPool::connect(&format!("postgres://postgres@127.0.0.1:5432/{db}"))
        .await
        .unwrap();
    for table in [
        "documents",
        "source_versions",
        "chunks",
        "chunking_failures",
        "outbox",
        "current_chunks",
        "document_links",
        "cross_links",
    ] {
        let found: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
            .bind(table)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(found.as_deref(), Some(table));
    }
    pool.close().await;
    // Running it again is a no-op.
    let again = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("migrate")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            format!("postgres://postgres@127.0.0.1:5432/{db}"),
        )
        .status()
        .unwrap();
    assert!(again.success());
    if let Ok(mut admin) =
        PgConnection::connect("postgres://postgres@127.0.0.1:5432/postgres").await
    {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
            .execute(&mut admin)
            .await;
    }
}
