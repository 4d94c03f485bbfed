//! The toolkit of the topic strategies (`semantic`, `texttiling`, `c99`):
//! a document as a row of *units* (sentences of prose, whole tables, code
//! blocks and lists, headings), a coherence score for each gap between two
//! units, and one packer that turns chosen boundaries into chunk spans.
//!
//! What the strategies differ in is only which gaps are boundary
//! candidates (an embedding coherence below a threshold, a TextTiling
//! valley, a C99 segment edge). What they share, here:
//! - Units: a paragraph, quote or HTML block is cut into sentences
//!   ([`crate::sentence`]); tables, code and lists are single units (a topic
//!   strategy never splits them); a unit over the hard max is cut at line
//!   starts, then into token windows (the structural fallbacks).
//! - Headings are hard stops: a chunk ends before a heading once it holds
//!   `min_tokens`; a heading is glued to the unit after it.
//! - Coherence at a gap: the cosine between the mean vectors of the
//!   `window` units before and after it (within the section), rounded to
//!   1e-4 so that a last-bit difference in a vector never moves a boundary.
//! - Packing: a candidate gap closes the open chunk when it holds at least
//!   `min_tokens`; a chunk that would pass the hard max is cut at its
//!   weakest gap (lowest coherence, headings first) that leaves `min_tokens`
//!   before it; a small tail merges into the chunk before it when that fits.

use std::ops::Range;

use crate::chunk::trail::trim_range;
use crate::embed::cosine;
use crate::markdown::parse::front_matter_len;
use crate::markdown::{Block, BlockKind};
use crate::sentence::sentence_spans;
use crate::tokens::DocumentTokens;

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitKind {
    /// A heading line: a hard stop before it, glued to what follows.
    Heading,
    /// A sentence of a paragraph, quote or HTML block.
    Sentence,
    /// A table, code block or list (or a line-cut part of one).
    Block,
}

/// One unit: a trimmed byte range of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// Its text in the document.
    pub range: Range<usize>,
    /// What it is.
    pub kind: UnitKind,
    /// Tokens of its own text.
    pub tokens: usize,
    /// Section number: increases at each heading.
    pub section: usize,
}

/// Coherence of a gap that a boundary may never take (a heading and its
/// first unit).
pub(crate) const GLUED: f32 = f32::INFINITY;
/// Coherence of a gap before a heading: the weakest of all.
pub(crate) const HEADING_GAP: f32 = -1.0;

/// The document's units, in order. Front matter and thematic breaks are not
/// units (the span builder carries their text along).
pub(crate) fn units(blocks: &[Block], tokens: &DocumentTokens<'_>, hard_max: usize) -> Vec<Unit> {
    let text = tokens.text();
    let body = front_matter_len(text);
    let mut out = Vec::new();
    let mut section = 0;
    for b in blocks.iter().filter(|b| b.range.start >= body) {
        let kind = match b.kind {
            BlockKind::Heading { .. } => {
                section += 1;
                UnitKind::Heading
            }
            BlockKind::Paragraph | BlockKind::Quote | BlockKind::Html | BlockKind::Other => {
                UnitKind::Sentence
            }
            BlockKind::Table | BlockKind::Code { .. } | BlockKind::List { .. } => UnitKind::Block,
            BlockKind::ThematicBreak | BlockKind::FrontMatter => continue,
        };
        let ranges: Vec<Range<usize>> = if kind == UnitKind::Sentence {
            sentence_spans(&text[b.range.clone()])
                .into_iter()
                .map(|s| trim_range(text, b.range.start + s.start..b.range.start + s.end))
                .collect()
        } else {
            vec![trim_range(text, b.range.clone())]
        };
        for r in ranges.into_iter().filter(|r| !r.is_empty()) {
            for part in fit_unit(tokens, r, hard_max) {
                out.push(Unit {
                    tokens: tokens.count(part.clone()),
                    range: part,
                    kind,
                    section,
                });
            }
        }
    }
    out
}

