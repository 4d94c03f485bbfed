//! Topic segmentation with LDA (Blei, Ng & Jordan 2003), topics inferred by
//! collapsed Gibbs sampling (Griffiths & Steyvers 2004) and boundaries put
//! where the dominant topic changes, in the manner of TopicTiling (Riedl &
//! Biemann 2012).
//!
//! 1. Tokenize ([`super::words`]): content words per sentence.
//! 2. Documents: consecutive blocks of [`LdaParams::window`] sentences; LDA is
//!    fitted to the text itself (no pre-trained model).
//! 3. Collapsed Gibbs sampling: every word token holds a topic; each sweep
//!    resamples every token's topic from
//!    `p(z = t) ~ (n_dt + alpha) (n_tw + beta) / (n_t + V beta)` with the
//!    token's own assignment removed. Initial topics and every draw come from
//!    a local SplitMix64 generator seeded with [`LdaParams::seed`], and tokens
//!    are visited in text order, so the result is the same on every run.
//! 4. Sentence topics: after the first half of the sweeps (burn-in), each
//!    sweep adds every token's topic to its sentence's topic histogram (the
//!    mode over samples that TopicTiling recommends, kept as counts).
//! 5. Boundaries: at each gap `g` the histograms of the `window` sentences
//!    before and the `window` after are summed; the gap is a change when the
//!    two sides' dominant topics (argmax, ties to the lower topic) differ.
//!    A run of adjacent changes marks one shift: the boundary is the gap of
//!    the run whose two sides are least alike (cosine of the histograms; ties
//!    to the earlier gap).
//!
//! Cost: `iterations x tokens x topics`. Deterministic, no threads, no input
//! panics.

use super::words::SentenceTerms;

/// LDA settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LdaParams {
    /// Number of topics; default 8 (at least 1).
    pub topics: usize,
    /// Gibbs sweeps over all tokens; default 100 (the second half is
    /// averaged).
    pub iterations: usize,
    /// Symmetric document-topic prior; default 0.1.
    pub alpha: f64,
    /// Symmetric topic-word prior; default 0.01.
    pub beta: f64,
    /// Sentences per LDA document and per side of a gap; default 3 (at least
    /// 1).
    pub window: usize,
    /// Seed of the sampler; default 42.
    pub seed: u64,
    /// Stem words before counting them; default true.
    pub stem: bool,
}

