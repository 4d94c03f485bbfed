//! Settling one delivery: ack, park in the retry queue, or dead-letter
//! (failure row, `chunking.failed` event, the original body with the
//! `x-error-*` headers, confirmed), as the module documentation of the
//! consumer describes.

use std::time::Duration;

use lapin::message::Delivery;
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

use super::acks::Acker;
use super::settlement::{MessageInfo, Settlement, DELIVERY_COUNT_HEADER};

/// What settling a delivery needs, held once per consume session: each way
/// a delivery can end (ack, park, dead-letter) is a method.
pub(super) struct Settler<'a> {
    /// The worker's shared state.
    pub ctx: &'a Context,
    /// Confirmed publishing (dead-letter exchange, retry queue).
    pub publisher: &'a Publisher,
    /// The consume channel (is the broker still there?).
    pub channel: &'a Channel,
    /// Sends the channel's acks, coalesced.
    pub acker: &'a Acker,
    /// Shutdown: stop retrying a failure row and leave the message unacked.
    pub shutdown: &'a CancellationToken,
}

impl Settler<'_> {
    /// Ends `delivery` as `settlement` says (see the consumer's module docs).
    pub(super) async fn settle(
        &self,
        delivery: Delivery,
        info: &MessageInfo,
        settlement: Settlement,
    ) {
        let ctx = self.ctx;
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
                self.ack(&delivery);
            }
            Settlement::Failed(failure) => {
                if self.dead_letter(&delivery, info, &failure).await {
                    ctx.metrics
                        .failed(ids.tenant_id.as_deref(), &info.strategy, failure.code);
                    self.ack(&delivery);
                }
            }
            Settlement::Park => self.park(&delivery, info).await,
            Settlement::Abandon => {
                tracing::warn!("channel closed while handling a message; the broker redelivers it");
            }
        }
    }

    /// Parks a message that was waiting on a transient fault at shutdown:
    /// republished to the retry queue (confirmed), then acked.
    async fn park(&self, delivery: &Delivery, info: &MessageInfo) {
        let props = delivery
            .properties
            .clone()
            .with_headers(parked_headers(delivery.properties.headers().as_ref()))
            .with_delivery_mode(2);
        match self
            .publisher
            .publish("", &self.ctx.topology.retry_queue(), &delivery.data, props)
            .await
        {
            Ok(()) => {
                self.ctx.metrics.operation(
                    info.ids.tenant_id.as_deref(),
                    &info.strategy,
                    OperationOutcome::Parked,
                );
                tracing::info!("shutdown while waiting on a transient fault; message parked in the retry queue");
                self.ack(delivery);
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not park the message; the broker redelivers it");
            }
        }
    }

    /// Hands the ack to the session's ack task (see `acks.rs`).
    fn ack(&self, delivery: &Delivery) {
        self.acker.ack(delivery.delivery_tag);
    }

    /// Records the failure and dead-letters the body; returns whether the
    /// delivery may be acked.
    async fn dead_letter(
        &self,
        delivery: &Delivery,
        info: &MessageInfo,
        failure: &Failure,
    ) -> bool {
        let (ctx, channel, shutdown) = (self.ctx, self.channel, self.shutdown);
        let (ids, attempts) = (&info.ids, info.attempts);
        // The detail goes to a header, a row, an event and a log: scrubbed
        // when the failure was made.
        let detail = failure.detail().to_owned();
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

        let mut backoff = ctx.settings.worker.backoff();
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

        let dead = DeadHeaders {
            failure: &Failure::new(failure.code, detail),
            attempts,
            first_failed_at,
            now,
        };
        let table = dead_letter_headers(existing, &dead);
        let props = delivery
            .properties
            .clone()
            .with_headers(table)
            .with_delivery_mode(2);
        match self
            .publisher
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
}

