//! Storing one source version: `documents`, `source_versions`, all `chunks`
//! and the `chunking.completed` outbox row in ONE transaction.
//!
//! Concurrency: the document row is locked (`SELECT ... FOR UPDATE`) before
//! anything is decided, so two workers storing versions of the same document
//! serialize; the version ordering ([`is_newer`]) is then a plain comparison.
//! Idempotency: a version that is already stored is a no-op.
//! Links: a version that becomes current replaces its document's links in
//! the same transaction ([`crate::store::links`]).

mod chunks;
pub mod event;
mod first;
mod group;
mod lock;
mod precheck;
mod row;
mod turns;

use shared::contract::COMPLETED_ROUTING_KEY;
use shared::links::Link;
use shared::Chunk;
use sqlx::PgPool;
use time::OffsetDateTime;

use crate::store::links::{replace_links, DocumentKeys, LinkSource};

use chunks::insert_chunks;
use lock::{lock_document, Locked};

pub use event::{change_set, completed_event_id, EVENTS_EXCHANGE, EVENT_NAMESPACE};
pub use first::{store_first_version, store_first_versions, FirstVersion};
pub use group::{FirstVersions, OwnedVersion};
pub use precheck::Prechecks;

/// Everything stored for one source version.
#[derive(Debug)]
pub struct NewVersion<'a> {
    /// Owning tenant.
    pub tenant_id: &'a str,
    /// Document id.
    pub document_id: &'a str,
    /// Source version id.
    pub source_version_id: &'a str,
    /// Upstream's version number, if any.
    pub source_version_seq: Option<i64>,
    /// Upstream's timestamp, if any.
    pub occurred_at: Option<OffsetDateTime>,
    /// `confluence` / `file`.
    pub source_type: Option<&'a str>,
    /// The input message's event id.
    pub causation_id: &'a str,
    /// Correlation id.
    pub correlation_id: Option<&'a str>,
    /// sha256 hex of the markdown bytes.
    pub content_sha256: String,
    /// The normalized document.
    pub normalized: &'a str,
    /// The input's metadata object.
    pub metadata: serde_json::Value,
    /// Profile name.
    pub profile: &'a str,
    /// `strategy:version`.
    pub chunker_version: &'a str,
    /// Tokenizer name.
    pub tokenizer: &'a str,
    /// The validated chunks, in ordinal order.
    pub chunks: &'a [Chunk],
    /// AMQP headers of the event (trace context).
    pub event_headers: serde_json::Value,
}

/// What storing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreOutcome {
    /// The version was stored; its event is in the outbox.
    Stored {
        /// Whether it became the document's current version.
        is_current: bool,
        /// Chunks stored.
        chunk_count: usize,
        /// Chunks whose content is new relative to the previous current version.
        changed: usize,
        /// Its event, to hand to the relay (`None` when the outbox had it
        /// already: the relay's scan finds it).
        event: Option<crate::outbox::Pending>,
    },
    /// The version was already stored: nothing was written.
    AlreadyStored,
}

/// Why storing failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The document id belongs to another tenant.
    #[error("document {document_id:?} belongs to another tenant than {tenant_id:?}")]
    TenantMismatch {
        /// The tenant of the message.
        tenant_id: String,
        /// The document.
        document_id: String,
    },
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
}

/// Ordering facts of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionOrder<'a> {
    /// Source version id (the final tie-break).
    pub source_version_id: &'a str,
    /// `source_version_seq`.
    pub seq: Option<i64>,
    /// `occurred_at`.
    pub occurred_at: Option<OffsetDateTime>,
}

/// Whether `new` should replace `current` as the document's current version.
///
/// `source_version_seq` decides when both have one and they differ; otherwise
/// `occurred_at` when both have one and they differ; otherwise, when both
/// carry the same ordering facts, the larger version id wins so the result
/// does not depend on delivery order; with no facts to compare, the later
/// arrival wins.
pub fn is_newer(new: &VersionOrder<'_>, current: &VersionOrder<'_>) -> bool {
    if let (Some(a), Some(b)) = (new.seq, current.seq) {
        if a != b {
            return a > b;
        }
    }
    if let (Some(a), Some(b)) = (new.occurred_at, current.occurred_at) {
        if a != b {
            return a > b;
        }
    }
    let comparable = (new.seq.is_some() && current.seq.is_some())
        || (new.occurred_at.is_some() && current.occurred_at.is_some());
    if comparable {
        new.source_version_id > current.source_version_id
    } else {
        true
    }
}

/// Identifies a version.
#[derive(Debug, Clone, Copy)]
pub struct NewVersionKey<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// Document.
    pub document_id: &'a str,
    /// Version.
    pub source_version_id: &'a str,
}

/// Result of a pre-check ([`Prechecks::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Stored already.
    Yes,
    /// Not stored; the document has other versions.
    No,
    /// Not stored, and the document has no row yet.
    NewDocument,
    /// The document belongs to another tenant.
    OtherTenant,
}

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
async fn store_in_transaction(
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
    let outbox_id = crate::outbox::enqueue(
        &mut tx,
        Some(v.tenant_id),
        event_id,
        EVENTS_EXCHANGE,
        COMPLETED_ROUTING_KEY,
        &payload,
        &v.event_headers,
        crate::outbox::Publisher::HandOver,
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

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn order(id: &str, seq: Option<i64>, at: Option<OffsetDateTime>) -> VersionOrder<'_> {
        VersionOrder {
            source_version_id: id,
            seq,
            occurred_at: at,
        }
    }

    #[test]
    fn sequence_numbers_decide_first() {
        let old = order("v9", Some(9), Some(datetime!(2026-01-02 0:00 UTC)));
        let new = order("v10", Some(10), Some(datetime!(2026-01-01 0:00 UTC)));
        assert!(is_newer(&new, &old));
        assert!(!is_newer(&old, &new));
    }

    #[test]
    fn occurred_at_decides_without_sequence_numbers() {
        let old = order("a", None, Some(datetime!(2026-01-01 0:00 UTC)));
        let new = order("b", None, Some(datetime!(2026-01-02 0:00 UTC)));
        assert!(is_newer(&new, &old));
        assert!(!is_newer(&old, &new));
    }

    #[test]
    fn ties_are_broken_by_version_id_whatever_the_order() {
        let a = order("a", Some(1), None);
        let b = order("b", Some(1), None);
        assert!(is_newer(&b, &a));
        assert!(!is_newer(&a, &b));
    }

    #[test]
    fn without_ordering_facts_the_later_arrival_wins() {
        assert!(is_newer(&order("a", None, None), &order("b", None, None)));
    }

    #[test]
    fn event_ids_are_stable() {
        assert_eq!(
            completed_event_id("t", "d", "v"),
            completed_event_id("t", "d", "v")
        );
        assert_ne!(
            completed_event_id("t", "d", "v"),
            completed_event_id("t", "d", "w")
        );
    }
}
