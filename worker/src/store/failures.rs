//! `chunking_failures` rows and their `chunking.failed/v1` outbox events,
//! written together in one transaction.

use shared::contract::{ChunkingFailed, FAILED_ROUTING_KEY, FAILED_SCHEMA};
use shared::ErrorCode;
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

use super::versions::{EVENTS_EXCHANGE, EVENT_NAMESPACE};

/// One permanent failure of one message.
#[derive(Debug, Clone)]
pub struct FailureRecord {
    /// error code (docs/contract.md#error-codes).
    pub code: ErrorCode,
    /// What was wrong and where.
    pub detail: String,
    /// Tenant, when known.
    pub tenant_id: Option<String>,
    /// Document, when known.
    pub document_id: Option<String>,
    /// Version, when known.
    pub source_version_id: Option<String>,
    /// Input event id (or AMQP message id), when known.
    pub causation_id: Option<String>,
    /// Correlation id, when known.
    pub correlation_id: Option<String>,
    /// Deliveries so far, this one included.
    pub attempts: u32,
    /// sha256 hex of the message body.
    pub body_sha256: String,
    /// Body size in bytes.
    pub body_size: usize,
    /// When the message first failed (kept across replays).
    pub first_failed_at: OffsetDateTime,
    /// AMQP headers of the failure event (trace context).
    pub event_headers: serde_json::Value,
}

impl FailureRecord {
    /// Identity of the failure: the same body failing with the same code is
    /// the same failure, however often it is processed.
    pub fn failure_key(&self) -> String {
        format!("{}:{}", self.body_sha256, self.code.as_str())
    }

    /// Stable id of the failure event.
    pub fn event_id(&self) -> Uuid {
        Uuid::new_v5(
            &EVENT_NAMESPACE,
            format!("{FAILED_SCHEMA}|{}", self.failure_key()).as_bytes(),
        )
    }
}

/// Writes the failure row (or refreshes it) and enqueues its event.
pub async fn record_failure(pool: &PgPool, f: &FailureRecord) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO chunking_failures (failure_key, error_code, error_detail, tenant_id, document_id, \
           source_version_id, causation_id, correlation_id, attempts, body_sha256, body_size, first_failed_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (failure_key) DO UPDATE SET attempts = EXCLUDED.attempts, failed_at = now()",
    )
    .bind(f.failure_key())
    .bind(f.code.as_str())
    .bind(&f.detail)
    .bind(&f.tenant_id)
    .bind(&f.document_id)
    .bind(&f.source_version_id)
    .bind(&f.causation_id)
    .bind(&f.correlation_id)
    .bind(i32::try_from(f.attempts).unwrap_or(i32::MAX))
    .bind(&f.body_sha256)
    .bind(i32::try_from(f.body_size).unwrap_or(i32::MAX))
    .bind(f.first_failed_at)
    .execute(&mut *tx)
    .await?;

    let event_id = f.event_id();
    let event = ChunkingFailed {
        schema: FAILED_SCHEMA.to_owned(),
        event_id: event_id.to_string(),
        causation_id: f.causation_id.clone(),
        tenant_id: f.tenant_id.clone(),
        document_id: f.document_id.clone(),
        source_version_id: f.source_version_id.clone(),
        error_code: f.code,
        error_detail: f.detail.clone(),
        attempts: f.attempts,
        correlation_id: f.correlation_id.clone(),
        occurred_at: crate::clock::now_rfc3339(),
    };
    let payload = serde_json::to_string(&event).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    crate::outbox::table::enqueue(
        &mut tx,
        f.tenant_id.as_deref(),
        event_id,
        EVENTS_EXCHANGE,
        FAILED_ROUTING_KEY,
        &payload,
        &f.event_headers,
        crate::outbox::table::Publisher::Scan,
    )
    .await?;
    tx.commit().await
}
