//! `chunk-worker dlq list|show|replay`: inspecting and replaying the
//! dead-letter queue `<prefix>chunking.failed` (SPEC 2.3, 5).
//!
//! Reading a quorum queue without removing its messages: the commands consume
//! with manual acks, hold every delivery they do not settle, and close the
//! channel at the end, which hands the held messages back to the queue. The
//! scan ends when the queue goes quiet (no delivery for a moment) or the
//! prefetch window of held messages is full. A message a replay sent back
//! that the worker dead-lettered again (it carries the run's `x-replay-id`:
//! dead-lettering keeps a message's headers) is held and not looked at twice,
//! so a replay never loops.
//!
//! Replay never loses a message: each matching message is republished (the
//! original body, byte for byte, and its properties) to `<prefix>ingest.events`
//! with routing key `normalize_markdown.completed`, `mandatory`, and only once
//! the broker confirmed that publish is the dead-letter copy acked. A replay
//! killed at any point leaves every message in the dead-letter queue, in the
//! input queue, or both (a duplicate is harmless: storing is idempotent).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection};
use serde::Serialize;
use sha2::{Digest, Sha256};
use shared::contract::INPUT_ROUTING_KEY;
use uuid::Uuid;

use crate::amqp::headers;
use crate::amqp::publisher::Publisher;
use crate::amqp::topology::Topology;
use crate::config::Settings;
use crate::handler::MessageIds;

/// Exit statuses of the `dlq` commands.
pub mod exit {
    /// Done; nothing failed.
    pub const SUCCESS: u8 = 0;
    /// Some message could not be replayed, `show` found nothing, or the
    /// broker/database failed.
    pub const FAILED: u8 = 1;
    /// Usage error or invalid settings.
    pub const USAGE: u8 = 2;
}

/// How long a scan waits for its first delivery before concluding the queue
/// is empty.
const SCAN_FIRST: Duration = Duration::from_millis(1500);

/// How long a scan waits for the next delivery before concluding the queue
/// has no more ready messages. The ready count of a quorum queue lags behind
/// messages just handed back (e.g. by the previous command), so the scan
/// reads until the queue goes quiet rather than trusting the count.
const SCAN_IDLE: Duration = Duration::from_millis(500);

/// Most messages held unacked at once by one scan (the prefetch).
const MAX_PREFETCH: u16 = 10_000;

/// Headers that describe a failure or the broker's bookkeeping: removed from
/// a replayed message so it starts fresh (`x-first-failed-at` is kept).
const DROPPED_HEADERS: &[&str] = &[
    "x-error-code",
    "x-error-detail",
    "x-attempts",
    "x-failed-at",
    "x-death",
    "x-first-death-exchange",
    "x-first-death-queue",
    "x-first-death-reason",
    "x-last-death-exchange",
    "x-last-death-queue",
    "x-last-death-reason",
    "x-delivery-count",
    "x-replayed-at",
    "x-replay-id",
];

const DLQ_HELP: &str = "\
Settings are those of `chunk-worker run` (config/default.toml,
config/$CHUNK_WORKER_ENV.toml, CHUNK_WORKER__<SECTION>__<KEY> variables):
amqp.url, topology.prefix and, for replay, database.url.

Examples:
  chunk-worker dlq list
  chunk-worker dlq list --error-code SOURCE_UNAVAILABLE --tenant acme-prod --json
  chunk-worker dlq show 6f1c0d2e-0b7a-4d61-9a55-1f0b8c2d9e41
  chunk-worker dlq replay --error-code SOURCE_UNAVAILABLE --dry-run
  chunk-worker dlq replay --error-code SOURCE_UNAVAILABLE --rate 20

Exit status:
  0  done (replay: every matching message was republished)
  1  some message could not be replayed, `show` found no such message, or
     the broker or database failed
  2  usage error or invalid settings";

