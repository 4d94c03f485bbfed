//! Storing one version in one transaction: lock the document, decide by the
//! version order, write the version row, its chunks, its links and its
//! `chunking.completed` outbox row.

use shared::contract::COMPLETED_ROUTING_KEY;
use shared::links::Link;
use sqlx::PgPool;

use crate::store::links::{replace_links, DocumentKeys, LinkSource};

use super::chunks::insert_chunks;
use super::event::{self, completed_event_id, EVENTS_EXCHANGE};
use super::first::store_first_version;
use super::lock::{lock_document, Locked};
use super::row;
use super::types::{is_newer, NewVersion, StoreError, StoreOutcome, VersionOrder};

/// Stores a version with no links in one transaction (see the module docs).
pub async fn store_version(pool: &PgPool, v: &NewVersion<'_>) -> Result<StoreOutcome, StoreError> {
    store_version_with_links(pool, v, &[]).await
}

/// Stores a version and, when it becomes current, its `links` (replacing the
/// document's previous ones, see [`crate::store::links`]) in one transaction.
/// A new document's first version that takes no part in link resolution is
/// written by one statement instead ([`store_first_version`]); when its row turns out to
/// exist, the transaction runs.
pub async fn store_version_with_links(
    pool: &PgPool,
    v: &NewVersion<'_>,
    links: &[Link],
) -> Result<StoreOutcome, StoreError> {
    let keys = DocumentKeys::from_metadata(&v.metadata);
    if let Some(stored) = store_first_version(pool, v, links, &keys).await? {
        return Ok(stored);
    }
    store_in_transaction(pool, v, links, &keys).await
}

/// [`store_version_with_links`] for a document whose row a check just found
/// ([`Existing::No`]): the one-statement path of a first version is not
/// tried, since it would write nothing.
pub async fn store_later_version_with_links(
    pool: &PgPool,
    v: &NewVersion<'_>,
    links: &[Link],
) -> Result<StoreOutcome, StoreError> {
    store_in_transaction(pool, v, links, &DocumentKeys::from_metadata(&v.metadata)).await
}

/// The general path: lock (or create) the document row, compare versions,
/// write everything, commit.
pub(super) async fn store_in_transaction(
    pool: &PgPool,
    v: &NewVersion<'_>,
    links: &[Link],
    keys: &DocumentKeys,
) -> Result<StoreOutcome, StoreError> {
    let mut tx = pool.begin().await?;
    let (created, current) = match lock_document(&mut tx, v, keys).await? {
        Locked::Created => (true, None),
        Locked::Existing(current) => (false, current),
        Locked::AlreadyStored => {
            tx.commit().await?;
            return Ok(StoreOutcome::AlreadyStored);
        }
        Locked::OtherTenant => {
            tx.rollback().await?;
            return Err(StoreError::TenantMismatch {
                tenant_id: v.tenant_id.to_owned(),
                document_id: v.document_id.to_owned(),
            });
        }
    };
    let (current_id, current_seq, current_at) = match current {
        Some(c) => (Some(c.id), c.seq, c.occurred_at),
        None => (None, None, None),
    };

    let is_current = match &current_id {
        None => true,
        Some(current_id) => is_newer(
            &VersionOrder {
                source_version_id: v.source_version_id,
                seq: v.source_version_seq,
                occurred_at: v.occurred_at,
            },
            &VersionOrder {
                source_version_id: current_id,
                seq: current_seq,
                occurred_at: current_at,
            },
        ),
    };

    let previous: Vec<event::PreviousChunk> = match &current_id {
        Some(current_id) => {
            sqlx::query_as(
                "SELECT chunk_id, content_hash, granularity FROM chunks \
                 WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3 \
                 ORDER BY granularity, ordinal",
            )
            .bind(v.tenant_id)
            .bind(v.document_id)
            .bind(current_id)
            .fetch_all(&mut *tx)
            .await?
        }
        None => Vec::new(),
    };
    // The event is built now, by a pure function; it is written to the
    // outbox in this transaction, after the rows it announces.
    let event = event::completed_event(
        v,
        &event::Standing {
            is_current,
            previous_source_version_id: current_id.clone(),
            previous: &previous,
        },
        crate::clock::now_rfc3339(),
    );
    let (total_tokens, chunk_count) = (event.total_tokens, event.chunk_count);

    let insert = sqlx::query(
        "INSERT INTO source_versions (tenant_id, document_id, source_version_id, source_version_seq, \
           occurred_at, source_type, causation_id, correlation_id, content_sha256, normalized_markdown, \
           metadata, profile, chunker_version, tokenizer, chunk_count, total_tokens, status) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    );
    let insert = row::bind_version_facts(row::bind_key(insert, v), v, chunk_count, total_tokens);
    insert
        .bind(if is_current { "current" } else { "superseded" })
        .execute(&mut *tx)
        .await?;

    insert_chunks(&mut tx, v.chunks).await?;

    if is_current {
        if let Some(previous_id) = &current_id {
            sqlx::query(
                "UPDATE source_versions SET status = 'superseded' \
                 WHERE tenant_id = $1 AND document_id = $2 AND source_version_id = $3",
            )
            .bind(v.tenant_id)
            .bind(v.document_id)
            .bind(previous_id)
            .execute(&mut *tx)
            .await?;
        }
        if !created {
            // The current-version pointer and the keys other documents'
            // links resolve by, in one update (a created row has them).
            sqlx::query(
                "UPDATE documents SET current_source_version_id = $3, current_source_version_seq = $4, \
                   current_occurred_at = $5, page_id = $6, space_key = $7, title = $8, updated_at = now() \
                 WHERE tenant_id = $1 AND document_id = $2",
            )
            .bind(v.tenant_id)
            .bind(v.document_id)
            .bind(v.source_version_id)
            .bind(v.source_version_seq)
            .bind(v.occurred_at)
            .bind(&keys.page_id)
            .bind(&keys.space_key)
            .bind(&keys.title)
            .execute(&mut *tx)
            .await?;
        }
        // An older version stored late never touches the links.
        replace_links(
            &mut tx,
            &LinkSource {
                tenant_id: v.tenant_id,
                document_id: v.document_id,
                source_version_id: v.source_version_id,
                chunks: v.chunks,
                links,
                keys,
                first_version: created,
            },
        )
        .await?;
    }

    let event_id = completed_event_id(v.tenant_id, v.document_id, v.source_version_id);
    let changed = event.changed_chunk_ids.len();
    let payload = serde_json::to_string(&event).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let outbox_id = crate::outbox::table::enqueue(
        &mut tx,
        Some(v.tenant_id),
        event_id,
        EVENTS_EXCHANGE,
        COMPLETED_ROUTING_KEY,
        &payload,
        &v.event_headers,
        crate::outbox::table::Publisher::HandOver,
    )
    .await?;

    tx.commit().await?;
    Ok(StoreOutcome::Stored {
        is_current,
        chunk_count: v.chunks.len(),
        changed,
        event: outbox_id.map(|id| event::handed_over(id, event_id, payload, v)),
    })
}