/// Cuts a range over `max` tokens at line starts, and a line still over it
/// into token windows; a range that fits is returned whole.
pub(crate) fn fit_unit(
    tokens: &DocumentTokens<'_>,
    r: Range<usize>,
    max: usize,
) -> Vec<Range<usize>> {
    if !tokens.exceeds(r.clone(), max) {
        return vec![r];
    }
    let text = tokens.text();
    let mut lines = Vec::new();
    let mut at = r.start;
    for line in text[r.clone()].split_inclusive('\n') {
        lines.push(at..at + line.len());
        at += line.len();
    }
    let mut out = Vec::new();
    let mut open: Option<Range<usize>> = None;
    let push = |out: &mut Vec<Range<usize>>, piece: Range<usize>| {
        let piece = trim_range(text, piece);
        if !piece.is_empty() {
            out.push(piece);
        }
    };
    for line in lines {
        if let Some(o) = &open {
            if !tokens.exceeds(o.start..line.end, max) {
                open = Some(o.start..line.end);
                continue;
            }
            push(&mut out, o.clone());
        }
        if tokens.exceeds(line.clone(), max) {
            let mut from = line.start;
            for cut in tokens.cut_points(line.clone(), max) {
                push(&mut out, from..cut);
                from = cut;
            }
            open = Some(from..line.end);
        } else {
            open = Some(line);
        }
    }
    if let Some(o) = open {
        push(&mut out, o);
    }
    out
}

/// Coherence at every gap from unit vectors (`vectors[i]` for unit `i`;
/// headings have none): `coherence[g]` is the gap before unit `g` (index 0
/// unused). Within a section the window means of up to `window` units
/// before and after are compared; the gap before a heading is
/// [`HEADING_GAP`], the gap after one [`GLUED`].
pub(crate) fn window_coherence(
    units: &[Unit],
    vectors: &[Option<&[f32]>],
    window: usize,
) -> Vec<f32> {
    let mut out = vec![GLUED; units.len()];
    let dims = vectors
        .iter()
        .flatten()
        .map(|v| v.len())
        .next()
        .unwrap_or(0);
    let mean = |idx: &mut dyn Iterator<Item = usize>| -> Vec<f32> {
        let mut acc = vec![0f64; dims];
        let mut n = 0usize;
        for i in idx {
            if let Some(v) = vectors[i] {
                acc.iter_mut().zip(v).for_each(|(a, x)| *a += f64::from(*x));
                n += 1;
            }
        }
        let n = n.max(1) as f64;
        acc.into_iter().map(|a| (a / n) as f32).collect()
    };
    for g in 1..units.len() {
        if units[g].kind == UnitKind::Heading {
            out[g] = HEADING_GAP;
            continue;
        }
        if units[g - 1].kind == UnitKind::Heading {
            continue;
        }
        let section = units[g].section;
        let mut left = (0..g)
            .rev()
            .take_while(|&i| units[i].section == section && units[i].kind != UnitKind::Heading)
            .filter(|&i| vectors[i].is_some())
            .take(window);
        let mut right = (g..units.len())
            .take_while(|&i| units[i].section == section)
            .filter(|&i| vectors[i].is_some())
            .take(window);
        let (l, r) = (mean(&mut left), mean(&mut right));
        out[g] = round4(cosine(&l, &r));
    }
    out
}

/// Rounds to 4 decimals: boundaries compare rounded coherences.
pub(crate) fn round4(x: f32) -> f32 {
    (x * 10_000.0).round() / 10_000.0
}

/// Candidates where coherence is below `tau` at a local minimum (no lower
/// neighbour gap in the same section).
pub(crate) fn threshold_candidates(coherence: &[f32], tau: f32) -> Vec<bool> {
    let scored = |g: usize| {
        coherence
            .get(g)
            .copied()
            .filter(|c| c.is_finite() && *c >= 0.0)
    };
    (0..coherence.len())
        .map(|g| match scored(g) {
            Some(c) if g > 0 && c < tau => {
                let left = g.checked_sub(1).and_then(scored).unwrap_or(f32::INFINITY);
                let right = scored(g + 1).unwrap_or(f32::INFINITY);
                c <= left && c < right
            }
            _ => false,
        })
        .collect()
}

