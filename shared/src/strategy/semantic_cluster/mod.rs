//! The `semantic_cluster` strategy (experimental), profile
//! `semantic-cluster-v1`: chunk boundaries chosen by dynamic programming
//! over sentence embeddings, as Chroma's `ClusterSemanticChunker` does.
//!
//! The document's units ([`crate::chunk::topic::units`]: sentences, whole
//! tables, code blocks and lists, headings) are embedded once (distinct
//! texts). With `s(p, q)` the cosine of units `p` and `q` rounded to 1e-4
//! and `m` the mean over all pairs of the document, a run of units scores
//! the sum of `s(p, q) - m` over its pairs; the chunking is the split into
//! runs of at most `hard_max_tokens` whose scores sum highest. So units
//! that are more alike than the document's average stay together, and a run
//! never takes a unit that lowers it. Headings are hard stops (a run never
//! holds a heading after its first unit, nor ends with one). Ties go to the
//! longer last run (fewer, larger chunks), and the rounding makes the result depend on the texts
//! only: the same input gives the same bytes.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::chunk::topic::{units, PackLimits, Unit, UnitKind};
use crate::embed::cosine;
use crate::error::ChunkError;
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table, unit_vectors};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Sentence clusters by dynamic programming over embedding similarity.
#[derive(Debug, Clone, Copy, Default)]
pub struct SemanticCluster;

const KEYS: [&str; 3] = ["target_tokens", "hard_max_tokens", "min_tokens"];

impl Strategy for SemanticCluster {
    fn name(&self) -> &'static str {
        "semantic_cluster"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Chroma's ClusterSemanticChunker: the split that maximises within-chunk sentence similarity"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/semantic-cluster-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (200, 400, 0))?;
        Ok(Arc::new(SemanticClusterChunker { sizes }))
    }
}

/// The `semantic_cluster` strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct SemanticClusterChunker {
    sizes: PackLimits,
}

