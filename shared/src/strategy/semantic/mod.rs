//! The `semantic` strategy (the Chunking System specification `SemanticSplitterChunker`, the LangChain-style factory specification
//! LangChain `SemanticChunker`), profile `semantic-v1`.
//!
//! Every unit of the document (sentences, whole tables, code blocks and
//! lists; [`crate::chunk::topic`]) is embedded once by the engine's
//! [`crate::embed::Embedder`] (distinct texts only). The coherence at a gap
//! is the cosine between the mean vectors of the `window` units before and
//! after it, within its section. A gap is a boundary candidate where the
//! coherence is a local minimum and
//! - `breakpoint = "threshold"`: below `tau_coh` (the Chunking System specification), or
//! - `breakpoint = "percentile"`: its distance (1 - coherence) is above the
//!   document's `percentile`-th distance (LangChain's default breakpoint).
//!
//! A candidate closes the open chunk once it holds `min_tokens`; headings
//! are hard stops; a run that would pass `hard_max_tokens` is cut at its
//! weakest coherence; small tails merge. Peers' semantic chunkers have no
//! hard maximum and depend on floating-point noise; here coherences are
//! rounded to 1e-4 and the embedder's vectors depend on their text only, so
//! the same input gives the same bytes whatever the batch or thread count.
//!
//! `gpu_required = true` (the Chunking System specification `gpu_semantic_checks`) makes the engine
//! refuse to build unless its embedder runs on a GPU.

use std::collections::HashMap;
use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::chunk::topic::{
    Plan,
    pack, percentile_candidates, threshold_candidates, units, window_coherence, PackLimits, Unit,
    UnitKind,
};
use crate::chunk::topic_explain::explain_gaps;
use crate::embed::Embedder;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::strategy::params::{ParamError, Params, TARGET_TOKENS};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Topic boundaries from sentence-embedding coherence.
#[derive(Debug, Clone, Copy, Default)]
pub struct Semantic;

const KEYS: [&str; 8] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "window",
    "breakpoint",
    "tau_coh",
    "percentile",
    "gpu_required",
];

/// How candidates are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Breakpoint {
    /// Coherence below `tau_coh`.
    Threshold,
    /// Distance above the document's `percentile`-th.
    Percentile,
}

impl Breakpoint {
    fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Percentile => "percentile",
        }
    }
}

/// Reads the sizes every topic strategy shares: `target_tokens`,
/// `hard_max_tokens` (at least the target, at most twice it) and
/// `min_tokens` (at most the target).
pub(crate) fn parse_sizes(
    p: &Params<'_>,
    defaults: (usize, usize, usize),
) -> Result<PackLimits, ParamError> {
    let target = p.usize_in("target_tokens", Some(defaults.0), TARGET_TOKENS)?;
    let max = p.usize_in(
        "hard_max_tokens",
        Some(defaults.1.max(target)),
        target..=target * 2,
    )?;
    let min = p.usize_in("min_tokens", Some(defaults.2.min(target)), 0..=target)?;
    Ok(PackLimits {
        min_tokens: min,
        target_tokens: target,
        hard_max_tokens: max,
    })
}

/// The sizes as `[params]` entries.
pub(crate) fn sizes_table(l: &PackLimits) -> toml::Table {
    let mut t = toml::Table::new();
    t.insert("target_tokens".into(), (l.target_tokens as i64).into());
    t.insert("hard_max_tokens".into(), (l.hard_max_tokens as i64).into());
    t.insert("min_tokens".into(), (l.min_tokens as i64).into());
    t
}

/// The sizes as [`Limits`].
pub(crate) fn sizes_limits(l: &PackLimits) -> Limits {
    Limits {
        target_tokens: l.target_tokens,
        hard_max_tokens: l.hard_max_tokens,
        min_tokens: l.min_tokens,
        overlap_tokens: 0,
    }
}

