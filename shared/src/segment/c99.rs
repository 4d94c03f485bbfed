//! C99 (Choi 2000): divisive clustering over a rank-transformed similarity
//! matrix.
//!
//! 1. Tokenize ([`super::words`]): content-word term frequencies per sentence.
//! 2. Similarity: the cosine of every pair of sentence vectors (0 when either
//!    has no content word; a sentence with content words scores 1 with
//!    itself). Dot products are exact integers; cosines are rounded to 1e-9
//!    and kept as integers, so float noise never decides a rank.
//! 3. Rank: each cell becomes the share of the other cells in the
//!    `mask x mask` square centred on it ([`C99Params::rank_mask`]) whose
//!    similarity is strictly lower. At the matrix edges only the cells inside
//!    the matrix are counted. The matrix is symmetric, so only the upper
//!    triangle is computed.
//! 4. Divisive clustering: start with one segment; at each step try every
//!    split point of every segment and make the split that maximises the
//!    inside density `D = sum of the segments' rank sums / sum of their
//!    areas` (ties: the lower position), recording `D` after each step, until
//!    every segment is one sentence. A 2-D summed-area table of the rank
//!    matrix makes each evaluation O(1), so a window of `m` sentences costs
//!    O(m^2) here.
//! 5. Stop: with `dD(k) = D(k) - D(k - 1)` for `k` = 2..=m segments, and
//!    `mean`, `std` (population) over them, the segmentation keeps the splits
//!    made up to the last `k` where `dD(k) > mean + c * std`
//!    ([`C99Params::stop_coefficient`], Choi's `c` = 1.2); none when no step
//!    clears it (a homogeneous text).
//!
//! Windows: the similarity and rank matrices are quadratic, so at most
//! [`C99Params::max_window`] sentences are segmented at a time. The first
//! window starts at sentence 0. When a window ends before the text does and
//! its last boundary lies in its second half, the next window starts at that
//! boundary (the window's tail segment is segmented again with what follows,
//! so the join between windows is a boundary C99 itself chose); otherwise
//! the next window starts where this one ends and that join is never a
//! boundary (candidate-free). Memory is O(window^2 + vocabulary); time
//! O(n * window * mask^2) at worst, each window being segmented at most twice
//! over.
//!
//! Deterministic: no hashing order, no threads, every float reduction runs
//! in index order. No input panics.

use super::stats::mean_std;
use super::words::SentenceTerms;

/// The largest window honoured: its matrices take about 20 bytes per cell,
/// 2048^2 cells (some 84 MB) at most.
pub const MAX_WINDOW: usize = 2048;

/// C99 settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct C99Params {
    /// Side of the square rank mask in sentences; Choi's 11 (default). An
    /// even size counts as the next odd one; 0 and 1 leave no neighbours, so
    /// every rank is 0 and nothing is found.
    pub rank_mask: usize,
    /// Choi's `c` in the stopping threshold `mean + c * std` of the density
    /// gradient; 1.2 (default). Higher finds fewer boundaries.
    pub stop_coefficient: f64,
    /// Most sentences segmented at once (see the module docs on windows);
    /// default 256. Values below 2 count as 2, above [`MAX_WINDOW`] as
    /// [`MAX_WINDOW`].
    pub max_window: usize,
    /// Fewest sentences in a segment (values below 1 count as 1); default 3.
    /// Choi splits down to single sentences; forbidding smaller segments
    /// keeps the late, noisy splits out of the density gradient, so short or
    /// homogeneous texts are not shredded.
    pub min_segment: usize,
    /// Stem words before comparing them ([`super::words::stem`]); default
    /// true.
    pub stem: bool,
}

impl Default for C99Params {
    fn default() -> Self {
        Self {
            rank_mask: 11,
            stop_coefficient: 1.2,
            max_window: 256,
            min_segment: 3,
            stem: true,
        }
    }
}

/// Topic boundaries of `sentences` by C99 (see the module docs). A boundary
/// `i` (in `1..sentences.len()`) falls between sentence `i - 1` and sentence
/// `i`; the result is ascending without duplicates.
pub fn c99(sentences: &[&str], p: &C99Params) -> Vec<usize> {
    let n = sentences.len();
    if n < 2 {
        return Vec::new();
    }
    let terms = SentenceTerms::new(sentences, p.stem);
    let window = p.max_window.clamp(2, MAX_WINDOW);
    let mut work = Workspace::new(terms.vocab_len());
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(window).min(n);
        let found = work.segment(&terms, start, end, p);
        let restart = match found.last() {
            Some(&last) if end < n && last - start >= window / 2 => last,
            _ => end,
        };
        out.extend(found);
        start = restart;
    }
    out
}

