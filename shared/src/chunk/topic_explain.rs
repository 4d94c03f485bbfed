//! Explaining the chunks of the topic strategies ([`crate::chunk::topic`]):
//! a chunk that ends at a gap the strategy chose as a boundary candidate
//! ends for the strategy's own reason (a semantic dip, a topic boundary,
//! a role change), with the gap's coherence; every other end (a heading,
//! a cut for size, the fitting under the hard max) is the generic one.

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_plan, PackLimits, Unit, UnitKind};
use crate::explain::generic::{next_chunks, one};
use crate::explain::reason::EndReason;
use crate::strategy::chunker::ChunkInput;
use crate::strategy::limits::Limits;

/// One reason per chunk: `at_candidate(gap, coherence)` where the next
/// chunk starts at candidate gap `gap` (the gap before unit `gap`, not a
/// heading), the generic reason elsewhere and where that gives `None`.
pub(crate) fn explain_gaps(
    input: &ChunkInput<'_>,
    chunks: &[Chunk],
    (units, candidate, coherence): (&[Unit], &[bool], &[f32]),
    limits: Limits,
    at_candidate: impl Fn(usize, f32) -> Option<EndReason>,
) -> Vec<EndReason> {
    let next = next_chunks(chunks);
    chunks
        .iter()
        .zip(&next)
        .map(|(c, n)| {
            let Some(next) = n.map(|j| &chunks[j]) else {
                return EndReason::EndOfDocument;
            };
            let end = c.byte_end as usize;
            let gap = units.iter().position(|u| u.range.start >= end);
            let chosen = gap.filter(|&g| {
                units[g].kind != UnitKind::Heading
                    && candidate.get(g).copied().unwrap_or(false)
                    && (next.byte_start as usize) <= units[g].range.start
                    && (next.byte_end as usize) > units[g].range.start
            });
            chosen
                .and_then(|g| at_candidate(g, *coherence.get(g)?))
                .unwrap_or_else(|| one(input.blocks, input.tokens, c, next, limits))
        })
        .collect()
}

/// Why each chunk of a lexical topic strategy (`texttiling`, `c99`,
/// `bayesseg`, `lda_topic`, `graph_partition`, `discourse_segmenter`) ends:
/// a topic boundary with its coherence where the segmenter chose the gap,
/// the generic reason elsewhere. The segmenter runs again (deterministic).
pub(crate) fn lexical_explain(
    input: &ChunkInput<'_>,
    sizes: PackLimits,
    segment: impl Fn(&[&str]) -> Vec<usize>,
    chunks: &[Chunk],
) -> Vec<EndReason> {
    let (units, candidate, coherence) = lexical_plan(input, sizes, segment);
    let limits = Limits {
        target_tokens: sizes.target_tokens,
        hard_max_tokens: sizes.hard_max_tokens,
        min_tokens: sizes.min_tokens,
        overlap_tokens: 0,
    };
    explain_gaps(
        input,
        chunks,
        (&units, &candidate, &coherence),
        limits,
        |_, score| {
            Some(EndReason::TopicBoundary {
                score,
                cue: None,
                confidence: None,
            })
        },
    )
}
