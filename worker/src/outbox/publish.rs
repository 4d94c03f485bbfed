//! Publishing outbox events with publisher confirms: the scanned rows in
//! a claiming transaction ([`due`]), the handed-over events straight from
//! memory ([`handed_over`]), and the batched marks of the latter ([`Marks`]).

use std::time::{Duration, Instant};

use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::BasicProperties;
use tracing::Instrument;

use super::committed::Pending;
use super::table::MARK_INTERVAL;
use crate::amqp::publisher::{PublishError, Publisher};
use crate::context::Context;
use crate::ops::trace::TraceContext;

/// Unroutable events are retried after this long at first, doubling up to
/// [`MAX_UNROUTABLE_DELAY_SECS`]: with nobody bound yet the event must not be
/// lost, nor block the rows behind it.
const FIRST_UNROUTABLE_DELAY_SECS: i64 = 1;
const MAX_UNROUTABLE_DELAY_SECS: i64 = 300;

#[derive(Debug, thiserror::Error)]
pub(super) enum RelayError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("broker: {0}")]
    Amqp(#[from] lapin::Error),
}

/// Claims the oldest due rows (`FOR UPDATE SKIP LOCKED`), publishes them
/// and marks them in the same transaction; returns how many rows it
/// claimed.
pub(super) async fn due(ctx: &Context, publisher: &Publisher) -> Result<usize, RelayError> {
    let mut tx = ctx.pool.begin().await?;
    let rows: Vec<Pending> = sqlx::query_as(
        "SELECT id, event_id, exchange, routing_key, payload, headers, attempts FROM outbox \
             WHERE published_at IS NULL AND next_attempt_at <= now() \
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
    )
    // Planned with the actual values every time: a generic plan made while
    // the table was young (no statistics yet) can stick to a scan of every
    // pending row.
    .persistent(false)
    .bind(ctx.settings.outbox.batch_size)
    .fetch_all(&mut *tx)
    .await?;
    if rows.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let sent = publish(ctx, publisher, &rows).await;
    if let Some(e) = sent.broken {
        // Rows published so far stay pending (the transaction rolls back)
        // and go out again: duplicates with the same event id.
        return Err(RelayError::Amqp(e));
    }
    let mut published = Vec::new();
    for (row, outcome) in rows.iter().zip(sent.outcomes) {
        match outcome {
            Ok(()) => published.push(row.id),
            Err(e) => defer(&mut *tx, row, &e).await?,
        }
    }
    mark(&mut *tx, &published).await?;
    tx.commit().await?;
    ctx.metrics.events_published(published.len() as u64);
    Ok(rows.len())
}

/// Publishes handed-over events from memory. The confirmed ones go to
/// `marks`; an unroutable one is deferred in the database (its row then
/// waits for the scan); after a broker error, the events not confirmed go
/// back to the hand-over, in order, and the error is returned.
pub(super) async fn handed_over(
    ctx: &Context,
    publisher: &Publisher,
    events: Vec<Pending>,
    marks: &mut Marks,
) -> Result<(), RelayError> {
    let sent = publish(ctx, publisher, &events).await;
    let mut published = 0u64;
    let mut events = events.into_iter();
    // Outcomes first: a zip that ran out of outcomes would have taken (and
    // dropped) one more event.
    for (outcome, event) in sent.outcomes.into_iter().zip(events.by_ref()) {
        match outcome {
            Ok(()) => {
                marks.add(event.id);
                published += 1;
            }
            Err(e) => {
                if let Err(db) = defer(&ctx.pool, &event, &e).await {
                    // Its lease runs out and the scan retries it.
                    tracing::debug!(error = %db, "could not defer an undelivered event");
                }
            }
        }
    }
    ctx.metrics.events_published(published);
    match sent.broken {
        Some(e) => {
            ctx.outbox.put_back(events.collect());
            Err(RelayError::Amqp(e))
        }
        None => Ok(()),
    }
}

/// What became of a batch: the outcome of each row up to the first broker
/// error, and that error (the rows from there on are not confirmed).
struct Sent {
    outcomes: Vec<Result<(), PublishError>>,
    broken: Option<lapin::Error>,
}

