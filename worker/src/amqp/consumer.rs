//! The consumer supervisor: connects, declares the topology, consumes with
//! manual acks and a bounded prefetch, and settles every delivery in one
//! place ([`settle`]) from the handler's outcome:
//!
//! * `Ok` -> ack (only after the transaction committed).
//! * `Permanent` -> `chunking_failures` row + `chunking.failed/v1` outbox
//!   event, then the original body to the dead-letter exchange with the
//!   `x-error-*` headers (confirmed), then ack.
//! * `Transient` -> retried in place with exponential backoff; while the
//!   database is down every worker slot waits here, so consumption pauses
//!   (the prefetch bounds what is held) and nothing is dead-lettered. At
//!   shutdown a waiting message is parked in the retry queue (confirmed) and
//!   acked.
//!
//! A delivery the broker counted more than `amqp.delivery_limit` times (the
//! worker crashed on it, or shut down holding it) is dead-lettered as
//! `DELIVERY_LIMIT` without being processed. A lost connection is
//! re-established with backoff; deliveries in flight on the old channel are
//! redelivered by the broker, and storing is idempotent.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use backon::{BackoffBuilder, ExponentialBuilder};
use futures_util::StreamExt;
use lapin::message::Delivery;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::Channel;
use sha2::{Digest, Sha256};
use shared::contract::FAILED_ROUTING_KEY;
use shared::ErrorCode;
use time::OffsetDateTime;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::amqp::headers;
use crate::amqp::publisher::Publisher;
use crate::context::Context;
use crate::handler::{self, Failure, HandlerError, MessageIds, Outcome};
use crate::metrics::{OperationOutcome, QueueKind, StrategyLabels};
use crate::store::failures::{self, FailureRecord};
use crate::store::is_transient;
use crate::trace::TraceContext;

/// After the consumer is cancelled, how long to wait for another buffered
/// delivery before concluding there is none.
const DRAIN_IDLE: Duration = Duration::from_millis(250);

/// Header the broker sets on redeliveries from quorum queues.
const DELIVERY_COUNT_HEADER: &str = "x-delivery-count";

/// Runs until `shutdown` is cancelled and every in-flight message is settled.
pub async fn run(ctx: Arc<Context>, shutdown: CancellationToken) {
    let mut backoff = backoff(&ctx);
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        match session(&ctx, &shutdown).await {
            Ok(()) => return,
            Err(e) => {
                ctx.health.set_broker(false);
                ctx.health.set_consuming(false);
                let delay = backoff.next().unwrap_or(Duration::from_secs(10));
                tracing::warn!(
                    error = format!("{e:#}"),
                    retry_in_ms = delay.as_millis() as u64,
                    "consumer session failed; reconnecting"
                );
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => return,
                }
            }
        }
    }
}

fn backoff(ctx: &Context) -> backon::ExponentialBackoff {
    ExponentialBuilder::default()
        .with_min_delay(ctx.settings.worker.retry_min_delay)
        .with_max_delay(ctx.settings.worker.retry_max_delay)
        .with_jitter()
        .without_max_times()
        .build()
}

