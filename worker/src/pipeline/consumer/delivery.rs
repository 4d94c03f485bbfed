//! One delivery: the handler with retries for transient faults, then its
//! settlement; the audit line and the metrics.

use std::time::Duration;

use lapin::message::Delivery;
use lapin::types::FieldTable;
use lapin::Channel;
use shared::ErrorCode;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::amqp::headers;
use crate::context::Context;
use crate::ops::metrics::StrategyLabels;
use crate::ops::trace::TraceContext;
use crate::pipeline::handler::{self, Failure, HandlerError, MessageIds, Outcome, Precheck};

use super::settle::Settler;
use super::settlement::{MessageInfo, SessionIo, Settlement, DELIVERY_COUNT_HEADER};

pub(super) async fn process(
    ctx: &Context,
    delivery: Delivery,
    io: &SessionIo,
    shutdown: &CancellationToken,
) {
    let channel = &io.channel;
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
        precheck: precheck_for(
            delivery.redelivered,
            redeliveries,
            delivery.properties.headers().as_ref(),
        ),
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
        guarded(ctx, &info, &delivery.data, channel, shutdown).await
    };
        let outcome = settlement.label();
        let strategy = info.strategy.clone();
        let info_profile = info.profile.clone();
        let chunk_count = match &settlement {
            Settlement::Done(Outcome::Stored { chunk_count, .. }) => Some(*chunk_count),
            _ => None,
        };
        // The Chunking System specification's audit `user_id`: the broker-validated AMQP user id of
        // the publisher, when it set one.
        let user_id = delivery.properties.user_id().as_ref().map(|u| u.to_string());
        let settler = Settler {
            ctx,
            publisher: &io.publisher,
            channel,
            acker: &io.acker,
            shutdown,
        };
        settler.settle(delivery, &info, settlement).await;
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

/// [`handle_with_retry`] behind the strategy's circuit breaker (shared with
/// the API, [`crate::breaker`]): while the circuit is open the message is
/// parked in the retry queue rather than chunked. The strategy's failures
/// (`INTERNAL`, and `VALIDATION_FAILED`: output that broke the checklist is
/// a strategy bug) count against the circuit, and once it is open such a
/// failure is parked too rather than dead-lettered: a systemic fault must
/// not empty the input queue into the dead-letter queue. Bad input, a
/// version already stored, a shutdown or a lost channel say nothing about
/// the strategy (a trial ending so is given back).
async fn guarded(
    ctx: &Context,
    info: &MessageInfo,
    body: &[u8],
    channel: &Channel,
    shutdown: &CancellationToken,
) -> Settlement {
    use crate::breaker::{State, Verdict};
    let strategy = info.strategy.strategy.as_str();
    let permit = match ctx.breakers.admit(strategy) {
        Ok(permit) => permit,
        Err(refused) => {
            tracing::debug!(
                strategy,
                retry_in_s = refused.retry_after_s,
                "circuit open: message parked"
            );
            return Settlement::Park;
        }
    };
    let settlement = handle_with_retry(ctx, body, info, channel, shutdown).await;
    let verdict = match &settlement {
        Settlement::Done(Outcome::Stored { .. }) => Verdict::Success,
        Settlement::Failed(f) if is_strategy_failure(f.code) => Verdict::Failure,
        _ => Verdict::None,
    };
    let state = permit.settle(verdict);
    if verdict == Verdict::Failure && state != State::Closed {
        return Settlement::Park;
    }
    settlement
}

/// Whether a failure is the strategy's own (counted by its circuit): a
/// bug, or the chat model `llm_chaptering` depends on being down (once the
/// circuit opens, its messages wait in the retry queue instead of being
/// dead-lettered one by one).
fn is_strategy_failure(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::Internal | ErrorCode::ValidationFailed | ErrorCode::LlmUnavailable
    )
}

/// Whether a delivery may repeat an earlier handling of its message, so
/// that the handler checks for the stored version before chunking: the
/// broker redelivers it (`redelivered`, or a quorum queue's delivery count:
/// a consumer or its channel went away holding it), it came back from the
/// retry queue (`x-death`), or `dlq replay` republished it. A first
/// delivery skips the check (a new version, the common case, saves a query
/// and its wait; storing still finds a duplicate, after chunking it).
fn precheck_for(redelivered: bool, redeliveries: u64, table: Option<&FieldTable>) -> Precheck {
    let has = |key: &str| table.is_some_and(|t| t.inner().contains_key(key));
    if redelivered || redeliveries > 0 || has(headers::DEATH) || has(headers::REPLAY_ID) {
        Precheck::Check
    } else {
        Precheck::Skip
    }
}

async fn handle_with_retry(
    ctx: &Context,
    body: &[u8],
    info: &MessageInfo,
    channel: &Channel,
    shutdown: &CancellationToken,
) -> Settlement {
    let mut backoff = ctx.settings.worker.backoff();
    let mut precheck = info.precheck;
    loop {
        match handler::handle(ctx, body, &info.event_headers, precheck).await {
            Ok(outcome) => {
                ctx.health.set_database(true);
                return Settlement::Done(outcome);
            }
            Err(HandlerError::Permanent(f)) => return Settlement::Failed(f),
            Err(HandlerError::Transient(e)) => {
                if !channel.status().connected() {
                    return Settlement::Abandon;
                }
                ctx.metrics.transient_retry();
                // A fault after the commit (a lost reply) may have stored it.
                precheck = Precheck::Check;
                let delay = backoff.next().unwrap_or(Duration::from_secs(10));
                // Transient faults are the database's: the loss is logged
                // once (WARN, by `set_database`), each retry at DEBUG.
                ctx.health.set_database(false);
                // A transient error may quote the source's file name.
                tracing::debug!(error = %crate::scrub::scrub_pii(&e.to_string()), retry_in_ms = delay.as_millis() as u64, "transient fault; message held and retried");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => return Settlement::Park,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use lapin::types::{AMQPValue, FieldTable};

    use super::{precheck_for, Precheck};

    fn with(key: &str) -> FieldTable {
        let mut t = FieldTable::default();
        t.insert(key.into(), AMQPValue::LongString("x".into()));
        t
    }

    #[test]
    fn only_a_delivery_that_may_repeat_one_handled_before_is_prechecked() {
        // A first delivery, with or without unrelated headers.
        assert_eq!(precheck_for(false, 0, None), Precheck::Skip);
        assert_eq!(
            precheck_for(false, 0, Some(&with("traceparent"))),
            Precheck::Skip
        );
        // Redelivered by the broker, counted by a quorum queue, back from
        // the retry queue, or replayed from the dead-letter queue.
        assert_eq!(precheck_for(true, 0, None), Precheck::Check);
        assert_eq!(precheck_for(false, 1, None), Precheck::Check);
        assert_eq!(
            precheck_for(false, 0, Some(&with("x-death"))),
            Precheck::Check
        );
        assert_eq!(
            precheck_for(false, 0, Some(&with("x-replay-id"))),
            Precheck::Check
        );
    }
}
