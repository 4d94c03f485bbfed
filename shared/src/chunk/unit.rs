//! One unit (a block, with any headings waiting in front of it) as planned
//! pieces: whole when it fits the hard max, else split as docs/contract.md#size-policy says:
//! tables between rows with the header repeated, code between lines
//! re-fenced, lists between top-level items, prose at sentences and then
//! token windows. For strategies that choose their own boundaries between
//! blocks (section-aware, sliding window, table) and reuse the structural
//! fallbacks inside an oversized block.

use std::ops::Range;

use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::ChunkType;
use crate::chunk::split::Splitter;
use crate::chunk::trail::{block_span, chunk_type_of, trim_range, HeadingTrail};
use crate::markdown::{Block, BlockKind};

/// A piece whose text is exactly `own` (no prefix, no suffix), with the
/// headings path, block indices and chunk type its blocks give.
pub(crate) fn plain_piece(blocks: &[Block], trail: &HeadingTrail<'_>, own: Range<usize>) -> Piece {
    let starts_with_heading = blocks
        .get(blocks.partition_point(|b| b.range.end <= own.start))
        .is_some_and(|b| b.range.start <= own.start && matches!(b.kind, BlockKind::Heading { .. }));
    Piece {
        chunk_type: chunk_type_of(blocks, &own),
        blocks: block_span(blocks, &own),
        headings: trail.path_of(&own),
        own,
        prefix: Prefix::None,
        suffix: String::new(),
        detail: None,
        starts_with_heading,
        overlap_source: None,
    }
}

/// How many tables and code blocks were split so far (their ordinals in
/// `chunk_path`).
#[derive(Debug, Default)]
pub(crate) struct SplitCounts {
    tables: usize,
    codes: usize,
    lists: usize,
}

/// Pieces of `start..blocks[idx].range.end`, where `start` is where the
/// headings in front of block `idx` begin (or the block's start): one piece
/// when it fits `split`'s hard max, else parts of at most `limit` tokens
/// (the first carrying the headings).
pub(crate) fn unit_pieces(
    split: &Splitter<'_>,
    blocks: &[Block],
    trail: &HeadingTrail<'_>,
    idx: usize,
    start: usize,
    limit: usize,
    counts: &mut SplitCounts,
) -> Vec<Piece> {
    let block = &blocks[idx];
    let whole = start..block.range.end;
    if !split.tokens().exceeds(whole.clone(), split.hard_max()) {
        return vec![plain_piece(blocks, trail, whole)];
    }
    // Headings that fill half the budget cannot travel with the first part:
    // they go out alone first (cut like prose if even they are too long).
    let lead = trim_range(split.text(), start..block.range.start);
    if !lead.is_empty() && split.tokens().exceeds(lead.clone(), split.hard_max() / 2) {
        let units = if split.tokens().exceeds(lead.clone(), split.hard_max()) {
            split.prose_units(lead, split.hard_max(), &[])
        } else {
            vec![lead]
        };
        let mut out: Vec<Piece> = split
            .group(&units, None, limit)
            .into_iter()
            .map(|own| plain_piece(blocks, trail, own))
            .collect();
        out.extend(unit_pieces(
            split,
            blocks,
            trail,
            idx,
            block.range.start,
            limit,
            counts,
        ));
        return out;
    }
    let first_block = blocks.partition_point(|b| b.range.end <= start).min(idx);
    let headings = trail.path_of(&block.range);
    let with_blocks = |i: usize, mut p: Piece| {
        p.blocks = if i == 0 {
            (first_block, idx)
        } else {
            (idx, idx)
        };
        p.starts_with_heading = i == 0 && start < block.range.start;
        p.headings = headings.clone();
        p
    };
    let parts = match block.kind {
        BlockKind::Table => {
            counts.tables += 1;
            Some((
                split.table(block.range.clone(), start, limit, counts.tables - 1),
                ChunkType::Table,
            ))
        }
        BlockKind::Code { .. } => {
            counts.codes += 1;
            Some((
                split.code(block.range.clone(), start, limit, counts.codes - 1),
                ChunkType::Code,
            ))
        }
        _ => None,
    };
    if let Some((parts, chunk_type)) = parts {
        return parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| {
                with_blocks(
                    i,
                    Piece {
                        chunk_type: part.chunk_type.unwrap_or(chunk_type),
                        own: part.own,
                        prefix: part.prefix.map_or(Prefix::None, Prefix::Text),
                        suffix: part.suffix,
                        blocks: (idx, idx),
                        headings: Vec::new(),
                        detail: Some(part.detail),
                        starts_with_heading: false,
                        overlap_source: None,
                    },
                )
            })
            .collect();
    }
    // Lists between top-level items, anything else at sentences; a unit
    // still over the hard max is cut into token windows.
    let budget = split.hard_max();
    let mut units: Vec<Range<usize>> = Vec::new();
    let pieces = if matches!(block.kind, BlockKind::List { .. }) {
        counts.lists += 1;
        cover(split.text(), &block.range, &block.items)
    } else {
        vec![block.range.clone()]
    };
    for piece in pieces {
        if split.tokens().exceeds(piece.clone(), budget) {
            units.extend(split.prose_units(piece, budget, &block.nested_code));
        } else {
            units.push(piece);
        }
    }
    let groups = split.group(&units, Some(start), limit);
    let total = groups.len();
    groups
        .into_iter()
        .enumerate()
        .map(|(i, own)| {
            let mut p = plain_piece(blocks, trail, own);
            if matches!(block.kind, BlockKind::List { .. }) {
                p.chunk_type = ChunkType::List;
                p.detail = Some(format!(
                    "list[{}] part {}/{}",
                    counts.lists - 1,
                    i + 1,
                    total
                ));
            }
            with_blocks(i, p)
        })
        .collect()
}

/// Item ranges stretched to cover the whole list: each item runs to the end
/// of the text before the next item, so text between items (a link reference
/// definition inside the list, say) is never lost.
pub(crate) fn cover(text: &str, list: &Range<usize>, items: &[Range<usize>]) -> Vec<Range<usize>> {
    if items.is_empty() {
        return vec![list.clone()];
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let start = if i == 0 { list.start } else { item.start };
        let end = items
            .get(i + 1)
            .map_or(list.end, |next| next.start.max(item.end));
        let end = start + text[start..end].trim_end().len();
        out.push(start..end);
    }
    out
}
