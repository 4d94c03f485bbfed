//! Link artifacts of a current source version: `document_links` (one row per
//! link occurrence) and `cross_links` (resolved document -> document edges),
//! written inside the version's transaction (docs/contract.md#links, issue #4).
//!
//! Resolution: a Confluence page, tiny-link or attachment link resolves to a
//! document of the SAME tenant whose `page_id` equals the link's page id, or,
//! for links without a page id (`/display/KEY/Title`), whose space key and
//! title match (case-insensitively). When several documents claim the same
//! keys, the smallest `document_id` wins. Links whose target is not known yet
//! stay unresolved and are resolved when a document with those keys becomes
//! current; links to a document whose keys changed are re-resolved.
//!
//! Concurrency and lock order: the caller holds its own `documents` row lock
//! (`FOR UPDATE`). [`replace_links`] then takes the tenant's link lock (a
//! transaction-scoped advisory lock) before its first write to either table,
//! and takes no other lock on `documents` after it. Every writer of these
//! tables follows that order, so writers of one tenant serialize on the link
//! lock and can never wait on each other in a cycle. Under READ COMMITTED each
//! statement after the lock sees every earlier link writer's commit, so a
//! link and its late target always meet: whichever commits second resolves.

use sqlx::{Postgres, Transaction};

mod insert;
mod keys;

use insert::insert_links;
pub use insert::{insert_links_sql, LinkArrays, LINK_PARAMS};
pub use keys::{DocumentKeys, LinkSource, VersionKey};

/// First key of the tenant link lock (`pg_advisory_xact_lock(int4, int4)`);
/// the second is `hashtext(tenant_id)`.
pub const LINK_LOCK_CLASS: i32 = 7400;

const PAGE_TYPES: &str = "('confluence_page', 'confluence_tiny', 'confluence_attachment')";

/// Replaces the document's links with those of its new current version,
/// resolves them, resolves other documents' links that point at it, and
/// rebuilds the `cross_links` of every source document touched. Call only
/// for a version that becomes current, holding the document's row lock,
/// after writing `s.keys` to the document's row.
pub async fn replace_links(
    tx: &mut Transaction<'_, Postgres>,
    s: &LinkSource<'_>,
) -> Result<(), sqlx::Error> {
    // A document that can take no part in resolution (no keys other links
    // could match, no page links of its own, no link resolved to it) only
    // touches its own rows, which its document row lock already guards:
    // it skips the tenant lock, so such documents never serialize.
    let resolves = s.keys.takes_part_in_resolution(s.links);
    if s.first_version && !resolves {
        // Nothing to delete, nothing resolved to it, nothing to resolve:
        // its non-page links never enter `cross_links`.
        return insert_links(tx, s).await;
    }
    let is_target: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM document_links WHERE tenant_id = $1 AND target_document_id = $2)",
    )
    .bind(s.tenant_id)
    .bind(s.document_id)
    .fetch_one(&mut **tx)
    .await?;
    if !resolves && !is_target {
        sqlx::query("DELETE FROM document_links WHERE tenant_id = $1 AND source_document_id = $2")
            .bind(s.tenant_id)
            .bind(s.document_id)
            .execute(&mut **tx)
            .await?;
        insert_links(tx, s).await?;
        return rebuild_cross_links(tx, s.tenant_id, &[s.document_id.to_owned()]).await;
    }

    sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
        .bind(LINK_LOCK_CLASS)
        .bind(s.tenant_id)
        .execute(&mut **tx)
        .await?;

    sqlx::query("DELETE FROM document_links WHERE tenant_id = $1 AND source_document_id = $2")
        .bind(s.tenant_id)
        .bind(s.document_id)
        .execute(&mut **tx)
        .await?;
    insert_links(tx, s).await?;

    // Incoming links that resolved here by keys this version no longer has.
    let stale: Vec<String> = sqlx::query_scalar(&format!(
        "UPDATE document_links l SET target_document_id = NULL, resolved_at = NULL \
         WHERE l.tenant_id = $1 AND l.target_document_id = $2 AND NOT coalesce( \
           (l.target_page_id IS NOT NULL AND l.target_page_id = $3) \
           OR (l.target_page_id IS NULL AND upper(l.target_space_key) = upper($4) \
               AND lower(l.target_title) = lower($5)), false) \
           AND l.link_type IN {PAGE_TYPES} \
         RETURNING l.source_document_id"
    ))
    .bind(s.tenant_id)
    .bind(s.document_id)
    .bind(&s.keys.page_id)
    .bind(&s.keys.space_key)
    .bind(&s.keys.title)
    .fetch_all(&mut **tx)
    .await?;

    // Own links, and the stale ones (they may match another document).
    let mut sources: Vec<String> = stale;
    sources.push(s.document_id.to_owned());
    sources.sort();
    sources.dedup();
    resolve_unresolved(tx, s.tenant_id, &sources).await?;

    // Earlier links of other documents that were waiting for this one.
    let incoming: Vec<String> = sqlx::query_scalar(&format!(
        "UPDATE document_links l SET target_document_id = $2, resolved_at = now() \
         WHERE l.tenant_id = $1 AND l.target_document_id IS NULL AND l.source_document_id <> $2 \
           AND l.link_type IN {PAGE_TYPES} \
           AND ((l.target_page_id IS NOT NULL AND l.target_page_id = $3) \
             OR (l.target_page_id IS NULL AND l.target_title IS NOT NULL \
                 AND upper(l.target_space_key) = upper($4) AND lower(l.target_title) = lower($5))) \
         RETURNING l.source_document_id"
    ))
    .bind(s.tenant_id)
    .bind(s.document_id)
    .bind(&s.keys.page_id)
    .bind(&s.keys.space_key)
    .bind(&s.keys.title)
    .fetch_all(&mut **tx)
    .await?;
    sources.extend(incoming);
    sources.sort();
    sources.dedup();
    rebuild_cross_links(tx, s.tenant_id, &sources).await
}