/// One connection's life: returns `Ok` after a graceful stop, `Err` when the
/// broker went away.
async fn session(ctx: &Arc<Context>, shutdown: &CancellationToken) -> anyhow::Result<()> {
    let conn = crate::amqp::connect(&ctx.settings.amqp.url, "chunk-worker consumer")
        .await
        .context("connecting to the broker (amqp.url)")?;
    let channel = conn.create_channel().await.context("opening a channel")?;
    ctx.topology
        .declare(
            &channel,
            ctx.settings.amqp.delivery_limit,
            ctx.settings.amqp.retry_delay,
        )
        .await
        .context("declaring the topology (a queue or exchange exists with other arguments?)")?;
    channel
        .basic_qos(ctx.settings.amqp.prefetch, BasicQosOptions::default())
        .await
        .context("setting the prefetch")?;
    let publisher = Publisher::open(&conn)
        .await
        .context("opening the publisher channel")?;
    let tag = format!("chunk-worker-{}", uuid::Uuid::new_v4().simple());
    let mut consumer = channel
        .basic_consume(
            &ctx.topology.requests_queue(),
            &tag,
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .context("starting the consumer")?;
    ctx.health.set_broker(true);
    ctx.health.set_consuming(true);
    let polling = shutdown.child_token();
    let _stop_polling = polling.clone().drop_guard();
    match conn.create_channel().await {
        Ok(ch) => {
            tokio::spawn(poll_queue_depths(ctx.clone(), ch, polling));
        }
        Err(e) => tracing::warn!(error = %e, "no channel for queue depth metrics"),
    }
    tracing::info!(queue = %ctx.topology.requests_queue(), prefetch = ctx.settings.amqp.prefetch, concurrency = ctx.settings.worker.concurrency, "consuming");

    let slots = Arc::new(Semaphore::new(ctx.settings.worker.concurrency));
    let tracker = TaskTracker::new();
    let mut held: Option<Delivery> = None;
    let result = loop {
        let next = tokio::select! {
            biased;
            () = shutdown.cancelled() => break Ok(()),
            next = consumer.next() => next,
        };
        let delivery = match next {
            Some(Ok(d)) => d,
            Some(Err(e)) => break Err(anyhow::Error::new(e).context("consuming")),
            None => break Err(anyhow::anyhow!("the broker ended the consumer")),
        };
        let permit = tokio::select! {
            () = shutdown.cancelled() => {
                held = Some(delivery);
                break Ok(());
            }
            permit = slots.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break Ok(()) };
        spawn_process(
            &tracker, ctx, delivery, permit, &publisher, &channel, shutdown,
        );
    };
    ctx.health.set_consuming(false);
    if result.is_ok() {
        // Graceful: stop deliveries, finish what is in flight (acks need the
        // channel), then close.
        if let Err(e) = channel
            .basic_cancel(&tag, BasicCancelOptions::default())
            .await
        {
            tracing::warn!(error = %e, "could not cancel the consumer");
        }
        // Deliveries the broker pushed before the cancel are settled here
        // rather than handed back: in a quorum queue a returned message
        // counts as a delivery attempt, and enough restarts would push it
        // over the delivery limit.
        loop {
            let delivery = match held.take() {
                Some(d) => d,
                None => match tokio::time::timeout(DRAIN_IDLE, consumer.next()).await {
                    Ok(Some(Ok(d))) => d,
                    _ => break,
                },
            };
            let Ok(permit) = slots.clone().acquire_owned().await else {
                break;
            };
            spawn_process(
                &tracker, ctx, delivery, permit, &publisher, &channel, shutdown,
            );
        }
        tracker.close();
        tracker.wait().await;
        let _ = conn.close(200, "shutdown").await;
        tracing::info!("consumer stopped; in-flight messages settled");
    } else {
        // The channel is gone: in-flight tasks cannot ack and end on their
        // own; the broker redelivers their messages.
        tracker.close();
        let _ = conn.close(200, "consumer failed").await;
    }
    result
}

/// Reads the ready-message counts of the worker's queues (a passive declare
/// changes nothing) into `chunking_queue_messages` until `stop` fires or the
/// channel dies with its connection.
async fn poll_queue_depths(ctx: Arc<Context>, channel: Channel, stop: CancellationToken) {
    let queues = [
        (QueueKind::Requests, ctx.topology.requests_queue()),
        (QueueKind::Retry, ctx.topology.retry_queue()),
        (QueueKind::DeadLetter, ctx.topology.failed_queue()),
    ];
    let mut tick = tokio::time::interval(ctx.settings.telemetry.queue_poll_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        for (kind, name) in &queues {
            let options = QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            };
            match channel
                .queue_declare(name, options, FieldTable::default())
                .await
            {
                Ok(q) => ctx.metrics.set_queue_depth(*kind, q.message_count()),
                Err(e) => {
                    tracing::debug!(error = %e, queue = %name, "queue depth poll stopped");
                    return;
                }
            }
        }
    }
    let _ = channel.close(200, "done").await;
}