impl Strategy for Semantic {
    fn name(&self) -> &'static str {
        "semantic"
    }

    /// 1.1.0: `conditional` breadcrumbs follow the per-chunk file format exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap, 64 + overlap
    /// for strategies without a minimum).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    fn version(&self) -> &'static str {
        "1.1.0"
    }

    fn summary(&self) -> &'static str {
        "topic boundaries where sentence-embedding coherence drops (needs the model)"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/semantic-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let window = p.usize_in("window", Some(3), 1..=10)?;
        let breakpoint = match p.value("breakpoint") {
            None => Breakpoint::Threshold,
            Some(v) => match v.as_str() {
                Some("threshold") => Breakpoint::Threshold,
                Some("percentile") => Breakpoint::Percentile,
                _ => {
                    return Err(p.error(
                        "breakpoint",
                        format!("= {v} is not valid; valid: \"threshold\", \"percentile\""),
                    ))
                }
            },
        };
        let tau_coh = p.f64_in("tau_coh", 0.82, 0.5..=1.0)?;
        let percentile = p.f64_in("percentile", 95.0, 50.0..=99.9)?;
        let gpu_required = p.bool_or("gpu_required", false)?;
        Ok(Arc::new(SemanticChunker {
            sizes,
            window,
            breakpoint,
            tau_coh,
            percentile,
            gpu_required,
        }))
    }
}

/// The semantic strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct SemanticChunker {
    sizes: PackLimits,
    /// Units on each side of a gap whose mean vectors are compared.
    pub window: usize,
    /// How candidates are chosen.
    pub breakpoint: Breakpoint,
    /// The coherence threshold of `Breakpoint::Threshold`.
    pub tau_coh: f64,
    /// The percentile of `Breakpoint::Percentile`.
    pub percentile: f64,
    /// Refuse to run without a GPU embedder.
    pub gpu_required: bool,
}

/// The most bytes of a unit that are embedded: a long table, list or code
/// block is represented by its opening (about 128 word pieces), which names
/// its topic; the model would read only its first 256 pieces anyway, and
/// half the pieces halve the cost.
pub const EMBED_PREFIX_BYTES: usize = 600;

/// The part of a unit's text that is embedded: the whole text, or its first
/// [`EMBED_PREFIX_BYTES`] cut back to a character boundary.
fn embedded_text(t: &str) -> &str {
    if t.len() <= EMBED_PREFIX_BYTES {
        return t;
    }
    let mut end = EMBED_PREFIX_BYTES;
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    &t[..end]
}

/// The distinct vectors of a document, and which one each unit has.
type UnitVectors = (Vec<Vec<f32>>, Vec<Option<usize>>);

/// Embeds every distinct non-heading unit once: the distinct vectors, and
/// for each unit the index of its vector (none for headings).
pub(crate) fn unit_vectors(
    embedder: &dyn Embedder,
    text: &str,
    units: &[Unit],
) -> Result<UnitVectors, ChunkError> {
    let mut slot: HashMap<&str, usize> = HashMap::new();
    let mut distinct: Vec<&str> = Vec::new();
    let mut which = Vec::with_capacity(units.len());
    for u in units {
        if u.kind == UnitKind::Heading {
            which.push(None);
            continue;
        }
        let t = embedded_text(&text[u.range.clone()]);
        let i = *slot.entry(t).or_insert_with(|| {
            distinct.push(t);
            distinct.len() - 1
        });
        which.push(Some(i));
    }
    let vectors = embedder
        .embed(&distinct)
        .map_err(|e| ChunkError::Embedding(e.0))?;
    if vectors.len() != distinct.len() {
        return Err(ChunkError::Embedding(format!(
            "the embedder {} returned {} vectors for {} texts",
            embedder.id(),
            vectors.len(),
            distinct.len()
        )));
    }
    Ok((vectors, which))
}

