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

use std::collections::HashMap;
use std::sync::LazyLock;

use shared::links::{Classifier, Link, LinkConfig, LinkType};
use shared::Chunk;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{Postgres, Transaction};

use crate::store::unnest_params;

/// First key of the tenant link lock (`pg_advisory_xact_lock(int4, int4)`);
/// the second is `hashtext(tenant_id)`.
pub const LINK_LOCK_CLASS: i32 = 7400;

/// The keys other documents' links resolve by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentKeys {
    /// Confluence page id.
    pub page_id: Option<String>,
    /// Confluence space key.
    pub space_key: Option<String>,
    /// Title.
    pub title: Option<String>,
}

impl DocumentKeys {
    /// Reads `metadata.page_id` (string or integer), `metadata.space_key` and
    /// `metadata.title`; page id and space key fall back to what
    /// `metadata.source_url` says when it is a Confluence page URL.
    pub fn from_metadata(metadata: &serde_json::Value) -> Self {
        let text = |key: &str| match metadata.get(key) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(serde_json::Value::Number(n)) if n.is_u64() => Some(n.to_string()),
            _ => None,
        };
        let from_url = metadata
            .get("source_url")
            .and_then(serde_json::Value::as_str)
            .map(|url| {
                let (kind, _, target) =
                    Classifier::new(&LinkConfig::default(), Some(url)).classify(url);
                if kind == LinkType::ConfluencePage {
                    target
                } else {
                    shared::links::Target::default()
                }
            })
            .unwrap_or_default();
        Self {
            page_id: text("page_id").or(from_url.page_id),
            space_key: text("space_key").or(from_url.space_key),
            title: metadata
                .get("title")
                .and_then(serde_json::Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned),
        }
    }

    /// Whether a version with these keys and `links` takes part in link
    /// resolution: other documents' links could match its keys, or it has
    /// page links of its own to resolve.
    pub fn takes_part_in_resolution(&self, links: &[Link]) -> bool {
        let has_keys = self.page_id.is_some() || (self.space_key.is_some() && self.title.is_some());
        has_keys || links.iter().any(|l| l.link_type.targets_page())
    }
}

/// The tenant, document and version a link row belongs to.
#[derive(Debug, Clone, Copy)]
pub struct VersionKey<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// The document containing the links.
    pub document_id: &'a str,
    /// The version.
    pub source_version_id: &'a str,
}

/// The document, version and content whose links are written.
#[derive(Debug, Clone, Copy)]
pub struct LinkSource<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// The document containing the links.
    pub document_id: &'a str,
    /// Its (new current) version.
    pub source_version_id: &'a str,
    /// The version's chunks, in ordinal order.
    pub chunks: &'a [Chunk],
    /// The version's links.
    pub links: &'a [Link],
    /// The document's resolution keys (already written to its row).
    pub keys: &'a DocumentKeys,
    /// Whether this is the document's first version in this transaction's
    /// view: it has no links of its own yet and no link resolves to it.
    pub first_version: bool,
}

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

/// The `document_links` columns the arrays fill, with each array's element
/// type, in bind order.
const LINK_COLUMNS: [(&str, &str); 20] = [
    ("tenant_id", "text"),
    ("source_document_id", "text"),
    ("source_version_id", "text"),
    ("link_ordinal", "int4"),
    ("chunk_ordinal", "int4"),
    ("chunk_id", "text"),
    ("url", "text"),
    ("resolved_url", "text"),
    ("anchor_text", "text"),
    ("link_type", "text"),
    ("is_image", "bool"),
    ("target_space_key", "text"),
    ("target_page_id", "text"),
    ("target_title", "text"),
    ("target_anchor", "text"),
    ("target_issue_key", "text"),
    ("char_start", "int8"),
    ("byte_start", "int8"),
    ("byte_end", "int8"),
    ("chunk_granularity", "text"),
];

/// How many array parameters [`LinkArrays::bind`] binds.
pub const LINK_PARAMS: usize = LINK_COLUMNS.len();