/// LangChain `SemanticChunker`'s percentile breakpoints: a gap whose
/// distance (1 - coherence) is above the `percentile`-th of the document's
/// distances (linear interpolation, as numpy computes it), at a local
/// minimum of coherence.
pub(crate) fn percentile_candidates(coherence: &[f32], percentile: f64) -> Vec<bool> {
    let mut scored: Vec<f32> = coherence
        .iter()
        .skip(1)
        .copied()
        .filter(|c| c.is_finite() && *c >= 0.0)
        .collect();
    if scored.is_empty() {
        return vec![false; coherence.len()];
    }
    scored.sort_by(f32::total_cmp);
    // Distance above its p-th percentile == coherence below the (100-p)-th.
    let pos = (100.0 - percentile).clamp(0.0, 100.0) / 100.0 * (scored.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = (pos - lo as f64) as f32;
    let cut = scored[lo] + (scored[hi] - scored[lo]) * frac;
    threshold_candidates(coherence, cut)
}

/// Candidates from a segmenter run on each section's units (headings left
/// out): `segment(texts)` returns boundary indices into `texts`
/// ([`crate::segment`]'s convention).
pub(crate) fn section_candidates(
    units: &[Unit],
    text: &str,
    segment: impl Fn(&[&str]) -> Vec<usize>,
) -> Vec<bool> {
    let mut out = vec![false; units.len()];
    let mut at = 0;
    while at < units.len() {
        let section = units[at].section;
        let members: Vec<usize> = (at..units.len())
            .take_while(|&i| units[i].section == section)
            .filter(|&i| units[i].kind != UnitKind::Heading)
            .collect();
        at += (at..units.len())
            .take_while(|&i| units[i].section == section)
            .count();
        let texts: Vec<&str> = members
            .iter()
            .map(|&i| &text[units[i].range.clone()])
            .collect();
        for b in segment(&texts) {
            if let Some(&u) = members.get(b) {
                out[u] = true;
            }
        }
    }
    out
}

/// Gap coherence from word overlap ([`crate::embed::ToyEmbedder`] vectors),
/// for strategies without a sentence model: it only picks where an
/// over-long run is cut.
pub(crate) fn lexical_coherence(units: &[Unit], text: &str, window: usize) -> Vec<f32> {
    use crate::embed::{Embedder, ToyEmbedder};
    let texts: Vec<&str> = units.iter().map(|u| &text[u.range.clone()]).collect();
    let vectors = ToyEmbedder::default().embed(&texts).unwrap_or_default();
    let refs: Vec<Option<&[f32]>> = units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            (u.kind != UnitKind::Heading)
                .then(|| vectors.get(i).map(Vec::as_slice))
                .flatten()
        })
        .collect();
    window_coherence(units, &refs, window)
}

/// The chunks of a lexical topic strategy (`texttiling`, `c99`): units,
/// candidates from `segment` per section, word-overlap coherence for the
/// over-max cuts, packing.
pub(crate) fn lexical_chunks(
    input: &crate::strategy::chunker::ChunkInput<'_>,
    sizes: PackLimits,
    segment: impl Fn(&[&str]) -> Vec<usize>,
) -> Vec<crate::chunk::record::Chunk> {
    let (units, candidate, coherence) = lexical_plan(input, sizes, segment);
    let spans = pack(&units, &candidate, &coherence, input.tokens, sizes);
    crate::chunk::span::chunks_from_spans(input, &spans, true)
}

/// What a topic strategy decides before packing: the units, the candidate
/// gaps and the gap coherences.
pub(crate) type Plan = (Vec<Unit>, Vec<bool>, Vec<f32>);

/// A lexical topic strategy's [`Plan`].
pub(crate) fn lexical_plan(
    input: &crate::strategy::chunker::ChunkInput<'_>,
    sizes: PackLimits,
    segment: impl Fn(&[&str]) -> Vec<usize>,
) -> Plan {
    let text = input.doc.text.as_str();
    let units = units(input.blocks, input.tokens, sizes.hard_max_tokens);
    let candidate = section_candidates(&units, text, segment);
    let coherence = lexical_coherence(&units, text, 3);
    (units, candidate, coherence)
}

/// Sizes the packer keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackLimits {
    /// A candidate closes a chunk only once it holds this many tokens.
    pub min_tokens: usize,
    /// Small sections merge forward and tails backward up to this size.
    pub target_tokens: usize,
    /// No chunk is larger.
    pub hard_max_tokens: usize,
}

