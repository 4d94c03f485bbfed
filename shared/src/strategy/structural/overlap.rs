//! Overlap between neighbouring prose chunks (docs/contract.md#size-policy).
//!
//! Only a paragraph/mixed chunk that follows a paragraph/mixed chunk of the
//! same heading path, and does not start with a heading, gets overlap; it is
//! copied from the trailing paragraph text of the previous chunk (never from
//! a list, quote, table or code), starts at a sentence start where the
//! profile asks for that, never copies more than half of the previous
//! chunk's own text, and never pushes the chunk past the hard max. The
//! overlap is the document text right before the chunk's own span, so the
//! chunk text stays one contiguous slice of the document.

use crate::chunk::piece::{Piece, Prefix};
use crate::sentence::sentence_spans;
use super::params::{Overlap, StructuralParams};
use crate::tokens::DocumentTokens;

/// Adds overlap prefixes to `pieces` in place.
pub(crate) fn add_overlap(
    pieces: &mut [Piece],
    tokens: &DocumentTokens<'_>,
    params: &StructuralParams,
) {
    if params.overlap == Overlap::None {
        return;
    }
    let text = tokens.text();
    for i in 1..pieces.len() {
        let (before, after) = pieces.split_at_mut(i);
        let prev = &before[i - 1];
        let cur = &mut after[0];
        if !(prev.is_prose() && cur.is_prose())
            || cur.starts_with_heading
            || prev.headings != cur.headings
            || cur.prefix != Prefix::None
        {
            continue;
        }
        let Some(source) = prev.overlap_source else {
            continue;
        };
        // A thematic break (or anything else left out of both chunks) between
        // them is a boundary the overlap must not bridge.
        if !text[prev.own.end..cur.own.start].trim().is_empty() {
            continue;
        }
        let source = source.max(prev.own.start);
        let room = params
            .hard_max_tokens
            .saturating_sub(tokens.count(cur.own.clone()) + 2);
        let start = match params.overlap {
            Overlap::None => continue,
            Overlap::Tokens {
                tokens: want,
                sentence_aligned,
            } => {
                let budget = want.min(room);
                if budget == 0 {
                    continue;
                }
                let p = tokens.tail_start(source, prev.own.end, budget);
                if sentence_aligned {
                    match first_sentence_start_at_or_after(text, source, p, prev.own.end) {
                        Some(s) => s,
                        // No sentence starts within the budget: take the whole
                        // last sentence if it is at most twice the budget and
                        // fits, else fall back to a word start.
                        None => {
                            let wider =
                                tokens.tail_start(source, prev.own.end, (2 * budget).min(room));
                            first_sentence_start_at_or_after(text, source, wider, prev.own.end)
                                .filter(|&s| s < p)
                                .unwrap_or_else(|| word_start_at_or_after(text, p, prev.own.end))
                        }
                    }
                } else {
                    word_start_at_or_after(text, p, prev.own.end)
                }
            }
            Overlap::Sentences(n) => {
                let starts = sentence_starts(text, source, prev.own.end);
                let Some(&first) = starts
                    .iter()
                    .rev()
                    .nth(n.saturating_sub(1))
                    .or(starts.first())
                else {
                    continue;
                };
                // Drop leading sentences until it fits the hard max.
                starts
                    .iter()
                    .copied()
                    .filter(|&t| t >= first)
                    .find(|&t| tokens.count(t..cur.own.end) <= params.hard_max_tokens)
                    .unwrap_or(prev.own.end)
            }
        };
        // Never more than half of the previous chunk's own text (issue 17:
        // a 14-token chunk came back whole as the next one's overlap): the
        // start moves to a sentence (else word) start inside the second half.
        let half = tokens.count(prev.own.clone()) / 2;
        let mut start = start;
        if start < prev.own.end && tokens.count(start..prev.own.end) > half {
            let p = tokens.tail_start(prev.own.start, prev.own.end, half);
            start = first_sentence_start_at_or_after(text, source, p, prev.own.end)
                .unwrap_or_else(|| word_start_at_or_after(text, p, prev.own.end));
            if half == 0 || tokens.count(start..prev.own.end) > half {
                continue;
            }
        }
        if start < prev.own.end && tokens.count(start..cur.own.end) <= params.hard_max_tokens {
            cur.prefix = Prefix::Overlap(start);
        }
    }
}

/// Sentence start offsets inside `text[from..to]`, excluding `from` itself
/// unless it is the region start.
fn sentence_starts(text: &str, from: usize, to: usize) -> Vec<usize> {
    sentence_spans(&text[from..to])
        .into_iter()
        .map(|r| from + r.start)
        .map(|s| skip_ws(text, s, to))
        .filter(|&s| s < to)
        .collect()
}

fn first_sentence_start_at_or_after(text: &str, from: usize, p: usize, to: usize) -> Option<usize> {
    // Segment only a window before `p`: enough context to see the sentence
    // that `p` falls into, without re-reading the whole chunk.
    const CONTEXT: usize = 2048;
    let mut w = p.saturating_sub(CONTEXT).max(from);
    while !text.is_char_boundary(w) {
        w += 1;
    }
    sentence_starts(text, w, to)
        .into_iter()
        .find(|&s| s >= p && (s > w || w == from))
}

fn word_start_at_or_after(text: &str, p: usize, to: usize) -> usize {
    if p == 0 || text[..p].ends_with(char::is_whitespace) {
        return skip_ws(text, p, to);
    }
    match text[p..to].find(char::is_whitespace) {
        Some(ws) => skip_ws(text, p + ws, to),
        None => to,
    }
}

fn skip_ws(text: &str, p: usize, to: usize) -> usize {
    let rest = &text[p..to];
    p + (rest.len() - rest.trim_start().len())
}