/// `INSERT INTO document_links ... SELECT u.* FROM UNNEST(...) AS u(...)`:
/// the arrays are bound as `$first` .. `$first + LINK_PARAMS - 1`, and
/// `filter` (SQL over `u`, may be empty) is appended after the `FROM`.
pub fn insert_links_sql(first: usize, filter: &str) -> String {
    let names = LINK_COLUMNS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ");
    let mut sql = format!(
        "INSERT INTO document_links ({names}) SELECT u.* FROM UNNEST({}) AS u({names})",
        unnest_params(&LINK_COLUMNS, first)
    );
    if !filter.is_empty() {
        sql.push(' ');
        sql.push_str(filter);
    }
    sql
}

/// The links of a version as one array per column of [`LINK_COLUMNS`].
#[derive(Debug)]
pub struct LinkArrays<'a> {
    tenant: Vec<&'a str>,
    document: Vec<&'a str>,
    version: Vec<&'a str>,
    ordinal: Vec<i32>,
    chunk_ordinal: Vec<i32>,
    chunk_id: Vec<&'a str>,
    url: Vec<&'a str>,
    resolved_url: Vec<Option<&'a str>>,
    anchor_text: Vec<&'a str>,
    link_type: Vec<&'static str>,
    is_image: Vec<bool>,
    space_key: Vec<Option<&'a str>>,
    page_id: Vec<Option<&'a str>>,
    title: Vec<Option<&'a str>>,
    anchor: Vec<Option<&'a str>>,
    issue_key: Vec<Option<&'a str>>,
    char_start: Vec<i64>,
    byte_start: Vec<i64>,
    byte_end: Vec<i64>,
    chunk_granularity: Vec<&'a str>,
}

impl<'a> LinkArrays<'a> {
    /// The arrays of one version's `links` (see [`Self::push`]).
    pub fn new(
        version: VersionKey<'a>,
        chunks: &'a [Chunk],
        links: &'a [Link],
    ) -> Result<Self, sqlx::Error> {
        let mut a = Self::with_capacity(links.len());
        a.push(version, chunks, links)?;
        Ok(a)
    }

