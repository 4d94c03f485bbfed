//! The relay's loop: one broker connection, reconnected with backoff (to
//! the next node of `amqp.urls` after a loss, [`crate::amqp::nodes`]);
//! handed-over events published as they come, their rows marked in
//! batches; the scan for due rows when woken without an event and every
//! `outbox.poll_interval`; a bounded flush at shutdown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lapin::types::FieldTable;
use tokio_util::sync::CancellationToken;

use super::publish::{self, Marks, RelayError};
use crate::amqp::publisher::Publisher;
use crate::amqp::{ConnectError, Failover};
use crate::context::Context;
use crate::ops::broker_metrics::BrokerLink;

/// A relay session that lasted this long resets the reconnect backoff.
const HEALTHY_SESSION: Duration = Duration::from_secs(60);

/// How often published rows past the retention are deleted.
const PRUNE_INTERVAL: Duration = Duration::from_secs(3600);

/// Runs the relay until `stop` is cancelled, then publishes what is pending
/// (bounded by `outbox.flush_timeout`) and returns.
pub async fn run(ctx: Arc<Context>, stop: CancellationToken) {
    let mut reconnect = ctx.settings.worker.backoff();
    // The relay's own broker connection: its loss is one WARN, retries DEBUG.
    let mut lost = false;
    // Published rows not yet marked: kept across reconnections.
    let mut marks = Marks::default();
    let mut failover = Failover::new(ctx.settings.amqp.nodes.len());
    let labels = || ctx.settings.amqp.nodes.iter().map(|n| n.label.as_str());
    loop {
        let publisher = tokio::select! {
            p = connect(&ctx, &mut failover) => p,
            () = stop.cancelled() => return flush_marks_only(&ctx, &mut marks).await,
        };
        let (publisher, node) = match publisher {
            Ok(p) => p,
            Err(e) => {
                failover.lost();
                let delay = reconnect.next().unwrap_or(Duration::from_secs(5));
                if std::mem::replace(&mut lost, true) {
                    tracing::debug!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay cannot reach the broker");
                } else {
                    tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "outbox relay cannot reach the broker; events stay in the outbox, retrying");
                }
                tokio::select! {
                    () = tokio::time::sleep(delay) => continue,
                    () = stop.cancelled() => return flush_marks_only(&ctx, &mut marks).await,
                }
            }
        };
        let label = labels().nth(node).unwrap_or_default();
        if std::mem::replace(&mut lost, false) {
            tracing::info!(
                node = label,
                "outbox relay reached the broker again; relaying"
            );
        } else {
            tracing::info!(node = label, "outbox relay connected to the broker");
        }
        ctx.metrics
            .broker
            .connected(BrokerLink::Outbox, labels(), Some(node));
        let session_start = Instant::now();
        let relayed = relay_loop(&ctx, &publisher, &stop, &mut marks).await;
        ctx.metrics
            .broker
            .connected(BrokerLink::Outbox, labels(), None);
        failover.lost();
        match relayed {
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
                tracing::warn!(error = %e, node = label, retry_in_ms = delay.as_millis() as u64, "outbox relay lost the broker: events stay in the outbox, reconnecting (to the next node of amqp.urls)");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = stop.cancelled() => return flush_marks_only(&ctx, &mut marks).await,
                }
            }
        }
    }
}

/// At a shutdown without the broker: the rows already published are still
/// marked, so they are not published again.
async fn flush_marks_only(ctx: &Context, marks: &mut Marks) {
    if let Err(e) = marks.flush(ctx).await {
        tracing::warn!(error = %e, "could not mark published outbox rows; they are published again after their lease");
    }
}

