//! The chunk rows of a version: one array per column, `UNNEST`ed by one
//! `INSERT ... SELECT`, alone ([`insert_chunks`]) or inside the one-statement
//! write of a new document's first version ([`super::first`]).

use std::sync::LazyLock;

use shared::Chunk;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{Postgres, Transaction};

use crate::store::unnest_params;

/// The `chunks` columns the arrays fill, with each array's element type, in
/// bind order. `headings_path` (ragged) travels as one Postgres array
/// literal per chunk ([`array_literal`]) and `facet_json` as JSON text;
/// [`insert_sql`] casts both.
const COLUMNS: [(&str, &str); 33] = [
    ("tenant_id", "text"),
    ("document_id", "text"),
    ("source_version_id", "text"),
    ("ordinal", "int4"),
    ("chunk_id", "text"),
    ("granularity", "text"),
    ("chunk_type", "text"),
    ("headings_path", "text"),
    ("chunk_path", "text"),
    ("chunk_text", "text"),
    ("embed_text", "text"),
    ("token_count", "int4"),
    ("char_start", "int8"),
    ("char_end", "int8"),
    ("byte_start", "int8"),
    ("byte_end", "int8"),
    ("block_start_idx", "int4"),
    ("block_end_idx", "int4"),
    ("overlap_prefix_chars", "int4"),
    ("closing_suffix_chars", "int4"),
    ("content_hash", "text"),
    ("profile", "text"),
    ("chunker_version", "text"),
    ("tokenizer", "text"),
    ("source_url", "text"),
    ("file_path", "text"),
    ("embed_token_count", "int4"),
    ("chunk_key", "text"),
    ("parent_chunk_id", "text"),
    ("is_table", "bool"),
    ("facet_json", "text"),
    ("page_start", "int4"),
    ("page_end", "int4"),
];

/// How many parameters [`ChunkArrays::bind`] binds.
pub(super) const PARAMS: usize = COLUMNS.len();

/// `INSERT INTO chunks ... SELECT ... FROM UNNEST(...)` with the arrays bound
/// as `$first` .. `$first + PARAMS - 1`, and `filter` (SQL, may be empty)
/// appended after the `FROM`.
pub(super) fn insert_sql(first: usize, filter: &str) -> String {
    let names: Vec<&str> = COLUMNS.iter().map(|(name, _)| *name).collect();
    let select: Vec<String> = names
        .iter()
        .map(|name| match *name {
            // A cast, not a sub-select per row: `ARRAY(SELECT
            // jsonb_array_elements_text(...))` cost Postgres about 2.5 us a row.
            "headings_path" => "u.headings_path::text[]".to_owned(),
            "facet_json" => "u.facet_json::jsonb".to_owned(),
            _ => format!("u.{name}"),
        })
        .collect();
    format!(
        "INSERT INTO chunks ({names}) SELECT {select} FROM UNNEST({arrays}) AS u({names}){filter}",
        names = names.join(", "),
        select = select.join(", "),
        arrays = unnest_params(&COLUMNS, first),
        filter = if filter.is_empty() {
            String::new()
        } else {
            format!(" {filter}")
        },
    )
}

