//! New documents' first versions in ONE statement: for one document or a
//! batch of them, the `documents` rows, their `source_versions` rows,
//! chunks, links and outbox events, written by data-modifying CTEs that all
//! hang on the document insert.
//!
//! Why: a version stored by the general transaction costs eight round
//! trips (BEGIN, the document insert, the version, the chunks, the links,
//! the outbox, COMMIT), each waking a backend and a task; a backlog of new
//! documents is almost all first versions. One statement is atomic on its
//! own, so this path needs no transaction block, and a batch shares one
//! statement's start, one commit and one WAL flush among its documents
//! ([`super::group`] forms the batches).
//!
//! When it applies: the document row does not exist yet, and the version
//! takes no part in link resolution (no page id, no space key + title, no
//! page links) — exactly the case in which [`crate::store::links`] only
//! inserts the version's links without its tenant lock. A document whose
//! row exists (a later version, a redelivery, another tenant's document)
//! is not inserted, none of its rows are written, and the caller falls back
//! to the general transaction for it; the other documents of the batch are
//! written all the same.

use std::collections::HashSet;
use std::sync::LazyLock;

use shared::contract::COMPLETED_ROUTING_KEY;
use shared::links::Link;
use sqlx::types::Json;
use sqlx::{PgPool, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::store::links::{insert_links_sql, DocumentKeys, LinkArrays, VersionKey};

use super::chunks::{self, ChunkArrays};
use super::event::{self, completed_event_id, EVENTS_EXCHANGE};
use super::types::{NewVersion, StoreError, StoreOutcome};

/// Per-document arrays before the chunk arrays: the document (1-8), the
/// version (9-19), the event (20, 23, 24); 21 and 22 are the exchange and
/// routing key, the same for every event.
const SCALARS: usize = 24;

/// The per-document columns of `input`, in bind order, with their array
/// types (`$21` and `$22` are scalars, skipped).
const INPUT: [(&str, &str); 22] = [
    ("tenant_id", "text"),
    ("document_id", "text"),
    ("source_version_id", "text"),
    ("seq", "int8"),
    ("occurred_at", "timestamptz"),
    ("page_id", "text"),
    ("space_key", "text"),
    ("title", "text"),
    ("source_type", "text"),
    ("causation_id", "text"),
    ("correlation_id", "text"),
    ("content_sha256", "text"),
    ("normalized_markdown", "text"),
    ("metadata", "jsonb"),
    ("profile", "text"),
    ("chunker_version", "text"),
    ("tokenizer", "text"),
    ("chunk_count", "int4"),
    ("total_tokens", "int8"),
    ("event_id", "uuid"),
    ("payload", "text"),
    ("headers", "jsonb"),
];

/// The statement, built once. `input` numbers the documents (`n`, from 1);
/// `doc` holds the key of every document row the statement created, and
/// every other insert takes only the rows of those documents.
static SQL: LazyLock<String> = LazyLock::new(|| {
    let chunks_first = SCALARS + 1;
    let links_first = chunks_first + chunks::PARAMS;
    let names: Vec<&str> = INPUT.iter().map(|(name, _)| *name).collect();
    let arrays: Vec<String> = INPUT
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| {
            // $21 and $22 are the scalars between the event's arrays.
            let n = if i < 20 { i + 1 } else { i + 3 };
            format!("${n}::{ty}[]")
        })
        .collect();
    format!(
        "WITH input AS ( \
           SELECT * FROM UNNEST({arrays}) WITH ORDINALITY AS u({names}, n) \
         ), doc AS ( \
           INSERT INTO documents (tenant_id, document_id, current_source_version_id, \
             current_source_version_seq, current_occurred_at, page_id, space_key, title) \
           SELECT tenant_id, document_id, source_version_id, seq, occurred_at, page_id, space_key, title \
           FROM input ORDER BY n \
           ON CONFLICT DO NOTHING \
           RETURNING tenant_id, document_id, current_source_version_id AS source_version_id \
         ), created AS ( \
           SELECT input.* FROM input JOIN doc USING (tenant_id, document_id, source_version_id) \
         ), version AS ( \
           INSERT INTO source_versions (tenant_id, document_id, source_version_id, source_version_seq, \
             occurred_at, source_type, causation_id, correlation_id, content_sha256, normalized_markdown, \
             metadata, profile, chunker_version, tokenizer, chunk_count, total_tokens, status) \
           SELECT tenant_id, document_id, source_version_id, seq, occurred_at, source_type, causation_id, \
             correlation_id, content_sha256, normalized_markdown, metadata, profile, chunker_version, \
             tokenizer, chunk_count, total_tokens, 'current' \
           FROM created \
         ), chunk_rows AS ({chunks}), link_rows AS ({links}), event AS ( \
           INSERT INTO outbox (tenant_id, event_id, exchange, routing_key, payload, headers, \
             next_attempt_at) \
           SELECT tenant_id, event_id, $21, $22, payload, headers, {leased_until} FROM created \
           ORDER BY n \
           ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id \
         ) \
         SELECT input.n, doc.document_id IS NOT NULL AS created, event.id \
         FROM input \
         LEFT JOIN doc USING (tenant_id, document_id, source_version_id) \
         LEFT JOIN event USING (event_id) \
         ORDER BY input.n",
        arrays = arrays.join(", "),
        names = names.join(", "),
        chunks = chunks::insert_sql(
            chunks_first,
            "WHERE (u.tenant_id, u.document_id, u.source_version_id) IN \
             (SELECT tenant_id, document_id, source_version_id FROM doc)"
        ),
        links = insert_links_sql(
            links_first,
            "WHERE (u.tenant_id, u.source_document_id, u.source_version_id) IN \
             (SELECT tenant_id, document_id, source_version_id FROM doc)"
        ),
        leased_until = crate::outbox::table::leased_until(),
    )
});

