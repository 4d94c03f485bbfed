//! TextTiling (Hearst 1997) over sentence gaps.
//!
//! Hearst compares fixed-size blocks of token sequences; here the unit is the
//! sentence, so every gap between two sentences is a candidate boundary:
//!
//! 1. Tokenize ([`super::words`]): content-word term frequencies per sentence,
//!    plus each sentence's raw word count.
//! 2. Gap score: for the gap before sentence `g`, the left block takes whole
//!    sentences backwards from `g - 1` until it holds at least
//!    [`TextTilingParams::block_words`] raw words (or the text starts), the
//!    right block forwards from `g` likewise; each holds at least one
//!    sentence. The score is the cosine of the two blocks' term-frequency
//!    vectors (0 when either has no content word), rounded to 1e-9 and kept
//!    as an integer so that equal distributions score exactly alike and the
//!    later steps are exact. Blocks slide with two pointers and the dot
//!    product and norms are updated incrementally in exact integer
//!    arithmetic, so all gaps cost O(total words) and O(n + vocabulary)
//!    memory.
//! 3. Smoothing: [`TextTilingParams::smoothing_rounds`] rounds of a moving
//!    average over `2 * smoothing_width + 1` gaps (fewer at the ends).
//! 4. Depth: each valley (a gap, or a run of equal gaps, whose neighbours on
//!    both sides score strictly higher; at the first and last gap one side
//!    suffices) scores `(left peak - s) + (right peak - s)`, a peak being the
//!    highest score reached climbing away from the valley while the scores do
//!    not fall. A flat valley floor is represented by its middle gap (the
//!    lower middle for an even run). Every climb ends at the neighbouring
//!    peak, so this is O(n) in all.
//! 5. Cutoff ([`Cutoff`]): with `mean` and `std` (population) of the valleys'
//!    depths, Hearst's liberal cutoff is `mean - std` and her conservative one
//!    `mean - std / 2` (the default; fewer, surer boundaries suit chunking).
//!    A valley is a boundary when its depth is at least the cutoff and above
//!    [`TextTilingParams::min_depth`].
//! 6. Spacing: boundaries are taken deepest first (ties: the lower index) and
//!    one closer than [`TextTilingParams::min_gap`] sentences to a kept one is
//!    dropped.
//!
//! Deterministic: no hashing order, no threads, every float reduction runs
//! in index order. No input panics: fewer than two sentences, sentences
//! without words, identical sentences all give sensible (often empty) results.

use std::collections::BTreeSet;

use super::stats::mean_std;
use super::words::SentenceTerms;

/// Gap scores are cosines in fixed point, in units of `1 / SCALE`: rounding
/// to 1e-9 makes blocks with the same term distribution score exactly alike,
/// so float noise never creates valleys, and smoothing and depths are exact
/// integer arithmetic.
const SCALE: f64 = 1e9;

/// The most smoothing passes run, whatever [`TextTilingParams`] asks: more
/// would flatten any text and only cost time.
pub const MAX_SMOOTHING_ROUNDS: usize = 100;

/// How the depth cutoff is derived from the valleys' depth scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cutoff {
    /// Hearst's LC: `mean - std`; more boundaries.
    Liberal,
    /// Hearst's HC: `mean - std / 2`; fewer boundaries.
    Conservative,
    /// A fixed depth (cosine units, 0 to 2), independent of the document.
    Absolute(f64),
}

/// TextTiling settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextTilingParams {
    /// Raw words (stopwords included) each block must reach on each side of a
    /// gap, taking whole sentences; Hearst's `k * w` = 6 * 20 = 120 (default).
    /// 0 makes every block a single sentence.
    pub block_words: usize,
    /// Moving-average radius in gaps (the window is `2 * width + 1`); default
    /// 1, a window of three gaps. 0 disables smoothing.
    pub smoothing_width: usize,
    /// Smoothing passes; default 1. At most [`MAX_SMOOTHING_ROUNDS`] run,
    /// fewer once a pass changes nothing.
    pub smoothing_rounds: usize,
    /// Depth cutoff policy; default [`Cutoff::Conservative`].
    pub cutoff: Cutoff,
    /// Least distance in sentences between two boundaries (the deeper one is
    /// kept); default 3. 0 and 1 impose nothing.
    pub min_gap: usize,
    /// A boundary's depth must exceed this too, whatever the cutoff; default
    /// 0.0 (any real valley may qualify).
    pub min_depth: f64,
    /// Stem words before comparing them ([`super::words::stem`]); default
    /// true.
    pub stem: bool,
}

impl Default for TextTilingParams {
    fn default() -> Self {
        Self {
            block_words: 120,
            smoothing_width: 1,
            smoothing_rounds: 1,
            cutoff: Cutoff::Conservative,
            min_gap: 3,
            min_depth: 0.0,
            stem: true,
        }
    }
}

