//! The retrieval side: what to do with chunks once an index has ranked
//! them. Pure functions over chunk positions, so the evaluation harness and
//! users' retrieval code call the same thing.
//!
//! - [`of_granularity`]: the chunks of one granularity of a
//!   multi-granularity profile (index one level, not all of them; `eval
//!   --granularity`).
//! - [`reciprocal_rank_fusion`]: one ranking from several, e.g. BM25's and
//!   an embedder's (`eval --retriever hybrid`), or one per granularity.
//! - [`with_neighbours`]: small-to-big: each hit followed by the chunks
//!   beside it in its document, for a context budget to take in order
//!   (`eval --neighbours`).
//! - [`merge_adjacent`]: the passages of a context joined where they touch
//!   or overlap, so a prompt shows each stretch of text once (the harness
//!   measures recall on the joined passages).

use std::borrow::Borrow;
use std::collections::HashMap;

use crate::chunk::record::{Chunk, Granularity};

/// Where a chunk lies: its document (any key the caller uses) and its span
/// in that document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The document, as the caller numbers them.
    pub doc: usize,
    /// Start offset (inclusive).
    pub start: u32,
    /// End offset (exclusive).
    pub end: u32,
}

/// Small-to-big: the order in which to give chunks when each hit of
/// `ranked` brings the chunks around it. `spans` are every chunk in document
/// order (chunk `i - 1` and `i + 1` are `i`'s neighbours when they are in the
/// same document); after each hit come its neighbours up to `radius` on each
/// side, nearest first, the following one before the preceding one; a chunk
/// already given is not repeated. Fill a budget from the result in order.
pub fn with_neighbours(ranked: &[usize], spans: &[Span], radius: usize) -> Vec<usize> {
    let mut given = vec![false; spans.len()];
    let mut order = Vec::with_capacity(ranked.len() * (1 + 2 * radius));
    let mut give = |i: usize, order: &mut Vec<usize>| {
        if let Some(g) = given.get_mut(i) {
            if !*g {
                *g = true;
                order.push(i);
            }
        }
    };
    for &hit in ranked {
        let Some(own) = spans.get(hit) else { continue };
        give(hit, &mut order);
        for step in 1..=radius {
            if spans.get(hit + step).is_some_and(|s| s.doc == own.doc) {
                give(hit + step, &mut order);
            }
            if let Some(prev) = hit.checked_sub(step) {
                if spans[prev].doc == own.doc {
                    give(prev, &mut order);
                }
            }
        }
    }
    order
}

/// The chunks of `chunks` at granularity `g`, in their order (owned chunks
/// or references alike).
pub fn of_granularity<C: Borrow<Chunk>>(
    chunks: impl IntoIterator<Item = C>,
    g: Granularity,
) -> impl Iterator<Item = C> {
    chunks
        .into_iter()
        .filter(move |c| c.borrow().granularity == g)
}

