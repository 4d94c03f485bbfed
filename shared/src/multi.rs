//! Running a multi-granularity profile (issue 10): the primary strategy and
//! every auxiliary chunk the same analysed document (normalization, blocks
//! and token counts shared; the blocks are parsed while the tokens are
//! counted) on one lane per core, each lane taking the next branch not yet
//! taken, costliest first, so wall time is about the slowest strategy, not
//! the sum. A small document runs its branches on the calling thread:
//! starting threads would cost more. Each output is validated on its own
//! (ordinals per granularity, ids namespaced against the primary
//! granularity; the `document` granularity covers the head of the document,
//! `table` the tables); then every chunk of a finer granularity names the
//! chunk of the nearest coarser granularity whose own span contains its own
//! span (`parent_chunk_id`), and the outputs are listed coarse to fine.

use crate::chunk::granular::assign_granularities;
use crate::chunk::record::{rank, Chunk, Granularity};
use crate::chunk::validate::{validate_scoped, Coverage};
use crate::error::ChunkError;
use crate::profile::model::Profile;
use crate::strategy::chunker::ChunkInput;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Documents with fewer tokens run their branches one after another on the
/// calling thread: starting a thread costs more than chunking them.
const PARALLEL_FROM_TOKENS: usize = 1024;

/// Whether a document of `bytes` bytes under `profile` is analysed and
/// chunked on several threads: a multi-granularity profile, a document of
/// at least [`PARALLEL_FROM_TOKENS`] tokens' worth of bytes (4 per token).
pub(crate) fn parallel(profile: &Profile, bytes: usize) -> bool {
    !profile.active_auxiliaries().is_empty() && bytes >= 4 * PARALLEL_FROM_TOKENS && lanes() > 1
}

/// Threads one document's branches may use: the machine's cores, asked once.
fn lanes() -> usize {
    static LANES: OnceLock<usize> = OnceLock::new();
    *LANES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Chunks `input` under `profile` (the profile whose settings `input`
/// carries): its primary strategy and active
/// auxiliaries; the chunks are validated.
pub(crate) fn chunk_all(
    input: &ChunkInput<'_>,
    profile: &Profile,
) -> Result<Vec<Chunk>, ChunkError> {
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
        assign_granularities(&mut chunks, |c| c.granularity);
        crate::chunk::seal::seal(&mut chunks, sub, primary);
        let coverage = match (auxiliary, sub.granularity) {
            (_, Granularity::Document) => Coverage::None,
            (true, Granularity::Table) => Coverage::Tables,
            _ => Coverage::All,
        };
        validate_scoped(input.doc, input.blocks, &chunks, sub, coverage, input.chars)?;
        Ok(chunks)
    };
    let auxiliaries = profile.active_auxiliaries();
    let branches: Vec<(&Profile, bool)> = std::iter::once((profile, false))
        .chain(auxiliaries.iter().map(|a| (&a.profile, true)))
        .collect();
    // Costliest first, so that the last branch to start is a cheap one: a
    // smaller target makes more chunks; the document head is one chunk.
    let mut order: Vec<usize> = (0..branches.len()).collect();
    order.sort_by_key(|&i| {
        let sub = branches[i].0;
        (
            sub.granularity == Granularity::Document,
            sub.limits().target_tokens,
        )
    });
    // A small document is done before a thread would have started.
    let lanes = if input.tokens.total() < PARALLEL_FROM_TOKENS {
        1
    } else {
        lanes().min(branches.len())
    };
    let slots: Vec<Slot> = branches.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    // Each lane takes the next branch not yet taken until none is left.
    let lane = || {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let (sub, auxiliary) = branches[i];
            let out = catch_unwind(AssertUnwindSafe(|| run(sub, auxiliary))).unwrap_or_else(|_| {
                Err(ChunkError::StrategyPanicked {
                    strategy: sub.strategy.clone(),
                })
            });
            *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(out);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..lanes {
            s.spawn(lane);
        }
        lane();
    });
    let outputs = slots.into_iter().map(|slot| {
        slot.into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or_else(|| {
                Err(ChunkError::StrategyPanicked {
                    strategy: profile.strategy.clone(),
                })
            })
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

/// Where a branch's lane leaves its result.
type Slot = Mutex<Option<Result<Vec<Chunk>, ChunkError>>>;

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
