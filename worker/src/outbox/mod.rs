//! Transactional outbox: events are written in the same transaction as the
//! data they announce ([`enqueue`]) and published by the [`run`] relay with
//! publisher confirms and `mandatory`. A row is marked published only after
//! the broker confirmed it; after a crash the relay simply publishes what is
//! still pending (at-least-once; event ids are stable, so a re-publish is a
//! duplicate downstream can drop). Rows are claimed with `FOR UPDATE SKIP
//! LOCKED`, so several workers never publish the same row at the same time.
//!
//! Rows this process committed are handed to the relay by id ([`Committed`])
//! and claimed by primary key; the scan for due rows (other processes'
//! leftovers, failure events, retries of unroutable events) runs when woken
//! without ids and at least every `outbox.poll_interval`. Scanning after
//! every commit read ~1,000 dead index entries per claim under load: a
//! published row's entry stays in the partial index until vacuum or a scan
//! that can prove it dead to every transaction.

pub mod committed;

pub use committed::Committed;

use std::sync::Arc;
use std::time::Duration;

use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::BasicProperties;
use sqlx::{Postgres, Transaction};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;

use crate::amqp::publisher::{PublishError, Publisher};
use crate::context::Context;
use crate::ops::trace::TraceContext;

/// Unroutable events are retried after this long at first, doubling up to
/// [`MAX_UNROUTABLE_DELAY_SECS`]: with nobody bound yet the event must not be
/// lost, nor block the rows behind it.
const FIRST_UNROUTABLE_DELAY_SECS: i64 = 1;
const MAX_UNROUTABLE_DELAY_SECS: i64 = 300;

/// A relay session that lasted this long resets the reconnect backoff.
const HEALTHY_SESSION: Duration = Duration::from_secs(60);

/// Adds an event to the outbox inside `tx` (idempotent on `event_id`);
/// `headers` (a JSON object of strings, e.g. `traceparent`) travel as AMQP
/// headers; `tenant_id` is the event's tenant (row-level security filters on
/// it; `None` for a message too broken to name one). Returns the new row's id (`None` when the event was already
/// there), to hand to [`Committed::push`] once `tx` has committed.
pub async fn enqueue(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Option<&str>,
    event_id: Uuid,
    exchange: &str,
    routing_key: &str,
    payload: &str,
    headers: &serde_json::Value,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO outbox (tenant_id, event_id, exchange, routing_key, payload, headers) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING RETURNING id",
    )
    .bind(tenant_id)
    .bind(event_id)
    .bind(exchange)
    .bind(routing_key)
    .bind(payload)
    .bind(headers)
    .fetch_optional(&mut **tx)
    .await
}

/// Which rows a batch claims.
#[derive(Debug)]
enum Claim {
    /// These rows, by primary key (skipped if published or not yet due).
    Ids(Vec<i64>),
    /// The oldest due rows.
    Due,
}

#[derive(Debug, thiserror::Error)]
enum RelayError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("broker: {0}")]
    Amqp(#[from] lapin::Error),
}

#[derive(sqlx::FromRow)]
struct PendingRow {
    id: i64,
    event_id: Uuid,
    exchange: String,
    routing_key: String,
    payload: String,
    headers: serde_json::Value,
    attempts: i32,
}

/// Runs the relay until `stop` is cancelled, then publishes what is pending
/// (bounded by `outbox.flush_timeout`) and returns.
pub async fn run(ctx: Arc<Context>, stop: CancellationToken) {
    let mut reconnect = ctx.settings.worker.backoff();
    // The relay's own broker connection: its loss is one WARN, retries DEBUG.
    let mut lost = false;
    loop {
        let publisher = tokio::select! {
            p = connect(&ctx) => p,
            () = stop.cancelled() => return,
        };
        let publisher = match publisher {
            Ok(p) => p,
            Err(e) => {
                let delay = reconnect.next().unwrap_or(Duration::from_secs(5));
                if std::mem::replace(&mut lost, true) {
                    tracing::debug!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay cannot reach the broker");
                } else {
                    tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay cannot reach the broker; events stay in the outbox, retrying");
                }
                tokio::select! {
                    () = tokio::time::sleep(delay) => continue,
                    () = stop.cancelled() => return,
                }
            }
        };
        if std::mem::replace(&mut lost, false) {
            tracing::info!("outbox relay reached the broker again; relaying");
        }
        let session_start = std::time::Instant::now();
        match relay_loop(&ctx, &publisher, &stop).await {
            Ok(()) => return,
            Err(e) => {
                // A session that lived a while starts the backoff over; one
                // that fails at once (e.g. the broker closes the channel on
                // every publish) must not spin.
                if session_start.elapsed() > HEALTHY_SESSION {
                    reconnect = ctx.settings.worker.backoff();
                }
                let delay = reconnect.next().unwrap_or(Duration::from_secs(5));
                lost = true;
                tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay lost the broker: events stay in the outbox, reconnecting");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = stop.cancelled() => return,
                }
            }
        }
    }
}