/// One document's first version, for [`store_first_versions`].
#[derive(Debug, Clone, Copy)]
pub struct FirstVersion<'a> {
    /// The version.
    pub version: &'a NewVersion<'a>,
    /// Its links.
    pub links: &'a [Link],
    /// Its document's keys ([`DocumentKeys::from_metadata`]).
    pub keys: &'a DocumentKeys,
}

impl FirstVersion<'_> {
    /// Whether the one-statement path may write it at all.
    pub fn fits(&self) -> bool {
        !self.keys.takes_part_in_resolution(self.links)
    }
}

/// Stores `v` as its document's first version in one statement. `None` when
/// nothing was written: the document row exists already, or the version
/// takes part in link resolution (`keys` are its document's keys, see
/// [`DocumentKeys::from_metadata`]); the general transaction then stores it.
pub async fn store_first_version(
    pool: &PgPool,
    v: &NewVersion<'_>,
    links: &[Link],
    keys: &DocumentKeys,
) -> Result<Option<StoreOutcome>, StoreError> {
    let one = FirstVersion {
        version: v,
        links,
        keys,
    };
    if !one.fits() {
        return Ok(None);
    }
    let mut stored = store_first_versions(pool, &[one]).await?;
    Ok(stored.pop().flatten())
}

/// Stores `items` (each [`FirstVersion::fits`], no two of the same document
/// id) in one statement. Returns, in `items` order, the outcome of each, or
/// `None` for a document whose row existed already: nothing of it was
/// written. An error means nothing of any item was written.
pub async fn store_first_versions(
    pool: &PgPool,
    items: &[FirstVersion<'_>],
) -> Result<Vec<Option<StoreOutcome>>, StoreError> {
    debug_assert!(items.iter().all(FirstVersion::fits));
    debug_assert_eq!(
        items
            .iter()
            .map(|i| i.version.document_id)
            .collect::<HashSet<_>>()
            .len(),
        items.len(),
        "one document id twice in a batch"
    );
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let now = crate::clock::now_rfc3339();
    // The events first: the arrays borrow their payloads.
    let mut events = Vec::with_capacity(items.len());
    for item in items {
        let event = event::completed_event(
            item.version,
            &event::Standing {
                is_current: true,
                previous_source_version_id: None,
                previous: &[],
            },
            now.clone(),
        );
        let payload =
            serde_json::to_string(&event).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        events.push((event, payload));
    }
    let mut columns = InputArrays::with_capacity(items.len());
    let mut links = LinkArrays::with_capacity(items.iter().map(|i| i.links.len()).sum());
    for (item, (event, payload)) in items.iter().zip(&events) {
        let v = item.version;
        columns.push(item, event, payload);
        let key = VersionKey {
            tenant_id: v.tenant_id,
            document_id: v.document_id,
            source_version_id: v.source_version_id,
        };
        links.push(key, v.chunks, item.links)?;
    }
    let chunk_arrays = ChunkArrays::new(items.iter().flat_map(|i| i.version.chunks.iter()))?;
    let q = columns.bind(sqlx::query(SQL.as_str()));
    let rows = links.bind(chunk_arrays.bind(q)).fetch_all(pool).await?;
    let mut out: Vec<Option<StoreOutcome>> = vec![None; items.len()];
    let mut events: Vec<Option<_>> = events.into_iter().map(Some).collect();
    for row in rows {
        let n: i64 = row.try_get(0)?;
        let created: bool = row.try_get(1)?;
        let outbox_id: Option<i64> = row.try_get(2)?;
        let Some(i) = usize::try_from(n - 1).ok().filter(|i| *i < items.len()) else {
            return Err(sqlx::Error::Protocol(format!("first versions: no input row {n}")).into());
        };
        let (true, Some((event, payload))) = (created, events[i].take()) else {
            continue;
        };
        let v = items[i].version;
        let event_id = completed_event_id(v.tenant_id, v.document_id, v.source_version_id);
        out[i] = Some(StoreOutcome::Stored {
            is_current: true,
            chunk_count: v.chunks.len(),
            changed: event.changed_chunk_ids.len(),
            event: outbox_id.map(|id| event::handed_over(id, event_id, payload, v)),
        });
    }
    Ok(out)
}

/// The per-document arrays of [`INPUT`].
struct InputArrays<'a> {
    tenant: Vec<&'a str>,
    document: Vec<&'a str>,
    version: Vec<&'a str>,
    seq: Vec<Option<i64>>,
    occurred_at: Vec<Option<OffsetDateTime>>,
    page_id: Vec<Option<&'a str>>,
    space_key: Vec<Option<&'a str>>,
    title: Vec<Option<&'a str>>,
    source_type: Vec<Option<&'a str>>,
    causation_id: Vec<&'a str>,
    correlation_id: Vec<Option<&'a str>>,
    content_sha256: Vec<&'a str>,
    normalized: Vec<&'a str>,
    metadata: Vec<Json<&'a serde_json::Value>>,
    profile: Vec<&'a str>,
    chunker_version: Vec<&'a str>,
    tokenizer: Vec<&'a str>,
    chunk_count: Vec<i32>,
    total_tokens: Vec<i64>,
    event_id: Vec<Uuid>,
    payload: Vec<&'a str>,
    headers: Vec<Json<&'a serde_json::Value>>,
}