/// Handles one delivery on the tracker, holding its worker slot.
fn spawn_process(
    tracker: &TaskTracker,
    ctx: &Arc<Context>,
    delivery: Delivery,
    permit: tokio::sync::OwnedSemaphorePermit,
    publisher: &Publisher,
    channel: &Channel,
    shutdown: &CancellationToken,
) {
    let ctx = ctx.clone();
    let publisher = publisher.clone();
    let channel = channel.clone();
    let shutdown = shutdown.clone();
    tracker.spawn(async move {
        process(&ctx, delivery, &publisher, &channel, &shutdown).await;
        drop(permit);
    });
}

/// What is known about a delivery before it is handled.
struct MessageInfo {
    /// Ids read leniently from the body.
    ids: MessageIds,
    /// Deliveries so far, this one included.
    attempts: u32,
    /// Headers for the events it causes (the continued trace context).
    event_headers: serde_json::Value,
    /// The profile the settings choose for it (for the audit line).
    profile: String,
    /// The strategy and granularity of that profile (metric labels).
    strategy: StrategyLabels,
}

/// How a delivery ends.
enum Settlement {
    Done(Outcome),
    Failed(Failure),
    /// Shutdown while waiting on a transient fault.
    Park,
    /// The channel died: the broker will redeliver.
    Abandon,
}

impl Settlement {
    /// The `outcome` field of the summary log line.
    fn label(&self) -> &'static str {
        match self {
            Settlement::Done(Outcome::Stored { .. }) => "stored",
            Settlement::Done(Outcome::Duplicate) => "duplicate",
            Settlement::Failed(_) => "failed",
            Settlement::Park => "parked",
            Settlement::Abandon => "abandoned",
        }
    }
}

async fn process(
    ctx: &Context,
    delivery: Delivery,
    publisher: &Publisher,
    channel: &Channel,
    shutdown: &CancellationToken,
) {
    let redeliveries = headers::get_u64(
        delivery.properties.headers().as_ref(),
        DELIVERY_COUNT_HEADER,
    )
    .unwrap_or(0);
    let attempts = u32::try_from(redeliveries.saturating_add(1)).unwrap_or(u32::MAX);
    let ids = MessageIds::from_body(
        &delivery.data,
        delivery
            .properties
            .message_id()
            .as_ref()
            .map(|m| m.as_str()),
    );
    let _in_flight = ctx.metrics.consumed();
    let trace = TraceContext::from_headers(delivery.properties.headers().as_ref());
    // Ids only, never document text; `traceparent` continues upstream's trace
    // in the logs.
    let span = tracing::info_span!(
        "consume",
        "otel.kind" = "consumer",
        "messaging.system" = "rabbitmq",
        event_id = ids.event_id.as_deref(),
        tenant_id = ids.tenant_id.as_deref(),
        document_id = ids.document_id.as_deref(),
        source_version_id = ids.source_version_id.as_deref(),
        correlation_id = ids.correlation_id.as_deref(),
        traceparent = trace.traceparent.as_deref(),
        attempts,
    );
    trace.adopt(&span);
    // The profile the handler will choose (message, tenant, source type).
    let profile = ctx
        .settings
        .chunking
        .select(
            ids.tenant_id.as_deref().unwrap_or_default(),
            ids.source_type.as_deref(),
            ids.profile.as_deref(),
        )
        .to_owned();
    let strategy = StrategyLabels::for_profile(&ctx.engine, Some(&profile));
    let info = MessageInfo {
        profile,
        ids,
        attempts,
        event_headers: trace.event_headers(&span),
        strategy,
    };
    async move {
        let started = std::time::Instant::now();
        let settlement = if attempts > ctx.settings.amqp.delivery_limit {
        Settlement::Failed(Failure::new(
            ErrorCode::DeliveryLimit,
            format!(
                "delivered {attempts} times, over amqp.delivery_limit = {} (the worker crashed or stopped while holding it)",
                ctx.settings.amqp.delivery_limit
            ),
        ))
    } else {
        handle_with_retry(ctx, &delivery.data, &info.event_headers, channel, shutdown).await
    };
        let outcome = settlement.label();
        let strategy = info.strategy.clone();
        let info_profile = info.profile.clone();
        let chunk_count = match &settlement {
            Settlement::Done(Outcome::Stored { chunk_count, .. }) => Some(*chunk_count),
            _ => None,
        };
        // Seed 001's audit `user_id`: the broker-validated AMQP user id of
        // the publisher, when it set one.
        let user_id = delivery.properties.user_id().as_ref().map(|u| u.to_string());
        settle(
            ctx, delivery, &info, settlement, publisher, channel, shutdown,
        )
        .await;
        let elapsed = started.elapsed();
        ctx.metrics.observe_duration(&strategy, elapsed);
        // One summary line per message (the span adds the ids).
        tracing::info!(
            audit = true,
            outcome,
            chunker_profile = %info_profile,
            chunker_strategy = %strategy.strategy,
            granularity = %strategy.granularity,
            chunk_count,
            user_id = user_id.as_deref(),
            duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            "message handled"
        );
    }
    .instrument(span)
    .await;
}

