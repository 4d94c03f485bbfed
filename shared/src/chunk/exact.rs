//! Chunks from spans kept exactly as a strategy gives them: the drop-in
//! splitters, whose chunk texts must be the framework's own (leading and
//! trailing whitespace, front matter and thematic breaks included). Unlike
//! [`crate::chunk::span::chunks_from_spans`], nothing is trimmed, skipped,
//! gap-filled or cut under a hard max.

use std::ops::Range;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::Chunk;
use crate::chunk::trail::{block_span, chunk_type_of, starts_with_heading, HeadingTrail};
use crate::markdown::Block;
use crate::strategy::chunker::ChunkInput;

/// Pieces of `spans` (byte ranges of `text`, in order, each may overlap the
/// one before): a piece's own span is what its span adds after the previous
/// one, the rest is overlap. A span that adds nothing but whitespace is
/// left out (a record never holds whitespace alone).
pub(crate) fn exact_pieces(
    text: &str,
    blocks: &[Block],
    trail: &HeadingTrail<'_>,
    spans: &[Range<usize>],
) -> Vec<Piece> {
    let mut pieces = Vec::with_capacity(spans.len());
    let mut covered = 0;
    for span in spans {
        if span.end <= covered || span.start >= span.end {
            continue;
        }
        let own = span.start.max(covered)..span.end;
        if text[own.clone()].trim().is_empty() {
            continue;
        }
        let prefix = if span.start < own.start {
            Prefix::Overlap(span.start)
        } else {
            Prefix::None
        };
        let starts_with_heading = starts_with_heading(blocks, &own);
        pieces.push(Piece {
            chunk_type: chunk_type_of(blocks, &own),
            blocks: block_span(blocks, &own),
            headings: trail.path_of(&own),
            own: own.clone(),
            prefix,
            suffix: String::new(),
            detail: None,
            starts_with_heading,
            overlap_source: None,
        });
        covered = own.end;
    }
    pieces
}

/// The records of `spans` kept exactly ([`exact_pieces`]), with ids,
/// headings paths and breadcrumbs as every strategy's.
pub(crate) fn chunks_from_exact_spans(
    input: &ChunkInput<'_>,
    spans: &[Range<usize>],
) -> Vec<Chunk> {
    let text = input.doc.text.as_str();
    let trail = HeadingTrail::new(input.blocks);
    let pieces = exact_pieces(text, input.blocks, &trail, spans);
    let mut ctx = BuildContext::new(input, document_title(input.meta, input.blocks));
    ctx.close_fences = false;
    build_chunks(pieces, &ctx)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::markdown::parse_blocks;

    #[test]
    fn spans_stay_exact_overlap_becomes_prefix_and_whitespace_alone_is_left_out() {
        let text = "---\ntitle: x\n---\n one two three four ";
        let blocks = parse_blocks(text);
        let trail = HeadingTrail::new(&blocks);
        let spans = [0..12, 8..21, 20..22, 19..text.len()];
        let pieces = exact_pieces(text, &blocks, &trail, &spans);
        let own: Vec<&str> = pieces.iter().map(|p| &text[p.own.clone()]).collect();
        assert_eq!(own, ["---\ntitle: x", "\n---\n one", " two three four "]);
        assert_eq!(pieces[1].prefix, Prefix::Overlap(8));
        assert_eq!(pieces[2].prefix, Prefix::Overlap(19));
    }
}