impl<'a> InputArrays<'a> {
    fn with_capacity(n: usize) -> Self {
        Self {
            tenant: Vec::with_capacity(n),
            document: Vec::with_capacity(n),
            version: Vec::with_capacity(n),
            seq: Vec::with_capacity(n),
            occurred_at: Vec::with_capacity(n),
            page_id: Vec::with_capacity(n),
            space_key: Vec::with_capacity(n),
            title: Vec::with_capacity(n),
            source_type: Vec::with_capacity(n),
            causation_id: Vec::with_capacity(n),
            correlation_id: Vec::with_capacity(n),
            content_sha256: Vec::with_capacity(n),
            normalized: Vec::with_capacity(n),
            metadata: Vec::with_capacity(n),
            profile: Vec::with_capacity(n),
            chunker_version: Vec::with_capacity(n),
            tokenizer: Vec::with_capacity(n),
            chunk_count: Vec::with_capacity(n),
            total_tokens: Vec::with_capacity(n),
            event_id: Vec::with_capacity(n),
            payload: Vec::with_capacity(n),
            headers: Vec::with_capacity(n),
        }
    }

    fn push(
        &mut self,
        item: &FirstVersion<'a>,
        event: &shared::contract::ChunkingCompleted,
        payload: &'a str,
    ) {
        let v = item.version;
        self.tenant.push(v.tenant_id);
        self.document.push(v.document_id);
        self.version.push(v.source_version_id);
        self.seq.push(v.source_version_seq);
        self.occurred_at.push(v.occurred_at);
        self.page_id.push(item.keys.page_id.as_deref());
        self.space_key.push(item.keys.space_key.as_deref());
        self.title.push(item.keys.title.as_deref());
        self.source_type.push(v.source_type);
        self.causation_id.push(v.causation_id);
        self.correlation_id.push(v.correlation_id);
        self.content_sha256.push(&v.content_sha256);
        self.normalized.push(v.normalized);
        self.metadata.push(Json(&v.metadata));
        self.profile.push(v.profile);
        self.chunker_version.push(v.chunker_version);
        self.tokenizer.push(v.tokenizer);
        self.chunk_count
            .push(i32::try_from(event.chunk_count).unwrap_or(i32::MAX));
        self.total_tokens
            .push(i64::try_from(event.total_tokens).unwrap_or(i64::MAX));
        self.event_id.push(completed_event_id(
            v.tenant_id,
            v.document_id,
            v.source_version_id,
        ));
        self.payload.push(payload);
        self.headers.push(Json(&v.event_headers));
    }

    /// Binds `$1` .. `$24` (the arrays, the exchange and the routing key).
    fn bind<'q>(
        self,
        q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>
    where
        'a: 'q,
    {
        q.bind(self.tenant)
            .bind(self.document)
            .bind(self.version)
            .bind(self.seq)
            .bind(self.occurred_at)
            .bind(self.page_id)
            .bind(self.space_key)
            .bind(self.title)
            .bind(self.source_type)
            .bind(self.causation_id)
            .bind(self.correlation_id)
            .bind(self.content_sha256)
            .bind(self.normalized)
            .bind(self.metadata)
            .bind(self.profile)
            .bind(self.chunker_version)
            .bind(self.tokenizer)
            .bind(self.chunk_count)
            .bind(self.total_tokens)
            .bind(self.event_id)
            .bind(EVENTS_EXCHANGE)
            .bind(COMPLETED_ROUTING_KEY)
            .bind(self.payload)
            .bind(self.headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::links::LINK_PARAMS;

    #[test]
    fn the_parameters_are_numbered_without_a_gap() {
        let mut used: Vec<usize> = SQL
            .split('$')
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect();
        used.sort_unstable();
        used.dedup();
        let last = SCALARS + chunks::PARAMS + LINK_PARAMS;
        assert_eq!(used, (1..=last).collect::<Vec<_>>());
        assert_eq!(INPUT.len() + 2, SCALARS);
    }
}