/// Gap coherences from the embedder's vectors of the units (the semantic
/// strategy's coherence; [`window_coherence`] over [`unit_vectors`]).
pub(crate) fn embedding_coherence(
    embedder: &dyn Embedder,
    text: &str,
    units: &[Unit],
    window: usize,
) -> Result<Vec<f32>, ChunkError> {
    let (vectors, which) = unit_vectors(embedder, text, units)?;
    let refs: Vec<Option<&[f32]>> = which
        .iter()
        .map(|w| w.map(|i| vectors[i].as_slice()))
        .collect();
    Ok(window_coherence(units, &refs, window))
}

impl SemanticChunker {
    /// What the chunker decides before packing: the units, the candidate
    /// gaps and the gap coherences.
    fn plan(
        &self,
        input: &ChunkInput<'_>,
        embedder: &dyn Embedder,
    ) -> Result<Plan, ChunkError> {
        let text = input.doc.text.as_str();
        let units = units(input.blocks, input.tokens, self.sizes.hard_max_tokens);
        let coherence = embedding_coherence(embedder, text, &units, self.window)?;
        let candidate = match self.breakpoint {
            Breakpoint::Threshold => threshold_candidates(&coherence, self.tau_coh as f32),
            Breakpoint::Percentile => percentile_candidates(&coherence, self.percentile),
        };
        Ok((units, candidate, coherence))
    }
}

