//! Locking a document row before deciding anything about its versions.

use sqlx::{Postgres, Transaction};
use time::OffsetDateTime;

use crate::store::links::DocumentKeys;

use super::row;
use super::types::NewVersion;

/// The current version of a locked document.
#[derive(Debug)]
pub(super) struct CurrentVersion {
    pub(super) id: String,
    pub(super) seq: Option<i64>,
    pub(super) occurred_at: Option<OffsetDateTime>,
}

/// What [`lock_document`] found; in every case but `OtherTenant` the
/// transaction holds the document's row lock.
#[derive(Debug)]
pub(super) enum Locked {
    /// The row was just created: the document has no versions, links or
    /// incoming resolutions yet.
    Created,
    /// The row existed; its current version, if any.
    Existing(Option<CurrentVersion>),
    /// This version is stored already.
    AlreadyStored,
    /// The document belongs to another tenant.
    OtherTenant,
}

/// Creates or locks the document's row, serializing every writer of the
/// document: one round trip for a new document, three for an existing one.
pub(super) async fn lock_document(
    tx: &mut Transaction<'_, Postgres>,
    v: &NewVersion<'_>,
    keys: &DocumentKeys,
) -> Result<Locked, sqlx::Error> {
    // No conflict target: a concurrent insert of the same document may
    // surface on either unique index (the primary key or document_id), and
    // both mean "the row exists". An inserted row is this transaction's
    // until it commits, like a locked one.
    // A new document's first version is its current one: the row is
    // written complete, with no update after it.
    let insert = sqlx::query(
        "INSERT INTO documents (tenant_id, document_id, current_source_version_id, \
           current_source_version_seq, current_occurred_at, page_id, space_key, title) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING 1",
    );
    let created = row::bind_document_keys(row::bind_key(insert, v), keys)
        .fetch_optional(&mut **tx)
        .await?;
    if created.is_some() {
        return Ok(Locked::Created);
    }
    let (owner, id, seq, occurred_at): (
        String,
        Option<String>,
        Option<i64>,
        Option<OffsetDateTime>,
    ) = sqlx::query_as(
        "SELECT tenant_id, current_source_version_id, current_source_version_seq, current_occurred_at \
         FROM documents WHERE document_id = $1 FOR UPDATE",
    )
    .bind(v.document_id)
    .fetch_one(&mut **tx)
    .await?;
    if owner != v.tenant_id {
        return Ok(Locked::OtherTenant);
    }
    // A statement of its own: under READ COMMITTED its snapshot is taken
    // after the lock was granted, so it sees a version committed by the
    // transaction the lock waited for (a subquery of the locking statement
    // would not).
    let already: Option<i32> = sqlx::query_scalar(
        "SELECT 1 FROM source_versions \
         WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3",
    )
    .bind(v.tenant_id)
    .bind(v.document_id)
    .bind(v.source_version_id)
    .fetch_optional(&mut **tx)
    .await?;
    if already.is_some() {
        return Ok(Locked::AlreadyStored);
    }
    Ok(Locked::Existing(id.map(|id| CurrentVersion {
        id,
        seq,
        occurred_at,
    })))
}
