//! `dlq_replays`: one row per `chunk-worker dlq replay` run, with its filters
//! and running counts.

use uuid::Uuid;

/// The counts of a run so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayCounts {
    /// Messages that matched the filters.
    pub matched: u64,
    /// Republished and acked.
    pub replayed: u64,
    /// Left in the queue (the run's own returns, over the limit).
    pub skipped: u64,
    /// Could not be republished.
    pub failed: u64,
}

/// Records the start of a run.
pub async fn start(
    pool: &sqlx::PgPool,
    id: Uuid,
    operator: &str,
    filters: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO dlq_replays (id, operator, filters) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(operator)
        .bind(filters)
        .execute(pool)
        .await
        .map(|_| ())
}

/// Updates a run's counts (and its end, when `finished`).
pub async fn record(
    pool: &sqlx::PgPool,
    id: Uuid,
    c: ReplayCounts,
    finished: bool,
) -> Result<(), sqlx::Error> {
    let n = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    let sql = if finished {
        "UPDATE dlq_replays SET matched = $2, replayed = $3, skipped = $4, failed = $5, finished_at = now() WHERE id = $1"
    } else {
        "UPDATE dlq_replays SET matched = $2, replayed = $3, skipped = $4, failed = $5 WHERE id = $1"
    };
    sqlx::query(sql)
        .bind(id)
        .bind(n(c.matched))
        .bind(n(c.replayed))
        .bind(n(c.skipped))
        .bind(n(c.failed))
        .execute(pool)
        .await
        .map(|_| ())
}