impl Chunker for SemanticChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("window".into(), (self.window as i64).into());
        t.insert("breakpoint".into(), self.breakpoint.as_str().into());
        t.insert("tau_coh".into(), self.tau_coh.into());
        t.insert("percentile".into(), self.percentile.into());
        t.insert("gpu_required".into(), self.gpu_required.into());
        t
    }

    fn needs_embedder(&self) -> bool {
        true
    }

    fn gpu_required(&self) -> bool {
        self.gpu_required
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let embedder = input
            .embedder
            .ok_or_else(|| ChunkError::EmbedderMissing {
                profile: input.profile.name.clone(),
                strategy: input.profile.strategy.clone(),
            })?;
        let (units, candidate, coherence) = self.plan(input, embedder)?;
        let spans = pack(&units, &candidate, &coherence, input.tokens, self.sizes);
        Ok(chunks_from_spans(input, &spans, true))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let (units, candidate, coherence) = self.plan(input, input.embedder?).ok()?;
        let threshold = match self.breakpoint {
            Breakpoint::Threshold => self.tau_coh as f32,
            // The coherence the percentile cut off at: the highest among
            // the candidates.
            Breakpoint::Percentile => candidate
                .iter()
                .zip(&coherence)
                .filter(|(c, _)| **c)
                .map(|(_, s)| *s)
                .fold(f32::NEG_INFINITY, f32::max),
        };
        let gaps = (units.as_slice(), candidate.as_slice(), coherence.as_slice());
        Some(explain_gaps(input, chunks, gaps, self.limits(), |_, score| {
            Some(EndReason::SemanticDip { score, threshold })
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::chunk::record::DocumentMeta;
    use crate::embed::ToyEmbedder;
    use crate::engine::Engine;
    use crate::ErrorCode;

    const GPU_PROFILE: &str = "name = \"semantic-gpu\"\nstrategy = \"semantic\"\n[params]\ngpu_required = true\n";

    fn toy_engine() -> Engine {
        Engine::builder()
            .embedder(Arc::new(ToyEmbedder::default()))
            .build()
            .unwrap()
    }

    /// Three topics of `n` sentences each, with disjoint vocabularies.
    fn three_topics(n: usize) -> (String, Vec<usize>) {
        let topics = [
            ["galaxy", "telescope", "nebula", "orbit", "comet"],
            ["recipe", "butter", "oven", "flour", "pastry"],
            ["referee", "goalkeeper", "stadium", "penalty", "striker"],
        ];
        let mut text = String::new();
        let mut switches = Vec::new();
        for (t, words) in topics.iter().enumerate() {
            if t > 0 {
                switches.push(text.len());
            }
            for i in 0..n {
                let w = |k: usize| words[(i + k) % words.len()];
                text.push_str(&format!(
                    "Every {} likes {} with {} and {}. ",
                    w(0),
                    w(1),
                    w(2),
                    w(3)
                ));
            }
        }
        (text.trim_end().to_owned(), switches)
    }

    #[test]
    fn boundaries_fall_at_vocabulary_switches_and_reruns_are_identical() {
        let engine = toy_engine();
        let (text, switches) = three_topics(16);
        let doc = engine
            .chunk(text.as_bytes(), &DocumentMeta::default(), Some("semantic-v1"))
            .unwrap();
        let starts: Vec<usize> = doc.chunks.iter().map(|c| c.byte_start as usize).collect();
        assert_eq!(starts[1..], switches[..], "{starts:?}");
        let again = engine
            .chunk(text.as_bytes(), &DocumentMeta::default(), Some("semantic-v1"))
            .unwrap();
        assert_eq!(doc, again);
    }

    #[test]
    fn percentile_breakpoints_find_the_same_switches() {
        let profile = "name = \"semantic-pct\"\nstrategy = \"semantic\"\n[params]\nbreakpoint = \"percentile\"\npercentile = 90\nmin_tokens = 60\n";
        let engine = Engine::builder()
            .embedder(Arc::new(ToyEmbedder::default()))
            .profile_source("pct.toml", profile)
            .build()
            .unwrap();
        let (text, switches) = three_topics(12);
        let doc = engine
            .chunk(text.as_bytes(), &DocumentMeta::default(), Some("semantic-pct"))
            .unwrap();
        let starts: Vec<usize> = doc.chunks.iter().map(|c| c.byte_start as usize).collect();
        for s in switches {
            assert!(starts.contains(&s), "{s} in {starts:?}");
        }
    }

    #[test]
    fn documents_without_sentences_are_cut_at_rows_and_lines_under_the_max() {
        let engine = toy_engine();
        let table = format!(
            "| region | q1 | q2 |\n|---|---|---|\n{}",
            "| north-east-territories | 1,234,567 | 2,345,678 |\n".repeat(120)
        );
        let code = format!("```rust\n{}```\n", "let value = compute(input, 42);\n".repeat(200));
        for doc in [table, code, String::new(), "|".to_owned()] {
            let out = engine
                .chunk(doc.as_bytes(), &DocumentMeta::default(), Some("semantic-v1"))
                .unwrap();
            assert!(out.chunks.iter().all(|c| c.token_count <= 520));
            for c in &out.chunks {
                let first = c.chunk_text.lines().next().unwrap_or("");
                assert!(
                    first.starts_with('|') || first.starts_with("let") || first.starts_with("```"),
                    "cut inside a row or line: {first:?}"
                );
            }
        }
    }

    #[test]
    fn without_an_embedder_the_profile_is_refused_naming_the_fix() {
        let engine = Engine::builtin().unwrap();
        let err = engine.profile(Some("semantic-v1")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnknownProfile);
        assert!(err.to_string().contains("scripts/fetch-model.sh"), "{err}");
        assert!(engine.profile(Some("spec-v1")).is_ok());
    }

    #[test]
    fn gpu_required_stops_the_build_without_a_gpu_embedder() {
        for embedder in [None, Some(Arc::new(ToyEmbedder::default()))] {
            let mut b = Engine::builder().profile_source("gpu.toml", GPU_PROFILE);
            if let Some(e) = embedder {
                b = b.embedder(e);
            }
            let err = b.build().unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains("semantic-gpu") && msg.contains("gpu_required"),
                "{msg}"
            );
        }
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_valid_values() {
        let bad = |params: &str| {
            let src = format!("name = \"s\"\nstrategy = \"semantic\"\n[params]\n{params}\n");
            Engine::builder()
                .profile_source("s.toml", src)
                .build()
                .unwrap_err()
                .to_string()
        };
        assert!(bad("tau_coh = 0.3").contains("0.5..=1"));
        assert!(bad("breakpoint = \"gradient\"").contains("\"percentile\""));
        assert!(bad("min_tokens = 900").contains("min_tokens"));
        assert!(bad("window = 0").contains("window"));
    }
}