/// Sends every row before awaiting any confirm (one confirm round trip per
/// batch, not per event).
async fn publish(ctx: &Context, publisher: &Publisher, rows: &[Pending]) -> Sent {
    let mut sent = Vec::with_capacity(rows.len());
    for row in rows {
        let exchange = ctx.topology.name(&row.exchange);
        let span = tracing::info_span!(
            "publish",
            "otel.kind" = "producer",
            "messaging.system" = "rabbitmq",
            event_id = %row.event_id,
            routing_key = %row.routing_key,
        );
        TraceContext::from_json(&row.headers).adopt(&span);
        let s = publisher
            .send(
                &exchange,
                &row.routing_key,
                row.payload.as_bytes(),
                properties(row),
            )
            .instrument(span)
            .await;
        sent.push(s);
    }
    let mut outcomes = Vec::with_capacity(rows.len());
    for s in sent {
        let outcome = match s {
            Ok(p) => p.confirmed().await,
            Err(e) => Err(e),
        };
        match outcome {
            Err(PublishError::Amqp(e)) => {
                return Sent {
                    outcomes,
                    broken: Some(e),
                }
            }
            other => outcomes.push(other),
        }
    }
    Sent {
        outcomes,
        broken: None,
    }
}

fn properties(row: &Pending) -> BasicProperties {
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
    BasicProperties::default()
        .with_content_type(ShortString::from("application/json"))
        .with_delivery_mode(2)
        .with_message_id(ShortString::from(row.event_id.to_string()))
        .with_type(ShortString::from(schema))
        .with_headers(headers)
}

/// Records a failed delivery of `row` and when to retry it.
async fn defer(
    db: impl sqlx::PgExecutor<'_>,
    row: &Pending,
    error: &PublishError,
) -> Result<(), sqlx::Error> {
    let delay =
        (FIRST_UNROUTABLE_DELAY_SECS << row.attempts.clamp(0, 16)).min(MAX_UNROUTABLE_DELAY_SECS);
    tracing::warn!(event_id = %row.event_id, routing_key = %row.routing_key, error = %error, retry_in_s = delay, "event not delivered; will retry");
    sqlx::query(
        "UPDATE outbox SET attempts = attempts + 1, last_error = $2, \
           next_attempt_at = now() + make_interval(secs => $3) WHERE id = $1",
    )
    .bind(row.id)
    .bind(error.to_string())
    .bind(delay as f64)
    .execute(db)
    .await?;
    Ok(())
}

/// Marks rows published (the ones another relay published meanwhile are
/// left as they are).
async fn mark(db: impl sqlx::PgExecutor<'_>, ids: &[i64]) -> Result<(), sqlx::Error> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE outbox SET published_at = now(), attempts = attempts + 1, last_error = NULL \
         WHERE id = ANY($1) AND published_at IS NULL",
    )
    .persistent(false)
    .bind(ids)
    .execute(db)
    .await?;
    Ok(())
}

/// Handed-over rows published and not yet marked.
#[derive(Debug, Default)]
pub(super) struct Marks {
    ids: Vec<i64>,
    oldest: Option<Instant>,
}

impl Marks {
    fn add(&mut self, id: i64) {
        self.oldest.get_or_insert_with(Instant::now);
        self.ids.push(id);
    }

    /// Whether to mark now: `batch` rows wait, or the oldest has waited
    /// [`MARK_INTERVAL`].
    pub(super) fn is_due(&self, batch: usize) -> bool {
        self.ids.len() >= batch || self.time_left().is_some_and(|t| t.is_zero())
    }

    /// How long until the oldest waiting row is due (`None`: none waits).
    pub(super) fn time_left(&self) -> Option<Duration> {
        self.oldest
            .map(|t| MARK_INTERVAL.saturating_sub(t.elapsed()))
    }

    /// Marks every waiting row (kept for the next try on an error).
    pub(super) async fn flush(&mut self, ctx: &Context) -> Result<(), sqlx::Error> {
        mark(&ctx.pool, &self.ids).await?;
        self.ids.clear();
        self.oldest = None;
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_due_by_count_or_by_age() {
        let mut marks = Marks::default();
        assert!(!marks.is_due(3));
        assert_eq!(marks.time_left(), None);
        marks.add(1);
        marks.add(2);
        assert!(!marks.is_due(3));
        assert!(marks.time_left().is_some_and(|t| t <= MARK_INTERVAL));
        marks.add(3);
        assert!(marks.is_due(3));
        let mut old = Marks::default();
        old.add(7);
        old.oldest = Instant::now().checked_sub(MARK_INTERVAL);
        assert!(old.is_due(100));
    }
}
