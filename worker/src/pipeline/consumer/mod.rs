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
//! re-established with backoff, to the next node of `amqp.urls`
//! ([`crate::amqp::nodes`]); deliveries in flight on the old channel are
//! redelivered by the broker, and storing is idempotent.

mod acks;
mod delivery;
mod settle;
mod settlement;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures_util::StreamExt;
use lapin::message::Delivery;
use lapin::options::{
    BasicCancelOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::Channel;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::amqp::publisher::Publisher;
use crate::amqp::topology::TopologyError;
use crate::amqp::{Connected, Failover};
use crate::context::Context;
use crate::ops::broker_metrics::BrokerLink;
use crate::ops::metrics::QueueKind;

use acks::Acker;
use delivery::process;
use settlement::SessionIo;

/// After the consumer is cancelled, how long to wait for another buffered
/// delivery before concluding there is none.
const DRAIN_IDLE: Duration = Duration::from_millis(250);

/// A session that consumed this long starts the reconnect back-off over.
const HEALTHY_SESSION: Duration = Duration::from_secs(60);

/// Runs until `shutdown` is cancelled and every in-flight message is
/// settled. Returns an error only when retrying cannot help: the topology
/// needs an operator (e.g. a classic retry queue to migrate).
pub async fn run(ctx: Arc<Context>, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mut backoff = ctx.settings.worker.backoff();
    let mut failover = Failover::new(ctx.settings.amqp.nodes.len());
    let labels = || ctx.settings.amqp.nodes.iter().map(|n| n.label.as_str());
    loop {
        if shutdown.is_cancelled() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let result = session(&ctx, &shutdown, &mut failover).await;
        ctx.metrics
            .broker
            .connected(BrokerLink::Consumer, labels(), None);
        let lost = failover.current();
        failover.lost();
        let e = match result {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if e.downcast_ref::<TopologyError>()
            .is_some_and(TopologyError::needs_operator)
        {
            return Err(e);
        }
        let change = ctx.health.set_broker(false);
        ctx.health.set_consuming(false);
        if started.elapsed() > HEALTHY_SESSION {
            backoff = ctx.settings.worker.backoff();
        }
        let delay = backoff.next().unwrap_or(Duration::from_secs(10));
        let error = format!("{e:#}");
        let retry_in_ms = delay.as_millis() as u64;
        // A lost connection is one WARN (`set_broker`); a session that
        // never came up names its reason once too.
        if change == crate::context::Change::Same && !ctx.health.broker_ever_up() {
            tracing::warn!(error, retry_in_ms, "cannot reach the broker; retrying");
        } else {
            tracing::debug!(error, retry_in_ms, "consumer session failed; reconnecting");
        }
        if let (Some(i), true) = (lost, ctx.settings.amqp.nodes.len() > 1) {
            let node = labels().nth(i).unwrap_or_default();
            let next: Vec<&str> = failover.order().filter_map(|k| labels().nth(k)).collect();
            tracing::info!(
                node,
                next = next.join(","),
                retry_in_ms,
                "lost broker node; trying the nodes of amqp.urls in this order"
            );
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shutdown.cancelled() => return Ok(()),
        }
    }
}

/// One connection's life: returns `Ok` after a graceful stop, `Err` when the
/// broker went away.
async fn session(
    ctx: &Arc<Context>,
    shutdown: &CancellationToken,
    failover: &mut Failover,
) -> anyhow::Result<()> {
    let Connected {
        connection: conn,
        node,
        label,
    } = failover
        .connect(&ctx.settings.amqp, "chunk-worker consumer")
        .await
        .context("connecting to the broker (amqp.urls)")?;
    ctx.topology
        .declare_on(
            &conn,
            ctx.settings.amqp.delivery_limit,
            ctx.settings.amqp.retry_delay,
        )
        .await?;
    let channel = conn.create_channel().await.context("opening a channel")?;
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
    ctx.metrics.broker.connected(
        BrokerLink::Consumer,
        ctx.settings.amqp.nodes.iter().map(|n| n.label.as_str()),
        Some(node),
    );
    let polling = shutdown.child_token();
    let _stop_polling = polling.clone().drop_guard();
    match conn.create_channel().await {
        Ok(ch) => {
            tokio::spawn(poll_queue_depths(ctx.clone(), ch, polling));
        }
        Err(e) => tracing::warn!(error = %e, "no channel for queue depth metrics"),
    }
    tracing::info!(node = %label, queue = %ctx.topology.requests_queue(), prefetch = ctx.settings.amqp.prefetch, concurrency = ctx.settings.worker.concurrency, "consuming");

    let batch = acks::batch(ctx.settings.amqp.prefetch, ctx.settings.worker.concurrency);
    let (acker, acks) = Acker::start(channel.clone(), ctx.metrics.clone(), batch);
    let io = SessionIo {
        publisher,
        channel: channel.clone(),
        acker,
    };
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
        spawn_process(&tracker, ctx, delivery, permit, &io, shutdown);
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
            spawn_process(&tracker, ctx, delivery, permit, &io, shutdown);
        }
        tracker.close();
        tracker.wait().await;
        // Every task has handed its ack over: send what waits, then close.
        drop(io);
        let _ = acks.await;
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
    io: &SessionIo,
    shutdown: &CancellationToken,
) {
    // Registered before the task starts, so that no `multiple` ack of a
    // later delivery can cover it while it is handled.
    io.acker.delivered(delivery.delivery_tag);
    let ctx = ctx.clone();
    let io = io.clone();
    let shutdown = shutdown.clone();
    tracker.spawn(async move {
        process(&ctx, delivery, &io, &shutdown).await;
        drop(permit);
    });
}
