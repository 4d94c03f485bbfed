//! Minimum-cut segmentation (Malioutov & Barzilay 2006, "Minimum Cut Model
//! for Spoken Lecture Segmentation"): sentences are the nodes of a weighted
//! graph, and the text is partitioned into contiguous segments that
//! minimise the normalised cut (Shi & Malik 2000)
//! `sum over segments S of cut(S, V - S) / assoc(S, V)`.
//!
//! 1. Tokenize ([`super::words`]): content-word counts per sentence.
//! 2. Graph: the weight of sentences `i != j` is the cosine of their term
//!    vectors when they are at most [`GraphParams::max_distance`] sentences
//!    apart (Malioutov & Barzilay also connect only nearby sentences), else
//!    0. Cosines are rounded to 1e-9 so float noise never decides a cut.
//! 3. For a segment `S = a..b`: `assoc(S, V)` is the sum of its nodes'
//!    degrees (prefix sums), `assoc(S, S)` the weight inside it (a 2-D
//!    summed-area table), `cut(S, V - S) = assoc(S, V) - assoc(S, S)`; a
//!    segment without edges costs 0.
//! 4. Dynamic programming: `cost[j] = min_a cost[a] + ncut(a..j)` over the
//!    segments `a..j` that fit [`GraphParams::max_segment_tokens`] (a single
//!    sentence always fits). Every extra segment adds a non-negative term,
//!    so the objective itself keeps the count low; the size bound is what
//!    asks for more segments in long texts. Ties (within 1e-12) go to fewer
//!    segments, then to the lower `a`.
//!
//! Windows: the graph is quadratic, so at most [`GraphParams::max_window`]
//! sentences are partitioned at a time, consecutive windows, the join never
//! a boundary. Deterministic (no hash order, sums in index order), no input
//! panics.

use super::words::SentenceTerms;

/// The largest window honoured.
pub const MAX_WINDOW: usize = 1024;

/// Settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphParams {
    /// Largest segment, summing the sizes given per sentence; default 350.
    pub max_segment_tokens: usize,
    /// Sentences farther apart than this share no edge; default 16 (at least
    /// 1).
    pub max_distance: usize,
    /// Most sentences partitioned at once; default 256 (2..=[`MAX_WINDOW`]).
    pub max_window: usize,
    /// Stem words before comparing them; default true.
    pub stem: bool,
}

impl Default for GraphParams {
    fn default() -> Self {
        Self {
            max_segment_tokens: 350,
            max_distance: 16,
            max_window: 256,
            stem: true,
        }
    }
}

const EPS: f64 = 1e-12;

/// Topic boundaries of `sentences` by normalised-cut partitioning (see the
/// module docs); `tokens[i]` is sentence `i`'s size (missing entries count
/// as 0). A boundary `i` falls between sentence `i - 1` and `i`; ascending,
/// without duplicates.
pub fn graph_partition(sentences: &[&str], tokens: &[usize], p: &GraphParams) -> Vec<usize> {
    let n = sentences.len();
    if n < 2 {
        return Vec::new();
    }
    let terms = SentenceTerms::new(sentences, p.stem);
    let window = p.max_window.clamp(2, MAX_WINDOW);
    let size = |i: usize| tokens.get(i).copied().unwrap_or(0);
    let mut dense = vec![0u64; terms.vocab_len()];
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(window).min(n);
        let sizes: Vec<usize> = (start..end).map(size).collect();
        let found = partition_window(&terms, start, end, &sizes, p, &mut dense);
        out.extend(found.into_iter().map(|b| b + start));
        start = end;
    }
    out
}

/// Edge weights of the window `start..end`, `w[i * m + j]`: the cosine of
/// sentences `i` and `j` (at most `dist` apart, rounded to 1e-9), 0 on the
/// diagonal.
fn weights(
    terms: &SentenceTerms,
    start: usize,
    end: usize,
    dist: usize,
    dense: &mut [u64],
) -> Vec<f64> {
    let m = end - start;
    let norms: Vec<u64> = (start..end)
        .map(|s| {
            terms
                .terms(s)
                .iter()
                .map(|&(_, c)| u64::from(c) * u64::from(c))
                .sum()
        })
        .collect();
    let mut w = vec![0f64; m * m];
    for (i, &norm_i) in norms.iter().enumerate() {
        if norm_i == 0 {
            continue;
        }
        for &(id, c) in terms.terms(start + i) {
            if let Some(d) = dense.get_mut(id as usize) {
                *d = u64::from(c);
            }
        }
        for (j, &norm_j) in norms
            .iter()
            .enumerate()
            .take(m.min(i + dist + 1))
            .skip(i + 1)
        {
            if norm_j == 0 {
                continue;
            }
            let dot: u64 = terms
                .terms(start + j)
                .iter()
                .map(|&(id, c)| dense.get(id as usize).copied().unwrap_or(0) * u64::from(c))
                .sum();
            if dot > 0 {
                let cos = dot as f64 / ((norm_i as f64) * (norm_j as f64)).sqrt();
                let cos = (cos * 1e9).round() / 1e9;
                w[i * m + j] = cos;
                w[j * m + i] = cos;
            }
        }
        for &(id, _) in terms.terms(start + i) {
            if let Some(d) = dense.get_mut(id as usize) {
                *d = 0;
            }
        }
    }
    w
}