async fn handle_with_retry(
    ctx: &Context,
    body: &[u8],
    event_headers: &serde_json::Value,
    channel: &Channel,
    shutdown: &CancellationToken,
) -> Settlement {
    let mut backoff = backoff(ctx);
    loop {
        match handler::handle(ctx, body, event_headers).await {
            Ok(outcome) => return Settlement::Done(outcome),
            Err(HandlerError::Permanent(f)) => return Settlement::Failed(f),
            Err(HandlerError::Transient(e)) => {
                if !channel.status().connected() {
                    return Settlement::Abandon;
                }
                ctx.metrics.transient_retry();
                let delay = backoff.next().unwrap_or(Duration::from_secs(10));
                tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "transient fault; message held and retried");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => return Settlement::Park,
                }
            }
        }
    }
}

async fn settle(
    ctx: &Context,
    delivery: Delivery,
    info: &MessageInfo,
    settlement: Settlement,
    publisher: &Publisher,
    channel: &Channel,
    shutdown: &CancellationToken,
) {
    let ids = &info.ids;
    match settlement {
        Settlement::Done(outcome) => {
            match &outcome {
                Outcome::Stored {
                    is_current,
                    chunk_count,
                    changed,
                } => {
                    ctx.metrics.operation(
                        ids.tenant_id.as_deref(),
                        &info.strategy,
                        OperationOutcome::Stored,
                    );
                    tracing::info!(chunk_count, changed, is_current, "source version stored");
                }
                Outcome::Duplicate => {
                    ctx.metrics.operation(
                        ids.tenant_id.as_deref(),
                        &info.strategy,
                        OperationOutcome::Duplicate,
                    );
                    tracing::info!("source version already stored; duplicate acked");
                }
            }
            ack(ctx, &delivery).await;
        }
        Settlement::Failed(failure) => {
            if dead_letter(ctx, &delivery, info, &failure, publisher, channel, shutdown).await {
                ctx.metrics
                    .failed(ids.tenant_id.as_deref(), &info.strategy, failure.code);
                ack(ctx, &delivery).await;
            }
        }
        Settlement::Park => {
            let mut table = delivery.properties.headers().clone().unwrap_or_default();
            strip_broker_headers(&mut table);
            let props = delivery
                .properties
                .clone()
                .with_headers(table)
                .with_delivery_mode(2);
            match publisher
                .publish("", &ctx.topology.retry_queue(), &delivery.data, props)
                .await
            {
                Ok(()) => {
                    ctx.metrics.operation(
                        ids.tenant_id.as_deref(),
                        &info.strategy,
                        OperationOutcome::Parked,
                    );
                    tracing::info!("shutdown while waiting on a transient fault; message parked in the retry queue");
                    ack(ctx, &delivery).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not park the message; the broker redelivers it");
                }
            }
        }
        Settlement::Abandon => {
            tracing::warn!("channel closed while handling a message; the broker redelivers it");
        }
    }
}

async fn ack(ctx: &Context, delivery: &Delivery) {
    match delivery.ack(BasicAckOptions::default()).await {
        Ok(_) => ctx.metrics.acked(),
        Err(e) => {
            tracing::warn!(error = %e, "ack failed; the broker redelivers the message and storing it again is a no-op");
        }
    }
}