/// The chunks of a version as one array per column of [`COLUMNS`].
#[derive(Debug)]
pub(super) struct ChunkArrays<'a> {
    tenant: Vec<&'a str>,
    document: Vec<&'a str>,
    version: Vec<&'a str>,
    ordinal: Vec<i32>,
    chunk_id: Vec<&'a str>,
    granularity: Vec<&'a str>,
    chunk_type: Vec<&'a str>,
    headings: Vec<String>,
    chunk_path: Vec<&'a str>,
    chunk_text: Vec<&'a str>,
    embed_text: Vec<&'a str>,
    token_count: Vec<i32>,
    char_start: Vec<i64>,
    char_end: Vec<i64>,
    byte_start: Vec<i64>,
    byte_end: Vec<i64>,
    block_start: Vec<i32>,
    block_end: Vec<i32>,
    overlap: Vec<i32>,
    closing: Vec<i32>,
    content_hash: Vec<&'a str>,
    profile: Vec<&'a str>,
    chunker_version: Vec<&'a str>,
    tokenizer: Vec<&'a str>,
    source_url: Vec<Option<&'a str>>,
    file_path: Vec<Option<&'a str>>,
    embed_tokens: Vec<Option<i32>>,
    chunk_key: Vec<Option<&'a str>>,
    parent: Vec<Option<&'a str>>,
    is_table: Vec<Option<bool>>,
    facet: Vec<Option<String>>,
    page_start: Vec<Option<i32>>,
    page_end: Vec<Option<i32>>,
}

impl<'a> ChunkArrays<'a> {
    /// The arrays of `chunks`; fails only if a JSON column cannot be encoded.
    /// `chunks` may span several versions (a batch of first versions): each
    /// row carries its own tenant, document and version.
    pub(super) fn new<I>(chunks: I) -> Result<Self, sqlx::Error>
    where
        I: Iterator<Item = &'a Chunk> + Clone,
    {
        let encode = |e: serde_json::Error| sqlx::Error::Encode(Box::new(e));
        let column = |f: fn(&'a Chunk) -> &'a str| chunks.clone().map(f).collect::<Vec<_>>();
        Ok(Self {
            tenant: column(|c| c.tenant_id.as_str()),
            document: column(|c| c.document_id.as_str()),
            version: column(|c| c.source_version_id.as_str()),
            ordinal: chunks.clone().map(|c| to_i32(c.ordinal)).collect(),
            chunk_id: column(|c| c.chunk_id.as_str()),
            granularity: column(|c| c.granularity.as_str()),
            chunk_type: column(|c| c.chunk_type.as_str()),
            headings: chunks
                .clone()
                .map(|c| array_literal(&c.headings_path))
                .collect(),
            chunk_path: column(|c| c.chunk_path.as_str()),
            chunk_text: column(|c| c.chunk_text.as_str()),
            embed_text: column(|c| c.embed_text.as_str()),
            token_count: chunks.clone().map(|c| to_i32(c.token_count)).collect(),
            char_start: chunks.clone().map(|c| to_i64(c.char_start)).collect(),
            char_end: chunks.clone().map(|c| to_i64(c.char_end)).collect(),
            byte_start: chunks.clone().map(|c| to_i64(c.byte_start)).collect(),
            byte_end: chunks.clone().map(|c| to_i64(c.byte_end)).collect(),
            block_start: chunks.clone().map(|c| to_i32(c.block_start_idx)).collect(),
            block_end: chunks.clone().map(|c| to_i32(c.block_end_idx)).collect(),
            overlap: chunks
                .clone()
                .map(|c| to_i32(c.overlap_prefix_chars))
                .collect(),
            closing: chunks
                .clone()
                .map(|c| to_i32(c.closing_suffix_chars))
                .collect(),
            content_hash: column(|c| c.content_hash.as_str()),
            profile: column(|c| c.profile.as_str()),
            chunker_version: column(|c| c.chunker_version.as_str()),
            tokenizer: column(|c| c.tokenizer.as_str()),
            source_url: chunks.clone().map(|c| c.source_url.as_deref()).collect(),
            file_path: chunks.clone().map(|c| c.file_path.as_deref()).collect(),
            embed_tokens: chunks
                .clone()
                .map(|c| c.embed_token_count.map(to_i32))
                .collect(),
            chunk_key: chunks.clone().map(|c| c.chunk_key.as_deref()).collect(),
            parent: chunks
                .clone()
                .map(|c| c.parent_chunk_id.as_deref())
                .collect(),
            is_table: chunks.clone().map(|c| c.is_table).collect(),
            facet: chunks
                .clone()
                .map(|c| c.facet_json.as_ref().map(serde_json::to_string).transpose())
                .collect::<Result<_, _>>()
                .map_err(encode)?,
            page_start: chunks.clone().map(|c| c.page_start.map(to_i32)).collect(),
            page_end: chunks.clone().map(|c| c.page_end.map(to_i32)).collect(),
        })
    }

    /// Binds the arrays, in [`COLUMNS`] order, as the next [`PARAMS`]
    /// parameters of `q`.
    pub(super) fn bind<'q>(
        self,
        q: Query<'q, Postgres, PgArguments>,
    ) -> Query<'q, Postgres, PgArguments>
    where
        'a: 'q,
    {
        q.bind(self.tenant)
            .bind(self.document)
            .bind(self.version)
            .bind(self.ordinal)
            .bind(self.chunk_id)
            .bind(self.granularity)
            .bind(self.chunk_type)
            .bind(self.headings)
            .bind(self.chunk_path)
            .bind(self.chunk_text)
            .bind(self.embed_text)
            .bind(self.token_count)
            .bind(self.char_start)
            .bind(self.char_end)
            .bind(self.byte_start)
            .bind(self.byte_end)
            .bind(self.block_start)
            .bind(self.block_end)
            .bind(self.overlap)
            .bind(self.closing)
            .bind(self.content_hash)
            .bind(self.profile)
            .bind(self.chunker_version)
            .bind(self.tokenizer)
            .bind(self.source_url)
            .bind(self.file_path)
            .bind(self.embed_tokens)
            .bind(self.chunk_key)
            .bind(self.parent)
            .bind(self.is_table)
            .bind(self.facet)
            .bind(self.page_start)
            .bind(self.page_end)
    }
}

