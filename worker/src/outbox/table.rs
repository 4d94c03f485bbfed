//! The outbox table: adding an event inside the caller's transaction, the
//! hand-over lease, and pruning what was published.

use std::time::Duration;

use sqlx::{Postgres, Transaction};
use uuid::Uuid;

/// How long a handed-over row is left to the relay that committed it before
/// any relay's scan may publish it.
pub const HANDOVER_LEASE_SECS: u32 = 10;

/// Published handed-over rows are marked at most this long after their
/// confirm (or once a batch of them is together).
pub const MARK_INTERVAL: Duration = Duration::from_millis(100);

// A row's mark must land long before its lease runs out, or other relays'
// scans would publish it again: checked when the crate compiles.
const _: () = assert!(HANDOVER_LEASE_SECS as u128 * 1000 >= 50 * MARK_INTERVAL.as_millis());

/// Which relay publishes an outbox row's event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publisher {
    /// The committing process's relay, from memory: the row gets the
    /// hand-over lease, and the caller hands the event over
    /// ([`super::committed::Committed::push`]) once the transaction has committed.
    HandOver,
    /// Any relay's scan: the row is due at once, and the caller wakes the
    /// relay ([`super::committed::Committed::wake`]).
    Scan,
}

/// Adds an event to the outbox inside `tx` (idempotent on `event_id`);
/// `headers` (a JSON object of strings, e.g. `traceparent`) travel as AMQP
/// headers; `tenant_id` is the event's tenant (row-level security filters on
/// it; `None` for a message too broken to name one); `publisher` says who
/// publishes it. Returns the new row's id (`None` when the event was
/// already there).
#[allow(clippy::too_many_arguments)]
pub async fn enqueue(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Option<&str>,
    event_id: Uuid,
    exchange: &str,
    routing_key: &str,
    payload: &str,
    headers: &serde_json::Value,
    publisher: Publisher,
) -> Result<Option<i64>, sqlx::Error> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "INSERT INTO outbox (tenant_id, event_id, exchange, routing_key, payload, headers, next_attempt_at) \
             VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 THEN {} ELSE now() END) \
             ON CONFLICT (event_id) DO NOTHING RETURNING id",
            leased_until()
        )
    });
    sqlx::query_scalar(SQL.as_str())
        .bind(tenant_id)
        .bind(event_id)
        .bind(exchange)
        .bind(routing_key)
        .bind(payload)
        .bind(headers)
        .bind(publisher == Publisher::HandOver)
        .fetch_optional(&mut **tx)
        .await
}

/// SQL for the end of a new handed-over row's lease.
pub fn leased_until() -> String {
    format!("now() + make_interval(secs => {HANDOVER_LEASE_SECS})")
}

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
