//! The bind order of a version's `documents` and `source_versions` columns,
//! shared by the statements of the transaction ([`super::lock`],
//! [`super::store_in_transaction`]); the one-statement path
//! ([`super::first`]) binds them as arrays, one element per document.

use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::Postgres;

use crate::store::links::DocumentKeys;

use super::types::NewVersion;

type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Binds tenant, document, version, `source_version_seq` and `occurred_at`:
/// the version's key and ordering facts, in that order.
pub(super) fn bind_key<'q>(q: PgQuery<'q>, v: &NewVersion<'q>) -> PgQuery<'q> {
    q.bind(v.tenant_id)
        .bind(v.document_id)
        .bind(v.source_version_id)
        .bind(v.source_version_seq)
        .bind(v.occurred_at)
}

/// Binds the document's `page_id`, `space_key` and `title`.
pub(super) fn bind_document_keys<'q>(q: PgQuery<'q>, keys: &'q DocumentKeys) -> PgQuery<'q> {
    q.bind(&keys.page_id)
        .bind(&keys.space_key)
        .bind(&keys.title)
}

/// Binds the `source_versions` columns after the key, from `source_type`
/// to `total_tokens`, in table order.
pub(super) fn bind_version_facts<'q>(
    q: PgQuery<'q>,
    v: &'q NewVersion<'q>,
    chunk_count: u32,
    total_tokens: u64,
) -> PgQuery<'q> {
    q.bind(v.source_type)
        .bind(v.causation_id)
        .bind(v.correlation_id)
        .bind(&v.content_sha256)
        .bind(v.normalized)
        .bind(&v.metadata)
        .bind(v.profile)
        .bind(v.chunker_version)
        .bind(v.tokenizer)
        .bind(i32::try_from(chunk_count).unwrap_or(i32::MAX))
        .bind(i64::try_from(total_tokens).unwrap_or(i64::MAX))
}