/// Topic boundaries of `sentences` by TextTiling (see the module docs). A
/// boundary `i` (in `1..sentences.len()`) falls between sentence `i - 1`
/// and sentence `i`; the result is ascending without duplicates.
pub fn texttiling(sentences: &[&str], p: &TextTilingParams) -> Vec<usize> {
    if sentences.len() < 2 {
        return Vec::new();
    }
    let terms = SentenceTerms::new(sentences, p.stem);
    let mut scores = gap_scores(&terms, p.block_words);
    for _ in 0..p.smoothing_rounds.min(MAX_SMOOTHING_ROUNDS) {
        if p.smoothing_width == 0 {
            break;
        }
        let smoothed = smooth(&scores, p.smoothing_width);
        if smoothed == scores {
            break;
        }
        scores = smoothed;
    }
    let valleys = valleys(&scores);
    let cutoff = cutoff(&valleys, p.cutoff);
    let candidates: Vec<(usize, f64)> = valleys
        .into_iter()
        .map(|(gap, depth)| (gap + 1, depth as f64 / SCALE))
        .filter(|&(_, depth)| depth >= cutoff && depth > p.min_depth)
        .collect();
    space_out(candidates, p.min_gap)
}

/// Two term-frequency blocks sliding over the sentences, with their dot
/// product and squared norms kept exact.
struct Blocks<'a> {
    terms: &'a SentenceTerms,
    left: Vec<u64>,
    right: Vec<u64>,
    dot: u128,
    left_norm: u128,
    right_norm: u128,
}

impl Blocks<'_> {
    fn add_left(&mut self, i: usize) {
        for &(t, c) in self.terms.terms(i) {
            let (t, c) = (t as usize, u64::from(c));
            if let (Some(l), Some(&r)) = (self.left.get_mut(t), self.right.get(t)) {
                self.dot += u128::from(c) * u128::from(r);
                self.left_norm +=
                    2 * u128::from(c) * u128::from(*l) + u128::from(c) * u128::from(c);
                *l += c;
            }
        }
    }

    fn remove_left(&mut self, i: usize) {
        for &(t, c) in self.terms.terms(i) {
            let (t, c) = (t as usize, u64::from(c));
            if let (Some(l), Some(&r)) = (self.left.get_mut(t), self.right.get(t)) {
                *l = l.saturating_sub(c);
                self.dot = self.dot.saturating_sub(u128::from(c) * u128::from(r));
                self.left_norm = self.left_norm.saturating_sub(
                    2 * u128::from(c) * u128::from(*l) + u128::from(c) * u128::from(c),
                );
            }
        }
    }

    fn add_right(&mut self, i: usize) {
        for &(t, c) in self.terms.terms(i) {
            let (t, c) = (t as usize, u64::from(c));
            if let (Some(&l), Some(r)) = (self.left.get(t), self.right.get_mut(t)) {
                self.dot += u128::from(c) * u128::from(l);
                self.right_norm +=
                    2 * u128::from(c) * u128::from(*r) + u128::from(c) * u128::from(c);
                *r += c;
            }
        }
    }

    fn remove_right(&mut self, i: usize) {
        for &(t, c) in self.terms.terms(i) {
            let (t, c) = (t as usize, u64::from(c));
            if let (Some(&l), Some(r)) = (self.left.get(t), self.right.get_mut(t)) {
                *r = r.saturating_sub(c);
                self.dot = self.dot.saturating_sub(u128::from(c) * u128::from(l));
                self.right_norm = self.right_norm.saturating_sub(
                    2 * u128::from(c) * u128::from(*r) + u128::from(c) * u128::from(c),
                );
            }
        }
    }

    /// The blocks' cosine in units of `1 / SCALE`, rounded.
    fn cosine(&self) -> u64 {
        if self.left_norm == 0 || self.right_norm == 0 {
            return 0;
        }
        let norms = match self.left_norm.checked_mul(self.right_norm) {
            Some(product) => (product as f64).sqrt(),
            None => (self.left_norm as f64).sqrt() * (self.right_norm as f64).sqrt(),
        };
        // In [0, 1] up to rounding; the float-to-int cast saturates.
        (self.dot as f64 / norms * SCALE).round() as u64
    }
}