/// `chunk-worker dlq ...`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = DLQ_HELP)]
pub struct DlqArgs {
    /// What to do with the dead-letter queue.
    #[command(subcommand)]
    pub command: DlqCommand,
}

/// The `dlq` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum DlqCommand {
    /// List dead-lettered messages (newest state of the queue; nothing is removed).
    #[command(after_long_help = DLQ_HELP)]
    List(ListArgs),
    /// Show one dead-lettered message: properties, headers and body.
    #[command(after_long_help = DLQ_HELP)]
    Show(ShowArgs),
    /// Republish dead-lettered messages to the input exchange (publish-confirm, then ack).
    #[command(after_long_help = DLQ_HELP)]
    Replay(ReplayArgs),
}

/// Which dead-lettered messages a command applies to.
#[derive(Debug, Clone, Default, Args, Serialize)]
pub struct Filters {
    /// Only messages with this error code (x-error-code), e.g. SOURCE_UNAVAILABLE.
    #[arg(long, value_name = "CODE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Only messages of this tenant (tenant_id of the body).
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only messages of this document (document_id of the body).
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

impl Filters {
    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        self.error_code.is_none() && self.tenant.is_none() && self.document.is_none()
    }

    /// Whether `m` passes every filter.
    pub fn matches(&self, m: &DeadLetter) -> bool {
        let code_ok = self.error_code.as_deref().is_none_or(|c| {
            m.error_code
                .as_deref()
                .is_some_and(|e| e.eq_ignore_ascii_case(c))
        });
        let tenant_ok = self
            .tenant
            .as_deref()
            .is_none_or(|t| m.tenant_id.as_deref() == Some(t));
        let doc_ok = self
            .document
            .as_deref()
            .is_none_or(|d| m.document_id.as_deref() == Some(d));
        code_ok && tenant_ok && doc_ok
    }
}

