//! Inserting the chunk rows of a version (one statement, arrays bound).

use shared::Chunk;
use sqlx::{Postgres, Transaction};

/// Inserts all chunks with one statement: one array per column, `UNNEST`ed.
/// `headings_path` (ragged) travels as one JSON array per chunk.
pub(super) async fn insert_chunks(
    tx: &mut Transaction<'_, Postgres>,
    chunks: &[Chunk],
) -> Result<(), sqlx::Error> {
    if chunks.is_empty() {
        return Ok(());
    }
    let n = chunks.len();
    let mut tenant = Vec::with_capacity(n);
    let mut document = Vec::with_capacity(n);
    let mut version = Vec::with_capacity(n);
    let mut ordinal = Vec::with_capacity(n);
    let mut chunk_id = Vec::with_capacity(n);
    let mut granularity = Vec::with_capacity(n);
    let mut chunk_type = Vec::with_capacity(n);
    let mut headings = Vec::with_capacity(n);
    let mut chunk_path = Vec::with_capacity(n);
    let mut chunk_text = Vec::with_capacity(n);
    let mut embed_text = Vec::with_capacity(n);
    let mut token_count = Vec::with_capacity(n);
    let mut embed_tokens: Vec<Option<i32>> = Vec::with_capacity(n);
    let mut char_start = Vec::with_capacity(n);
    let mut char_end = Vec::with_capacity(n);
    let mut byte_start = Vec::with_capacity(n);
    let mut byte_end = Vec::with_capacity(n);
    let mut block_start = Vec::with_capacity(n);
    let mut block_end = Vec::with_capacity(n);
    let mut overlap = Vec::with_capacity(n);
    let mut closing = Vec::with_capacity(n);
    let mut content_hash = Vec::with_capacity(n);
    let mut profile = Vec::with_capacity(n);
    let mut chunker_version = Vec::with_capacity(n);
    let mut tokenizer = Vec::with_capacity(n);
    let mut source_url = Vec::with_capacity(n);
    let mut file_path = Vec::with_capacity(n);
    let mut chunk_key = Vec::with_capacity(n);
    let mut parent = Vec::with_capacity(n);
    let mut is_table: Vec<Option<bool>> = Vec::with_capacity(n);
    let mut facet: Vec<Option<String>> = Vec::with_capacity(n);
    for c in chunks {
        chunk_key.push(c.chunk_key.as_deref());
        parent.push(c.parent_chunk_id.as_deref());
        is_table.push(c.is_table);
        facet.push(
            c.facet_json
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(|e| sqlx::Error::Encode(Box::new(e)))?,
        );
        tenant.push(c.tenant_id.as_str());
        document.push(c.document_id.as_str());
        version.push(c.source_version_id.as_str());
        ordinal.push(to_i32(c.ordinal));
        chunk_id.push(c.chunk_id.as_str());
        granularity.push(c.granularity.as_str());
        chunk_type.push(c.chunk_type.as_str());
        headings.push(
            serde_json::to_string(&c.headings_path)
                .map_err(|e| sqlx::Error::Encode(Box::new(e)))?,
        );
        chunk_path.push(c.chunk_path.as_str());
        chunk_text.push(c.chunk_text.as_str());
        embed_text.push(c.embed_text.as_str());
        token_count.push(to_i32(c.token_count));
        embed_tokens.push(c.embed_token_count.map(to_i32));
        char_start.push(to_i64(c.char_start));
        char_end.push(to_i64(c.char_end));
        byte_start.push(to_i64(c.byte_start));
        byte_end.push(to_i64(c.byte_end));
        block_start.push(to_i32(c.block_start_idx));
        block_end.push(to_i32(c.block_end_idx));
        overlap.push(to_i32(c.overlap_prefix_chars));
        closing.push(to_i32(c.closing_suffix_chars));
        content_hash.push(c.content_hash.as_str());
        profile.push(c.profile.as_str());
        chunker_version.push(c.chunker_version.as_str());
        tokenizer.push(c.tokenizer.as_str());
        source_url.push(c.source_url.as_deref());
        file_path.push(c.file_path.as_deref());
    }
    sqlx::query(
        "INSERT INTO chunks (tenant_id, document_id, source_version_id, ordinal, chunk_id, granularity, \
           chunk_type, headings_path, chunk_path, chunk_text, embed_text, token_count, char_start, char_end, \
           byte_start, byte_end, block_start_idx, block_end_idx, overlap_prefix_chars, closing_suffix_chars, \
           content_hash, profile, chunker_version, tokenizer, source_url, file_path, embed_token_count, \
           chunk_key, parent_chunk_id, is_table, facet_json) \
         SELECT u.tenant_id, u.document_id, u.source_version_id, u.ordinal, u.chunk_id, u.granularity, \
           u.chunk_type, ARRAY(SELECT jsonb_array_elements_text(u.headings::jsonb)), u.chunk_path, \
           u.chunk_text, u.embed_text, u.token_count, u.char_start, u.char_end, u.byte_start, u.byte_end, \
           u.block_start_idx, u.block_end_idx, u.overlap_prefix_chars, u.closing_suffix_chars, \
           u.content_hash, u.profile, u.chunker_version, u.tokenizer, u.source_url, u.file_path, \
           u.embed_token_count, u.chunk_key, u.parent_chunk_id, u.is_table, u.facet_json::jsonb \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::text[], $7::text[], \
           $8::text[], $9::text[], $10::text[], $11::text[], $12::int4[], $13::int8[], $14::int8[], \
           $15::int8[], $16::int8[], $17::int4[], $18::int4[], $19::int4[], $20::int4[], $21::text[], \
           $22::text[], $23::text[], $24::text[], $25::text[], $26::text[], $27::int4[], $28::text[], \
           $29::text[], $30::bool[], $31::text[]) \
           AS u(tenant_id, document_id, source_version_id, ordinal, chunk_id, granularity, chunk_type, \
             headings, chunk_path, chunk_text, embed_text, token_count, char_start, char_end, byte_start, \
             byte_end, block_start_idx, block_end_idx, overlap_prefix_chars, closing_suffix_chars, \
             content_hash, profile, chunker_version, tokenizer, source_url, file_path, embed_token_count, \
             chunk_key, parent_chunk_id, is_table, facet_json)",
    )
    .bind(tenant)
    .bind(document)
    .bind(version)
    .bind(ordinal)
    .bind(chunk_id)
    .bind(granularity)
    .bind(chunk_type)
    .bind(headings)
    .bind(chunk_path)
    .bind(chunk_text)
    .bind(embed_text)
    .bind(token_count)
    .bind(char_start)
    .bind(char_end)
    .bind(byte_start)
    .bind(byte_end)
    .bind(block_start)
    .bind(block_end)
    .bind(overlap)
    .bind(closing)
    .bind(content_hash)
    .bind(profile)
    .bind(chunker_version)
    .bind(tokenizer)
    .bind(source_url)
    .bind(file_path)
    .bind(embed_tokens)
    .bind(chunk_key)
    .bind(parent)
    .bind(is_table)
    .bind(facet)
    .execute(&mut **tx)
    .await?;
    Ok(())
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
