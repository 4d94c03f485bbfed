//! Several granularities in one output (the Chunking System specification): ordinals contiguous per
//! granularity (the ids of the granularities other than the profile's
//! primary one are namespaced when sealed, docs/contract.md#chunk-record); and the Chunking System specification's
//! `chunk_key` and `is_table`, which every chunk of every profile carries.

use crate::chunk::record::{Chunk, ChunkType, Granularity};

/// Position of a granularity in per-granularity counters: its rank.
pub(crate) fn slot(g: Granularity) -> usize {
    usize::from(crate::chunk::record::rank(g))
}

/// The Chunking System specification's readable key of a chunk.
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

/// Whether a chunk holds (a piece of) a table.
pub fn is_table(granularity: Granularity, chunk_type: ChunkType) -> bool {
    granularity == Granularity::Table || chunk_type == ChunkType::Table
}

/// Gives every chunk (in document order) the granularity `of` returns and
/// numbers each granularity's chunks 0..n-1 in order (ids and keys follow
/// when the chunks are sealed, [`crate::chunk::seal`]).
pub(crate) fn assign_granularities(chunks: &mut [Chunk], of: impl Fn(&Chunk) -> Granularity) {
    let mut next = [0u32; 5];
    for c in chunks.iter_mut() {
        let g = of(c);
        let ordinal = next[slot(g)];
        next[slot(g)] += 1;
        c.granularity = g;
        c.ordinal = ordinal;
    }
}