/// Options of `dlq list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Which messages.
    #[command(flatten)]
    pub filters: Filters,
    /// Show at most this many messages.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options of `dlq show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The message id (as `dlq list` prints it: the AMQP message id, else
    /// `sha256:` and the start of the body's sha256).
    #[arg(value_name = "ID")]
    pub id: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `dlq replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// Which messages.
    #[command(flatten)]
    pub filters: Filters,
    /// Replay every dead-lettered message (required when no filter is given).
    #[arg(long)]
    pub all: bool,
    /// List what would be replayed; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replay at most this many messages.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// At most this many messages per second (0: no limit).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 50.0)]
    pub rate: f64,
    /// Who replays, recorded in dlq_replays (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
}

/// One dead-lettered message.
#[derive(Debug, Clone, Serialize)]
pub struct DeadLetter {
    /// `message_id`, else `sha256:` + 16 hex digits of the body's sha256.
    pub id: String,
    /// The AMQP message id, if any.
    pub message_id: Option<String>,
    /// tenant_id of the body.
    pub tenant_id: Option<String>,
    /// document_id of the body.
    pub document_id: Option<String>,
    /// source_version_id of the body.
    pub source_version_id: Option<String>,
    /// x-error-code.
    pub error_code: Option<String>,
    /// x-error-detail.
    pub error_detail: Option<String>,
    /// x-attempts.
    pub attempts: Option<u64>,
    /// x-first-failed-at.
    pub first_failed_at: Option<String>,
    /// x-failed-at.
    pub failed_at: Option<String>,
    /// sha256 (hex) of the body.
    pub body_sha256: String,
    /// Body size in bytes.
    pub body_size: usize,
    /// Every header, as JSON.
    #[serde(skip)]
    pub headers: serde_json::Map<String, serde_json::Value>,
    /// The body.
    #[serde(skip)]
    pub body: Vec<u8>,
    /// The properties.
    #[serde(skip)]
    pub properties: BasicProperties,
}

impl DeadLetter {
    /// Reads what a delivery says about itself.
    pub fn from_parts(body: &[u8], properties: &BasicProperties) -> Self {
        let table = properties.headers().as_ref();
        let message_id = properties.message_id().as_ref().map(|m| m.to_string());
        let ids = MessageIds::from_body(body, None);
        let sha = hex::encode(Sha256::digest(body));
        let id = message_id
            .clone()
            .unwrap_or_else(|| format!("sha256:{}", &sha[..16]));
        Self {
            id,
            message_id,
            tenant_id: ids.tenant_id,
            document_id: ids.document_id,
            source_version_id: ids.source_version_id,
            error_code: headers::get_str(table, "x-error-code"),
            error_detail: headers::get_str(table, "x-error-detail"),
            attempts: headers::get_u64(table, "x-attempts"),
            first_failed_at: headers::get_str(table, "x-first-failed-at"),
            failed_at: headers::get_str(table, "x-failed-at"),
            body_sha256: sha,
            body_size: body.len(),
            headers: table.map(table_to_json).unwrap_or_default(),
            body: body.to_vec(),
            properties: properties.clone(),
        }
    }

    /// Whether `id` names this message (its id, message id, or a prefix of
    /// at least 8 hex digits of its body's sha256, with or without `sha256:`).
    pub fn is_named(&self, id: &str) -> bool {
        if self.id == id || self.message_id.as_deref() == Some(id) {
            return true;
        }
        let hex = id.strip_prefix("sha256:").unwrap_or(id);
        hex.len() >= 8 && self.body_sha256.starts_with(&hex.to_ascii_lowercase())
    }
}

fn table_to_json(table: &FieldTable) -> serde_json::Map<String, serde_json::Value> {
    table
        .inner()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), amqp_to_json(v)))
        .collect()
}

fn amqp_to_json(v: &AMQPValue) -> serde_json::Value {
    use serde_json::Value;
    match v {
        AMQPValue::Boolean(b) => Value::Bool(*b),
        AMQPValue::ShortShortInt(n) => Value::from(*n),
        AMQPValue::ShortShortUInt(n) => Value::from(*n),
        AMQPValue::ShortInt(n) => Value::from(*n),
        AMQPValue::ShortUInt(n) => Value::from(*n),
        AMQPValue::LongInt(n) => Value::from(*n),
        AMQPValue::LongUInt(n) => Value::from(*n),
        AMQPValue::LongLongInt(n) => Value::from(*n),
        AMQPValue::Timestamp(n) => Value::from(*n),
        AMQPValue::Float(f) => Value::from(f64::from(*f)),
        AMQPValue::Double(f) => Value::from(*f),
        AMQPValue::ShortString(s) => Value::from(s.as_str()),
        AMQPValue::LongString(s) => Value::from(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::FieldArray(a) => Value::Array(a.as_slice().iter().map(amqp_to_json).collect()),
        AMQPValue::FieldTable(t) => Value::Object(table_to_json(t)),
        other => Value::from(format!("{other:?}")),
    }
}

/// A broker connection for the `dlq` commands.
async fn connect(settings: &Settings) -> anyhow::Result<Connection> {
    crate::amqp::connect(&settings.amqp.url, "chunk-worker dlq")
        .await
        .context("connecting to the broker (amqp.url)")
}

/// Ready messages in the dead-letter queue (passive declare: never creates it).
async fn ready_count(channel: &Channel, topology: &Topology) -> anyhow::Result<u32> {
    let q = channel
        .queue_declare(
            &topology.failed_queue(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .with_context(|| {
            format!(
                "the dead-letter queue {} does not exist (has the worker run with this topology.prefix?)",
                topology.failed_queue()
            )
        })?;
    Ok(q.message_count())
}

/// A scan of the dead-letter queue: deliveries held unacked until
/// [`Scan::finish`] returns them to the queue.
struct Scan {
    channel: Channel,
    consumer: lapin::Consumer,
    /// Ready messages when the scan started (a hint: it lags).
    ready: u32,
    /// Deliveries so far.
    delivered: u64,
    /// `x-replay-id` of the replay doing the scan, if any.
    replay_id: Option<String>,
    held: Vec<Delivery>,
}

impl Scan {
    async fn start(conn: &Connection, topology: &Topology) -> anyhow::Result<Self> {
        let channel = conn.create_channel().await.context("opening a channel")?;
        let ready = ready_count(&channel, topology).await?;
        channel
            .basic_qos(MAX_PREFETCH, BasicQosOptions::default())
            .await
            .context("setting the prefetch")?;
        let tag = format!("chunk-worker-dlq-{}", Uuid::new_v4().simple());
        let consumer = channel
            .basic_consume(
                &topology.failed_queue(),
                &tag,
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .context("consuming the dead-letter queue")?;
        Ok(Self {
            channel,
            consumer,
            ready,
            delivered: 0,
            replay_id: None,
            held: Vec::new(),
        })
    }

    /// The next message this scan did not republish itself, or `None` when
    /// the scan is done.
    async fn next(&mut self) -> anyhow::Result<Option<(DeadLetter, Delivery)>> {
        loop {
            let wait = if self.delivered == 0 {
                SCAN_FIRST
            } else {
                SCAN_IDLE
            };
            let delivery = match tokio::time::timeout(wait, self.consumer.next()).await {
                Err(_) | Ok(None) => return Ok(None),
                Ok(Some(Err(e))) => {
                    return Err(anyhow::Error::new(e).context("reading the dead-letter queue"))
                }
                Ok(Some(Ok(d))) => d,
            };
            self.delivered += 1;
            let letter = DeadLetter::from_parts(&delivery.data, &delivery.properties);
            let ours = self.replay_id.is_some()
                && letter
                    .headers
                    .get("x-replay-id")
                    .and_then(serde_json::Value::as_str)
                    == self.replay_id.as_deref();
            if !ours {
                return Ok(Some((letter, delivery)));
            }
            // Replayed by this run and dead-lettered again: leave it for the
            // next run.
            self.held.push(delivery);
        }
    }

    /// Keeps `delivery` in the queue.
    fn hold(&mut self, delivery: Delivery) {
        self.held.push(delivery);
    }

    /// Hands every held delivery back to the queue.
    async fn finish(self) {
        let held = self.held.len();
        // Closing the channel returns its unacked deliveries to the queue.
        if let Err(e) = self.channel.close(200, "dlq scan done").await {
            tracing::warn!(error = %e, held, "closing the scan channel failed; the broker returns the messages when the connection closes");
        }
    }
}

/// The dead-lettered messages matching `filters`, at most `limit`, in queue
/// order. Nothing is removed from the queue.
pub async fn list(
    settings: &Settings,
    filters: &Filters,
    limit: usize,
) -> anyhow::Result<Vec<DeadLetter>> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let mut scan = Scan::start(&conn, &topology).await?;
    let mut out = Vec::new();
    let result = async {
        while out.len() < limit {
            let Some((letter, delivery)) = scan.next().await? else {
                break;
            };
            scan.hold(delivery);
            if filters.matches(&letter) {
                out.push(letter);
            }
        }
        anyhow::Ok(())
    }
    .await;
    scan.finish().await;
    let _ = conn.close(200, "dlq list done").await;
    result.map(|()| out)
}

/// The dead-lettered message named `id` (see [`DeadLetter::is_named`]).
pub async fn show(settings: &Settings, id: &str) -> anyhow::Result<Option<DeadLetter>> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let mut scan = Scan::start(&conn, &topology).await?;
    let result = async {
        while let Some((letter, delivery)) = scan.next().await? {
            scan.hold(delivery);
            if letter.is_named(id) {
                return anyhow::Ok(Some(letter));
            }
        }
        Ok(None)
    }
    .await;
    scan.finish().await;
    let _ = conn.close(200, "dlq show done").await;
    result
}

/// What a replay did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplaySummary {
    /// The dlq_replays row (none for a dry run).
    pub replay_id: Option<Uuid>,
    /// Messages looked at.
    pub scanned: u64,
    /// Messages matching the filters (within the limit).
    pub matched: u64,
    /// Republished, confirmed and removed from the dead-letter queue.
    pub replayed: u64,
    /// Not matching: left in the queue.
    pub skipped: u64,
    /// Matching but not republished: left in the queue.
    pub failed: u64,
    /// The matching messages (ids), in order.
    pub ids: Vec<String>,
}

/// Options of a replay, as the library takes them.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Which messages.
    pub filters: Filters,
    /// Change nothing.
    pub dry_run: bool,
    /// Replay at most this many.
    pub limit: Option<usize>,
    /// Messages per second; 0 or less: unlimited.
    pub rate: f64,
    /// Who replays.
    pub operator: String,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// Replays the matching dead-lettered messages (see the module docs).
pub async fn replay(settings: &Settings, opts: &ReplayOptions) -> anyhow::Result<ReplaySummary> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let pool = if opts.dry_run {
        None
    } else {
        Some(crate::store::pool(&settings.database))
    };
    let mut summary = ReplaySummary::default();
    let replay_id = Uuid::new_v4();
    if let Some(pool) = &pool {
        let filters = serde_json::json!({
            "filters": opts.filters,
            "limit": opts.limit,
            "rate": opts.rate,
        });
        sqlx::query("INSERT INTO dlq_replays (id, operator, filters) VALUES ($1, $2, $3)")
            .bind(replay_id)
            .bind(&opts.operator)
            .bind(&filters)
            .execute(pool)
            .await
            .context("recording the replay in dlq_replays (database.url; has `chunk-worker migrate` run?)")?;
        summary.replay_id = Some(replay_id);
    }
    let publisher = Publisher::open(&conn)
        .await
        .context("opening the publisher channel")?;
    let mut scan = Scan::start(&conn, &topology).await?;
    scan.replay_id = Some(replay_id.to_string());
    let bar = progress_bar(opts.progress, u64::from(scan.ready));
    let mut ticker = (opts.rate > 0.0 && opts.rate.is_finite()).then(|| {
        let mut t = tokio::time::interval(Duration::from_secs_f64(1.0 / opts.rate.max(0.001)));
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    let replayed_at = crate::clock::now_rfc3339();

    let result = async {
        loop {
            if opts.limit.is_some_and(|l| summary.matched >= l as u64) {
                break;
            }
            let Some((letter, delivery)) = scan.next().await? else {
                break;
            };
            summary.scanned += 1;
            bar.inc(1);
            if !opts.filters.matches(&letter) {
                summary.skipped += 1;
                scan.hold(delivery);
                continue;
            }
            summary.matched += 1;
            summary.ids.push(letter.id.clone());
            if opts.dry_run {
                scan.hold(delivery);
                continue;
            }
            if let Some(t) = ticker.as_mut() {
                t.tick().await;
            }
            let props = replay_properties(&delivery.properties, replay_id, &replayed_at);
            match publisher
                .publish(
                    &topology.events_exchange(),
                    INPUT_ROUTING_KEY,
                    &delivery.data,
                    props,
                )
                .await
            {
                Ok(()) => {
                    match delivery.ack(BasicAckOptions::default()).await {
                        Ok(true) => summary.replayed += 1,
                        Ok(false) => {
                            tracing::warn!(id = %letter.id, "the dead-letter copy could not be acked (channel closed); it stays as a duplicate");
                            summary.failed += 1;
                        }
                        Err(e) => {
                            // Republished but still dead-lettered: a harmless
                            // duplicate the next replay sends again.
                            tracing::warn!(id = %letter.id, error = %e, "ack of the dead-letter copy failed");
                            summary.failed += 1;
                        }
                    }
                }
                Err(e) => {
                    bar.suspend(|| eprintln!("replay of {} failed: {e}", letter.id));
                    summary.failed += 1;
                    scan.hold(delivery);
                }
            }
            if let Some(pool) = &pool {
                if summary.matched % 10 == 0 {
                    record_counts(pool, replay_id, &summary, false).await;
                }
            }
        }
        anyhow::Ok(())
    }
    .await;
    bar.finish_and_clear();
    scan.finish().await;
    let _ = conn.close(200, "dlq replay done").await;
    if let Some(pool) = &pool {
        record_counts(pool, replay_id, &summary, true).await;
        pool.close().await;
    }
    result.map(|()| summary)
}

async fn record_counts(pool: &sqlx::PgPool, id: Uuid, s: &ReplaySummary, finished: bool) {
    let n = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    let sql = if finished {
        "UPDATE dlq_replays SET matched = $2, replayed = $3, skipped = $4, failed = $5, finished_at = now() WHERE id = $1"
    } else {
        "UPDATE dlq_replays SET matched = $2, replayed = $3, skipped = $4, failed = $5 WHERE id = $1"
    };
    if let Err(e) = sqlx::query(sql)
        .bind(id)
        .bind(n(s.matched))
        .bind(n(s.replayed))
        .bind(n(s.skipped))
        .bind(n(s.failed))
        .execute(pool)
        .await
    {
        tracing::warn!(error = %e, "could not update the dlq_replays row");
    }
}

/// The original properties with the failure headers removed and the replay
/// headers added.
pub fn replay_properties(
    original: &BasicProperties,
    replay_id: Uuid,
    replayed_at: &str,
) -> BasicProperties {
    let mut table = FieldTable::default();
    if let Some(h) = original.headers() {
        for (k, v) in h.inner() {
            if !DROPPED_HEADERS.contains(&k.as_str()) {
                table.insert(k.clone(), v.clone());
            }
        }
    }
    headers::set_str(&mut table, "x-replayed-at", replayed_at);
    headers::set_str(&mut table, "x-replay-id", &replay_id.to_string());
    original.clone().with_headers(table).with_delivery_mode(2)
}

fn progress_bar(show: bool, len: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} messages {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

// ---------------------------------------------------------------------------
// The command line.

/// Runs a `dlq` subcommand; returns the exit status.
pub fn run(args: &DlqArgs) -> u8 {
    if let DlqCommand::Replay(r) = &args.command {
        if let Err(message) = check_replay_args(r) {
            eprintln!("error: {message}");
            return exit::USAGE;
        }
    }
    let settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::FAILED;
        }
    };
    let result = runtime.block_on(execute(&settings, &args.command));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::FAILED
        }
    }
}

fn check_replay_args(r: &ReplayArgs) -> Result<(), String> {
    if r.filters.is_empty() && !r.all {
        return Err(
            "give a filter (--error-code, --tenant, --document) or --all to replay every message"
                .to_owned(),
        );
    }
    if !r.rate.is_finite() || r.rate < 0.0 {
        return Err("--rate must be a number of messages per second, 0 for no limit".to_owned());
    }
    if r.limit == Some(0) {
        return Err("--limit must be at least 1".to_owned());
    }
    Ok(())
}

async fn execute(settings: &Settings, command: &DlqCommand) -> anyhow::Result<u8> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match command {
        DlqCommand::List(a) => {
            let letters = list(settings, &a.filters, a.limit).await?;
            if a.json {
                serde_json::to_writer_pretty(&mut out, &letters)?;
                writeln!(out)?;
            } else {
                write_table(&mut out, &letters)?;
            }
            Ok(exit::SUCCESS)
        }
        DlqCommand::Show(a) => match show(settings, &a.id).await? {
            Some(letter) => {
                write_letter(&mut out, &letter, a.json)?;
                Ok(exit::SUCCESS)
            }
            None => {
                eprintln!("error: no dead-lettered message {:?}", a.id);
                Ok(exit::FAILED)
            }
        },
        DlqCommand::Replay(a) => {
            let opts = ReplayOptions {
                filters: a.filters.clone(),
                dry_run: a.dry_run,
                limit: a.limit,
                rate: a.rate,
                operator: a
                    .operator
                    .clone()
                    .or_else(|| std::env::var("USER").ok())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "unknown".to_owned()),
                progress: std::io::stderr().is_terminal(),
            };
            let s = replay(settings, &opts).await?;
            if a.dry_run {
                for id in &s.ids {
                    writeln!(out, "would replay {id}")?;
                }
                writeln!(
                    out,
                    "dry run: {} of {} scanned messages match; nothing changed",
                    s.matched, s.scanned
                )?;
            } else {
                writeln!(
                    out,
                    "replay {}: scanned {}, matched {}, replayed {}, skipped {}, failed {}",
                    s.replay_id.map(|u| u.to_string()).unwrap_or_default(),
                    s.scanned,
                    s.matched,
                    s.replayed,
                    s.skipped,
                    s.failed
                )?;
            }
            Ok(if s.failed > 0 {
                exit::FAILED
            } else {
                exit::SUCCESS
            })
        }
    }
}

fn cell(v: Option<&str>) -> String {
    v.unwrap_or("-").to_owned()
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The readable table of `dlq list`.
pub fn write_table(out: &mut impl Write, letters: &[DeadLetter]) -> std::io::Result<()> {
    let header = [
        "ID",
        "TENANT",
        "DOCUMENT",
        "VERSION",
        "ERROR CODE",
        "ATTEMPTS",
        "FIRST FAILED",
        "LAST FAILED",
        "DETAIL",
    ];
    let rows: Vec<[String; 9]> = letters
        .iter()
        .map(|l| {
            [
                l.id.clone(),
                cell(l.tenant_id.as_deref()),
                shorten(&cell(l.document_id.as_deref()), 40),
                shorten(&cell(l.source_version_id.as_deref()), 24),
                cell(l.error_code.as_deref()),
                l.attempts.map_or_else(|| "-".to_owned(), |a| a.to_string()),
                cell(l.first_failed_at.as_deref()),
                cell(l.failed_at.as_deref()),
                shorten(&cell(l.error_detail.as_deref()), 80),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(w - c.chars().count() + 2));
            }
        }
        s
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in &rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    writeln!(out, "{} message(s)", rows.len())
}

/// The text (or JSON) of `dlq show`.
pub fn write_letter(out: &mut impl Write, l: &DeadLetter, json: bool) -> std::io::Result<()> {
    let body_json: Option<serde_json::Value> = serde_json::from_slice(&l.body).ok();
    let p = &l.properties;
    let props = serde_json::json!({
        "message_id": p.message_id().as_ref().map(|s| s.to_string()),
        "correlation_id": p.correlation_id().as_ref().map(|s| s.to_string()),
        "content_type": p.content_type().as_ref().map(|s| s.to_string()),
        "delivery_mode": p.delivery_mode(),
        "timestamp": p.timestamp(),
    });
    if json {
        let v = serde_json::json!({
            "summary": l,
            "properties": props,
            "headers": l.headers,
            "body": body_json.clone().unwrap_or_else(|| serde_json::Value::from(String::from_utf8_lossy(&l.body).into_owned())),
        });
        serde_json::to_writer_pretty(&mut *out, &v)?;
        return writeln!(out);
    }
    writeln!(out, "id: {}", l.id)?;
    writeln!(out, "body: {} bytes, sha256 {}", l.body_size, l.body_sha256)?;
    writeln!(out, "\nproperties:")?;
    if let Some(o) = props.as_object() {
        for (k, v) in o.iter().filter(|(_, v)| !v.is_null()) {
            writeln!(out, "  {k}: {v}")?;
        }
    }
    writeln!(out, "\nheaders:")?;
    let mut keys: Vec<_> = l.headers.keys().collect();
    keys.sort();
    for k in keys {
        writeln!(out, "  {k}: {}", l.headers[k])?;
    }
    writeln!(out, "\nbody:")?;
    match body_json {
        Some(v) => {
            serde_json::to_writer_pretty(&mut *out, &v)?;
            writeln!(out)
        }
        None => writeln!(out, "{}", String::from_utf8_lossy(&l.body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letter(code: &str, tenant: &str, doc: &str) -> DeadLetter {
        let mut h = FieldTable::default();
        headers::set_str(&mut h, "x-error-code", code);
        let body = serde_json::json!({"tenant_id": tenant, "document_id": doc}).to_string();
        DeadLetter::from_parts(body.as_bytes(), &BasicProperties::default().with_headers(h))
    }

    #[test]
    fn filters_match_code_tenant_and_document() {
        let l = letter("SOURCE_UNAVAILABLE", "acme-prod", "d1");
        assert!(Filters::default().matches(&l));
        let f = |c: Option<&str>, t: Option<&str>, d: Option<&str>| Filters {
            error_code: c.map(str::to_owned),
            tenant: t.map(str::to_owned),
            document: d.map(str::to_owned),
        };
        assert!(f(Some("source_unavailable"), None, None).matches(&l));
        assert!(!f(Some("INVALID_UTF8"), None, None).matches(&l));
        assert!(f(None, Some("acme-prod"), Some("d1")).matches(&l));
        assert!(!f(None, Some("other"), None).matches(&l));
        assert!(!f(None, None, Some("d2")).matches(&l));
    }

    #[test]
    fn ids_fall_back_to_the_body_hash() {
        let l = letter("INTERNAL", "acme-prod", "d1");
        assert!(l.id.starts_with("sha256:"));
        assert!(l.is_named(&l.id));
        assert!(l.is_named(&l.body_sha256[..10]));
        assert!(!l.is_named("sha256:00"));
    }

    #[test]
    fn replayed_messages_lose_failure_headers_but_keep_the_rest() {
        let mut h = FieldTable::default();
        for k in [
            "x-error-code",
            "x-error-detail",
            "x-failed-at",
            "x-attempts",
        ] {
            headers::set_str(&mut h, k, "v");
        }
        headers::set_str(&mut h, "x-first-failed-at", "2026-01-01T00:00:00Z");
        headers::set_str(&mut h, "traceparent", "00-abc-def-01");
        let props = BasicProperties::default()
            .with_message_id("m1".into())
            .with_headers(h);
        let id = Uuid::new_v4();
        let out = replay_properties(&props, id, "2026-11-22T00:00:00Z");
        let t = out.headers().as_ref();
        assert_eq!(headers::get_str(t, "x-error-code"), None);
        assert_eq!(headers::get_str(t, "x-attempts"), None);
        assert_eq!(
            headers::get_str(t, "x-first-failed-at").as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            headers::get_str(t, "traceparent").as_deref(),
            Some("00-abc-def-01")
        );
        assert_eq!(headers::get_str(t, "x-replay-id"), Some(id.to_string()));
        assert_eq!(out.message_id().as_ref().map(|m| m.as_str()), Some("m1"));
        assert_eq!(*out.delivery_mode(), Some(2));
    }

    #[test]
    fn replay_needs_a_filter_or_all() {
        let args = ReplayArgs {
            filters: Filters::default(),
            all: false,
            dry_run: false,
            limit: None,
            rate: 1.0,
            operator: None,
        };
        assert!(check_replay_args(&args).is_err());
        assert!(check_replay_args(&ReplayArgs {
            all: true,
            ..args.clone()
        })
        .is_ok());
        assert!(check_replay_args(&ReplayArgs {
            all: true,
            rate: -1.0,
            ..args
        })
        .is_err());
    }

    #[test]
    fn the_table_has_a_header_and_one_line_per_message() {
        let mut out = Vec::new();
        let rows = [letter("INVALID_UTF8", "acme-prod", "d1")];
        assert!(write_table(&mut out, &rows).is_ok());
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("ID"));
        assert!(text.contains("INVALID_UTF8"));
        assert!(text.contains("1 message(s)"));
    }
}
