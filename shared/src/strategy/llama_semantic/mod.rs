//! The drop-in `llama.semantic` strategy, profile `llama.semantic`:
//! LlamaIndex's `SemanticSplitterNodeParser` (llama-index-core 0.14.25,
//! `semantic_splitter.py`; `scripts/peers/ADAPTERS.md` section 6) over the
//! engine's sentence embedder, on the text exactly as sent.
//!
//! The text is cut into sentences by NLTK's untrained Punkt (each keeps
//! the whitespace after it, so they concatenate to the text, as in
//! `llama.sentence`); sentence *i* is embedded with `buffer_size`
//! sentences on each side; the cosine distance between consecutive
//! embeddings is computed in `f64` as NumPy does; a chunk ends after every
//! sentence whose distance to the next is strictly greater than the
//! `breakpoint_percentile_threshold` percentile of all distances (NumPy's
//! linear interpolation). There is no size limit, as in LlamaIndex.
//!
//! With the same vectors the boundaries are LlamaIndex's exactly (the
//! parity test runs the fixture's stand-in embedding through both). With
//! our MiniLM instead of LlamaIndex's default OpenAI model the vectors, and
//! so the boundaries, differ: that is the embedder, not the algorithm.
//! Intended differences: a document of whitespace alone gives no record
//! (LlamaIndex: one empty node); chunks keep their whitespace, as
//! LlamaIndex's do, and a chunk of whitespace alone is not a record.

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::sentence::punkt::Punkt;
use crate::strategy::params::{ParamError, Params};

/// Embeds texts, one vector each, in order.
pub type EmbedFn<'a> = dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>, ChunkError> + 'a;

/// LlamaIndex's `SemanticSplitterNodeParser`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlamaSemantic;

const KEYS: [&str; 2] = ["buffer_size", "breakpoint_percentile_threshold"];

impl Strategy for LlamaSemantic {
    fn name(&self) -> &'static str {
        "llama.semantic"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LlamaIndex's SemanticSplitterNodeParser (llama-index-core 0.14.25) over the sentence embedder: breaks where consecutive sentence groups are farther apart than a percentile of all distances"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/llama.semantic.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let buffer_size = p.usize_in("buffer_size", Some(1), 0..=1000)?;
        let threshold = p.f64_in("breakpoint_percentile_threshold", 95.0, 0.0..=100.0)?;
        Ok(Arc::new(LlamaSemanticChunker {
            buffer_size,
            threshold,
        }))
    }
}

/// The llama.semantic strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LlamaSemanticChunker {
    /// Sentences on each side embedded with a sentence.
    pub buffer_size: usize,
    /// The percentile of the distances a break must exceed.
    pub threshold: f64,
}

/// NumPy's `percentile(values, q)` with the default `"linear"` method
/// (`_lerp`, whose two branches keep the result exact at the ends); `None`
/// for no values.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let last = *sorted.last()?;
    let v = (n - 1) as f64 * (q / 100.0);
    let lo = v.floor();
    if v >= (n - 1) as f64 {
        return Some(last);
    }
    let i = lo as usize;
    let (a, b) = (sorted[i], sorted[i + 1]);
    let g = v - lo;
    let d = b - a;
    Some(if g >= 0.5 { b - d * (1.0 - g) } else { a + d * g })
}

/// LlamaIndex's `similarity` (`np.dot(a, b) / (norm(a) * norm(b))`) in
/// `f64`, as a distance `1 - similarity`.
pub fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x) * f64::from(*x)).sum();
    let nb: f64 = b.iter().map(|x| f64::from(*x) * f64::from(*x)).sum();
    1.0 - dot / (na.sqrt() * nb.sqrt())
}

impl LlamaSemanticChunker {
    /// The chunks' byte ranges, given the sentences' ranges and a function
    /// embedding texts.
    pub fn spans(
        &self,
        text: &str,
        sentences: &[Range<usize>],
        embed: &EmbedFn<'_>,
    ) -> Result<Vec<Range<usize>>, ChunkError> {
        let n = sentences.len();
        if n < 2 {
            // LlamaIndex joins 0 or 1 sentences with " ": the text itself.
            return Ok(sentences.first().map(|s| 0..s.end.max(text.len())).into_iter().collect());
        }
        let groups: Vec<&str> = (0..n)
            .map(|i| {
                let first = i.saturating_sub(self.buffer_size);
                let last = (i + self.buffer_size).min(n - 1);
                &text[sentences[first].start..sentences[last].end]
            })
            .collect();
        let vectors = embed(&groups)?;
        if vectors.len() != n {
            return Err(ChunkError::Embedding(format!(
                "{} vectors for {n} sentence groups",
                vectors.len()
            )));
        }
        let distances: Vec<f64> = vectors
            .windows(2)
            .map(|w| cosine_distance(&w[0], &w[1]))
            .collect();
        let threshold = percentile(&distances, self.threshold).unwrap_or(f64::INFINITY);
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, d) in distances.iter().enumerate() {
            if *d > threshold {
                spans.push(sentences[start].start..sentences[i].end);
                start = i + 1;
            }
        }
        if start < n {
            spans.push(sentences[start].start..sentences[n - 1].end);
        }
        Ok(spans)
    }
}

impl Chunker for LlamaSemanticChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: NO_TOKEN_LIMIT,
            hard_max_tokens: NO_TOKEN_LIMIT,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn needs_embedder(&self) -> bool {
        true
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LlamaIndex SemanticSplitterNodeParser",
            package: "llama-index-core 0.14.25",
            unit: None,
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("buffer_size".into(), (self.buffer_size as i64).into());
        t.insert("breakpoint_percentile_threshold".into(), self.threshold.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let Some(embedder) = input.embedder else {
            return Err(ChunkError::EmbedderMissing {
                profile: input.profile.name.clone(),
                strategy: "llama.semantic".into(),
            });
        };
        let text = input.doc.text.as_str();
        let sentences = Punkt::untrained().sentence_pieces(text);
        let embed = |texts: &[&str]| {
            embedder
                .embed(texts)
                .map_err(|e| ChunkError::Embedding(e.to_string()))
        };
        let spans = self.spans(text, &sentences, &embed)?;
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn numpy_linear_percentile() {
        // numpy.percentile([1, 2, 3, 4], q): 95 -> 3.85, 50 -> 2.5, 0 -> 1, 100 -> 4.
        let v = [4.0, 1.0, 3.0, 2.0];
        assert!((percentile(&v, 95.0).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&v, 100.0), Some(4.0));
        assert_eq!(percentile(&[], 95.0), None);
        assert_eq!(percentile(&[0.25], 95.0), Some(0.25));
    }

    #[test]
    fn breaks_follow_the_distances_above_the_percentile() {
        let text = "Alpha one. Beta two. Gamma three. Delta four.";
        let sentences = Punkt::untrained().sentence_pieces(text);
        assert_eq!(sentences.len(), 4);
        // Vectors: the first two alike, the last two alike.
        let embed = |texts: &[&str]| -> Result<Vec<Vec<f32>>, ChunkError> {
            Ok(texts
                .iter()
                .map(|t| if t.starts_with('A') { vec![1.0, 0.0] } else { vec![0.0, 1.0] })
                .collect())
        };
        let c = LlamaSemanticChunker {
            buffer_size: 0,
            threshold: 50.0,
        };
        let spans = c.spans(text, &sentences, &embed).unwrap();
        let got: Vec<&str> = spans.into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, ["Alpha one. ", "Beta two. Gamma three. Delta four."]);
    }
}
