//! Settling one delivery: ack, park in the retry queue, or dead-letter
//! (failure row, `chunking.failed` event, the original body with the
//! `x-error-*` headers, confirmed), as the module documentation of the
//! consumer describes.

use std::time::Duration;

use lapin::message::Delivery;
use lapin::options::BasicAckOptions;
use lapin::types::FieldTable;
use lapin::Channel;
use sha2::{Digest, Sha256};
use shared::contract::FAILED_ROUTING_KEY;
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;

use crate::amqp::headers;
use crate::amqp::publisher::Publisher;
use crate::context::Context;
use crate::ops::metrics::OperationOutcome;
use crate::pipeline::handler::{Failure, Outcome};
use crate::store::failures::{self, FailureRecord};
use crate::store::is_transient;

use super::delivery::{MessageInfo, Settlement};
use super::{backoff, DELIVERY_COUNT_HEADER};

pub(super) async fn settle(
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
