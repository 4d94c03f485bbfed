//! Spans to pieces, for strategies that cut the document text where they
//! like (recursive, token, markdown headers) rather than by blocks.
//!
//! Such a strategy produces chunk *spans*: byte ranges of the normalized
//! document, in order, possibly overlapping the previous one. [`spans_to_pieces`]
//! turns them into pieces whose own span is the part not already in the
//! previous chunk (whitespace trimmed) and whose prefix is the overlap, so
//! `chunk_text` stays one contiguous slice of the document; it fills in the
//! headings path, block indices and chunk type from the document's blocks.

use std::ops::Range;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::Chunk;
use crate::chunk::trail::{
    block_span, chunk_type_of, only_breaks, starts_with_heading, trim_range, HeadingTrail,
};
use crate::markdown::parse::front_matter_len;
use crate::markdown::Block;
use crate::strategy::chunker::ChunkInput;
use crate::tokens::DocumentTokens;

/// Turns chunk spans (in order, each may overlap the previous one) into
/// pieces: own span = the part after the previous chunk's end, trimmed;
/// prefix = the document text from the chunk's start up to it. A span with
/// nothing new is dropped; with `fill_gaps`, non-whitespace text between
/// two spans (which no span covered) is taken into the next own span, so
/// nothing is lost (without it, the caller left the gaps out on purpose).
pub(crate) fn spans_to_pieces(
    text: &str,
    blocks: &[Block],
    trail: &HeadingTrail<'_>,
    spans: &[Range<usize>],
    body_start: usize,
    fill_gaps: bool,
) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::with_capacity(spans.len());
    let mut covered = body_start;
    for span in spans {
        let start = span.start.max(body_start);
        if span.end <= covered {
            continue;
        }
        // Text between the last own span and this span that nothing covered.
        let own_from = if !fill_gaps || text[covered..start.max(covered)].trim().is_empty() {
            start.max(covered)
        } else {
            covered
        };
        let own = trim_range(text, own_from..span.end);
        if own.is_empty() || only_breaks(blocks, &own) {
            // A thematic break alone is a boundary, not content.
            continue;
        }
        let prefix = if start < own.start && !text[start..own.start].trim().is_empty() {
            Prefix::Overlap(start)
        } else {
            Prefix::None
        };
        let headings = trail.path_of(&own);
        let starts_with_heading = starts_with_heading(blocks, &own);
        pieces.push(Piece {
            chunk_type: chunk_type_of(blocks, &own),
            blocks: block_span(blocks, &own),
            own: own.clone(),
            prefix,
            suffix: String::new(),
            headings,
            detail: None,
            starts_with_heading,
            overlap_source: None,
        });
        covered = own.end;
    }
    pieces
}

/// Makes every piece fit `max` tokens (its chunk text: overlap + own span):
/// a piece over it first loses its overlap, then has its own span cut into
/// token windows. A safety net under strategies whose spans are measured
/// before trimming or gap-filling.
pub(crate) fn fit_pieces(
    pieces: Vec<Piece>,
    tokens: &DocumentTokens<'_>,
    max: usize,
) -> Vec<Piece> {
    let mut out = Vec::with_capacity(pieces.len());
    for mut piece in pieces {
        let start = match piece.prefix {
            Prefix::Overlap(s) => s,
            _ => piece.own.start,
        };
        if !tokens.exceeds(start..piece.own.end, max) {
            out.push(piece);
            continue;
        }
        piece.prefix = Prefix::None;
        if !tokens.exceeds(piece.own.clone(), max) {
            out.push(piece);
            continue;
        }
        let text = tokens.text();
        let mut from = piece.own.start;
        let cuts = tokens.cut_points(piece.own.clone(), max);
        for end in cuts.into_iter().chain(std::iter::once(piece.own.end)) {
            let own = trim_range(text, from..end);
            from = end;
            if own.is_empty() {
                continue;
            }
            let mut part = piece.clone();
            part.own = own;
            out.push(part);
        }
    }
    out
}

/// Chunk records from chunk spans, in one call: the toolkit's path for a
/// strategy that decides spans and nothing else (recursive, token,
/// markdown headers, or a strategy registered by an embedding program).
/// Spans are byte ranges of `input.doc.text` in order, each may overlap the
/// previous one (the overlap becomes the prefix); front matter is skipped;
/// with `fill_gaps`, text no span covered joins the next chunk; every chunk
/// is fitted under the profile's hard max; records get ids, headings paths
/// and breadcrumbs. Code fences a chunk cuts through stay open (the chunk is
/// a plain slice of the document).
pub fn chunks_from_spans(
    input: &ChunkInput<'_>,
    spans: &[Range<usize>],
    fill_gaps: bool,
) -> Vec<Chunk> {
    let text = input.doc.text.as_str();
    let body = front_matter_len(text);
    let trail = HeadingTrail::new(input.blocks);
    let pieces = spans_to_pieces(text, input.blocks, &trail, spans, body, fill_gaps);
    let pieces = fit_pieces(pieces, input.tokens, input.profile.hard_max_tokens());
    let mut ctx = BuildContext::new(input, document_title(input.meta, input.blocks));
    ctx.close_fences = false;
    build_chunks(pieces, &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::parse_blocks;

    #[test]
    fn heading_paths_follow_the_stack_and_headings_only_chunks_take_the_last() {
        let text = "# A\n\nintro\n\n## B\n\nbody b\n\n# C\n\n## D\n";
        let blocks = parse_blocks(text);
        let trail = HeadingTrail::new(&blocks);
        let at = |needle: &str| {
            let s = text.find(needle).unwrap_or(0);
            s..s + needle.len()
        };
        assert_eq!(trail.path_of(&at("intro")), ["A"]);
        assert_eq!(trail.path_of(&at("## B\n\nbody b")), ["A", "B"]);
        assert_eq!(trail.path_of(&at("# C\n\n## D")), ["C", "D"]);
        assert!(trail.path_of(&(0..0)).is_empty());
    }

    #[test]
    fn overlapping_spans_become_own_spans_with_overlap_prefixes() {
        let text = "one two three four five six";
        let blocks = parse_blocks(text);
        let trail = HeadingTrail::new(&blocks);
        let pieces = spans_to_pieces(
            text,
            &blocks,
            &trail,
            &[0..13, 8..23, 14..23, 19..27],
            0,
            true,
        );
        let owns: Vec<&str> = pieces.iter().map(|p| &text[p.own.clone()]).collect();
        // The third span adds nothing and is dropped.
        assert_eq!(owns, ["one two three", "four five", "six"]);
        assert_eq!(pieces[1].prefix, Prefix::Overlap(8));
        assert_eq!(pieces[2].prefix, Prefix::Overlap(19));
    }

    #[test]
    fn text_no_span_covered_joins_the_next_own_span() {
        let text = "alpha --- beta";
        let blocks = parse_blocks(text);
        let trail = HeadingTrail::new(&blocks);
        let pieces = spans_to_pieces(text, &blocks, &trail, &[0..5, 10..14], 0, true);
        assert_eq!(&text[pieces[1].own.clone()], "--- beta");
        assert_eq!(pieces[1].prefix, Prefix::None);
    }
}