/// Similarities are cosines in fixed point, in units of `1 / SCALE`.
const SCALE: f64 = 1e9;

/// The cosine of two vectors from their dot product and squared norms, in
/// units of `1 / SCALE`, rounded: vectors with the same direction score
/// exactly alike (float noise would otherwise decide ranks), and integer
/// comparisons make the rank transform cheap. 0 for a zero vector.
fn cosine(dot: u64, a: u64, b: u64) -> u32 {
    if a == 0 || b == 0 {
        return 0;
    }
    let norms = (u128::from(a) * u128::from(b)) as f64;
    // At most SCALE (up to rounding), which fits in u32; the cast saturates.
    (dot as f64 / norms.sqrt() * SCALE).round() as u32
}

/// Buffers reused across windows.
#[derive(Debug)]
struct Workspace {
    /// Dense term counts of one sentence, all zero between uses.
    dense: Vec<u64>,
    /// Squared norms of the window's sentence vectors.
    norms: Vec<u64>,
    /// Cosines (see [`cosine`]), `m x m`, row-major.
    sim: Vec<u32>,
    rank: Vec<f64>,
    /// Summed-area table of `rank`, `(m + 1) x (m + 1)`.
    table: Vec<f64>,
}

impl Workspace {
    fn new(vocab_len: usize) -> Self {
        Self {
            dense: vec![0; vocab_len],
            norms: Vec::new(),
            sim: Vec::new(),
            rank: Vec::new(),
            table: Vec::new(),
        }
    }

    /// Boundaries (absolute, ascending) of sentences `start..end`.
    fn segment(
        &mut self,
        terms: &SentenceTerms,
        start: usize,
        end: usize,
        p: &C99Params,
    ) -> Vec<usize> {
        let m = end.saturating_sub(start);
        if m < 2 {
            return Vec::new();
        }
        self.similarity(terms, start, m);
        self.rank(m, p.rank_mask / 2);
        self.summed_area(m);
        let (splits, density) = self.divide(m, p.min_segment.max(1));
        let deltas: Vec<f64> = density.windows(2).map(|w| w[1] - w[0]).collect();
        let (mean, std) = mean_std(deltas.iter().copied());
        let threshold = mean + p.stop_coefficient * std;
        let Some(keep) = deltas.iter().rposition(|&d| d > threshold) else {
            return Vec::new();
        };
        let mut found: Vec<usize> = splits.iter().take(keep + 1).map(|&x| start + x).collect();
        found.sort_unstable();
        found
    }

    /// Fills `sim` (`m x m`, row-major) with the cosines of sentences
    /// `start..start + m`.
    fn similarity(&mut self, terms: &SentenceTerms, start: usize, m: usize) {
        self.norms.clear();
        self.norms.extend((start..start + m).map(|i| {
            terms.terms(i).iter().fold(0u64, |acc, &(_, c)| {
                acc.saturating_add(u64::from(c) * u64::from(c))
            })
        }));
        self.sim.clear();
        self.sim.resize(m * m, 0);
        for i in 0..m {
            let ti = terms.terms(start + i);
            for &(t, c) in ti {
                if let Some(d) = self.dense.get_mut(t as usize) {
                    *d = u64::from(c);
                }
            }
            for j in i..m {
                let dot = terms.terms(start + j).iter().fold(0u64, |acc, &(t, c)| {
                    let d = self.dense.get(t as usize).copied().unwrap_or(0);
                    acc.saturating_add(d.saturating_mul(u64::from(c)))
                });
                let s = cosine(dot, self.norms[i], self.norms[j]);
                self.sim[i * m + j] = s;
                self.sim[j * m + i] = s;
            }
            for &(t, _) in ti {
                if let Some(d) = self.dense.get_mut(t as usize) {
                    *d = 0;
                }
            }
        }
    }