impl Chunker for SemanticClusterChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        sizes_table(&self.sizes)
    }

    fn needs_embedder(&self) -> bool {
        true
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let embedder = input
            .embedder
            .ok_or_else(|| ChunkError::EmbedderMissing {
                profile: input.profile.name.clone(),
                strategy: input.profile.strategy.clone(),
            })?;
        let text = input.doc.text.as_str();
        let max = self.sizes.hard_max_tokens;
        let units = units(input.blocks, input.tokens, max);
        let (vectors, which) = unit_vectors(embedder, text, &units)?;
        let refs: Vec<Option<&[f32]>> = which
            .iter()
            .map(|w| w.map(|i| vectors[i].as_slice()))
            .collect();
        let runs = cluster_runs(&units, &refs, max);
        let spans: Vec<_> = runs
            .into_iter()
            .map(|r| units[r.start].range.start..units[r.end - 1].range.end)
            .collect();
        Ok(chunks_from_spans(input, &spans, true))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Rounds a cosine to 1e-4, in integer steps, so sums are exact.
fn step(a: &[f32], b: &[f32]) -> i64 {
    (f64::from(cosine(a, b)) * 10_000.0).round() as i64
}

/// The runs (unit index ranges, in order, covering every unit) of the best
/// split: see the module docs. `vectors[i]` is unit `i`'s vector (none for
/// a heading, which counts as the mean).
fn cluster_runs(
    units: &[Unit],
    vectors: &[Option<&[f32]>],
    max_tokens: usize,
) -> Vec<std::ops::Range<usize>> {
    let n = units.len();
    if n == 0 {
        return Vec::new();
    }
    // The widest run any unit can end: bounded by the token budget.
    let mut widest = vec![0usize; n + 1];
    for (j, w) in widest.iter_mut().enumerate().skip(1) {
        let (mut i, mut tokens) = (j, 0usize);
        while i > 0 {
            let t = units[i - 1].tokens + usize::from(i < j);
            if i < j && (tokens + t > max_tokens || units[i].kind == UnitKind::Heading) {
                break;
            }
            tokens += t;
            i -= 1;
        }
        *w = j - i;
    }
    let longest = widest.iter().copied().max().unwrap_or(1);
    // Similarities (integer 1e-4 steps) within the longest run's reach, and
    // their mean over those pairs; scores are in 1/len units to stay exact.
    let sim = |p: usize, q: usize| match (vectors[p], vectors[q]) {
        (Some(a), Some(b)) => Some(step(a, b)),
        _ => None,
    };
    let mut near: Vec<Vec<i64>> = Vec::with_capacity(n);
    let (mut sum, mut count) = (0i64, 0i64);
    for p in 0..n {
        let row: Vec<i64> = (p + 1..n.min(p + longest))
            .map(|q| match sim(p, q) {
                Some(s) => {
                    sum += s;
                    count += 1;
                    s
                }
                None => i64::MIN,
            })
            .collect();
        near.push(row);
    }
    let mean = if count == 0 { 0 } else { sum / count };
    let weight = |p: usize, q: usize| -> i64 {
        let s = near[p][q - p - 1];
        if s == i64::MIN {
            0
        } else {
            s - mean
        }
    };
    // best[j]: the top score of units 0..j; from[j]: where its last run starts.
    let mut best = vec![i64::MIN; n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = 0;
    for j in 1..=n {
        let ends_on_heading = units[j - 1].kind == UnitKind::Heading && j < n;
        let mut score = 0i64;
        for i in (j - widest[j]..j).rev() {
            // Extending the run j-1.. down to i adds unit i's pairs.
            for q in i + 1..j {
                score += weight(i, q);
            }
            if ends_on_heading || best[i] == i64::MIN {
                continue;
            }
            let total = best[i] + score;
            if total >= best[j] {
                best[j] = total;
                from[j] = i;
            }
        }
        if best[j] == i64::MIN && !ends_on_heading {
            // No run within the budget reaches here (a heading and a unit
            // after it over the max): the run from the nearest reachable
            // start; the span builder cuts it to the hard max.
            if let Some(i) = (0..j).rev().find(|&i| best[i] != i64::MIN) {
                best[j] = best[i];
                from[j] = i;
            }
        }
    }
    let mut runs = Vec::new();
    let mut j = n;
    while j > 0 {
        let i = from[j];
        runs.push(i..j);
        j = i;
    }
    runs.reverse();
    runs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn unit(kind: UnitKind, tokens: usize) -> Unit {
        Unit {
            range: 0..1,
            kind,
            tokens,
            section: 0,
        }
    }

    #[test]
    fn alike_units_stay_together_and_the_budget_holds() {
        let a = [1.0f32, 0.0];
        let b = [0.0f32, 1.0];
        let units: Vec<Unit> = (0..6).map(|_| unit(UnitKind::Sentence, 10)).collect();
        let vectors = [&a[..], &a, &a, &b, &b, &b].map(Some);
        assert_eq!(cluster_runs(&units, &vectors, 100), vec![0..3, 3..6]);
        // 25 tokens a run at most (10 + 1 + 10): pairs.
        assert_eq!(
            cluster_runs(&units, &vectors, 25),
            vec![0..1, 1..3, 3..4, 4..6]
        );
    }

    #[test]
    fn no_run_holds_a_heading_after_its_start_or_ends_on_one() {
        let a = [1.0f32, 0.0];
        let mut units: Vec<Unit> = (0..5).map(|_| unit(UnitKind::Sentence, 10)).collect();
        units[2] = unit(UnitKind::Heading, 3);
        let vectors = [Some(&a[..]), Some(&a), None, Some(&a), Some(&a)];
        let runs = cluster_runs(&units, &vectors, 1000);
        assert_eq!(runs, vec![0..2, 2..5]);
        assert!(cluster_runs(&[], &[], 10).is_empty());
    }
}
