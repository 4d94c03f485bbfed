//! `chunk-worker bench`: an end-to-end load tool. It starts the worker
//! in-process (topology prefix `bench.` unless one is configured), publishes
//! N documents to `<prefix>ingest.events` as upstream would, and measures
//! throughput (documents/s, MB/s) and the latency from publish to the
//! matching `chunking.completed` event (p50/p95/p99), overall and by
//! document size in tokens (the Chunking System specification's SLO buckets: < 10K, < 100K tokens).
//!
//! Every document gets a fresh document id, so each one is real work
//! (chunking, one transaction, one event), never an idempotent no-op.
//!
//! `--backlog` publishes every document before any worker starts and times
//! the drain (workers started to last event); `--processes N` runs N
//! `chunk-worker run` children on the queue instead of the in-process worker
//! (`workers.rs`).

mod cpu;
mod storage;
mod workers;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use futures_util::StreamExt;
use lapin::BasicProperties;
use serde_json::json;

use crate::amqp::publisher::{PublishError, Publisher};
use crate::amqp::topology::Topology;
use crate::commands::inprocess::event_consumer;
use crate::config::Settings;
use workers::Workers;

/// What to publish and how fast.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Files or directories (walked for `*.md`, sorted); cycled to `docs`.
    pub inputs: Vec<PathBuf>,
    /// Number of documents to publish.
    pub docs: usize,
    /// Documents per second; 0 publishes as fast as confirms allow.
    pub rate: f64,
    /// Publish only the median-sized file of the inputs, `docs` times.
    pub median: bool,
    /// The profile every message names (`None`: the worker's selection).
    pub profile: Option<String>,
    /// Publish every document before the workers start; time the drain.
    pub backlog: bool,
    /// `chunk-worker run` child processes (0: the worker runs in-process).
    pub processes: usize,
}

/// Publishes awaiting their confirm at once when not rate-limited.
const PUBLISHES_IN_FLIGHT: usize = 64;

/// Upper bound on waiting for the last event after the last publish.
const DRAIN: Duration = Duration::from_secs(300);

/// Runs the load test and prints the figures.
pub async fn run(settings: Settings, opts: BenchOptions) -> anyhow::Result<()> {
    let mut files = crate::commands::demo::markdown_files(&opts.inputs);
    files.retain(|p| std::fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false));
    if files.is_empty() {
        bail!("no non-empty *.md files found");
    }
    let mut bodies: Vec<(String, String)> = Vec::new();
    for path in &files {
        if let Ok(text) = std::fs::read_to_string(path) {
            bodies.push((path.display().to_string(), text));
        }
    }
    if opts.median {
        bodies.sort_by_key(|(_, t)| t.len());
        let median = bodies.swap_remove(bodies.len() / 2);
        bodies = vec![median];
    }
    // A database of its own, created for the run and dropped after it: every
    // run starts from the same empty tables (this machine runs Postgres with
    // autovacuum off, so tables kept between runs only ever bloat), and the
    // configured database is never touched.
    let mut settings = settings;
    let base = settings
        .database
        .options
        .get_database()
        .unwrap_or("chunk_worker")
        .to_owned();
    let database = format!(
        "{base}_bench_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    settings.database.options = settings.database.options.clone().database(&database);
    settings.database.create_if_missing = true;
    if settings.topology_prefix.is_empty() {
        settings.topology_prefix = "bench.".into();
    }
    let db_settings = settings.database.clone();
    let result = drive(&settings, &opts, &bodies).await;
    if let Err(e) = crate::store::drop_database(&db_settings).await {
        eprintln!("could not drop the bench database {database}: {e}");
    }
    result
}

