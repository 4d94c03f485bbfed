//! The experimental `lda_topic` strategy, profile `lda_topic-v1`:
//! [`crate::segment::lda_topic()`] (LDA fitted by collapsed Gibbs sampling
//! with a fixed seed, boundaries where the dominant topic changes) run on
//! the sentences and blocks of each section ([`crate::chunk::topic`] units),
//! its boundaries closing chunks once they hold `min_tokens`; headings are
//! hard stops, runs over the hard max are cut where word overlap is
//! weakest. Each section is sampled from the same seed, so a section's
//! boundaries do not depend on the rest of the document.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{lda_topic, LdaParams};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Topic shifts by LDA.
#[derive(Debug, Clone, Copy, Default)]
pub struct LdaTopic;

const KEYS: [&str; 9] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "topics",
    "iterations",
    "alpha",
    "beta",
    "window",
    "seed",
];

impl Strategy for LdaTopic {
    fn name(&self) -> &'static str {
        "lda_topic"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LDA (collapsed Gibbs sampling, fixed seed): boundaries where the dominant topic changes"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/lda_topic-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = LdaParams::default();
        let params = LdaParams {
            topics: p.usize_in("topics", Some(d.topics), 2..=100)?,
            iterations: p.usize_in("iterations", Some(d.iterations), 10..=2000)?,
            alpha: p.f64_in("alpha", d.alpha, 0.001..=10.0)?,
            beta: p.f64_in("beta", d.beta, 0.0001..=1.0)?,
            window: p.usize_in("window", Some(d.window), 1..=50)?,
            seed: p.usize_in("seed", Some(d.seed as usize), 0..=u32::MAX as usize)? as u64,
            ..d
        };
        Ok(Arc::new(LdaTopicChunker { sizes, params }))
    }
}

/// The lda_topic strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LdaTopicChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: LdaParams,
}

impl Chunker for LdaTopicChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("topics".into(), (self.params.topics as i64).into());
        t.insert("iterations".into(), (self.params.iterations as i64).into());
        t.insert("alpha".into(), self.params.alpha.into());
        t.insert("beta".into(), self.params.beta.into());
        t.insert("window".into(), (self.params.window as i64).into());
        t.insert("seed".into(), (self.params.seed as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        Ok(lexical_chunks(input, self.sizes, |s| lda_topic(s, &self.params)))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        Some(lexical_explain(input, self.sizes, |s| lda_topic(s, &self.params), chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
