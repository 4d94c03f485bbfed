//! One statement that inserts a version's links: one array per column.

use std::collections::HashMap;
use std::sync::LazyLock;

use shared::links::Link;
use shared::Chunk;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{Postgres, Transaction};

use crate::store::unnest_params;

use super::keys::{LinkSource, VersionKey};

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
pub(super) async fn insert_links(
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
