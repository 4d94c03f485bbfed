//! BayesSeg (Eisenstein & Barzilay 2008, "Bayesian Unsupervised Topic
//! Segmentation"): each segment's words are drawn from their own language
//! model, and the language model is integrated out under a symmetric
//! Dirichlet prior, which leaves a Dirichlet-compound-multinomial (DCM)
//! likelihood per segment. The segmentation with the highest total
//! likelihood for a given number of segments is found exactly by dynamic
//! programming over the sentence gaps.
//!
//! 1. Tokenize ([`super::words`]): content-word counts per sentence.
//! 2. Segment likelihood: for a segment with term counts `n_w`, `N` terms in
//!    all, a vocabulary of `W` terms (the window's) and the prior `a`:
//!    `log p = lnG(W a) - lnG(N + W a) + sum_w [lnG(n_w + a) - lnG(a)]`.
//!    With `lnG(x + 1) = ln x + lnG(x)` both parts are sums of logarithms
//!    (`sum_{c < n_w} ln(c + a)` and `-sum_{c < N} ln(c + W a)`), so the
//!    likelihood of every segment starting at `i` is built incrementally as
//!    it grows one sentence at a time; no gamma function is evaluated.
//! 3. Dynamic programming: `best[k][j]` is the highest log-likelihood of the
//!    first `j` sentences cut into `k` segments,
//!    `best[k][j] = max_i best[k - 1][i] + log p(i..j)`; ties go to the
//!    lower `i`. The boundaries are read back from `best[K][m]`.
//! 4. The segment count `K`: given ([`SegmentCount::Fixed`]) or estimated
//!    from sizes ([`SegmentCount::PerTokens`]: `ceil(tokens / target)`),
//!    never more than the sentences.
//!
//! Windows: the DP is `O(K m^2)`, so at most [`BayesSegParams::max_window`]
//! sentences are segmented at a time, consecutive windows, the join between
//! two never a boundary (the packer cuts over-long runs anyway).
//!
//! Deterministic: no hash order, no threads, sums in index order. No input
//! panics.

use super::words::SentenceTerms;

/// The largest window honoured (the DP table is `K x m`, the likelihood
/// table `m x m` floats).
pub const MAX_WINDOW: usize = 1024;

/// How many segments a window is cut into.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SegmentCount {
    /// This many segments for the whole text (each window gets its share,
    /// rounded up).
    Fixed(usize),
    /// `ceil(tokens / target)` segments, tokens summed over the window's
    /// sentences.
    PerTokens(usize),
}

/// BayesSeg settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BayesSegParams {
    /// The symmetric Dirichlet prior of each segment's language model; 0.1
    /// (default). Smaller makes segments prefer fewer, more concentrated
    /// words (sharper topics).
    pub prior: f64,
    /// The number of segments; default `PerTokens(350)`.
    pub segments: SegmentCount,
    /// Most sentences segmented at once; default 256. Values below 2 count
    /// as 2, above [`MAX_WINDOW`] as [`MAX_WINDOW`].
    pub max_window: usize,
    /// Stem words before counting them; default true.
    pub stem: bool,
}

impl Default for BayesSegParams {
    fn default() -> Self {
        Self {
            prior: 0.1,
            segments: SegmentCount::PerTokens(350),
            max_window: 256,
            stem: true,
        }
    }
}

/// Topic boundaries of `sentences` by BayesSeg (see the module docs);
/// `tokens[i]` is sentence `i`'s size (missing entries count as 0), used
/// only to estimate the segment count. A boundary `i` falls between
/// sentence `i - 1` and `i`; ascending, without duplicates.
pub fn bayesseg(sentences: &[&str], tokens: &[usize], p: &BayesSegParams) -> Vec<usize> {
    let n = sentences.len();
    if n < 2 {
        return Vec::new();
    }
    let terms = SentenceTerms::new(sentences, p.stem);
    let window = p.max_window.clamp(2, MAX_WINDOW);
    let prior = if p.prior.is_finite() && p.prior > 0.0 {
        p.prior
    } else {
        0.1
    };
    let mut counts = vec![0u32; terms.vocab_len()];
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(window).min(n);
        let m = end - start;
        let k = match p.segments {
            SegmentCount::Fixed(total) => (total.max(1) * m).div_ceil(n),
            SegmentCount::PerTokens(target) => {
                let size: usize = (start..end)
                    .map(|i| tokens.get(i).copied().unwrap_or(0))
                    .sum();
                size.div_ceil(target.max(1))
            }
        }
        .clamp(1, m);
        out.extend(
            segment_window(&terms, start, end, k, prior, &mut counts)
                .into_iter()
                .map(|b| b + start),
        );
        start = end;
    }
    out
}