/// Reciprocal-rank fusion: each item scores `sum 1 / (k + rank)` over the
/// rankings that hold it (rank from 1); the result is sorted by score, ties
/// by the item's first appearance (rankings in order, then rank), so equal
/// input gives equal output. `k` = 60 is the usual choice (Cormack et al.
/// 2009), and what `eval --retriever hybrid` uses.
pub fn reciprocal_rank_fusion(rankings: &[&[usize]], k: f64) -> Vec<usize> {
    // item -> (score, first seen)
    let mut scores: Vec<(usize, f64, usize)> = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    for ranking in rankings {
        for (rank, &item) in ranking.iter().enumerate() {
            let add = 1.0 / (k + rank as f64 + 1.0);
            match index.get(&item) {
                Some(&at) => scores[at].1 += add,
                None => {
                    index.insert(item, scores.len());
                    scores.push((item, add, scores.len()));
                }
            }
        }
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    scores.into_iter().map(|(item, _, _)| item).collect()
}

/// The passages of a context with every run of touching or overlapping
/// spans of one document joined, in the order of each run's first passage:
/// what a prompt should show (each stretch of text once, in one piece).
/// Empty spans are left out.
pub fn merge_adjacent(passages: &[Span]) -> Vec<Span> {
    let mut by_doc: Vec<(usize, Span)> = passages
        .iter()
        .copied()
        .filter(|s| s.start < s.end)
        .enumerate()
        .collect();
    by_doc.sort_by_key(|(at, s)| (s.doc, s.start, s.end, *at));
    let mut runs: Vec<(usize, Span)> = Vec::new();
    for (at, s) in by_doc {
        match runs.last_mut() {
            Some((first, run)) if run.doc == s.doc && s.start <= run.end => {
                run.end = run.end.max(s.end);
                *first = (*first).min(at);
            }
            _ => runs.push((at, s)),
        }
    }
    runs.sort_by_key(|(first, _)| *first);
    runs.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn span(doc: usize, start: u32, end: u32) -> Span {
        Span { doc, start, end }
    }

    #[test]
    fn neighbours_follow_each_hit_within_its_document_once() {
        let spans = [
            span(0, 0, 10),
            span(0, 10, 20),
            span(0, 20, 30),
            span(1, 0, 10),
            span(1, 10, 20),
        ];
        // Hit 2 brings 1 (its following one is in another document); hit 3
        // brings 4 but not 2; hit 1 again adds only 0.
        assert_eq!(with_neighbours(&[2, 3, 1], &spans, 1), vec![2, 1, 3, 4, 0]);
        assert_eq!(with_neighbours(&[0], &spans, 2), vec![0, 1, 2]);
        assert_eq!(with_neighbours(&[4, 9], &spans, 0), vec![4]);
    }

    #[test]
    fn fusion_sums_reciprocal_ranks_and_breaks_ties_by_first_appearance() {
        // 3: 1/62 + 1/61 = 0.03252; 7: 1/61 + 1/63 = 0.03227; 9 (second
        // once) 0.01613 before 5 (third once) 0.01587.
        let a: &[usize] = &[7, 3, 5];
        let b: &[usize] = &[3, 9, 7];
        assert_eq!(reciprocal_rank_fusion(&[a, b], 60.0), vec![3, 7, 9, 5]);
        // A tie (same ranks mirrored) goes to the item seen first.
        let c: &[usize] = &[1, 2];
        let d: &[usize] = &[2, 1];
        assert_eq!(reciprocal_rank_fusion(&[c, d], 60.0), vec![1, 2]);
        assert_eq!(reciprocal_rank_fusion(&[c], 60.0), vec![1, 2]);
        assert!(reciprocal_rank_fusion(&[], 60.0).is_empty());
    }

    #[test]
    fn adjacent_passages_of_a_document_are_joined_in_first_seen_order() {
        let got = merge_adjacent(&[
            span(1, 50, 60),
            span(0, 10, 20),
            span(0, 20, 30), // touches the one before: joined
            span(1, 55, 70), // overlaps the first: joined
            span(0, 40, 45), // a gap: its own passage
            span(2, 5, 5),   // empty: left out
            span(0, 0, 12),  // overlaps 10..20: the run starts at 0
        ]);
        assert_eq!(got, vec![span(1, 50, 70), span(0, 0, 30), span(0, 40, 45)]);
        assert!(merge_adjacent(&[]).is_empty());
    }

    #[test]
    fn one_granularity_is_kept_in_order_from_owned_chunks_or_references() {
        let engine = crate::Engine::builtin().unwrap();
        let meta = crate::DocumentMeta {
            tenant_id: "t".into(),
            document_id: "d".into(),
            source_version_id: "v".into(),
            ..crate::DocumentMeta::default()
        };
        let md = "# A\n\nOne paragraph.\n\nAnother paragraph.\n\n## B\n\nA third.\n";
        let chunks = engine
            .chunk(md.as_bytes(), &meta, Some("hierarchy-v1"))
            .unwrap()
            .chunks;
        let want = |g: Granularity| -> Vec<String> {
            chunks
                .iter()
                .filter(|c| c.granularity == g)
                .map(|c| c.chunk_id.clone())
                .collect()
        };
        let windows: Vec<String> = of_granularity(&chunks, Granularity::Window)
            .map(|c| c.chunk_id.clone())
            .collect();
        assert!(!windows.is_empty());
        assert_eq!(windows, want(Granularity::Window));
        let sections = want(Granularity::Section);
        assert!(!sections.is_empty() && sections.len() < chunks.len());
        let owned: Vec<String> = of_granularity(chunks, Granularity::Section)
            .map(|c| c.chunk_id)
            .collect();
        assert_eq!(owned, sections);
    }
}