async fn drive(
    settings: &Settings,
    opts: &BenchOptions,
    bodies: &[(String, String)],
) -> anyhow::Result<()> {
    // The database and the topology exist before anything is published (a
    // backlog needs its queue) and before the workers start (children would
    // otherwise race to create the database).
    crate::store::ensure_database(&settings.database).await?;
    let pool = crate::store::pool(&settings.database);
    crate::store::migrations::run(&pool).await?;
    let connection = crate::amqp::connect(&settings.amqp, "chunk-worker bench").await?;
    let topology = Topology::new(settings.topology_prefix.clone());
    topology
        .declare(
            &connection.create_channel().await?,
            settings.amqp.delivery_limit,
            settings.amqp.retry_delay,
        )
        .await
        .context("declaring the bench topology")?;
    let publisher = Publisher::open(&connection).await?;
    let exchange = topology.events_exchange();
    let mut consumer =
        event_consumer(&connection, &exchange, &["chunking.completed"], "bench").await?;
    let mut running = if opts.backlog {
        None
    } else {
        Some(Workers::start(settings, opts.processes).await?)
    };

    let run = uuid::Uuid::new_v4().simple().to_string();
    let run = &run[..8];
    let mut sent: HashMap<String, (Instant, usize)> = HashMap::with_capacity(opts.docs);
    let expected = opts.docs;
    let collector = tokio::spawn(async move {
        let mut got: Vec<(String, Instant, u64)> = Vec::new();
        let mut quiet_since = Instant::now();
        while got.len() < expected && quiet_since.elapsed() < DRAIN {
            let next = tokio::time::timeout(Duration::from_secs(1), consumer.next()).await;
            let Ok(Some(Ok(delivery))) = next else {
                continue;
            };
            quiet_since = Instant::now();
            let at = Instant::now();
            let ev: serde_json::Value = serde_json::from_slice(&delivery.data).unwrap_or_default();
            let cause = ev
                .get("causation_id")
                .and_then(|c| c.as_str())
                .unwrap_or("")
                .to_owned();
            let tokens = ev
                .get("total_tokens")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            got.push((cause, at, tokens));
        }
        got
    });

    let interval =
        (opts.rate > 0.0 && !opts.backlog).then(|| Duration::from_secs_f64(1.0 / opts.rate));
    // Unthrottled, many publishes are in flight at once, so the generator
    // (one confirm round trip per message otherwise) is not the bottleneck.
    let in_flight = if interval.is_some() {
        1
    } else {
        PUBLISHES_IN_FLIGHT
    };
    let t0 = Instant::now();
    let mut cpu_start = cpu::CpuTimes::now();
    let publisher = &publisher;
    let exchange = exchange.as_str();
    let mut results = futures_util::stream::iter(0..opts.docs)
        .map(|i| async move {
            if let Some(step) = interval {
                let due = t0 + step.mul_f64(i as f64);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    tokio::time::sleep(wait).await;
                }
            }
            let (path, markdown) = &bodies[i % bodies.len()];
            let event_id = uuid::Uuid::new_v4().to_string();
            let body = json!({
                "schema": "normalize_markdown.completed/v1",
                "event_id": event_id,
                "tenant_id": "bench",
                "document_id": format!("bench:{run}:{i}"),
                "source_version_id": "v1",
                "source_type": "file",
                "markdown": markdown,
                "metadata": { "file_path": path },
                "profile": opts.profile,
                "correlation_id": format!("bench-{run}"),
            });
            let props = BasicProperties::default()
                .with_content_type("application/json".into())
                .with_delivery_mode(2)
                .with_message_id(event_id.clone().into());
            let at = Instant::now();
            publisher
                .publish(
                    exchange,
                    "normalize_markdown.completed",
                    body.to_string().as_bytes(),
                    props,
                )
                .await
                .map(|()| (event_id, at, markdown.len()))
        })
        .buffer_unordered(in_flight);
    let mut bytes = 0usize;
    let publishing: Result<(), PublishError> = async {
        while let Some(result) = results.next().await {
            let (event_id, at, len) = result?;
            sent.insert(event_id, (at, len));
            bytes += len;
        }
        Ok(())
    }
    .await;
    if let Err(e) = publishing {
        // Running workers are stopped, not left behind.
        if let Some(w) = running {
            w.stop().await.ok();
        }
        return Err(e.into());
    }
    let published = t0.elapsed();
    // With a backlog the clock starts when the workers are started.
    let started = Instant::now();
    if running.is_none() {
        cpu_start = cpu::CpuTimes::now();
        running = Some(Workers::start(settings, opts.processes).await?);
    }
    // Every document's event, or the collector gives up after DRAIN quiet.
    let got = collector.await.context("joining the event collector");
    let cpu_used = cpu::CpuTimes::now()
        .zip(cpu_start)
        .map(|(end, start)| end.since(&start));
    let stopped = match running {
        Some(w) => w.stop().await,
        None => Ok(()),
    };
    // Closed here, not dropped at runtime shutdown (lapin logs that as an error).
    connection.close(200, "bench done").await.ok();
    let got = got?;
    stopped?;
    let clock = if opts.backlog { started } else { t0 };
    report(opts, &sent, &got, bytes, clock, published);
    if let Some(cpu) = cpu_used {
        let per = 1000.0 / got.len().max(1) as f64;
        println!(
            "cpu seconds per 1000 documents: worker {:.2} (with the event collector{}), postgres {:.2}, broker {:.2}",
            cpu.worker * per,
            if opts.backlog { "" } else { " and the publisher" },
            cpu.postgres * per,
            cpu.broker * per
        );
    }
    // `created_at` is `now()`, the transaction's start: the distinct times
    // count the group writer's statements (issue 18), a version stored by
    // the general transaction counting as one of them.
    match sqlx::query_as::<_, (i64, i64)>(
        "SELECT count(*), count(DISTINCT created_at) FROM documents",
    )
    .fetch_one(&pool)
    .await
    {
        Ok((documents, statements)) => println!(
            "documents written by {statements} statements: {:.1} documents a statement",
            documents as f64 / statements.max(1) as f64
        ),
        Err(e) => eprintln!("could not count the statements: {e}"),
    }
    match storage::Storage::measure(&pool).await {
        Ok(s) => s.print(),
        Err(e) => eprintln!("could not measure the tables: {e}"),
    }
    pool.close().await;
    if got.len() < opts.docs {
        bail!("only {} of {} documents completed", got.len(), opts.docs);
    }
    Ok(())
}