async fn connect(ctx: &Context) -> lapin::Result<(lapin::Connection, Publisher)> {
    let conn = crate::amqp::connect(&ctx.settings.amqp, "chunk-worker outbox").await?;
    // The relay may run before the consumer declared the topology (pending
    // rows from a previous run): publishing to a missing exchange would close
    // the channel, so the exchange is declared here too (idempotent).
    let channel = conn.create_channel().await?;
    channel
        .exchange_declare(
            &ctx.topology.events_exchange(),
            lapin::ExchangeKind::Topic,
            lapin::options::ExchangeDeclareOptions {
                durable: true,
                ..lapin::options::ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    let _ = channel.close(200, "declared").await;
    let publisher = Publisher::open(&conn).await?;
    Ok((conn, publisher))
}

/// How often published rows past the retention are deleted.
const PRUNE_INTERVAL: Duration = Duration::from_secs(3600);

/// Deletes published rows older than the retention (at most 10 000 per call,
/// so the delete never holds locks for long).
pub async fn prune(pool: &sqlx::PgPool, retention: Duration) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox \
           WHERE published_at < now() - make_interval(secs => $1) LIMIT 10000)",
    )
    .bind(retention.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

async fn relay_loop(
    ctx: &Context,
    (conn, publisher): &(lapin::Connection, Publisher),
    stop: &CancellationToken,
) -> Result<(), RelayError> {
    let mut db_backoff = ctx.settings.worker.backoff();
    let mut last_prune: Option<std::time::Instant> = None;
    let mut last_scan: Option<std::time::Instant> = None;
    let batch = usize::try_from(ctx.settings.outbox.batch_size).unwrap_or(100);
    loop {
        if let Some(retention) = ctx.settings.outbox.retention {
            if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_INTERVAL) {
                last_prune = Some(std::time::Instant::now());
                match prune(&ctx.pool, retention).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(deleted = n, "pruned published outbox rows"),
                    Err(e) => tracing::warn!(error = %e, "could not prune the outbox"),
                }
            }
        }
        if stop.is_cancelled() {
            let flushed = tokio::time::timeout(ctx.settings.outbox.flush_timeout, async {
                loop {
                    // The scan finds every pending row, the handed-over
                    // ones included.
                    match publish_batch(ctx, publisher, Claim::Due).await {
                        Ok(0) => return Ok(()),
                        Ok(_) => continue,
                        Err(e) => return Err(e),
                    }
                }
            })
            .await;
            match flushed {
                Ok(Ok(())) => tracing::info!("outbox flushed"),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "outbox flush stopped early; pending events are published at the next start")
                }
                Err(_) => tracing::warn!(
                    "outbox flush timed out; pending events are published at the next start"
                ),
            }
            let _ = conn.close(200, "shutdown").await;
            return Ok(());
        }
        let scan = ctx.outbox.take_scan_request()
            || last_scan.is_none_or(|t| t.elapsed() >= ctx.settings.outbox.poll_interval);
        let claim = if scan {
            // Finds the handed-over rows too (ids taken later are then
            // claimed already published, and skipped).
            last_scan = Some(std::time::Instant::now());
            Some(Claim::Due)
        } else {
            let ids = ctx.outbox.take(batch);
            (!ids.is_empty()).then_some(Claim::Ids(ids))
        };
        let outcome = match claim {
            Some(Claim::Due) => publish_batch(ctx, publisher, Claim::Due)
                .await
                .map(|n| n >= batch),
            Some(claim) => publish_batch(ctx, publisher, claim)
                .await
                .map(|_| !ctx.outbox.is_idle()),
            None => Ok(false),
        };
        match outcome {
            Ok(more) => {
                ctx.health.set_database(true);
                db_backoff = ctx.settings.worker.backoff();
                if more {
                    continue;
                }
                tokio::select! {
                    () = ctx.outbox.notified() => {}
                    () = tokio::time::sleep(ctx.settings.outbox.poll_interval) => {}
                    () = stop.cancelled() => {}
                }
            }
            Err(RelayError::Db(e)) => {
                let delay = db_backoff.next().unwrap_or(Duration::from_secs(5));
                ctx.health.set_database(false);
                tracing::debug!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay cannot reach the database");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = stop.cancelled() => {}
                }
            }
            Err(e @ RelayError::Amqp(_)) => return Err(e),
        }
    }
}

