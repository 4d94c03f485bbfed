//! Several granularities in one output (seed 001): ordinals contiguous per
//! granularity, ids of the granularities other than the profile's primary
//! one namespaced (SPEC 3.5), seed 001's `chunk_key` and `is_table`.

use crate::chunk::record::{Chunk, ChunkType, Granularity};
use crate::ids::{canonical_text, chunk_id, IdInput};
use crate::profile::Profile;

/// Position of a granularity in per-granularity counters: its rank.
pub(crate) fn slot(g: Granularity) -> usize {
    usize::from(crate::profile::rank(g))
}

/// Seed 001's readable key of a chunk.
pub fn chunk_key(
    document_id: &str,
    strategy: &str,
    granularity: Granularity,
    ordinal: u32,
) -> String {
    format!(
        "{document_id}:{strategy}:{}:{ordinal}",
        granularity.as_str()
    )
}

/// Gives every chunk (in document order) the granularity `of` returns,
/// numbers each granularity's chunks 0..n-1 in order, recomputes the ids
/// where that changed them (namespaced unless the granularity is the
/// profile's `id_primary`) and sets `chunk_key` (with `strategy`) and
/// `is_table`.
pub(crate) fn assign_granularities(
    chunks: &mut [Chunk],
    profile: &Profile,
    strategy: &str,
    of: impl Fn(&Chunk) -> Granularity,
) {
    let primary = profile.id_primary;
    let mut next = [0u32; 5];
    for c in chunks.iter_mut() {
        let g = of(c);
        let ordinal = next[slot(g)];
        next[slot(g)] += 1;
        if g != c.granularity || ordinal != c.ordinal {
            let canonical = canonical_text(&c.chunk_text);
            c.chunk_id = chunk_id(
                profile.id_formula,
                &IdInput {
                    tenant_id: &c.tenant_id,
                    document_id: &c.document_id,
                    source_version_id: &c.source_version_id,
                    ordinal,
                    canonical_text: &canonical,
                    block_start_idx: c.block_start_idx,
                    block_end_idx: c.block_end_idx,
                    char_start: c.char_start,
                    char_end: c.char_end,
                    granularity: g,
                    primary,
                },
            );
        }
        c.granularity = g;
        c.ordinal = ordinal;
        c.chunk_key = Some(chunk_key(&c.document_id, strategy, g, ordinal));
        c.is_table = Some(g == Granularity::Table || c.chunk_type == ChunkType::Table);
    }
}