/// The cosine score of every gap: `scores[g - 1]` is the gap before
/// sentence `g`, for `g` in `1..n`.
fn gap_scores(terms: &SentenceTerms, budget: usize) -> Vec<u64> {
    let n = terms.len();
    // Prefix sums of raw words: block [a, b) holds `words[b] - words[a]`.
    let mut words = Vec::with_capacity(n + 1);
    let mut total = 0usize;
    words.push(0);
    for i in 0..n {
        total = total.saturating_add(terms.words(i));
        words.push(total);
    }
    let in_block = |a: usize, b: usize| words[b] - words[a];
    let mut blocks = Blocks {
        terms,
        left: vec![0; terms.vocab_len()],
        right: vec![0; terms.vocab_len()],
        dot: 0,
        left_norm: 0,
        right_norm: 0,
    };
    let mut scores = Vec::with_capacity(n.saturating_sub(1));
    // Left block [start, g), right block [g, end).
    let mut start = 0;
    let mut end = 1;
    blocks.add_left(0);
    for g in 1..n {
        if g > 1 {
            blocks.remove_right(g - 1);
            blocks.add_left(g - 1);
            while start + 1 < g && in_block(start + 1, g) >= budget {
                blocks.remove_left(start);
                start += 1;
            }
        }
        while end < n && (end <= g || in_block(g, end) < budget) {
            blocks.add_right(end);
            end += 1;
        }
        scores.push(blocks.cosine());
    }
    scores
}

/// One moving-average pass of radius `width` (windows clipped at the ends),
/// rounded half up; exact integer arithmetic.
fn smooth(scores: &[u64], width: usize) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(scores.len() + 1);
    let mut sum = 0u128;
    prefix.push(0);
    for &s in scores {
        sum += u128::from(s);
        prefix.push(sum);
    }
    (0..scores.len())
        .map(|i| {
            let a = i.saturating_sub(width);
            let b = i.saturating_add(width).saturating_add(1).min(scores.len());
            let count = (b - a) as u128;
            // An average of u64 values fits in u64.
            u64::try_from((prefix[b] - prefix[a] + count / 2) / count).unwrap_or(u64::MAX)
        })
        .collect()
}

/// Every valley as `(gap index into scores, depth)`, in index order, depth
/// in score units. A flat valley floor is represented by its middle gap (the
/// lower of the two middles).
fn valleys(scores: &[u64]) -> Vec<(usize, u64)> {
    let n = scores.len();
    let mut out = Vec::new();
    let mut a = 0;
    while a < n {
        // The run of gaps equal to scores[a] is [a, b].
        let v = scores[a];
        let mut b = a;
        while b + 1 < n && scores[b + 1] == v {
            b += 1;
        }
        let left_higher = a > 0 && scores[a - 1] > v;
        let right_higher = b + 1 < n && scores[b + 1] > v;
        let is_valley = (left_higher || a == 0)
            && (right_higher || b + 1 == n)
            && (left_higher || right_higher);
        if is_valley {
            let mut l = a;
            while l > 0 && scores[l - 1] >= scores[l] {
                l -= 1;
            }
            let mut r = b;
            while r + 1 < n && scores[r + 1] >= scores[r] {
                r += 1;
            }
            out.push((a + (b - a) / 2, (scores[l] - v) + (scores[r] - v)));
        }
        a = b + 1;
    }
    out
}

/// The depth a valley needs, from the valleys' depths and the policy.
fn cutoff(valleys: &[(usize, u64)], policy: Cutoff) -> f64 {
    let (mean, std) = mean_std(valleys.iter().map(|&(_, d)| d as f64 / SCALE));
    match policy {
        Cutoff::Liberal => mean - std,
        Cutoff::Conservative => mean - std / 2.0,
        Cutoff::Absolute(x) => x,
    }
}

