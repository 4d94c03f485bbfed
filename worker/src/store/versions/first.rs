//! A new document's first version in ONE statement: the `documents` row,
//! its `source_versions` row, its chunks, its links and its outbox event,
//! written by data-modifying CTEs that all hang on the document insert.
//!
//! Why: a version stored by the general transaction costs eight round
//! trips (BEGIN, the document insert, the version, the chunks, the links,
//! the outbox, COMMIT), each waking a backend and a task; a backlog of new
//! documents is almost all first versions. One statement is atomic on its
//! own, so this path needs no transaction block.
//!
//! When it applies: the document row does not exist yet, and the version
//! takes no part in link resolution (no page id, no space key + title, no
//! page links) — exactly the case in which [`crate::store::links`] only
//! inserts the version's links without its tenant lock. When the document
//! row exists (a later version, a redelivery, another tenant's document),
//! the insert does nothing, no CTE writes, and the caller falls back to the
//! general transaction.

use std::sync::LazyLock;

use shared::contract::COMPLETED_ROUTING_KEY;
use shared::links::Link;
use sqlx::{PgPool, Row};

use crate::store::links::{insert_links_sql, DocumentKeys, LinkArrays};

use super::chunks::{self, ChunkArrays};
use super::event::{self, completed_event_id, EVENTS_EXCHANGE};
use super::{row, NewVersion, StoreError, StoreOutcome};

/// Parameters before the chunk arrays: the document (1-8), the version
/// (9-19) and the event (20-24).
const SCALARS: usize = 24;

/// The statement, built once: `$1`-`$3` are tenant, document and version
/// for every table.
static SQL: LazyLock<String> = LazyLock::new(|| {
    let chunks_first = SCALARS + 1;
    let links_first = chunks_first + chunks::PARAMS;
    let filter = "WHERE EXISTS (SELECT 1 FROM doc)";
    format!(
        "WITH doc AS ( \
           INSERT INTO documents (tenant_id, document_id, current_source_version_id, \
             current_source_version_seq, current_occurred_at, page_id, space_key, title) \
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING 1 \
         ), version AS ( \
           INSERT INTO source_versions (tenant_id, document_id, source_version_id, source_version_seq, \
             occurred_at, source_type, causation_id, correlation_id, content_sha256, normalized_markdown, \
             metadata, profile, chunker_version, tokenizer, chunk_count, total_tokens, status) \
           SELECT $1, $2, $3, $4, $5, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, 'current' \
           FROM doc \
         ), chunk_rows AS ({chunks}), link_rows AS ({links}), event AS ( \
           INSERT INTO outbox (tenant_id, event_id, exchange, routing_key, payload, headers, \
             next_attempt_at) \
           SELECT $1, $20, $21, $22, $23, $24, {leased_until} FROM doc \
           ON CONFLICT (event_id) DO NOTHING RETURNING id \
         ) \
         SELECT EXISTS (SELECT 1 FROM doc), (SELECT id FROM event)",
        chunks = chunks::insert_sql(chunks_first, filter),
        links = insert_links_sql(links_first, filter),
        leased_until = crate::outbox::leased_until(),
    )
});

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
    if keys.takes_part_in_resolution(links) {
        return Ok(None);
    }
    let event = event::completed_event(
        v,
        &event::Standing {
            is_current: true,
            previous_source_version_id: None,
            previous: &[],
        },
        crate::clock::now_rfc3339(),
    );
    let payload = serde_json::to_string(&event).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let chunk_arrays = ChunkArrays::new(v.chunks)?;
    let link_arrays = LinkArrays::new(v.chunks, links)?;
    let q = row::bind_key(sqlx::query(SQL.as_str()), v);
    let q = row::bind_document_keys(q, keys);
    let event_id = completed_event_id(v.tenant_id, v.document_id, v.source_version_id);
    let q = row::bind_version_facts(q, v, event.chunk_count, event.total_tokens)
        .bind(event_id)
        .bind(EVENTS_EXCHANGE)
        .bind(COMPLETED_ROUTING_KEY)
        .bind(&payload)
        .bind(&v.event_headers);
    let row = link_arrays
        .bind(chunk_arrays.bind(q))
        .fetch_one(pool)
        .await?;
    let (created, outbox_id): (bool, Option<i64>) = (row.try_get(0)?, row.try_get(1)?);
    Ok(created.then_some(StoreOutcome::Stored {
        is_current: true,
        chunk_count: v.chunks.len(),
        changed: event.changed_chunk_ids.len(),
        event: outbox_id.map(|id| event::handed_over(id, event_id, payload, v)),
    }))
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
    }
}
