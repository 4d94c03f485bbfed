//! C99 (Choi 2000): divisive clustering over a rank-transformed similarity
//! matrix.
//!
//! 1. Tokenize ([`super::words`]): content-word term frequencies per sentence.
//! 2. Similarity: the cosine of every pair of sentence vectors (0 when either
//!    has no content word; a sentence with content words scores 1 with
//!    itself). Dot products are exact integers.
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

use super::mean_std;
use super::words::SentenceTerms;

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
    /// default 256. Values below 2 count as 2.
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
    let window = p.max_window.max(2);
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

/// Buffers reused across windows.
#[derive(Debug)]
struct Workspace {
    /// Dense term counts of one sentence, all zero between uses.
    dense: Vec<u64>,
    norms: Vec<f64>,
    sim: Vec<f64>,
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
    fn segment(&mut self, terms: &SentenceTerms, start: usize, end: usize, p: &C99Params) -> Vec<usize> {
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
            let sq = terms
                .terms(i)
                .iter()
                .fold(0u64, |acc, &(_, c)| acc.saturating_add(u64::from(c) * u64::from(c)));
            (sq as f64).sqrt()
        }));
        self.sim.clear();
        self.sim.resize(m * m, 0.0);
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
                let den = self.norms[i] * self.norms[j];
                let s = if den > 0.0 { dot as f64 / den } else { 0.0 };
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
            let (k0, k1) = (i.saturating_sub(r), i.saturating_add(r).saturating_add(1).min(m));
            for j in i..m {
                let (l0, l1) = (j.saturating_sub(r), j.saturating_add(r).saturating_add(1).min(m));
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
        self.table[b * w + b] - self.table[a * w + b] - self.table[b * w + a] + self.table[a * w + a]
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

