//! Sentence embeddings as the semantic strategy sees them: the [`Embedder`]
//! trait (texts in, unit vectors out) and a deterministic [`ToyEmbedder`]
//! for tests.
//!
//! This crate stays pure: the real model (all-MiniLM-L6-v2 on candle) lives
//! in the `embed` crate of the workspace, which implements this trait; the
//! [`crate::Engine`] is built with an embedder when a semantic profile is
//! to be used ([`crate::EngineBuilder::embedder`]).

use std::fmt;

/// Why an embedder could not embed (inference failed, a device error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// Texts in, vectors out.
///
/// Contract (the semantic strategy's determinism rests on it): the vector of
/// a text depends on that text only, never on the other texts of the call,
/// the batch size, the thread count or what was embedded before; vectors
/// are L2-normalised (or all zero for a text without content).
pub trait Embedder: Send + Sync + fmt::Debug {
    /// A name that identifies the model and its weights, e.g.
    /// `all-MiniLM-L6-v2@53aa5117`.
    fn id(&self) -> &str;
    /// Vector length.
    fn dimensions(&self) -> usize;
    /// The most tokens (the model's own) it reads of one text; the rest is
    /// truncated.
    fn max_tokens(&self) -> usize;
    /// Whether inference runs on a GPU (`gpu_required` profiles need one).
    fn on_gpu(&self) -> bool {
        false
    }
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Counts text in an embedder's own tokens, its special tokens included:
/// how much of a chunk's `embed_text` the embedder reads (issue 17: a small
/// embedder reads 256 word pieces, budgets are in cl100k). The WordPiece /
/// BPE file counter lives in the `embed` crate; OpenAI-style embedders count
/// in cl100k/o200k ([`BpeWindow`]).
pub trait EmbedTokenizer: Send + Sync + fmt::Debug {
    /// What it counts in, for messages (`cl100k_base`, a file name).
    fn id(&self) -> &str;
    /// Tokens of `text` as the embedder reads it.
    fn count(&self, text: &str) -> usize;
}

/// An OpenAI-style embedder's window: text counted in cl100k/o200k.
#[derive(Debug, Clone, Copy)]
pub struct BpeWindow(pub crate::tokens::TokenizerKind);

impl EmbedTokenizer for BpeWindow {
    fn id(&self) -> &str {
        self.0.name()
    }
    fn count(&self, text: &str) -> usize {
        use crate::tokens::TokenCounter;
        self.0.counter().count(text)
    }
}

/// Cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        na += f64::from(*x) * f64::from(*x);
        nb += f64::from(*y) * f64::from(*y);
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

/// A deterministic stand-in for a sentence model: a bag of lowercased words
/// hashed (FNV-1a) into `dimensions` buckets, L2-normalised. Texts that share
/// words are similar, texts that share none are orthogonal. For tests,
/// fuzzing and examples; it knows no meaning.
#[derive(Debug, Clone)]
pub struct ToyEmbedder {
    dimensions: usize,
}

impl ToyEmbedder {
    /// A toy embedder with `dimensions` buckets (at least 1).
    pub fn new(dimensions: usize) -> Self {
        Self {
            dimensions: dimensions.max(1),
        }
    }
}

impl Default for ToyEmbedder {
    fn default() -> Self {
        Self::new(256)
    }
}

fn fnv1a(word: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in word.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Embedder for ToyEmbedder {
    fn id(&self) -> &str {
        "toy-bag-of-words"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn max_tokens(&self) -> usize {
        usize::MAX
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0f32; self.dimensions];
                for word in text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.chars().count() > 2)
                {
                    let w = word.to_lowercase();
                    let slot = (fnv1a(&w) % self.dimensions as u64) as usize;
                    v[slot] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn toy_vectors_are_unit_length_and_similar_for_shared_words() {
        let e = ToyEmbedder::default();
        let v = e
            .embed(&[
                "Stars burn hydrogen.",
                "hydrogen stars burn",
                "Football teams",
                "",
            ])
            .unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6);
        assert!(cosine(&v[0], &v[1]) > 0.99);
        assert!(cosine(&v[0], &v[2]) < 0.5);
        assert_eq!(cosine(&v[0], &v[3]), 0.0);
    }
}