impl Default for LdaParams {
    fn default() -> Self {
        Self {
            topics: 8,
            iterations: 100,
            alpha: 0.1,
            beta: 0.01,
            window: 3,
            seed: 42,
            stem: true,
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fixed, seedable
/// generator.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Per-sentence topic histograms from collapsed Gibbs sampling (steps 1-4
/// of the module docs): `hist[s * topics + t]`.
pub fn sentence_topics(sentences: &[&str], p: &LdaParams) -> Vec<u32> {
    let k = p.topics.max(1);
    let window = p.window.max(1);
    let alpha = positive(p.alpha, 0.1);
    let beta = positive(p.beta, 0.01);
    let n = sentences.len();
    let terms = SentenceTerms::new(sentences, p.stem);
    let vocab = terms.vocab_len();
    // Tokens in text order: (sentence, term).
    let mut tokens: Vec<(usize, usize)> = Vec::new();
    for s in 0..n {
        for &(id, count) in terms.terms(s) {
            for _ in 0..count {
                tokens.push((s, id as usize));
            }
        }
    }
    let mut hist = vec![0u32; n * k];
    if tokens.is_empty() {
        return hist;
    }
    let docs = n.div_ceil(window);
    let mut n_dt = vec![0u32; docs * k];
    let mut n_tw = vec![0u32; k * vocab];
    let mut n_t = vec![0u32; k];
    let mut z = Vec::with_capacity(tokens.len());
    let mut rng = SplitMix64::new(p.seed);
    for &(s, w) in &tokens {
        let t = (rng.next_u64() % k as u64) as usize;
        z.push(t);
        n_dt[(s / window) * k + t] += 1;
        n_tw[t * vocab + w] += 1;
        n_t[t] += 1;
    }
    let v_beta = vocab as f64 * beta;
    let mut weights = vec![0f64; k];
    let burn_in = p.iterations / 2;
    for sweep in 0..p.iterations {
        for (i, &(s, w)) in tokens.iter().enumerate() {
            let d = s / window;
            let old = z[i];
            n_dt[d * k + old] -= 1;
            n_tw[old * vocab + w] -= 1;
            n_t[old] -= 1;
            let mut total = 0f64;
            for (t, slot) in weights.iter_mut().enumerate() {
                total += (f64::from(n_dt[d * k + t]) + alpha)
                    * (f64::from(n_tw[t * vocab + w]) + beta)
                    / (f64::from(n_t[t]) + v_beta);
                *slot = total;
            }
            let u = rng.next_f64() * total;
            let new = weights.iter().position(|&c| u < c).unwrap_or(k - 1);
            z[i] = new;
            n_dt[d * k + new] += 1;
            n_tw[new * vocab + w] += 1;
            n_t[new] += 1;
        }
        if sweep >= burn_in {
            for (i, &(s, _)) in tokens.iter().enumerate() {
                hist[s * k + z[i]] += 1;
            }
        }
    }
    if p.iterations == 0 {
        for (i, &(s, _)) in tokens.iter().enumerate() {
            hist[s * k + z[i]] += 1;
        }
    }
    hist
}

fn positive(x: f64, default: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        default
    }
}

/// Topic boundaries of `sentences` from LDA (see the module docs). A
/// boundary `i` falls between sentence `i - 1` and `i`; ascending, without
/// duplicates.
pub fn lda_topic(sentences: &[&str], p: &LdaParams) -> Vec<usize> {
    let n = sentences.len();
    if n < 2 {
        return Vec::new();
    }
    let k = p.topics.max(1);
    let window = p.window.max(1);
    let hist = sentence_topics(sentences, p);
    let side = |from: usize, to: usize| -> Vec<u64> {
        let mut acc = vec![0u64; k];
        for s in from..to {
            for (a, &h) in acc.iter_mut().zip(&hist[s * k..(s + 1) * k]) {
                *a += u64::from(h);
            }
        }
        acc
    };
    // Dominant topic: None for a side with no words.
    let dominant = |h: &[u64]| -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (t, &c) in h.iter().enumerate() {
            if c > 0 && best.is_none_or(|(bc, _)| c > bc) {
                best = Some((c, t));
            }
        }
        best.map(|(_, t)| t)
    };
    let cosine = |a: &[u64], b: &[u64]| -> f64 {
        let dot: f64 = a
            .iter()
            .zip(b)
            .map(|(x, y)| (*x as f64) * (*y as f64))
            .sum();
        let na: f64 = a.iter().map(|x| (*x as f64) * (*x as f64)).sum();
        let nb: f64 = b.iter().map(|x| (*x as f64) * (*x as f64)).sum();
        if na == 0.0 || nb == 0.0 {
            1.0
        } else {
            dot / (na * nb).sqrt()
        }
    };
    // (gap, changes, similarity)
    let mut scored: Vec<(usize, bool, f64)> = Vec::with_capacity(n);
    for g in 1..n {
        let left = side(g.saturating_sub(window), g);
        let right = side(g, (g + window).min(n));
        let change = match (dominant(&left), dominant(&right)) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        };
        scored.push((g, change, cosine(&left, &right)));
    }
    let mut out = Vec::new();
    let mut run: Option<(usize, f64)> = None;
    for &(g, change, sim) in &scored {
        if change {
            run = match run {
                Some((bg, bs)) if bs <= sim => Some((bg, bs)),
                _ => Some((g, sim)),
            };
        } else if let Some((bg, _)) = run.take() {
            out.push(bg);
        }
    }
    if let Some((bg, _)) = run {
        out.push(bg);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::{assert_valid, hits, join, russian, ENGLISH_TOPICS};

    #[test]
    fn two_topics_are_cut_between_them() {
        let (s, truth) = join(&[ENGLISH_TOPICS[0], ENGLISH_TOPICS[1]]);
        let p = LdaParams {
            topics: 2,
            ..LdaParams::default()
        };
        let found = lda_topic(&s, &p);
        assert_valid(&found, s.len());
        assert_eq!(hits(&found, &truth).0, 1, "{found:?}");
        let (s, truth) = russian();
        let p = LdaParams {
            topics: 3,
            ..LdaParams::default()
        };
        let found = lda_topic(&s, &p);
        assert_valid(&found, s.len());
        assert!(hits(&found, &truth).0 >= 1, "{found:?}");
    }

    #[test]
    fn default_params_find_every_shift_of_four_topics() {
        let (s, truth) = crate::segment::fixtures::english();
        let found = lda_topic(&s, &LdaParams::default());
        assert_valid(&found, s.len());
        assert_eq!(hits(&found, &truth).0, truth.len(), "{found:?}");
    }

    #[test]
    fn output_is_deterministic_for_a_seed() {
        let (s, _) = join(&ENGLISH_TOPICS);
        let p = LdaParams::default();
        let a = sentence_topics(&s, &p);
        assert_eq!(a, sentence_topics(&s, &p));
        assert_eq!(lda_topic(&s, &p), lda_topic(&s, &p));
        let mut r = SplitMix64::new(0);
        // The reference SplitMix64 sequence for seed 0.
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert!((0..1000).all(|_| (0.0..1.0).contains(&r.next_f64())));
    }

    #[test]
    fn tiny_and_empty_inputs_do_not_panic() {
        let p = LdaParams::default();
        assert!(lda_topic(&[], &p).is_empty());
        assert!(lda_topic(&["One sentence about planets."], &p).is_empty());
        assert!(lda_topic(&["", "", "..."], &p).is_empty());
        let odd = LdaParams {
            topics: 0,
            iterations: 0,
            alpha: -1.0,
            beta: f64::NAN,
            window: 0,
            ..p
        };
        assert_valid(
            &lda_topic(&["stars planets", "pasta sauce", "goal"], &odd),
            3,
        );
    }
}