    /// Fills `rank` from `sim` with a mask of radius `r`.
    fn rank(&mut self, m: usize, r: usize) {
        self.rank.clear();
        self.rank.resize(m * m, 0.0);
        for i in 0..m {
            let (k0, k1) = (
                i.saturating_sub(r),
                i.saturating_add(r).saturating_add(1).min(m),
            );
            for j in i..m {
                let (l0, l1) = (
                    j.saturating_sub(r),
                    j.saturating_add(r).saturating_add(1).min(m),
                );
                let examined = (k1 - k0) * (l1 - l0) - 1;
                if examined == 0 {
                    continue;
                }
                let x = self.sim[i * m + j];
                let mut lower = 0u32;
                for k in k0..k1 {
                    lower += self.sim[k * m + l0..k * m + l1]
                        .iter()
                        .map(|&v| u32::from(v < x))
                        .sum::<u32>();
                }
                let value = f64::from(lower) / examined as f64;
                self.rank[i * m + j] = value;
                self.rank[j * m + i] = value;
            }
        }
    }

    /// Fills `table`: `table[a * (m + 1) + b]` is the sum of `rank` over rows
    /// `< a` and columns `< b`.
    fn summed_area(&mut self, m: usize) {
        let w = m + 1;
        self.table.clear();
        self.table.resize(w * w, 0.0);
        for a in 0..m {
            let mut row = 0.0;
            for b in 0..m {
                row += self.rank[a * m + b];
                self.table[(a + 1) * w + b + 1] = self.table[a * w + b + 1] + row;
            }
        }
    }

    /// Rank sum of the square block of sentences `a..b`.
    fn block(&self, m: usize, a: usize, b: usize) -> f64 {
        let w = m + 1;
        self.table[b * w + b] - self.table[a * w + b] - self.table[b * w + a]
            + self.table[a * w + a]
    }

