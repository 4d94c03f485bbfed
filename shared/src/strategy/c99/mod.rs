//! The experimental `c99` strategy (the Chunking System specification), profile `c99-v1`:
//! [`crate::segment::c99()`] run on the sentences and blocks of each section
//! ([`crate::chunk::topic`] units), its boundaries closing chunks once they
//! hold `min_tokens`; headings are hard stops, runs over the hard max are
//! cut where word overlap is weakest.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{c99, C99Params};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Choi's C99.
#[derive(Debug, Clone, Copy, Default)]
pub struct C99;

const KEYS: [&str; 6] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "rank_mask",
    "stop_coefficient",
    "max_window",
];

impl Strategy for C99 {
    fn name(&self) -> &'static str {
        "c99"
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
        "C99 (Choi): divisive clustering of a ranked sentence-similarity matrix"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/c99-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = C99Params::default();
        let params = C99Params {
            rank_mask: p.usize_in("rank_mask", Some(d.rank_mask), 3..=51)?,
            stop_coefficient: p.f64_in("stop_coefficient", d.stop_coefficient, 0.0..=5.0)?,
            max_window: p.usize_in("max_window", Some(d.max_window), 16..=2048)?,
            ..d
        };
        Ok(Arc::new(C99Chunker { sizes, params }))
    }
}

/// The c99 strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct C99Chunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: C99Params,
}

impl Chunker for C99Chunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("rank_mask".into(), (self.params.rank_mask as i64).into());
        t.insert("stop_coefficient".into(), self.params.stop_coefficient.into());
        t.insert("max_window".into(), (self.params.max_window as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        Ok(lexical_chunks(input, self.sizes, |s| c99(s, &self.params)))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        Some(lexical_explain(input, self.sizes, |s| c99(s, &self.params), chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