/// What a dead letter's headers say about its failure.
struct DeadHeaders<'a> {
    failure: &'a Failure,
    attempts: u32,
    first_failed_at: OffsetDateTime,
    now: OffsetDateTime,
}

/// The headers of a dead letter: the original ones without the broker's
/// bookkeeping, plus the docs/contract.md#failures `x-error-*` headers.
fn dead_letter_headers(existing: Option<&FieldTable>, d: &DeadHeaders<'_>) -> FieldTable {
    let mut table = existing.cloned().unwrap_or_default();
    strip_broker_headers(&mut table);
    headers::set_str(&mut table, headers::ERROR_CODE, d.failure.code.as_str());
    headers::set_str(
        &mut table,
        headers::ERROR_DETAIL,
        &truncate_header(d.failure.detail()),
    );
    headers::set_int(&mut table, headers::ATTEMPTS, i64::from(d.attempts));
    headers::set_str(
        &mut table,
        headers::FIRST_FAILED_AT,
        &crate::clock::format_rfc3339(d.first_failed_at),
    );
    headers::set_str(
        &mut table,
        headers::FAILED_AT,
        &crate::clock::format_rfc3339(d.now),
    );
    table
}

/// The headers of a parked message: the original ones without the broker's
/// bookkeeping.
fn parked_headers(existing: Option<&FieldTable>) -> FieldTable {
    let mut table = existing.cloned().unwrap_or_default();
    strip_broker_headers(&mut table);
    table
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

#[cfg(test)]
mod tests {
    use lapin::types::AMQPValue;
    use shared::ErrorCode;
    use time::macros::datetime;

    use super::*;

    fn received() -> FieldTable {
        let mut t = FieldTable::default();
        t.insert(DELIVERY_COUNT_HEADER.into(), AMQPValue::LongLongInt(3));
        headers::set_str(&mut t, "traceparent", "00-abc-def-01");
        t
    }

    #[test]
    fn a_dead_letter_carries_the_spec_headers_and_not_the_brokers() {
        let failure = Failure::new(ErrorCode::InvalidUtf8, "bad byte at 7");
        let t = dead_letter_headers(
            Some(&received()),
            &DeadHeaders {
                failure: &failure,
                attempts: 4,
                first_failed_at: datetime!(2026-11-20 10:00 UTC),
                now: datetime!(2026-11-20 10:05 UTC),
            },
        );
        let get = |k| headers::get_str(Some(&t), k);
        assert_eq!(get(headers::ERROR_CODE).as_deref(), Some("INVALID_UTF8"));
        assert_eq!(get(headers::ERROR_DETAIL).as_deref(), Some("bad byte at 7"));
        assert_eq!(headers::get_u64(Some(&t), headers::ATTEMPTS), Some(4));
        assert_eq!(
            get(headers::FIRST_FAILED_AT).as_deref(),
            Some("2026-11-20T10:00:00Z")
        );
        assert_eq!(
            get(headers::FAILED_AT).as_deref(),
            Some("2026-11-20T10:05:00Z")
        );
        assert_eq!(get("traceparent").as_deref(), Some("00-abc-def-01"));
        assert!(t.inner().get(DELIVERY_COUNT_HEADER).is_none());
    }

    #[test]
    fn a_parked_message_keeps_its_headers_but_the_delivery_count() {
        let t = parked_headers(Some(&received()));
        assert!(t.inner().get(DELIVERY_COUNT_HEADER).is_none());
        assert_eq!(
            headers::get_str(Some(&t), "traceparent").as_deref(),
            Some("00-abc-def-01")
        );
        assert!(parked_headers(None).inner().is_empty());
    }

    #[test]
    fn long_details_are_cut_to_a_thousand_characters() {
        assert_eq!(truncate_header("short"), "short");
        let long = "é".repeat(1500);
        let cut = truncate_header(&long);
        assert_eq!(cut.chars().count(), 1001);
        assert!(cut.ends_with('…'));
    }
}
