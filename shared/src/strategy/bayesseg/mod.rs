//! The experimental `bayesseg` strategy, profile `bayesseg-v1`:
//! [`crate::segment::bayesseg()`] (Eisenstein & Barzilay 2008) run on the
//! sentences and blocks of each section ([`crate::chunk::topic`] units), its
//! boundaries closing chunks once they hold `min_tokens`; headings are hard
//! stops, runs over the hard max are cut where word overlap is weakest.
//!
//! The segment count of a section is `segments` when set, otherwise
//! `ceil(section tokens / target_tokens)` (the units' own token counts in
//! the profile's tokenizer).

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{bayesseg, BayesSegParams, SegmentCount};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::tokens::TokenCounter;

/// Eisenstein & Barzilay's BayesSeg.
#[derive(Debug, Clone, Copy, Default)]
pub struct BayesSeg;

const KEYS: [&str; 6] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "prior",
    "segments",
    "max_window",
];

impl Strategy for BayesSeg {
    fn name(&self) -> &'static str {
        "bayesseg"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "BayesSeg (Eisenstein & Barzilay): Dirichlet-compound-multinomial segments by dynamic programming"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/bayesseg-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = BayesSegParams::default();
        let segments = p.opt_usize_in("segments", 1..=10_000)?;
        let params = BayesSegParams {
            prior: p.f64_in("prior", d.prior, 0.001..=10.0)?,
            segments: match segments {
                Some(k) => SegmentCount::Fixed(k),
                None => SegmentCount::PerTokens(sizes.target_tokens),
            },
            max_window: p.usize_in(
                "max_window",
                Some(d.max_window),
                16..=crate::segment::bayesseg::MAX_WINDOW,
            )?,
            ..d
        };
        Ok(Arc::new(BayesSegChunker { sizes, params }))
    }
}

/// The bayesseg strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct BayesSegChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: BayesSegParams,
}

impl Chunker for BayesSegChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("prior".into(), self.params.prior.into());
        if let SegmentCount::Fixed(k) = self.params.segments {
            t.insert("segments".into(), (k as i64).into());
        }
        t.insert("max_window".into(), (self.params.max_window as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let counter = input.tokens.counter();
        Ok(lexical_chunks(input, self.sizes, |s| {
            let tokens: Vec<usize> = s.iter().map(|t| counter.count(t)).collect();
            bayesseg(s, &tokens, &self.params)
        }))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let counter = input.tokens.counter();
        let segment = |s: &[&str]| {
            let tokens: Vec<usize> = s.iter().map(|t| counter.count(t)).collect();
            bayesseg(s, &tokens, &self.params)
        };
        Some(lexical_explain(input, self.sizes, segment, chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