/// Records the failure and dead-letters the body; returns whether the
/// delivery may be acked.
async fn dead_letter(
    ctx: &Context,
    delivery: &Delivery,
    info: &MessageInfo,
    failure: &Failure,
    publisher: &Publisher,
    channel: &Channel,
    shutdown: &CancellationToken,
) -> bool {
    let (ids, attempts) = (&info.ids, info.attempts);
    // The detail goes to a header, a row, an event and a log: no PII.
    let detail = crate::scrub::scrub_pii(&failure.detail);
    let existing = delivery.properties.headers().as_ref();
    let now = OffsetDateTime::now_utc();
    let first_failed_at = headers::get_str(existing, headers::FIRST_FAILED_AT)
        .and_then(|s| crate::clock::parse_rfc3339(&s))
        .unwrap_or(now);
    let record = FailureRecord {
        code: failure.code,
        detail: detail.clone(),
        tenant_id: ids.tenant_id.clone(),
        document_id: ids.document_id.clone(),
        source_version_id: ids.source_version_id.clone(),
        causation_id: ids.event_id.clone(),
        correlation_id: ids.correlation_id.clone(),
        attempts,
        body_sha256: hex::encode(Sha256::digest(&delivery.data)),
        body_size: delivery.data.len(),
        first_failed_at,
        event_headers: info.event_headers.clone(),
    };
    tracing::warn!(error_code = %failure.code, error_detail = %detail, "message failed permanently; dead-lettering");

    let mut backoff = backoff(ctx);
    loop {
        match failures::record_failure(&ctx.pool, &record).await {
            Ok(()) => {
                ctx.outbox.wake();
                break;
            }
            Err(e) if is_transient(&e) => {
                if !channel.status().connected() {
                    return false;
                }
                let delay = backoff.next().unwrap_or(Duration::from_secs(10));
                tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "cannot record the failure yet; retrying");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    // Leave it unacked: the broker redelivers it and the
                    // next worker records it.
                    () = shutdown.cancelled() => return false,
                }
            }
            Err(e) => {
                // The message itself still goes to the dead-letter queue:
                // losing the row is bad, losing the message is worse.
                tracing::error!(error = %e, "cannot record the failure row; dead-lettering the message anyway");
                break;
            }
        }
    }

    let mut table = existing.cloned().unwrap_or_default();
    strip_broker_headers(&mut table);
    headers::set_str(&mut table, headers::ERROR_CODE, failure.code.as_str());
    headers::set_str(&mut table, headers::ERROR_DETAIL, &truncate_header(&detail));
    headers::set_int(&mut table, headers::ATTEMPTS, i64::from(attempts));
    headers::set_str(
        &mut table,
        headers::FIRST_FAILED_AT,
        &crate::clock::format_rfc3339(first_failed_at),
    );
    headers::set_str(
        &mut table,
        headers::FAILED_AT,
        &crate::clock::format_rfc3339(now),
    );
    let props = delivery
        .properties
        .clone()
        .with_headers(table)
        .with_delivery_mode(2);
    match publisher
        .publish(
            &ctx.topology.dead_letter_exchange(),
            FAILED_ROUTING_KEY,
            &delivery.data,
            props,
        )
        .await
    {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(error = %e, "could not dead-letter the message; leaving it unacked for redelivery");
            false
        }
    }
}

/// Headers the broker manages must not travel into another queue.
fn strip_broker_headers(table: &mut FieldTable) {
    let mut kept = FieldTable::default();
    for (k, v) in table.inner() {
        if k.as_str() != DELIVERY_COUNT_HEADER {
            kept.insert(k.clone(), v.clone());
        }
    }
    *table = kept;
}

/// Header values are bounded so a huge detail cannot exceed frame limits.
fn truncate_header(detail: &str) -> String {
    const MAX_CHARS: usize = 1000;
    if detail.chars().count() <= MAX_CHARS {
        detail.to_owned()
    } else {
        let mut s: String = detail.chars().take(MAX_CHARS).collect();
        s.push('…');
        s
    }
}