/// Resolves the unresolved page links of `sources` against the tenant's
/// documents: page id first, else space key + title.
async fn resolve_unresolved(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: &str,
    sources: &[String],
) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "UPDATE document_links l SET target_document_id = r.document_id, resolved_at = now() \
         FROM ( \
           SELECT l2.source_document_id, l2.link_ordinal, coalesce( \
             (SELECT d.document_id FROM documents d \
               WHERE l2.target_page_id IS NOT NULL AND d.tenant_id = l2.tenant_id \
                 AND d.page_id = l2.target_page_id \
               ORDER BY d.document_id LIMIT 1), \
             (SELECT d.document_id FROM documents d \
               WHERE l2.target_page_id IS NULL AND l2.target_space_key IS NOT NULL \
                 AND l2.target_title IS NOT NULL AND d.tenant_id = l2.tenant_id \
                 AND d.space_key IS NOT NULL AND d.title IS NOT NULL \
                 AND upper(d.space_key) = upper(l2.target_space_key) \
                 AND lower(d.title) = lower(l2.target_title) \
               ORDER BY d.document_id LIMIT 1)) AS document_id \
           FROM document_links l2 \
           WHERE l2.tenant_id = $1 AND l2.source_document_id = ANY($2) \
             AND l2.target_document_id IS NULL AND l2.link_type IN {PAGE_TYPES} \
         ) r \
         WHERE l.tenant_id = $1 AND l.source_document_id = r.source_document_id \
           AND l.link_ordinal = r.link_ordinal AND r.document_id IS NOT NULL"
    ))
    .bind(tenant_id)
    .bind(sources)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Makes the `cross_links` of `sources` equal to the grouped resolved links
/// in `document_links` (self-links excluded); unchanged edges keep their
/// timestamps.
async fn rebuild_cross_links(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: &str,
    sources: &[String],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH fresh AS ( \
           SELECT source_document_id, target_document_id, count(*)::int AS n \
           FROM document_links \
           WHERE tenant_id = $1 AND source_document_id = ANY($2) \
             AND target_document_id IS NOT NULL AND target_document_id <> source_document_id \
           GROUP BY source_document_id, target_document_id \
         ), gone AS ( \
           DELETE FROM cross_links c \
           WHERE c.tenant_id = $1 AND c.source_document_id = ANY($2) \
             AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.source_document_id = c.source_document_id \
                               AND f.target_document_id = c.target_document_id) \
         ) \
         INSERT INTO cross_links (tenant_id, source_document_id, target_document_id, link_count) \
         SELECT $1, source_document_id, target_document_id, n FROM fresh \
         ON CONFLICT (tenant_id, source_document_id, target_document_id) \
         DO UPDATE SET link_count = EXCLUDED.link_count, last_seen_at = now() \
         WHERE cross_links.link_count <> EXCLUDED.link_count",
    )
    .bind(tenant_id)
    .bind(sources)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