/// Chunk spans from units, candidate gaps and gap coherences (see the
/// module docs for the rules).
pub(crate) fn pack(
    units: &[Unit],
    candidate: &[bool],
    coherence: &[f32],
    tokens: &DocumentTokens<'_>,
    limits: PackLimits,
) -> Vec<Range<usize>> {
    let mut chunks: Vec<Range<usize>> = Vec::new(); // unit index ranges
    if units.is_empty() {
        return Vec::new();
    }
    let span = |a: usize, b: usize| units[a].range.start..units[b - 1].range.end;
    let fits = |a: usize, b: usize, max: usize| !tokens.exceeds(span(a, b), max);
    let size = |a: usize, b: usize| -> usize { units[a..b].iter().map(|u| u.tokens).sum() };
    let mut open = 0usize;
    for j in 1..units.len() {
        // Cut the open run while unit j does not fit after it.
        while open < j && !fits(open, j + 1, limits.hard_max_tokens) {
            let cut = weakest_cut(units, coherence, open, j, limits.min_tokens);
            chunks.push(open..cut);
            open = cut;
        }
        if open == j {
            continue;
        }
        let glued = coherence[j] == GLUED;
        let heading = units[j].kind == UnitKind::Heading;
        let have = size(open, j);
        if glued {
            continue;
        }
        if heading {
            if have >= limits.min_tokens {
                chunks.push(open..j);
                open = j;
            } else if let Some(prev) = mergeable_tail(&chunks, units, open, j, &fits, limits) {
                chunks.pop();
                chunks.push(prev..j);
                open = j;
            } else if !fits(open, j + 1, limits.target_tokens) {
                // A small section joins the next only up to the target.
                chunks.push(open..j);
                open = j;
            }
        } else if candidate.get(j).copied().unwrap_or(false) && have >= limits.min_tokens {
            chunks.push(open..j);
            open = j;
        }
    }
    let n = units.len();
    if size(open, n) < limits.min_tokens {
        if let Some(prev) = mergeable_tail(&chunks, units, open, n, &fits, limits) {
            chunks.pop();
            open = prev;
        }
    }
    chunks.push(open..n);
    chunks
        .into_iter()
        .filter(|c| !c.is_empty())
        .map(|c| span(c.start, c.end))
        .collect()
}

/// The start of the previous chunk when the small run `open..end` can join
/// it: same section, and together within the hard max.
fn mergeable_tail(
    chunks: &[Range<usize>],
    units: &[Unit],
    open: usize,
    end: usize,
    fits: &dyn Fn(usize, usize, usize) -> bool,
    limits: PackLimits,
) -> Option<usize> {
    let prev = chunks.last()?;
    let same_section = prev.end == open
        && units[open].kind != UnitKind::Heading
        && units[prev.start..end]
            .iter()
            .skip(1)
            .all(|u| u.kind != UnitKind::Heading);
    (same_section && fits(prev.start, end, limits.hard_max_tokens)).then_some(prev.start)
}

