//! The fault soak (issue 15 item 7): two real `chunk-worker run` processes
//! against the real RabbitMQ and Postgres, reached through TCP proxies,
//! while a seeded schedule of faults hits them: SIGKILLs at random points
//! (then a restart), broker connection cuts, database outages, duplicate and
//! out-of-order deliveries, and a crash-looping message (taken and abandoned
//! without an ack until the delivery limit) that must end as
//! `DELIVERY_LIMIT`. Then: every version is stored exactly once with all its
//! chunks, the newest is current, every stored version has its event, and
//! nothing but the crash-looping message was dead-lettered.
//!
//! `SOAK_SECONDS` (default 40) sets the length of the fault phase and
//! `SOAK_SEED` the schedule (printed, so a failure can be replayed);
//! `scripts/soak.sh` runs it for an hour in release mode and prints figures.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions,
    ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel, Connection};
use serde_json::{json, Value};
use sqlx::PgPool;
use tests::proxy::Proxy;
use worker::amqp::topology::Topology;

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const DELIVERY_LIMIT: u32 = 5;

mod harness;

use harness::{config_dir, count, crash_loop, message, publish, Rng, Worker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_under_a_seeded_fault_schedule_lose_and_duplicate_nothing() {
    let seed: u64 = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_124);
    let seconds: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    println!("soak: seed {seed}, {seconds} s of faults (SOAK_SEED / SOAK_SECONDS)");
    let mut rng = Rng(seed | 1);
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let db = format!("cw_soak_{suffix}");
    let prefix = format!("soak{suffix}.");
    let topology = Topology::new(prefix.clone());
    let dir = std::env::temp_dir().join(format!("cw_soak_{suffix}"));
    std::fs::create_dir_all(&dir).unwrap();
    // The run's own copy of the settings: editing config/ during an hour's
    // soak must not change what a restarted worker reads.
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    for f in std::fs::read_dir(config_dir()).unwrap().flatten() {
        if f.path().is_file() {
            std::fs::copy(f.path(), config.join(f.file_name())).unwrap();
        }
    }

    let amqp_proxy = Proxy::start("127.0.0.1:5672").await.unwrap();
    let pg_proxy = Proxy::start("127.0.0.1:5432").await.unwrap();
    let env = |name: &str| -> Vec<(String, String)> {
        [
            (
                "DATABASE__URL",
                format!("postgres://postgres@{}/{db}", pg_proxy.addr()),
            ),
            ("DATABASE__ACQUIRE_TIMEOUT_MS", "2000".into()),
            (
                "AMQP__URL",
                format!("amqp://guest:guest@{}/%2f", amqp_proxy.addr()),
            ),
            ("AMQP__DELIVERY_LIMIT", DELIVERY_LIMIT.to_string()),
            ("AMQP__RETRY_DELAY_MS", "1000".into()),
            ("TOPOLOGY__PREFIX", prefix.clone()),
            ("HTTP__ADDR", "127.0.0.1:0".into()),
            ("SOURCE__ROOT", std::env::temp_dir().display().to_string()),
            ("WORKER__RETRY_MIN_DELAY_MS", "50".into()),
            ("WORKER__RETRY_MAX_DELAY_MS", "1000".into()),
            ("OUTBOX__POLL_INTERVAL_MS", "200".into()),
            ("LOG__FORMAT", "json".into()),
            ("LOG__LEVEL", "warn,lapin=off".into()),
        ]
        .into_iter()
        .map(|(k, v)| (format!("CHUNK_WORKER__{k}"), v))
        .chain([("SOAK_WORKER".to_owned(), name.to_owned())])
        .collect()
    };

    // The database and topology first (a worker's start-up does both, but
    // the event capture queue must be bound before any event).
    let status = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("migrate")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__DATABASE__URL", format!("{PG}/{db}"))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let pool = PgPool::connect(&format!("{PG}/{db}")).await.unwrap();
    let (conn, channel) = tests::confirmed_channel().await.unwrap();
    topology
        .declare(&channel, DELIVERY_LIMIT, Duration::from_millis(1000))
        .await
        .unwrap();
    let events_queue = topology.name("soak.events");
    channel
        .queue_declare(
            &events_queue,
            QueueDeclareOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    channel
        .queue_bind(
            &events_queue,
            &topology.events_exchange(),
            "chunking.#",
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let events_channel = conn.create_channel().await.unwrap();
    let mut events = events_channel
        .basic_consume(
            &events_queue,
            "soak-events",
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        while let Some(Ok(d)) = events.next().await {
            if let Ok(v) = serde_json::from_slice::<Value>(&d.data) {
                let _ = events_tx.send(v);
            }
            let _ = d.ack(BasicAckOptions::default()).await;
        }
    });

    let mut workers: Vec<Worker> = ["a", "b"]
        .iter()
        .map(|n| Worker {
            child: None,
            env: env(n),
            log: dir.join(format!("worker-{n}.log")),
            config: config.clone(),
        })
        .collect();
    for w in &mut workers {
        w.spawn();
    }

    // Publishing: documents get versions 1..=k, published out of order now
    // and then, some twice.
    let exchange = topology.events_exchange();
    let mut published: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut faults: BTreeMap<&str, u32> = BTreeMap::new();
    let mut next_doc = 0usize;
    let start = Instant::now();
    let fault_phase = Duration::from_secs(seconds);
    let mut next_fault = start + rng.millis(1000, 4000);
    let poison_at = start + fault_phase / 2;
    let mut poisoned = false;
    while start.elapsed() < fault_phase {
        // A batch of messages: a new document's versions, shuffled, or a
        // duplicate of something already sent.
        let doc = next_doc;
        next_doc += 1;
        let versions = 1 + rng.below(3) as usize;
        let mut order: Vec<usize> = (1..=versions).collect();
        if versions > 1 && rng.below(2) == 0 {
            order.reverse();
            *faults.entry("out-of-order versions").or_default() += 1;
        }
        for v in order {
            publish(&channel, &exchange, &message(doc, v)).await;
            published.entry(doc).or_default().insert(v);
        }
        if doc > 0 && rng.below(5) == 0 {
            let d = rng.below(doc as u64) as usize;
            let v = *published[&d].iter().next().unwrap();
            publish(&channel, &exchange, &message(d, v)).await;
            *faults.entry("duplicate deliveries").or_default() += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;

        if !poisoned && Instant::now() >= poison_at {
            poisoned = true;
            crash_loop(
                &conn,
                &channel,
                &topology,
                &exchange,
                &pool,
                &mut workers,
                &published,
            )
            .await;
            *faults.entry("crash-looping message").or_default() += 1;
        }
        if Instant::now() >= next_fault {
            match rng.below(4) {
                0 | 1 => {
                    let w = rng.below(2) as usize;
                    workers[w].kill();
                    tokio::time::sleep(rng.millis(200, 1500)).await;
                    workers[w].spawn();
                    *faults.entry("SIGKILL and restart").or_default() += 1;
                }
                2 => {
                    amqp_proxy.cut();
                    tokio::time::sleep(rng.millis(500, 3000)).await;
                    amqp_proxy.restore();
                    *faults.entry("broker connections cut").or_default() += 1;
                }
                _ => {
                    pg_proxy.cut();
                    tokio::time::sleep(rng.millis(500, 4000)).await;
                    pg_proxy.restore();
                    *faults.entry("database outage").or_default() += 1;
                }
            }
            next_fault = Instant::now() + rng.millis(1500, 5000);
        }
    }
    if !poisoned {
        crash_loop(
            &conn,
            &channel,
            &topology,
            &exchange,
            &pool,
            &mut workers,
            &published,
        )
        .await;
        *faults.entry("crash-looping message").or_default() += 1;
    }

    // Quiet: everything published must be stored, with its events.
    let versions: usize = published.values().map(BTreeSet::len).sum();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stored = count(&pool, "SELECT count(*) FROM source_versions").await;
        let pending = count(
            &pool,
            "SELECT count(*) FROM outbox WHERE published_at IS NULL",
        )
        .await;
        if stored == versions as i64 && pending == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after the faults: {stored} of {versions} versions stored, {pending} events pending; logs in {}",
            dir.display()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut failed: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while completed.len() < versions && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_millis(500), events_rx.recv()).await {
            Ok(Some(ev)) => {
                if ev["schema"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("chunking.failed"))
                {
                    failed.push(ev);
                } else {
                    completed.insert((
                        ev["document_id"].as_str().unwrap_or("").to_owned(),
                        ev["source_version_id"].as_str().unwrap_or("").to_owned(),
                    ));
                }
            }
            Ok(None) => break,
            Err(_) => {}
        }
    }
    for w in &mut workers {
        w.terminate().await;
    }
    // Drain what else arrived (failure events come late).
    while let Ok(ev) = events_rx.try_recv() {
        if ev["schema"]
            .as_str()
            .is_some_and(|s| s.starts_with("chunking.failed"))
        {
            failed.push(ev);
        }
    }

    // Exactly once: one row per version, and each version's chunk rows match
    // its chunk_count.
    let dup_chunks = count(
        &pool,
        "SELECT count(*) FROM source_versions v WHERE v.chunk_count <> \
         (SELECT count(*) FROM chunks c WHERE c.tenant_id = v.tenant_id AND c.document_id = v.document_id \
          AND c.source_version_id = v.source_version_id)",
    )
    .await;
    assert_eq!(
        dup_chunks, 0,
        "versions whose chunk rows do not match chunk_count"
    );
    // The newest version is current.
    let rows: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT document_id, current_source_version_id FROM documents")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(rows.len(), published.len(), "documents stored");
    for (doc, current) in rows {
        let n: usize = doc.trim_start_matches("doc-").parse().unwrap();
        let newest = published[&n].iter().max().unwrap();
        assert_eq!(current, Some(format!("v{newest}")), "{doc}");
    }
    // Every stored version has its event.
    for (doc, vs) in &published {
        for v in vs {
            assert!(
                completed.contains(&(format!("doc-{doc}"), format!("v{v}"))),
                "no chunking.completed for doc-{doc} v{v}"
            );
        }
    }
    // Only the crash-looping message was dead-lettered, as DELIVERY_LIMIT.
    let failures: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT error_code, document_id FROM chunking_failures")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        failures,
        [("DELIVERY_LIMIT".to_owned(), Some("poison".to_owned()))],
        "dead-lettered"
    );
    assert!(
        failed.iter().all(|e| e["document_id"] == "poison"),
        "{failed:?}"
    );

    let total: u32 = faults.values().sum();
    println!(
        "soak: seed {seed}: {} documents, {versions} versions stored exactly once, {} events, {total} faults in {:.0} s: {faults:?}",
        published.len(),
        completed.len(),
        start.elapsed().as_secs_f64()
    );

    // Clean up: the topology and the database.
    let _ = channel
        .queue_delete(&events_queue, QueueDeleteOptions::default())
        .await;
    for q in [
        topology.requests_queue(),
        topology.failed_queue(),
        topology.retry_queue(),
    ] {
        let _ = channel
            .queue_delete(&q, QueueDeleteOptions::default())
            .await;
    }
    for x in [topology.events_exchange(), topology.dead_letter_exchange()] {
        let _ = channel
            .exchange_delete(&x, ExchangeDeleteOptions::default())
            .await;
    }
    pool.close().await;
    if let Ok(admin) = PgPool::connect(&format!("{PG}/postgres")).await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .execute(&admin)
            .await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