/// Inserts all chunks of a version with one statement.
pub(super) async fn insert_chunks(
    tx: &mut Transaction<'_, Postgres>,
    chunks: &[Chunk],
) -> Result<(), sqlx::Error> {
    if chunks.is_empty() {
        return Ok(());
    }
    static SQL: LazyLock<String> = LazyLock::new(|| insert_sql(1, ""));
    ChunkArrays::new(chunks.iter())?
        .bind(sqlx::query(SQL.as_str()))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// `items` as a Postgres array literal of text (`{"a","b \"c\""}`), which
/// `::text[]` reads back exactly: every element is quoted, so none reads as
/// NULL and whitespace, commas and braces stay as they are; `"` and `\` are
/// escaped with a backslash.
pub(super) fn array_literal(items: &[String]) -> String {
    let mut out = String::with_capacity(2 + items.iter().map(|s| s.len() + 3).sum::<usize>());
    out.push('{');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in item.chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push('}');
    out
}

// Chunk counters are u32/u64 in the record and int4/int8 in Postgres; values
// past i32/i64 cannot occur under the size limit, and saturating keeps the
// conversion total.
pub(super) fn to_i32(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

pub(super) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_numbers_every_array_from_first() {
        let sql = insert_sql(25, "WHERE true");
        assert!(sql.contains("UNNEST($25::text[], $26::text[], $27::text[], $28::int4[]"));
        assert!(sql.contains(&format!("${}::int4[]) AS u(", 25 + PARAMS - 1)));
        assert!(!sql.contains(&format!("${}", 25 + PARAMS)));
        assert!(sql.ends_with(" WHERE true"));
        assert!(insert_sql(1, "").ends_with("page_start, page_end)"));
    }

    #[test]
    fn headings_become_quoted_array_literals() {
        let items = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(array_literal(&[]), "{}");
        assert_eq!(array_literal(&items(&["Intro"])), r#"{"Intro"}"#);
        assert_eq!(
            array_literal(&items(&["a \"b\"", r"c\d", "NULL", "", "{x,y}"])),
            r#"{"a \"b\"","c\\d","NULL","","{x,y}"}"#
        );
    }
}