    /// Empty arrays with room for `n` links.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            tenant: Vec::with_capacity(n),
            document: Vec::with_capacity(n),
            version: Vec::with_capacity(n),
            ordinal: Vec::with_capacity(n),
            chunk_ordinal: Vec::with_capacity(n),
            chunk_id: Vec::with_capacity(n),
            url: Vec::with_capacity(n),
            resolved_url: Vec::with_capacity(n),
            anchor_text: Vec::with_capacity(n),
            link_type: Vec::with_capacity(n),
            is_image: Vec::with_capacity(n),
            space_key: Vec::with_capacity(n),
            page_id: Vec::with_capacity(n),
            title: Vec::with_capacity(n),
            anchor: Vec::with_capacity(n),
            issue_key: Vec::with_capacity(n),
            char_start: Vec::with_capacity(n),
            byte_start: Vec::with_capacity(n),
            byte_end: Vec::with_capacity(n),
            chunk_granularity: Vec::with_capacity(n),
        }
    }

    /// Appends the `links` of `version`, each naming the id of the chunk it
    /// lies in; fails when a link names a chunk `chunks` does not have.
    pub fn push(
        &mut self,
        version: VersionKey<'a>,
        chunks: &'a [Chunk],
        links: &'a [Link],
    ) -> Result<(), sqlx::Error> {
        let chunk_ids: HashMap<(&str, u32), &str> = chunks
            .iter()
            .map(|c| ((c.granularity.as_str(), c.ordinal), c.chunk_id.as_str()))
            .collect();
        let a = self;
        for l in links {
            let granularity = l.chunk_granularity.as_str();
            let Some(id) = chunk_ids.get(&(granularity, l.chunk_ordinal)) else {
                return Err(sqlx::Error::Encode(
                    format!(
                        "link {} refers to {granularity} chunk {}, which the version does not have",
                        l.link_ordinal, l.chunk_ordinal
                    )
                    .into(),
                ));
            };
            a.tenant.push(version.tenant_id);
            a.document.push(version.document_id);
            a.version.push(version.source_version_id);
            a.chunk_granularity.push(granularity);
            a.ordinal
                .push(i32::try_from(l.link_ordinal).unwrap_or(i32::MAX));
            a.chunk_ordinal
                .push(i32::try_from(l.chunk_ordinal).unwrap_or(i32::MAX));
            a.chunk_id.push(*id);
            a.url.push(l.url.as_str());
            a.resolved_url.push(l.resolved_url.as_deref());
            a.anchor_text.push(l.anchor_text.as_str());
            a.link_type.push(l.link_type.as_str());
            a.is_image.push(l.is_image);
            a.space_key.push(l.target.space_key.as_deref());
            a.page_id.push(l.target.page_id.as_deref());
            a.title.push(l.target.title.as_deref());
            a.anchor.push(l.target.anchor.as_deref());
            a.issue_key.push(l.target.issue_key.as_deref());
            a.char_start
                .push(i64::try_from(l.char_start).unwrap_or(i64::MAX));
            a.byte_start
                .push(i64::try_from(l.byte_start).unwrap_or(i64::MAX));
            a.byte_end
                .push(i64::try_from(l.byte_end).unwrap_or(i64::MAX));
        }
        Ok(())
    }

    /// Binds the arrays, in [`LINK_COLUMNS`] order, as the next
    /// [`LINK_PARAMS`] parameters of `q`.
    pub fn bind<'q>(self, q: Query<'q, Postgres, PgArguments>) -> Query<'q, Postgres, PgArguments>
    where
        'a: 'q,
    {
        q.bind(self.tenant)
            .bind(self.document)
            .bind(self.version)
            .bind(self.ordinal)
            .bind(self.chunk_ordinal)
            .bind(self.chunk_id)
            .bind(self.url)
            .bind(self.resolved_url)
            .bind(self.anchor_text)
            .bind(self.link_type)
            .bind(self.is_image)
            .bind(self.space_key)
            .bind(self.page_id)
            .bind(self.title)
            .bind(self.anchor)
            .bind(self.issue_key)
            .bind(self.char_start)
            .bind(self.byte_start)
            .bind(self.byte_end)
            .bind(self.chunk_granularity)
    }
}

/// Inserts the version's links with one statement (one array per column).
async fn insert_links(
    tx: &mut Transaction<'_, Postgres>,
    s: &LinkSource<'_>,
) -> Result<(), sqlx::Error> {
    if s.links.is_empty() {
        return Ok(());
    }
    static SQL: LazyLock<String> = LazyLock::new(|| insert_links_sql(1, ""));
    let version = VersionKey {
        tenant_id: s.tenant_id,
        document_id: s.document_id,
        source_version_id: s.source_version_id,
    };
    LinkArrays::new(version, s.chunks, s.links)?
        .bind(sqlx::query(SQL.as_str()))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_come_from_metadata_then_from_the_source_url() {
        let k = DocumentKeys::from_metadata(&json!({
            "title": "Deploy Guide", "space_key": "ENG", "page_id": 123456
        }));
        assert_eq!(k.page_id.as_deref(), Some("123456"));
        assert_eq!(k.space_key.as_deref(), Some("ENG"));
        assert_eq!(k.title.as_deref(), Some("Deploy Guide"));
        let k = DocumentKeys::from_metadata(&json!({
            "title": "T",
            "source_url": "https://acme.atlassian.net/wiki/spaces/OPS/pages/987/T"
        }));
        assert_eq!(
            (k.page_id.as_deref(), k.space_key.as_deref()),
            (Some("987"), Some("OPS"))
        );
        assert_eq!(
            DocumentKeys::from_metadata(&json!({"source_url": "https://example.com/a"})),
            DocumentKeys::default()
        );
    }
}