/// The DCM log-likelihood of every segment `i..j` of the window
/// `start..end` (indices relative to `start`), `lik[i * (m + 1) + j]`.
fn likelihoods(
    terms: &SentenceTerms,
    start: usize,
    end: usize,
    prior: f64,
    counts: &mut [u32],
) -> Vec<f64> {
    let m = end - start;
    // The window's vocabulary size.
    let mut vocab = 0usize;
    for s in start..end {
        for &(id, _) in terms.terms(s) {
            if let Some(c) = counts.get_mut(id as usize) {
                if *c == 0 {
                    vocab += 1;
                }
                *c = 1;
            }
        }
    }
    reset(terms, start, end, counts);
    let total_prior = prior * vocab.max(1) as f64;
    let mut lik = vec![0f64; (m + 1) * (m + 1)];
    for i in 0..m {
        let mut words_part = 0f64;
        let mut norm_part = 0f64;
        let mut total = 0u64;
        for j in i..m {
            for &(id, n) in terms.terms(start + j) {
                if let Some(c) = counts.get_mut(id as usize) {
                    for _ in 0..n {
                        words_part += (f64::from(*c) + prior).ln();
                        norm_part += (total as f64 + total_prior).ln();
                        *c += 1;
                        total += 1;
                    }
                }
            }
            lik[i * (m + 1) + j + 1] = words_part - norm_part;
        }
        reset(terms, start + i, end, counts);
    }
    lik
}

/// Zeroes the counts of every term of sentences `from..to`.
fn reset(terms: &SentenceTerms, from: usize, to: usize, counts: &mut [u32]) {
    for s in from..to {
        for &(id, _) in terms.terms(s) {
            if let Some(c) = counts.get_mut(id as usize) {
                *c = 0;
            }
        }
    }
}

/// The best cut of `start..end` into `k` segments; boundaries relative to
/// `start`.
fn segment_window(
    terms: &SentenceTerms,
    start: usize,
    end: usize,
    k: usize,
    prior: f64,
    counts: &mut [u32],
) -> Vec<usize> {
    let m = end - start;
    if k <= 1 || m < 2 {
        return Vec::new();
    }
    let lik = likelihoods(terms, start, end, prior, counts);
    let at = |i: usize, j: usize| lik[i * (m + 1) + j];
    // best[j] for the current segment count, back[c][j] the start of the
    // last segment of the best cut of 0..j into c + 1 segments.
    let mut best: Vec<f64> = (0..=m).map(|j| at(0, j)).collect();
    let mut back: Vec<Vec<usize>> = vec![vec![0; m + 1]];
    for c in 1..k {
        let mut next = vec![f64::NEG_INFINITY; m + 1];
        let mut from = vec![0usize; m + 1];
        for j in c + 1..=m {
            for (i, &b) in best.iter().enumerate().take(j).skip(c) {
                let v = b + at(i, j);
                if v > next[j] {
                    next[j] = v;
                    from[j] = i;
                }
            }
        }
        best = next;
        back.push(from);
    }
    let mut out = Vec::with_capacity(k - 1);
    let mut j = m;
    for c in (1..k).rev() {
        let i = back[c][j];
        if i == 0 || i >= j {
            break;
        }
        out.push(i);
        j = i;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::ENGLISH_TOPICS;
    use crate::segment::fixtures::{assert_close, assert_valid, english, join, russian};

    fn fixed(k: usize) -> BayesSegParams {
        BayesSegParams {
            segments: SegmentCount::Fixed(k),
            ..BayesSegParams::default()
        }
    }

    #[test]
    fn two_topics_are_cut_between_them() {
        let (s, truth) = join(&[ENGLISH_TOPICS[0], ENGLISH_TOPICS[1]]);
        let found = bayesseg(&s, &[], &fixed(2));
        assert_eq!(found, truth);
        let (s, truth) = english();
        let found = bayesseg(&s, &[], &fixed(4));
        assert_valid(&found, s.len());
        assert_close(&found, &truth);
        let (s, truth) = russian();
        let found = bayesseg(&s, &[], &fixed(3));
        assert_close(&found, &truth);
    }

    #[test]
    fn the_count_is_estimated_from_tokens_and_output_is_deterministic() {
        let (s, truth) = english();
        let tokens = vec![20; s.len()];
        // 42 sentences of 20 tokens, 220 per segment: 4 segments.
        let p = BayesSegParams {
            segments: SegmentCount::PerTokens(220),
            ..BayesSegParams::default()
        };
        let found = bayesseg(&s, &tokens, &p);
        assert_eq!(found.len(), 3);
        assert_close(&found, &truth);
        assert_eq!(bayesseg(&s, &tokens, &p), found);
        let (s, truth) = crate::segment::fixtures::english_repeated();
        let tokens = vec![20; s.len()];
        let p200 = BayesSegParams {
            segments: SegmentCount::PerTokens(200),
            ..p
        };
        assert_close(&bayesseg(&s, &tokens, &p200), &truth);
        // Small windows still give valid boundaries.
        let small = BayesSegParams { max_window: 7, ..p };
        assert_valid(&bayesseg(&s, &tokens, &small), s.len());
    }

    #[test]
    fn tiny_and_empty_inputs_do_not_panic() {
        assert!(bayesseg(&[], &[], &BayesSegParams::default()).is_empty());
        assert!(bayesseg(&["One sentence."], &[5], &fixed(3)).is_empty());
        let found = bayesseg(&["", "", ""], &[], &fixed(3));
        assert_valid(&found, 3);
        let odd = BayesSegParams {
            prior: f64::NAN,
            max_window: 0,
            segments: SegmentCount::PerTokens(0),
            ..BayesSegParams::default()
        };
        assert_valid(&bayesseg(&["a b", "c d", "e f"], &[1, 2, 3], &odd), 3);
    }
}