/// Where to cut the run `open..end` (which no longer fits): the gap of
/// lowest coherence (ties: the later) that leaves at least `min` tokens
/// before it, else the lowest overall, else right before `end`.
fn weakest_cut(units: &[Unit], coherence: &[f32], open: usize, end: usize, min: usize) -> usize {
    let mut best: Option<(bool, f32, usize)> = None;
    let mut before = units[open].tokens;
    for g in open + 1..end {
        let c = coherence[g];
        if c != GLUED {
            let key = (before >= min, c, g);
            let better = match best {
                None => true,
                Some((ok, bc, _)) => (key.0 && !ok) || (key.0 == ok && c <= bc),
            };
            if better {
                best = Some(key);
            }
        }
        before += units[g].tokens;
    }
    best.map_or(end, |(_, _, g)| g)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::markdown::parse_blocks;
    use crate::tokens::TokenizerKind;

    fn doc_units(text: &str, max: usize) -> Vec<Unit> {
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), text);
        units(&parse_blocks(text), &tokens, max)
    }

    #[test]
    fn prose_is_cut_into_sentences_and_blocks_stay_whole() {
        let text = "# Title\n\nOne sentence here. Another one here.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- x\n- y\n";
        let u = doc_units(text, 500);
        let kinds: Vec<UnitKind> = u.iter().map(|u| u.kind).collect();
        assert_eq!(
            kinds,
            [
                UnitKind::Heading,
                UnitKind::Sentence,
                UnitKind::Sentence,
                UnitKind::Block,
                UnitKind::Block
            ]
        );
        assert_eq!(&text[u[1].range.clone()], "One sentence here.");
        assert!(u.iter().all(|u| u.section == 1));
    }

    #[test]
    fn a_unit_over_the_hard_max_is_cut_at_lines_then_windows() {
        let row = "| alpha | beta | gamma | delta |\n";
        let text = format!("| h | i | j | k |\n|---|---|---|---|\n{}", row.repeat(60));
        let u = doc_units(&text, 100);
        assert!(u.len() > 3);
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
        for part in &u {
            assert!(tokens.count(part.range.clone()) <= 100);
            assert!(
                text[part.range.clone()].starts_with('|'),
                "cut at a line start"
            );
        }
        let long = "word ".repeat(500);
        let u = doc_units(&long, 100);
        assert!(u.len() >= 5 && u.iter().all(|u| u.tokens <= 100));
    }

    #[test]
    fn candidates_are_local_minima_below_the_threshold() {
        let c = [GLUED, 0.9, 0.5, 0.6, 0.4, 0.45, 0.95, HEADING_GAP, GLUED];
        let got = threshold_candidates(&c, 0.82);
        assert_eq!(
            got,
            [false, false, true, false, true, false, false, false, false]
        );
        // The 50th percentile of distances: coherence below the median.
        let p = percentile_candidates(&c, 50.0);
        assert_eq!(
            p,
            [false, false, true, false, true, false, false, false, false]
        );
        assert!(percentile_candidates(&[GLUED], 95.0).iter().all(|c| !c));
    }

    #[test]
    fn packing_closes_at_candidates_once_min_is_reached_and_never_passes_max() {
        let text: String = (0..40)
            .map(|i| format!("Sentence number {i} has a few words in it. "))
            .collect();
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
        let u = units(&parse_blocks(&text), &tokens, 60);
        let n = u.len();
        let coherence: Vec<f32> = (0..n)
            .map(|g| if g % 10 == 0 { 0.1 } else { 0.9 })
            .collect();
        let candidate: Vec<bool> = coherence.iter().map(|c| *c < 0.5).collect();
        let limits = PackLimits {
            min_tokens: 30,
            target_tokens: 80,
            hard_max_tokens: 150,
        };
        let spans = pack(&u, &candidate, &coherence, &tokens, limits);
        assert_eq!(spans.len(), 4);
        for s in &spans {
            assert!(tokens.count(s.clone()) <= 150);
        }
        assert!(text[spans[1].clone()].starts_with("Sentence number 10 "));
        // Without candidates, runs are cut at the weakest gaps under the max.
        let none = vec![false; n];
        let spans = pack(&u, &none, &coherence, &tokens, limits);
        assert!(spans.len() >= 3);
        assert!(spans.iter().all(|s| tokens.count(s.clone()) <= 150));
        assert!(text[spans[1].clone()].starts_with("Sentence number 10 "));
    }

    #[test]
    fn headings_stop_chunks_and_small_sections_join_the_next() {
        let text = "# A\n\nShort.\n\n# B\n\nAlso short here.\n\n# C\n\nA longer section with several words to pass the minimum of tokens set below for this test case.\n";
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), text);
        let u = units(&parse_blocks(text), &tokens, 100);
        let coherence = window_coherence(&u, &vec![None; u.len()], 3);
        let candidate = vec![false; u.len()];
        let limits = PackLimits {
            min_tokens: 10,
            target_tokens: 12,
            hard_max_tokens: 100,
        };
        let spans = pack(&u, &candidate, &coherence, &tokens, limits);
        let texts: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with("# A") && texts[0].ends_with("Also short here."));
        assert!(texts[1].starts_with("# C"));
    }
}