fn report(
    opts: &BenchOptions,
    sent: &HashMap<String, (Instant, usize)>,
    got: &[(String, Instant, u64)],
    bytes: usize,
    t0: Instant,
    published: Duration,
) {
    let mut all = Vec::new();
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut last = t0;
    for (cause, at, tokens) in got {
        let Some((sent_at, _)) = sent.get(cause) else {
            continue;
        };
        let ms = at.duration_since(*sent_at).as_secs_f64() * 1000.0;
        all.push(ms);
        if *tokens < 10_000 {
            small.push(ms);
        } else if *tokens < 100_000 {
            large.push(ms);
        }
        last = last.max(*at);
    }
    let elapsed = last.duration_since(t0).as_secs_f64().max(1e-9);
    println!(
        "published {} documents ({:.1} MB) in {:.2} s{}; {} chunking.completed events",
        sent.len(),
        bytes as f64 / 1e6,
        published.as_secs_f64(),
        if opts.rate > 0.0 && !opts.backlog {
            format!(" at a target of {} docs/s", opts.rate)
        } else {
            String::new()
        },
        all.len()
    );
    println!(
        "workers: {}",
        if opts.processes == 0 {
            "in-process".to_owned()
        } else {
            format!("{} chunk-worker run processes", opts.processes)
        }
    );
    println!(
        "throughput: {:.1} documents/s, {:.2} MB/s ({}: {:.2} s)",
        all.len() as f64 / elapsed,
        bytes as f64 / 1e6 / elapsed,
        if opts.backlog {
            "backlog published, workers started to last event"
        } else {
            "first publish to last event"
        },
        elapsed
    );
    if opts.backlog {
        // Latency from publish means queueing time here, not service time.
        return;
    }
    for (name, v) in [
        ("all", &mut all),
        ("< 10K tokens", &mut small),
        ("10K-100K tokens", &mut large),
    ] {
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
        println!(
            "latency {name:>16} (n={:>5}): p50 {:>7.1} ms  p95 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms",
            v.len(),
            q(0.50),
            q(0.95),
            q(0.99),
            v[v.len() - 1]
        );
    }
}

/// The inputs, or the English corpus beside the checkout by default.
pub fn inputs_or_default(inputs: Vec<PathBuf>) -> Vec<PathBuf> {
    if inputs.is_empty() {
        vec![Path::new("../shared/corpus/en").to_path_buf()]
    } else {
        inputs
    }
}
