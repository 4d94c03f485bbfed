//! Beyond one broker (issue 52): two `chunk-worker run` processes against a
//! 3-node RabbitMQ cluster while documents flow, under a fault schedule:
//! stop the node leading `chunking.requests` (with messages just parked in
//! the retry queue it leads too), start it again; stop the node the workers
//! are connected to, start it again. Then: every version stored exactly
//! once, the newest current, every version announced, nothing
//! dead-lettered, and both workers exit 0 on SIGTERM.
//!
//! The cluster comes from `scripts/cluster/test.sh`, which starts it
//! (`scripts/cluster/cluster.sh`), runs this test with `CLUSTER_DIR` set and
//! tears the cluster down; without `CLUSTER_DIR` the test has nothing to run
//! against and says so. `CLUSTER_DOCS` (300), `CLUSTER_CYCLES` (1: the two
//! faults once; later cycles alternate SIGKILL and a graceful stop) and
//! `CLUSTER_RATE` (messages a second, 15) size it. It prints the figures
//! (docs/benchmarks-log.md).
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

mod support;
mod verify;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lapin::options::{QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use sqlx::PgPool;
use support::{message, Cluster, FailoverPublisher, Worker};
use worker::amqp::topology::Topology;

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const TENANT: &str = "cluster-tenant";
/// Messages parked in the retry queue just before its leader is stopped.
const PARKED: usize = 5;
/// How long any one drain may take.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Published and confirmed (document, version) pairs, in order.
type Published = Arc<Mutex<Vec<(String, String)>>>;

fn snapshot(published: &Published) -> Vec<(String, String)> {
    let mut v = published.lock().unwrap().clone();
    v.sort();
    v.dedup();
    v
}

/// Waits until every pair of `set` is stored; returns the time from
/// `since` (the fault) until then.
async fn drained(
    pool: &PgPool,
    set: &[(String, String)],
    workers: &[Worker],
    since: Instant,
) -> Duration {
    let start = Instant::now();
    let docs: Vec<String> = set.iter().map(|p| p.0.clone()).collect();
    let versions: Vec<String> = set.iter().map(|p| p.1.clone()).collect();
    loop {
        let stored: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM source_versions s \
             JOIN unnest($1::text[], $2::text[]) AS p(d, v) \
             ON s.tenant_id = $3 AND s.document_id = p.d AND s.source_version_id = p.v",
        )
        .bind(&docs)
        .bind(&versions)
        .bind(TENANT)
        .fetch_one(pool)
        .await
        .unwrap_or(-1);
        if stored == set.len() as i64 {
            return since.elapsed();
        }
        if start.elapsed() > DRAIN_LIMIT {
            for w in workers {
                eprintln!("--- worker {} ---\n{}", w.name, w.tail(40));
            }
            panic!(
                "{stored} of {} versions stored after {DRAIN_LIMIT:?}",
                set.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs the binary to the end with `env`; panics unless it exits 0.
fn chunk_worker(args: &[&str], env: &[(String, String)]) {
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chunk-worker {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One line of the figures.
struct Fault {
    what: String,
    node: usize,
    drained: Duration,
    failover: Option<Duration>,
    while_down: usize,
    back_drained: Duration,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_loses_a_node_and_nothing_stops_or_is_lost() {
    let Some(cluster) = Cluster::from_env() else {
        println!("no CLUSTER_DIR: nothing to run against (scripts/cluster/test.sh starts a cluster and runs this test)");
        return;
    };
    let docs: usize = env_or("CLUSTER_DOCS", 300);
    let cycles: usize = env_or("CLUSTER_CYCLES", 1);
    let rate: f64 = env_or("CLUSTER_RATE", 15.0);
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let db = format!("cw_cluster_{suffix}");
    let prefix = format!("cl{suffix}.");
    let topology = Topology::new(prefix.clone());
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config");
    let env = |urls: String| -> Vec<(String, String)> {
        [
            ("DATABASE__URL", format!("{PG}/{db}")),
            ("DATABASE__ACQUIRE_TIMEOUT_MS", "2000".into()),
            ("AMQP__URLS", urls),
            ("AMQP__RETRY_DELAY_MS", "2000".into()),
            ("TOPOLOGY__PREFIX", prefix.clone()),
            ("SOURCE__ROOT", std::env::temp_dir().display().to_string()),
            ("WORKER__RETRY_MIN_DELAY_MS", "100".into()),
            ("WORKER__RETRY_MAX_DELAY_MS", "2000".into()),
            ("OUTBOX__POLL_INTERVAL_MS", "200".into()),
            ("LOG__FORMAT", "json".into()),
            ("LOG__LEVEL", "info,lapin=off".into()),
        ]
        .into_iter()
        .map(|(k, v)| (format!("CHUNK_WORKER__{k}"), v))
        .chain([(
            "CHUNK_WORKER_CONFIG_DIR".to_owned(),
            config.display().to_string(),
        )])
        .collect()
    };
    println!(
        "cluster: {docs} documents at {rate} messages/s, {cycles} fault cycle(s), nodes {:?}",
        cluster.names
    );

    // The topology declared through node 3 (its queues' leaders are there,
    // apart from the node the workers use), the database migrated.
    chunk_worker(&["topology", "declare"], &env(cluster.urls(&[2, 0, 1])));
    chunk_worker(&["migrate"], &env(cluster.urls(&[2, 0, 1])));
    let pool = PgPool::connect(&format!("{PG}/{db}")).await.unwrap();
    let settings = |urls: String| {
        let vars = env(urls)
            .into_iter()
            .filter(|(k, _)| k.starts_with("CHUNK_WORKER__"))
            .collect();
        worker::config::Settings::load(&config, None, vars).unwrap()
    };
    // The publishing side goes through node 2 first.
    let publish_settings = settings(cluster.urls(&[1, 2, 0]));
    let capture_conn = worker::amqp::connect(&publish_settings.amqp, "cluster test capture")
        .await
        .unwrap();
    let capture = capture_conn.create_channel().await.unwrap();
    let events_queue = topology.name("cluster.events");
    let mut quorum = FieldTable::default();
    quorum.insert(
        ShortString::from("x-queue-type"),
        AMQPValue::LongString(LongString::from("quorum")),
    );
    capture
        .queue_declare(
            &events_queue,
            QueueDeclareOptions {
                durable: true,
                ..QueueDeclareOptions::default()
            },
            quorum,
        )
        .await
        .unwrap();
    capture
        .queue_bind(
            &events_queue,
            &topology.events_exchange(),
            "chunking.#",
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let _ = capture_conn.close(200, "declared").await;

    // Two workers, both listing the nodes 1, 2, 3: both on node 1.
    let worker_env = env(cluster.urls(&[0, 1, 2]));
    let mut workers = vec![
        Worker::spawn(
            "a",
            &worker_env,
            cluster.dir.join(format!("worker-a-{suffix}.log")),
        ),
        Worker::spawn(
            "b",
            &worker_env,
            cluster.dir.join(format!("worker-b-{suffix}.log")),
        ),
    ];
    let start = Instant::now();
    for w in &workers {
        while w.consumer_port().await != Some(cluster.ports[0]) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "worker {} never consumed:\n{}",
                w.name,
                w.tail(30)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    println!(
        "cluster: both workers consume through node 1 after {:.1} s",
        start.elapsed().as_secs_f64()
    );

    // Documents flow: versions 1..=3, now and then in reverse, now and then
    // a duplicate of an earlier version.
    let published: Published = Arc::default();
    let flow = {
        let published = published.clone();
        let amqp = publish_settings.amqp.clone();
        let exchange = topology.events_exchange();
        tokio::spawn(async move {
            let mut publisher = FailoverPublisher::new(amqp);
            let pause = Duration::from_secs_f64(1.0 / rate.max(0.1));
            let mut seed: u64 = 20_261_205;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for doc in 0..docs {
                let versions = 1 + (next() % 3) as usize;
                let mut order: Vec<usize> = (1..=versions).collect();
                if next() % 3 == 0 {
                    order.reverse();
                }
                if doc > 0 && next() % 5 == 0 {
                    order.push(0); // a duplicate, below
                }
                for v in order {
                    let (d, v) = if v == 0 {
                        ((next() as usize) % doc, 1)
                    } else {
                        (doc, v)
                    };
                    let body = message(d, v).to_string();
                    publisher
                        .publish(&exchange, "normalize_markdown.completed", body.as_bytes())
                        .await;
                    published
                        .lock()
                        .unwrap()
                        .push((format!("doc-{d}"), format!("v{v}")));
                    tokio::time::sleep(pause).await;
                }
            }
            publisher.resent
        })
    };

    let mut parker = FailoverPublisher::new(publish_settings.amqp.clone());
    let mut faults: Vec<Fault> = Vec::new();
    // Faults that took the retry queue's leader.
    let mut retry_leader_down = 0;
    for cycle in 0..cycles {
        let crash = cycle % 2 == 1;
        let (verb, how) = if crash {
            ("kill", "SIGKILL")
        } else {
            ("stop", "stopped")
        };
        // 1. The node leading the requests queue, with messages just parked
        //    in the retry queue; then, if another node leads the retry
        //    queue, that node. The parked messages must come back while the
        //    node leading their queue is down.
        let mut took_retry_leader = false;
        for (n, queue) in [topology.requests_queue(), topology.retry_queue()]
            .into_iter()
            .enumerate()
        {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let leader = cluster.leader(&queue);
            if n == 1 && took_retry_leader {
                continue; // the first fault took the retry queue's leader too
            }
            let retry_leader = cluster.leader(&topology.retry_queue());
            took_retry_leader = retry_leader == leader;
            retry_leader_down += usize::from(took_retry_leader);
            for i in 0..PARKED {
                let doc = 1_000_000 + cycle * 100 + n * 10 + i;
                let body = message(doc, 1).to_string();
                parker
                    .publish("", &topology.retry_queue(), body.as_bytes())
                    .await;
                published
                    .lock()
                    .unwrap()
                    .push((format!("doc-{doc}"), "v1".into()));
            }
            let before = snapshot(&published);
            let t = Instant::now();
            if crash {
                cluster.kill(leader)
            } else {
                cluster.stop(leader)
            }
            // Stored while the node is down: the parked messages too.
            let drained_after = drained(&pool, &before, &workers, t).await;
            let down = snapshot(&published);
            cluster.restart(leader);
            let back = snapshot(&published);
            let t = Instant::now();
            let led = if retry_leader == leader && n == 0 {
                "chunking.requests and chunking.retry"
            } else {
                queue.strip_prefix(topology.prefix()).unwrap_or(&queue)
            };
            faults.push(Fault {
                what: format!("cycle {}: {how} the leader of {led}", cycle + 1),
                node: leader,
                drained: drained_after,
                failover: None,
                while_down: down.len().saturating_sub(before.len()),
                back_drained: drained(&pool, &back, &workers, t).await,
            });
        }

        // 2. The node the workers' consumers use.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let port = workers[0].consumer_port().await.unwrap();
        let node = cluster.node_of_port(port).unwrap();
        let before = snapshot(&published);
        let t = Instant::now();
        if crash {
            cluster.kill(node)
        } else {
            cluster.stop(node)
        }
        // Each worker moves to the next node of its list (1, 2, 3).
        let next = cluster.ports[(node + 1) % 3];
        for w in &workers {
            while w.consumer_port().await != Some(next) {
                assert!(
                    t.elapsed() < DRAIN_LIMIT,
                    "worker {} did not move to the port {next}:\n{}",
                    w.name,
                    w.tail(30)
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let failover = t.elapsed();
        let drained_after = drained(&pool, &before, &workers, t).await;
        let down = snapshot(&published);
        cluster.restart(node);
        let back = snapshot(&published);
        let t = Instant::now();
        faults.push(Fault {
            what: format!("cycle {}: {how} the workers' node", cycle + 1),
            node,
            drained: drained_after,
            failover: Some(failover),
            while_down: down.len().saturating_sub(before.len()),
            back_drained: drained(&pool, &back, &workers, t).await,
        });
        println!(
            "cluster: cycle {} done ({verb}), {} versions published so far",
            cycle + 1,
            snapshot(&published).len()
        );
    }

    let resent = flow.await.unwrap();
    let expected = snapshot(&published);
    let final_drain = drained(&pool, &expected, &workers, Instant::now()).await;
    let started = Instant::now();
    loop {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM outbox WHERE published_at IS NULL")
                .fetch_one(&pool)
                .await
                .unwrap();
        if pending == 0 {
            break;
        }
        assert!(
            started.elapsed() < DRAIN_LIMIT,
            "{pending} events never published"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut exits = Vec::new();
    for w in &mut workers {
        exits.push((w.name, w.terminate(Duration::from_secs(30)).await));
    }

    // A connection of its own: the one that declared the capture queue may
    // have gone with its node.
    let check_conn = worker::amqp::connect(&publish_settings.amqp, "cluster test check")
        .await
        .unwrap();
    let check = check_conn.create_channel().await.unwrap();
    let (documents, event_count, announced) =
        verify::everything_once(&pool, &check, &topology, &events_queue, &expected).await;
    for (name, code) in &exits {
        assert_eq!(*code, Some(0), "worker {name} on SIGTERM");
    }

    println!(
        "cluster: {} documents, {} versions published ({} messages, {resent} publishes sent again), \
         stored exactly once: lost 0, duplicated 0, dead-lettered 0; {event_count} events for {} versions; \
         final drain {:.1} s; workers exited 0 on SIGTERM",
        documents,
        expected.len(),
        published.lock().unwrap().len(),
        announced,
        final_drain.as_secs_f64()
    );
    println!(
        "cluster: {PARKED} messages parked in the retry queue just before each leader fault came back and were \
         stored while that node was down; {retry_leader_down} of those faults took the retry queue's leader"
    );
    println!("cluster: | fault | node | workers moved after | all published before the fault stored after | versions published while down | all published before the restart stored after |");
    for f in &faults {
        println!(
            "cluster: | {} | {} | {} | {:.1} s | {} | {:.1} s |",
            f.what,
            f.node + 1,
            f.failover
                .map_or("-".to_owned(), |d| format!("{:.1} s", d.as_secs_f64())),
            f.drained.as_secs_f64(),
            f.while_down,
            f.back_drained.as_secs_f64()
        );
    }

    let _ = check_conn.close(200, "checked").await;
    pool.close().await;
    if let Ok(admin) = PgPool::connect(&format!("{PG}/postgres")).await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .execute(&admin)
            .await;
    }
}