/// Why the relay has no publisher.
#[derive(Debug, thiserror::Error)]
enum ConnectFailed {
    /// No node answered.
    #[error(transparent)]
    Nodes(#[from] ConnectError),
    /// A node answered, then failed the declaration or the channel.
    #[error("broker error: {0}")]
    Amqp(#[from] lapin::Error),
}

/// A publisher on the first node of the failover walk that answers, and
/// that node's index.
async fn connect(
    ctx: &Context,
    failover: &mut Failover,
) -> Result<((lapin::Connection, Publisher), usize), ConnectFailed> {
    let connected = failover
        .connect(&ctx.settings.amqp, "chunk-worker outbox")
        .await?;
    let conn = connected.connection;
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
    Ok(((conn, publisher), connected.node))
}

async fn relay_loop(
    ctx: &Context,
    (conn, publisher): &(lapin::Connection, Publisher),
    stop: &CancellationToken,
    marks: &mut Marks,
) -> Result<(), RelayError> {
    let mut db_backoff = ctx.settings.worker.backoff();
    // A connection lost while the relay waits is noticed at once (not at
    // the next publish): the relay moves on to the next node and
    // `chunking_broker_node` stays true.
    let mut events = conn.events_listener();
    let mut last_prune: Option<Instant> = None;
    let mut last_scan: Option<Instant> = None;
    let batch = usize::try_from(ctx.settings.outbox.batch_size).unwrap_or(100);
    loop {
        if let Some(retention) = ctx.settings.outbox.retention {
            if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_INTERVAL) {
                last_prune = Some(Instant::now());
                match super::table::prune(&ctx.pool, retention).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(deleted = n, "pruned published outbox rows"),
                    Err(e) => tracing::warn!(error = %e, "could not prune the outbox"),
                }
            }
        }
        if stop.is_cancelled() {
            let flushed = tokio::time::timeout(
                ctx.settings.outbox.flush_timeout,
                flush(ctx, publisher, batch, marks),
            )
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
            // Whatever was confirmed is marked, even after a failed flush.
            flush_marks_only(ctx, marks).await;
            let _ = conn.close(200, "shutdown").await;
            return Ok(());
        }
        let scan = ctx.outbox.take_scan_request()
            || last_scan.is_none_or(|t| t.elapsed() >= ctx.settings.outbox.poll_interval);
        if scan {
            last_scan = Some(Instant::now());
        }
        match step(ctx, publisher, batch, scan, marks).await {
            Ok(more) => {
                ctx.health.set_database(true);
                db_backoff = ctx.settings.worker.backoff();
                if more {
                    continue;
                }
                let until_mark = marks
                    .time_left()
                    .unwrap_or(ctx.settings.outbox.poll_interval);
                tokio::select! {
                    () = ctx.outbox.notified() => {}
                    () = tokio::time::sleep(until_mark.min(ctx.settings.outbox.poll_interval)) => {}
                    () = stop.cancelled() => {}
                    event = events.next() => match event {
                        Some(lapin::Event::Error(e)) => return Err(RelayError::Amqp(e)),
                        Some(_) => {}
                        None => return Err(RelayError::Amqp(lapin::ErrorKind::InvalidConnectionState(conn.status().state()).into())),
                    },
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

/// One turn: the scan (when due), then the handed-over events, then the
/// marks (when due). Returns whether more work is waiting.
async fn step(
    ctx: &Context,
    publisher: &Publisher,
    batch: usize,
    scan: bool,
    marks: &mut Marks,
) -> Result<bool, RelayError> {
    let mut more = false;
    if scan {
        more = publish::due(ctx, publisher).await? >= batch;
    }
    let events = ctx.outbox.take(batch);
    if !events.is_empty() {
        publish::handed_over(ctx, publisher, events, marks).await?;
        more = true;
    }
    if marks.is_due(batch) {
        marks.flush(ctx).await?;
    }
    Ok(more)
}

/// Publishes everything pending: the handed-over events first (their rows
/// are leased, so the scan would skip them), then every due row.
async fn flush(
    ctx: &Context,
    publisher: &Publisher,
    batch: usize,
    marks: &mut Marks,
) -> Result<(), RelayError> {
    loop {
        let events = ctx.outbox.take(batch);
        if events.is_empty() {
            break;
        }
        publish::handed_over(ctx, publisher, events, marks).await?;
    }
    marks.flush(ctx).await?;
    while publish::due(ctx, publisher).await? > 0 {}
    Ok(())
}