/// Publishes one batch of rows; returns how many rows it handled.
async fn publish_batch(
    ctx: &Context,
    publisher: &Publisher,
    claim: Claim,
) -> Result<usize, RelayError> {
    let mut tx = ctx.pool.begin().await?;
    let rows: Vec<PendingRow> = match claim {
        Claim::Ids(ids) => sqlx::query_as(
            "SELECT id, event_id, exchange, routing_key, payload, headers, attempts FROM outbox \
                 WHERE id = ANY($1) AND published_at IS NULL AND next_attempt_at <= now() \
                 ORDER BY id FOR UPDATE SKIP LOCKED",
        )
        // Planned with the actual ids every time: a generic plan made while
        // the table was young (no statistics yet) can stick to a scan of
        // every pending row.
        .persistent(false)
        .bind(ids)
        .fetch_all(&mut *tx)
        .await?,
        Claim::Due => sqlx::query_as(
            "SELECT id, event_id, exchange, routing_key, payload, headers, attempts FROM outbox \
                 WHERE published_at IS NULL AND next_attempt_at <= now() \
                 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
        )
        .persistent(false)
        .bind(ctx.settings.outbox.batch_size)
        .fetch_all(&mut *tx)
        .await?,
    };
    if rows.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    // Every row is sent before any confirm is awaited: one confirm round
    // trip per batch instead of one per event.
    let mut pending = Vec::with_capacity(rows.len());
    for row in &rows {
        let exchange = ctx.topology.name(&row.exchange);
        let mut headers = FieldTable::default();
        if let Some(extra) = row.headers.as_object() {
            for (k, v) in extra {
                if let Some(v) = v.as_str() {
                    crate::amqp::headers::set_str(&mut headers, k, v);
                }
            }
        }
        let schema = schema_of(&row.payload);
        headers.insert(
            ShortString::from("schema"),
            AMQPValue::LongString(LongString::from(schema.clone())),
        );
        let props = BasicProperties::default()
            .with_content_type(ShortString::from("application/json"))
            .with_delivery_mode(2)
            .with_message_id(ShortString::from(row.event_id.to_string()))
            .with_type(ShortString::from(schema))
            .with_headers(headers);
        let span = tracing::info_span!(
            "publish",
            "otel.kind" = "producer",
            "messaging.system" = "rabbitmq",
            event_id = %row.event_id,
            routing_key = %row.routing_key,
        );
        TraceContext::from_json(&row.headers).adopt(&span);
        let sent = publisher
            .send(&exchange, &row.routing_key, row.payload.as_bytes(), props)
            .instrument(span)
            .await;
        pending.push(sent);
    }
    let mut published = Vec::new();
    for (row, sent) in rows.iter().zip(pending) {
        let outcome = match sent {
            Ok(p) => p.confirmed().await,
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => published.push(row.id),
            Err(PublishError::Amqp(e)) => {
                // Rows published so far stay pending (the transaction rolls
                // back) and go out again: duplicates with the same event id.
                return Err(RelayError::Amqp(e));
            }
            Err(e) => {
                let delay = (FIRST_UNROUTABLE_DELAY_SECS << row.attempts.clamp(0, 16))
                    .min(MAX_UNROUTABLE_DELAY_SECS);
                tracing::warn!(event_id = %row.event_id, routing_key = %row.routing_key, error = %e, retry_in_s = delay, "event not delivered; will retry");
                sqlx::query(
                    "UPDATE outbox SET attempts = attempts + 1, last_error = $2, \
                       next_attempt_at = now() + make_interval(secs => $3) WHERE id = $1",
                )
                .bind(row.id)
                .bind(e.to_string())
                .bind(delay as f64)
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    if !published.is_empty() {
        sqlx::query(
            "UPDATE outbox SET published_at = now(), attempts = attempts + 1, last_error = NULL \
             WHERE id = ANY($1)",
        )
        .persistent(false)
        .bind(&published)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    ctx.metrics.events_published(published.len() as u64);
    Ok(rows.len())
}

fn schema_of(payload: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: String,
    }
    serde_json::from_str::<Schema>(payload)
        .map(|s| s.schema)
        .unwrap_or_default()
}