/// Keeps the deepest candidates (ties: the lower index) at least `min_gap`
/// apart; returns their indices ascending.
fn space_out(mut candidates: Vec<(usize, f64)>, min_gap: usize) -> Vec<usize> {
    candidates.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    let mut kept = BTreeSet::new();
    for (i, _) in candidates {
        let lo = i.saturating_sub(min_gap.saturating_sub(1));
        let hi = i.saturating_add(min_gap.saturating_sub(1));
        if kept.range(lo..=hi).next().is_none() {
            kept.insert(i);
        }
    }
    kept.into_iter().collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::{
        assert_close, assert_valid, english, english_repeated, russian,
    };

    fn run(sentences: &[&str]) -> Vec<usize> {
        let found = texttiling(sentences, &TextTilingParams::default());
        assert_valid(&found, sentences.len());
        found
    }

    #[test]
    fn finds_the_topic_shifts_of_english_text() {
        for (sentences, truth) in [english(), english_repeated()] {
            assert_close(&run(&sentences), &truth);
        }
    }

    #[test]
    fn finds_the_topic_shifts_of_russian_text() {
        let (sentences, truth) = russian();
        assert_close(&run(&sentences), &truth);
    }

    #[test]
    fn other_cutoffs_and_blocks_still_find_the_shifts() {
        let (sentences, truth) = english_repeated();
        for p in [
            TextTilingParams {
                cutoff: Cutoff::Liberal,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                block_words: 80,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                stem: false,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                smoothing_rounds: 2,
                ..TextTilingParams::default()
            },
        ] {
            let found = texttiling(&sentences, &p);
            assert_valid(&found, sentences.len());
            assert_close(&found, &truth);
        }
        let fixed = TextTilingParams {
            cutoff: Cutoff::Absolute(2.5),
            ..TextTilingParams::default()
        };
        assert!(
            texttiling(&sentences, &fixed).is_empty(),
            "no depth exceeds 2"
        );
    }

    #[test]
    fn is_deterministic() {
        let (sentences, _) = english_repeated();
        let first = run(&sentences);
        assert_eq!(run(&sentences), first);
        let owned: Vec<String> = sentences.iter().map(|s| (*s).to_owned()).collect();
        let copy: Vec<&str> = owned.iter().map(String::as_str).collect();
        assert_eq!(run(&copy), first);
    }

    #[test]
    fn degenerate_inputs_give_no_boundaries() {
        assert!(run(&[]).is_empty());
        assert!(run(&["One sentence about planets."]).is_empty());
        assert!(run(&["", "", "", "", ""]).is_empty());
        assert!(run(&["...", "--- ***", "42.", "The and of it.", "!", "? ?"]).is_empty());
        let same = ["The telescope found a new planet near a distant star."; 40];
        assert!(run(&same).is_empty());
        let two = run(&[
            "Cooking pasta with tomato sauce.",
            "Planets orbit distant stars.",
        ]);
        assert!(two.len() <= 1);
    }

    #[test]
    fn extreme_parameters_do_not_panic() {
        let (sentences, _) = english();
        for p in [
            TextTilingParams {
                block_words: 0,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                block_words: usize::MAX,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                smoothing_width: 0,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                smoothing_width: usize::MAX,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                smoothing_rounds: 0,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                smoothing_rounds: usize::MAX,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                min_gap: 0,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                min_gap: usize::MAX,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                min_depth: f64::NAN,
                ..TextTilingParams::default()
            },
            TextTilingParams {
                cutoff: Cutoff::Absolute(f64::NAN),
                ..TextTilingParams::default()
            },
            TextTilingParams {
                cutoff: Cutoff::Absolute(f64::NEG_INFINITY),
                ..TextTilingParams::default()
            },
        ] {
            let found = texttiling(&sentences, &p);
            assert_valid(&found, sentences.len());
            if p.min_gap == usize::MAX {
                assert!(found.len() <= 1);
            }
        }
    }

    #[test]
    fn huge_sentences_and_counts_are_fine() {
        let long = "planet ".repeat(200_000);
        let other = "pasta ".repeat(200_000);
        let mut sentences = vec![long.as_str(); 3];
        sentences.extend([other.as_str(); 3]);
        assert_eq!(run(&sentences), [3]);
        let many: Vec<&str> = (0..20_000)
            .map(|i| {
                if (i / 50) % 2 == 0 {
                    "Stars and planets."
                } else {
                    "Pasta and sauce."
                }
            })
            .collect();
        let found = run(&many);
        assert_eq!(found, (1..400).map(|k| k * 50).collect::<Vec<_>>());
    }

    #[test]
    fn min_gap_keeps_the_deeper_boundary() {
        let candidates = vec![(5, 0.5), (6, 0.9), (8, 0.9), (20, 0.1)];
        assert_eq!(space_out(candidates.clone(), 3), [6, 20]);
        assert_eq!(space_out(candidates.clone(), 2), [6, 8, 20]);
        assert_eq!(space_out(candidates, 1), [5, 6, 8, 20]);
        // Equal depths: the lower index wins.
        assert_eq!(space_out(vec![(9, 0.4), (7, 0.4)], 5), [7]);
    }

    #[test]
    fn valleys_score_depth_from_both_peaks() {
        let s = [90, 50, 20, 60, 60, 30, 30, 30, 80, 70];
        // Valley at 2: climbs to 90 and 60; the plateau [5, 7] is represented
        // by its middle and climbs to 60 and 80; the last gap is one-sided.
        assert_eq!(valleys(&s), [(2, 70 + 40), (6, 30 + 50), (9, 10)]);
        assert_eq!(
            valleys(&[5, 1, 1, 5]),
            [(1, 8)],
            "even plateau: lower middle"
        );
        assert!(valleys(&[50; 10]).is_empty(), "flat has no valley");
        assert!(valleys(&[]).is_empty());
    }

    #[test]
    fn smoothing_averages_clipped_windows() {
        assert_eq!(smooth(&[3, 0, 3, 6], 1), [2, 2, 3, 5], "rounded half up");
        assert_eq!(smooth(&[7; 5], 2), [7; 5]);
    }
}
