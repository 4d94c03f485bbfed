//! The explainer that works for any strategy, including ones added later:
//! it reads only the chunk, the next chunk and the document's analysis.
//!
//! For a chunk followed by another (the one whose own span starts next):
//! 1. the next chunk starts at a heading block: [`EndReason::Heading`];
//! 2. the next chunk starts at a table or code block:
//!    [`EndReason::TableBoundary`], [`EndReason::CodeBoundary`];
//! 3. the chunk ends where its last block ends: a table, a code block, a
//!    list give their boundary; prose at 90% of the hard max or more, or
//!    that the next block would have taken past the target, is
//!    [`EndReason::SizeBudget`], else [`EndReason::Paragraph`];
//! 4. the chunk ends inside a block: a table, code block or list was split
//!    for size, and so was prose at 80% of the target or more
//!    ([`EndReason::SizeBudget`]); else [`EndReason::Sentence`].
//!
//! The last chunk ends with the document. Auxiliary chunks of a
//! multi-granularity profile end where their granularity says.

use crate::chunk::record::Chunk;
use crate::explain::reason::EndReason;
use crate::markdown::{Block, BlockKind};
use crate::profile::model::Profile;
use crate::strategy::chunker::ChunkInput;
use crate::strategy::limits::Limits;
use crate::tokens::DocumentTokens;

/// One reason per chunk of `chunks` (a whole chunking of the document under
/// `profile`, in the engine's order): the primary strategy's own
/// explanation where it has one ([`crate::strategy::Chunker::explain`]),
/// the generic one otherwise.
pub fn explain_chunks(
    input: &ChunkInput<'_>,
    profile: &Profile,
    chunks: &[Chunk],
) -> Vec<EndReason> {
    let aux: Vec<_> = profile
        .active_auxiliaries()
        .iter()
        .map(|a| a.profile.granularity)
        .collect();
    let chunker = profile.chunker();
    let primary_of = |primary: &[Chunk]| {
        chunker
            .explain(input, primary)
            .filter(|r| r.len() == primary.len())
            .unwrap_or_else(|| generic(input, primary, chunker.limits()))
    };
    if aux.is_empty() {
        return primary_of(chunks);
    }
    let (idx, primary): (Vec<usize>, Vec<Chunk>) = chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| !aux.contains(&c.granularity))
        .map(|(i, c)| (i, c.clone()))
        .unzip();
    let mut out: Vec<EndReason> = chunks
        .iter()
        .map(|c| EndReason::Granularity {
            granularity: c.granularity.as_str().to_owned(),
        })
        .collect();
    for (i, r) in idx.into_iter().zip(primary_of(&primary)) {
        out[i] = r;
    }
    out
}

/// For each chunk, the chunk whose own span comes next (`None` for the
/// last).
pub fn next_chunks(chunks: &[Chunk]) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by_key(|&i| (chunks[i].byte_start, chunks[i].byte_end));
    let mut next = vec![None; chunks.len()];
    for w in order.windows(2) {
        next[w[0]] = Some(w[1]);
    }
    next
}

/// The generic reasons, one per chunk of one strategy's output.
pub fn generic(input: &ChunkInput<'_>, chunks: &[Chunk], limits: Limits) -> Vec<EndReason> {
    let next = next_chunks(chunks);
    chunks
        .iter()
        .zip(&next)
        .map(|(c, n)| match n {
            None => EndReason::EndOfDocument,
            Some(j) => one(input.blocks, input.tokens, c, &chunks[*j], limits),
        })
        .collect()
}

/// The generic reason for `chunk`, followed by `next`, over `blocks` (the
/// document's, or a strategy's own reading of it) and the token counts.
pub fn one(
    blocks: &[Block],
    tokens: &DocumentTokens<'_>,
    chunk: &Chunk,
    next: &Chunk,
    limits: Limits,
) -> EndReason {
    let end = chunk.byte_end as usize;
    let next_start = next.byte_start as usize;
    let following = blocks
        .iter()
        .filter(|b| b.range.start >= end)
        .find(|b| !matches!(b.kind, BlockKind::ThematicBreak | BlockKind::FrontMatter));
    if let Some(b) = following.filter(|b| next_start <= b.range.start) {
        match b.kind {
            BlockKind::Heading { level } => {
                return EndReason::Heading {
                    level,
                    text: b.heading_text.clone(),
                }
            }
            BlockKind::Table => return EndReason::TableBoundary,
            BlockKind::Code { .. } => return EndReason::CodeBoundary,
            _ => {}
        }
    }
    let budget = size_budget(chunk, limits);
    let size = chunk.token_count as usize;
    let next_fits =
        following.is_none_or(|b| size + tokens.count(b.range.clone()) <= limits.target_tokens);
    let last = blocks.iter().rev().find(|b| b.range.start < end);
    match last {
        Some(b) if end >= b.range.end => match b.kind {
            BlockKind::Table => EndReason::TableBoundary,
            BlockKind::Code { .. } => EndReason::CodeBoundary,
            BlockKind::List { .. } => EndReason::ListExit,
            _ if size * 10 >= limits.hard_max_tokens * 9 || !next_fits => budget,
            _ => EndReason::Paragraph,
        },
        Some(b)
            if matches!(
                b.kind,
                BlockKind::Table | BlockKind::Code { .. } | BlockKind::List { .. }
            ) =>
        {
            budget
        }
        _ if size * 10 >= limits.target_tokens * 8 => budget,
        Some(_) => EndReason::Sentence,
        None => EndReason::Paragraph,
    }
}

/// [`EndReason::SizeBudget`] for `chunk` under `limits`.
pub fn size_budget(chunk: &Chunk, limits: Limits) -> EndReason {
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    EndReason::SizeBudget {
        tokens: chunk.token_count,
        target: clamp(limits.target_tokens),
        hard_max: clamp(limits.hard_max_tokens),
    }
}
