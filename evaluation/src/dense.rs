//! The dense retriever: chunks and questions embedded by a
//! [`shared::Embedder`] (all-MiniLM-L6-v2 in the CLI), ranked by cosine.
//!
//! The point of measuring with it (issue 17): a small embedder reads at most
//! its window (256 word pieces for MiniLM) of each chunk, so text beyond it
//! is invisible to retrieval; BM25 sees everything.

use shared::embed::{cosine, EmbedError, Embedder};

/// Embedded chunk texts, searched by cosine.
#[derive(Debug)]
pub struct Dense<'e> {
    embedder: &'e dyn Embedder,
    vectors: Vec<Vec<f32>>,
}

/// Texts per embedder call (keeps the cache and batches busy without
/// holding every text's word pieces at once).
const CALL: usize = 256;

impl<'e> Dense<'e> {
    /// Embeds `texts` (in order).
    pub fn new<'a>(
        embedder: &'e dyn Embedder,
        texts: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, EmbedError> {
        let texts: Vec<&str> = texts.into_iter().collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for part in texts.chunks(CALL) {
            vectors.extend(embedder.embed(part)?);
        }
        Ok(Self { embedder, vectors })
    }

    /// The indices of the `k` texts nearest `query`, best first (ties by
    /// index).
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<usize>, EmbedError> {
        let q = self.embedder.embed(&[query])?.pop().unwrap_or_default();
        let mut scored: Vec<(usize, f32)> = self
            .vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i, cosine(&q, v)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(scored.into_iter().take(k).map(|(i, _)| i).collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use shared::ToyEmbedder;

    #[test]
    fn the_text_sharing_the_query_words_ranks_first() {
        let toy = ToyEmbedder::default();
        let texts = [
            "stars and galaxies in the night sky",
            "bread dough rises in a warm oven",
            "the goalkeeper saved a penalty",
        ];
        let index = Dense::new(&toy, texts).unwrap();
        assert_eq!(index.search("warm oven bread", 3).unwrap()[0], 1);
        assert_eq!(index.search("penalty goalkeeper", 1).unwrap(), [2]);
    }
}
