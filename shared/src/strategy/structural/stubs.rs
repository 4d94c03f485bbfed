//! Stub chunks (issue 17): a piece of fewer than [`STUB_TOKENS`] tokens (an
//! HTML comment, `+ k` parsed as a list, a lone label) is no retrieval unit.
//! It joins the piece after it, else the one before it, whenever the result
//! stays within the hard max and keeps the structural rules: a table piece
//! must start with its header row and a code piece is a fenced unit, so
//! neither takes a stub; split parts (`detail`) stay as they are; and a stub
//! never crosses a heading (a section keeps its own chunk) or a thematic
//! break (a boundary by docs/contract.md#blocks-and-boundaries).

use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::ChunkType;
use crate::tokens::DocumentTokens;

/// Pieces below this many tokens are stubs.
pub(crate) const STUB_TOKENS: usize = 8;

fn takes_stub(p: &Piece) -> bool {
    p.suffix.is_empty()
        && p.detail.is_none()
        && !matches!(p.prefix, Prefix::Text(_))
        && !matches!(p.chunk_type, ChunkType::Table | ChunkType::Code)
}

fn merged_type(a: ChunkType, b: ChunkType) -> ChunkType {
    if a == b {
        a
    } else {
        ChunkType::Mixed
    }
}

/// Merges every stub into a neighbour where that fits `hard_max`.
pub(crate) fn merge_stubs(
    pieces: Vec<Piece>,
    tokens: &DocumentTokens<'_>,
    hard_max: usize,
) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut iter = pieces.into_iter().peekable();
    while let Some(piece) = iter.next() {
        let stub = takes_stub(&piece) && tokens.count(piece.own.clone()) < STUB_TOKENS;
        if !stub {
            out.push(piece);
            continue;
        }
        let text = tokens.text();
        let adjacent = |a: usize, b: usize| a <= b && text[a..b].trim().is_empty();
        // Forward: the stub's text opens the next piece.
        if let Some(next) = iter.peek_mut() {
            if takes_stub(next)
                && !next.starts_with_heading
                && adjacent(piece.own.end, next.own.start)
                && !tokens.exceeds(piece.own.start..next.own.end, hard_max)
            {
                next.own.start = piece.own.start;
                next.prefix = Prefix::None;
                next.chunk_type = merged_type(piece.chunk_type, next.chunk_type);
                next.blocks.0 = piece.blocks.0;
                next.headings = piece.headings;
                next.starts_with_heading = piece.starts_with_heading;
                continue;
            }
        }
        // Backward: the stub's text closes the previous piece.
        if let Some(prev) = out.last_mut() {
            let start = match prev.prefix {
                Prefix::Overlap(s) => s,
                _ => prev.own.start,
            };
            if takes_stub(prev)
                && !piece.starts_with_heading
                && adjacent(prev.own.end, piece.own.start)
                && !tokens.exceeds(start..piece.own.end, hard_max)
            {
                prev.own.end = piece.own.end;
                prev.chunk_type = merged_type(prev.chunk_type, piece.chunk_type);
                prev.blocks.1 = piece.blocks.1;
                prev.overlap_source = if piece.is_prose() {
                    prev.overlap_source.or(piece.overlap_source)
                } else {
                    None
                };
                continue;
            }
        }
        out.push(piece);
    }
    out
}
