//! The switch-over of a classic retry queue (issue 52), with the real
//! binary against the local RabbitMQ and Postgres: a broker where an older
//! worker left `chunking.retry` as a classic queue holding parked messages.
//! `chunk-worker run` stops at start-up (exit 1) naming `chunk-worker
//! topology migrate-retry`; that command moves the parked messages to the
//! requests queue and declares the quorum retry queue; the worker then
//! starts, stores every moved message once, and exits 0 on SIGTERM; a
//! second migration finds nothing to do.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use lapin::options::{
    BasicPublishOptions, ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::BasicProperties;
use serde_json::json;
use sqlx::PgPool;
use worker::amqp::topology::{Topology, MIGRATE_RETRY_COMMAND};

const PARKED: usize = 3;
const DEADLINE: Duration = Duration::from_secs(60);

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

fn command(db: &str, prefix: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_chunk-worker"));
    c.args(args)
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            format!("postgres://postgres@127.0.0.1:5432/{db}"),
        )
        .env("CHUNK_WORKER__TOPOLOGY__PREFIX", prefix)
        .env("CHUNK_WORKER__HTTP__ADDR", "127.0.0.1:0")
        .env("CHUNK_WORKER__SOURCE__ROOT", std::env::temp_dir())
        .env("CHUNK_WORKER__OUTBOX__POLL_INTERVAL_MS", "200")
        // Nothing is bound for the events: the shutdown does not wait long.
        .env("CHUNK_WORKER__OUTBOX__FLUSH_TIMEOUT_MS", "1000")
        .env("CHUNK_WORKER__LOG__FORMAT", "json");
    c
}

/// Runs to the end, within the deadline.
async fn output(mut c: Command) -> Output {
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let waited = tokio::time::timeout(
        DEADLINE,
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await;
    match waited {
        Ok(done) => done.unwrap().unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{c:?} did not finish within {DEADLINE:?}");
        }
    }
}

fn long(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s.to_owned()))
}

fn parked(i: usize) -> serde_json::Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": uuid::Uuid::new_v4().to_string(),
        "tenant_id": "acme-prod",
        "document_id": format!("doc-parked-{i}"),
        "source_version_id": "v1",
        "source_type": "confluence",
        "markdown": format!("# Parked {i}\n\nA message parked by an older worker.\n"),
        "occurred_at": "2026-12-05T10:00:00Z",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_classic_retry_queue_is_named_at_start_up_and_migrated_by_the_command() {
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let db = format!("cw_test_{suffix}");
    let prefix = format!("t{suffix}.");
    let topology = Topology::new(prefix.clone());
    let (amqp, ch) = tests::confirmed_channel().await.unwrap();

    // The broker as an older worker left it: the quorum queues, and a
    // classic retry queue (its arguments of then; a long delay, so the
    // parked messages stay put) holding parked messages.
    topology.declare_core(&ch, 5).await.unwrap();
    let mut classic = FieldTable::default();
    classic.insert(ShortString::from("x-queue-type"), long("classic"));
    classic.insert(
        ShortString::from("x-message-ttl"),
        AMQPValue::LongLongInt(600_000),
    );
    classic.insert(ShortString::from("x-dead-letter-exchange"), long(""));
    classic.insert(
        ShortString::from("x-dead-letter-routing-key"),
        long(&topology.requests_queue()),
    );
    ch.queue_declare(
        &topology.retry_queue(),
        QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        },
        classic,
    )
    .await
    .unwrap();
    for i in 0..PARKED {
        ch.basic_publish(
            "",
            &topology.retry_queue(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            parked(i).to_string().as_bytes(),
            BasicProperties::default().with_delivery_mode(2),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }

    // The worker refuses to start, naming the command.
    let out = output(command(&db, &prefix, &["run"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(MIGRATE_RETRY_COMMAND), "{stderr}");

    // The switch-over.
    let out = output(command(&db, &prefix, &["topology", "migrate-retry"])).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("moved {PARKED} message(s)")),
        "{stdout}"
    );
    // The retry queue is the quorum queue the worker declares.
    let check = amqp.create_channel().await.unwrap();
    topology
        .declare_retry(&check, Duration::from_millis(5000))
        .await
        .unwrap();
    // The worker's own declaration of everything passes too.
    topology
        .declare_on(&amqp, 5, Duration::from_millis(5000))
        .await
        .unwrap();

    // The worker starts and stores every moved message once.
    let mut worker = command(&db, &prefix, &["run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pool = PgPool::connect(&format!("postgres://postgres@127.0.0.1:5432/{db}"))
        .await
        .ok();
    let end = Instant::now() + DEADLINE;
    let mut pool = pool;
    loop {
        if pool.is_none() {
            pool = PgPool::connect(&format!("postgres://postgres@127.0.0.1:5432/{db}"))
                .await
                .ok();
        }
        let stored: i64 = match &pool {
            Some(p) => sqlx::query_scalar("SELECT count(*) FROM source_versions")
                .fetch_one(p)
                .await
                .unwrap_or(0),
            None => 0,
        };
        if stored == PARKED as i64 {
            break;
        }
        assert!(
            Instant::now() < end,
            "{stored} of {PARKED} moved messages stored"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status();
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(s) = worker.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < end, "the worker did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status}");

    // Again: nothing to do.
    let out = output(command(&db, &prefix, &["topology", "migrate-retry"])).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("nothing to migrate"),
        "{stdout}"
    );

    // Clean up: the topology and the database.
    for q in [
        topology.requests_queue(),
        topology.failed_queue(),
        topology.retry_queue(),
    ] {
        let _ = check.queue_delete(&q, QueueDeleteOptions::default()).await;
    }
    for x in [topology.events_exchange(), topology.dead_letter_exchange()] {
        let _ = check
            .exchange_delete(&x, ExchangeDeleteOptions::default())
            .await;
    }
    if let Some(p) = pool {
        p.close().await;
    }
    if let Ok(admin) = PgPool::connect("postgres://postgres@127.0.0.1:5432/postgres").await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .execute(&admin)
            .await;
    }
}