/// The min-ncut partition of `start..end`; boundaries relative to `start`.
fn partition_window(
    terms: &SentenceTerms,
    start: usize,
    end: usize,
    sizes: &[usize],
    p: &GraphParams,
    dense: &mut [u64],
) -> Vec<usize> {
    let m = end - start;
    if m < 2 {
        return Vec::new();
    }
    let w = weights(terms, start, end, p.max_distance.max(1), dense);
    // Summed-area table: table[a][b] = sum of w[i][j] for i < a, j < b.
    let side = m + 1;
    let mut table = vec![0f64; side * side];
    for i in 0..m {
        let mut row = 0f64;
        for j in 0..m {
            row += w[i * m + j];
            table[(i + 1) * side + j + 1] = table[i * side + j + 1] + row;
        }
    }
    let mut degree_prefix = vec![0f64; side];
    for (i, row) in w.chunks(m).enumerate() {
        degree_prefix[i + 1] = degree_prefix[i] + row.iter().sum::<f64>();
    }
    let inside = |a: usize, b: usize| {
        table[b * side + b] - table[a * side + b] - table[b * side + a] + table[a * side + a]
    };
    let ncut = |a: usize, b: usize| {
        let vol = degree_prefix[b] - degree_prefix[a];
        if vol <= EPS {
            0.0
        } else {
            ((vol - inside(a, b)) / vol).max(0.0)
        }
    };
    // cost[j], segments[j], from[j] for the best partition of 0..j.
    let mut cost = vec![f64::INFINITY; side];
    let mut segments = vec![usize::MAX; side];
    let mut from = vec![0usize; side];
    cost[0] = 0.0;
    segments[0] = 0;
    for j in 1..=m {
        let mut size = 0usize;
        for a in (0..j).rev() {
            size = size.saturating_add(sizes.get(a).copied().unwrap_or(0));
            if a + 1 < j && size > p.max_segment_tokens {
                break;
            }
            let v = cost[a] + ncut(a, j);
            let segs = segments[a] + 1;
            // Scanning a downward: an equal candidate replaces the kept one
            // only with fewer segments or equal segments (lower a).
            let better = v < cost[j] - EPS || (v <= cost[j] + EPS && segs <= segments[j]);
            if better {
                cost[j] = v;
                segments[j] = segs;
                from[j] = a;
            }
        }
    }
    let mut out = Vec::new();
    let mut j = m;
    while j > 0 {
        let a = from[j];
        if a > 0 {
            out.push(a);
        }
        if a >= j {
            break;
        }
        j = a;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::{
        assert_close, assert_valid, english, join, russian, ENGLISH_TOPICS,
    };

    fn bounded(max: usize) -> GraphParams {
        GraphParams {
            max_segment_tokens: max,
            ..GraphParams::default()
        }
    }

    #[test]
    fn two_topics_are_cut_between_them() {
        let (s, truth) = join(&[ENGLISH_TOPICS[0], ENGLISH_TOPICS[1]]);
        // 21 sentences of 10 tokens; segments of at most 150 force one cut.
        let tokens = vec![10; s.len()];
        let found = graph_partition(&s, &tokens, &bounded(150));
        assert_eq!(found, truth);
        let (s, truth) = english();
        let tokens = vec![10; s.len()];
        let found = graph_partition(&s, &tokens, &bounded(130));
        assert_valid(&found, s.len());
        assert_close(&found, &truth);
        let (s, truth) = russian();
        let tokens = vec![10; s.len()];
        assert_close(&graph_partition(&s, &tokens, &bounded(110)), &truth);
        let (s, truth) = crate::segment::fixtures::english_repeated();
        let tokens = vec![20; s.len()];
        assert_close(&graph_partition(&s, &tokens, &bounded(260)), &truth);
    }

    #[test]
    fn a_text_that_fits_is_one_segment_and_output_is_deterministic() {
        let (s, _) = english();
        assert!(graph_partition(&s, &[], &GraphParams::default()).is_empty());
        let tokens = vec![12; s.len()];
        let p = bounded(120);
        let found = graph_partition(&s, &tokens, &p);
        assert_eq!(found, graph_partition(&s, &tokens, &p));
        // Every segment fits the bound.
        let mut edges = vec![0];
        edges.extend(&found);
        edges.push(s.len());
        assert!(edges.windows(2).all(|w| (w[1] - w[0]) * 12 <= 120));
    }

    #[test]
    fn tiny_and_empty_inputs_do_not_panic() {
        let p = GraphParams {
            max_segment_tokens: 0,
            max_distance: 0,
            max_window: 0,
            ..GraphParams::default()
        };
        assert!(graph_partition(&[], &[], &p).is_empty());
        assert!(graph_partition(&["Only one."], &[3], &p).is_empty());
        assert_valid(&graph_partition(&["", "", "x"], &[1, 1, 1], &p), 3);
    }
}
