//! Running a multi-granularity profile (issue 10): the primary strategy and
//! every auxiliary chunk the same analysed document (normalization, blocks
//! and token counts shared) on their own threads, so wall time is about the
//! slowest strategy, not the sum. Each output is validated on its own
//! (ordinals per granularity, ids namespaced against the primary
//! granularity; the `document` granularity covers the head of the document,
//! `table` the tables); then every chunk of a finer granularity names the
//! chunk of the nearest coarser granularity whose own span contains its own
//! span (`parent_chunk_id`), and the outputs are listed coarse to fine.

use crate::chunk::granular::assign_granularities;
use crate::chunk::record::{Chunk, Granularity};
use crate::chunk::validate::{validate_scoped, Coverage};
use crate::error::ChunkError;
use crate::profile::{rank, Profile};
use crate::strategy::ChunkInput;

/// Chunks `input` under its profile's primary strategy and active
/// auxiliaries; the chunks are validated.
pub(crate) fn chunk_all(input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
    let profile = input.profile;
    let primary = profile.granularity;
    let run = |sub: &Profile, auxiliary: bool| -> Result<Vec<Chunk>, ChunkError> {
        let sub_input = ChunkInput {
            profile: sub,
            only: auxiliary.then_some(sub.granularity),
            ..*input
        };
        let mut chunks = sub.chunker().chunk(&sub_input)?;
        if auxiliary {
            // An auxiliary contributes its own granularity only.
            chunks.retain(|c| c.granularity == sub.granularity);
        }
        assign_granularities(&mut chunks, sub, &sub.strategy, |c| c.granularity);
        let coverage = match (auxiliary, sub.granularity) {
            (_, Granularity::Document) => Coverage::None,
            (true, Granularity::Table) => Coverage::Tables,
            _ => Coverage::All,
        };
        validate_scoped(input.doc, input.blocks, &chunks, sub, primary, coverage)?;
        Ok(chunks)
    };
    let auxiliaries = profile.active_auxiliaries();
    let outputs: Vec<Result<Vec<Chunk>, ChunkError>> = std::thread::scope(|s| {
        let handles: Vec<_> = auxiliaries
            .iter()
            .map(|a| (a, s.spawn(|| run(&a.profile, true))))
            .collect();
        let mut out = vec![run(profile, false)];
        out.extend(handles.into_iter().map(|(a, h)| {
            h.join().unwrap_or_else(|_| {
                Err(ChunkError::StrategyPanicked {
                    strategy: a.profile.strategy.clone(),
                })
            })
        }));
        out
    });
    let mut chunks = Vec::new();
    for out in outputs {
        chunks.extend(out?);
    }
    // Coarse to fine, each granularity in ordinal order.
    chunks.sort_by_key(|c| (rank(c.granularity), c.ordinal));
    link_parents(&mut chunks);
    Ok(chunks)
}

/// The chunks of one granularity: its rank, own spans in order, ids.
struct Group(u8, Vec<(u64, u64)>, Vec<String>);

/// Sets `parent_chunk_id` of every chunk whose own span lies inside the own
/// span of a chunk of a coarser granularity: the nearest coarser one that
/// contains it. `chunks` are sorted by granularity rank, then ordinal (own
/// spans increase within a granularity).
fn link_parents(chunks: &mut [Chunk]) {
    let mut groups: Vec<Group> = Vec::new();
    for c in chunks.iter() {
        let r = rank(c.granularity);
        if groups.last().is_none_or(|g| g.0 != r) {
            groups.push(Group(r, Vec::new(), Vec::new()));
        }
        if let Some(g) = groups.last_mut() {
            g.1.push((c.byte_start, c.byte_end));
            g.2.push(c.chunk_id.clone());
        }
    }
    for c in chunks.iter_mut() {
        let r = rank(c.granularity);
        c.parent_chunk_id =
            groups
                .iter()
                .rev()
                .filter(|g| g.0 < r)
                .find_map(|Group(_, spans, ids)| {
                    // The last span starting at or before the child's start.
                    let i = spans.partition_point(|s| s.0 <= c.byte_start);
                    let k = i.checked_sub(1)?;
                    (spans[k].1 >= c.byte_end).then(|| ids[k].clone())
                });
    }
}