    /// Divisive clustering down to single sentences: the split positions in
    /// the order made, and the density after 1, 2, ..., m segments.
    fn divide(&self, m: usize, min_segment: usize) -> (Vec<usize>, Vec<f64>) {
        let mut edges = vec![0, m];
        let mut sum = self.block(m, 0, m);
        let mut area = (m * m) as f64;
        let mut density = Vec::with_capacity(m);
        let mut splits = Vec::with_capacity(m - 1);
        density.push(sum / area);
        for _ in 1..m {
            // (density, position, edge index, rank sum, area)
            let mut best: Option<(f64, usize, usize, f64, f64)> = None;
            for e in 0..edges.len() - 1 {
                let (a, b) = (edges[e], edges[e + 1]);
                if b - a < min_segment.saturating_mul(2) {
                    continue;
                }
                let inner = self.block(m, a, b);
                let inner_area = ((b - a) * (b - a)) as f64;
                for x in a + min_segment..=b - min_segment {
                    let s = sum - inner + self.block(m, a, x) + self.block(m, x, b);
                    let ar = area - inner_area + ((x - a) * (x - a) + (b - x) * (b - x)) as f64;
                    let d = s / ar;
                    if best.is_none_or(|bst| d > bst.0) {
                        best = Some((d, x, e + 1, s, ar));
                    }
                }
            }
            let Some((d, x, at, s, ar)) = best else {
                break;
            };
            edges.insert(at, x);
            splits.push(x);
            sum = s;
            area = ar;
            density.push(d);
        }
        (splits, density)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::{
        assert_close, assert_valid, english, english_repeated, join, russian, ENGLISH_TOPICS,
    };

    fn run_with(sentences: &[&str], p: &C99Params) -> Vec<usize> {
        let found = c99(sentences, p);
        assert_valid(&found, sentences.len());
        found
    }

    fn run(sentences: &[&str]) -> Vec<usize> {
        run_with(sentences, &C99Params::default())
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
    fn windows_keep_finding_the_shifts() {
        let (sentences, truth) = english_repeated();
        let p = C99Params {
            max_window: 40,
            ..C99Params::default()
        };
        assert_close(&run_with(&sentences, &p), &truth);
        // A long document, segmented in several windows: 32 topic blocks,
        // the topic order rotated each round so no two rounds join alike.
        let mut blocks = Vec::new();
        for round in 0..8 {
            for k in 0..4 {
                blocks.push(ENGLISH_TOPICS[(round + k) % 4]);
            }
        }
        let (long, truth) = join(&blocks);
        for max_window in [60, 100, 256] {
            let found = run_with(
                &long,
                &C99Params {
                    max_window,
                    ..C99Params::default()
                },
            );
            let (hit, extra) = crate::segment::fixtures::hits(&found, &truth);
            eprintln!(
                "window {max_window}: {hit} of {} hit, {extra} extra",
                truth.len()
            );
            assert!(
                hit + 3 >= truth.len() && extra <= 3,
                "window {max_window}: found {found:?}, truth {truth:?}: {hit} hit, {extra} extra"
            );
        }
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
        assert!(run(&["", "", "", "", "", "", ""]).is_empty());
        assert!(run(&[
            "...",
            "--- ***",
            "42.",
            "The and of it.",
            "!",
            "? ?",
            "",
            "a b"
        ])
        .is_empty());
        let same = ["The telescope found a new planet near a distant star."; 40];
        assert!(run(&same).is_empty());
        assert!(run(&[
            "Cooking pasta with tomato sauce.",
            "Planets orbit distant stars."
        ])
        .is_empty());
    }

    #[test]
    fn extreme_parameters_do_not_panic() {
        let (sentences, _) = english();
        for p in [
            C99Params {
                rank_mask: 0,
                ..C99Params::default()
            },
            C99Params {
                rank_mask: 1,
                ..C99Params::default()
            },
            C99Params {
                rank_mask: 2,
                ..C99Params::default()
            },
            C99Params {
                rank_mask: usize::MAX,
                ..C99Params::default()
            },
            C99Params {
                max_window: 0,
                ..C99Params::default()
            },
            C99Params {
                max_window: 1,
                ..C99Params::default()
            },
            C99Params {
                max_window: 3,
                ..C99Params::default()
            },
            C99Params {
                max_window: usize::MAX,
                ..C99Params::default()
            },
            C99Params {
                min_segment: 0,
                ..C99Params::default()
            },
            C99Params {
                min_segment: usize::MAX,
                ..C99Params::default()
            },
            C99Params {
                stop_coefficient: f64::NAN,
                ..C99Params::default()
            },
            C99Params {
                stop_coefficient: -10.0,
                ..C99Params::default()
            },
            C99Params {
                stop_coefficient: f64::INFINITY,
                ..C99Params::default()
            },
        ] {
            let found = run_with(&sentences, &p);
            if p.rank_mask <= 1 || p.min_segment == usize::MAX || p.stop_coefficient.is_nan() {
                assert!(found.is_empty(), "{p:?}: {found:?}");
            }
        }
    }

    #[test]
    fn huge_sentences_and_counts_are_fine() {
        let long = "planet ".repeat(200_000);
        let other = "pasta ".repeat(200_000);
        let mut sentences = vec![long.as_str(); 6];
        sentences.extend([other.as_str(); 6]);
        assert_eq!(run(&sentences), [6]);
        // Thousands of sentences: many windows. (Long runs of one repeated
        // sentence are avoided: rank ties make their interiors look sparse.)
        let blocks: Vec<&[&str]> = (0..300).map(|i| ENGLISH_TOPICS[i % 2]).collect();
        let (many, truth) = join(&blocks);
        let found = run(&many);
        let hit = truth
            .iter()
            .filter(|&&t| found.iter().any(|&f| f.abs_diff(t) <= 1))
            .count();
        assert!(hit * 10 >= truth.len() * 9, "{hit} of {}", truth.len());
        // The astronomy text drifts from galaxies to the solar system at its
        // fifth sentence, a real lexical shift C99 marks in some windows.
        assert!(
            found.len() * 2 <= truth.len() * 3,
            "{} of {}",
            found.len(),
            truth.len()
        );
    }

    #[test]
    fn rank_counts_lower_neighbours_inside_the_matrix() {
        let mut w = Workspace::new(0);
        // 3 x 3, symmetric.
        w.sim = vec![10, 2, 5, 2, 10, 3, 5, 3, 10];
        w.rank(3, 1);
        // (0, 0): neighbours (0,1) 0.2, (1,0) 0.2, (1,1) 1.0: two lower of 3.
        assert!((w.rank[0] - 2.0 / 3.0).abs() < 1e-12);
        // (1, 1): all 8 others, 6 lower (the other diagonal cells tie).
        assert!((w.rank[4] - 6.0 / 8.0).abs() < 1e-12);
        // (0, 1) = (1, 0): of 5 others, none lower than 0.2.
        assert_eq!(w.rank[1], 0.0);
        assert_eq!(w.rank[3], 0.0);
        w.summed_area(3);
        let total: f64 = w.rank.iter().sum();
        assert!((w.block(3, 0, 3) - total).abs() < 1e-12);
        assert!((w.block(3, 1, 2) - w.rank[4]).abs() < 1e-12);
    }
}
