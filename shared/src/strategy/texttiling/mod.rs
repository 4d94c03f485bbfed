//! The experimental `texttiling` strategy (the Chunking System specification), profile
//! `texttiling-v1`: [`crate::segment::texttiling()`] run on the sentences
//! and blocks of each section ([`crate::chunk::topic`] units), its
//! boundaries closing chunks once they hold `min_tokens`; headings are hard
//! stops, runs over the hard max are cut where word overlap is weakest.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{texttiling, Cutoff, TextTilingParams};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Hearst's TextTiling.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextTiling;

const KEYS: [&str; 7] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "block_words",
    "smoothing_width",
    "cutoff",
    "min_gap",
];

impl Strategy for TextTiling {
    fn name(&self) -> &'static str {
        "texttiling"
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
        "TextTiling (Hearst): lexical-cohesion valleys between sentence blocks"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/texttiling-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = TextTilingParams::default();
        let cutoff = match p.value("cutoff").map(|v| (v, v.as_str())) {
            None => d.cutoff,
            Some((_, Some("conservative"))) => Cutoff::Conservative,
            Some((_, Some("liberal"))) => Cutoff::Liberal,
            Some((v, _)) => {
                return Err(p.error(
                    "cutoff",
                    format!("= {v} is not valid; valid: \"conservative\", \"liberal\""),
                ))
            }
        };
        let params = TextTilingParams {
            block_words: p.usize_in("block_words", Some(d.block_words), 10..=2000)?,
            smoothing_width: p.usize_in("smoothing_width", Some(d.smoothing_width), 0..=10)?,
            cutoff,
            min_gap: p.usize_in("min_gap", Some(d.min_gap), 1..=100)?,
            ..d
        };
        Ok(Arc::new(TextTilingChunker { sizes, params }))
    }
}

/// The texttiling strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct TextTilingChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: TextTilingParams,
}

impl Chunker for TextTilingChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("block_words".into(), (self.params.block_words as i64).into());
        t.insert(
            "smoothing_width".into(),
            (self.params.smoothing_width as i64).into(),
        );
        let cutoff = match self.params.cutoff {
            Cutoff::Liberal => "liberal",
            _ => "conservative",
        };
        t.insert("cutoff".into(), cutoff.into());
        t.insert("min_gap".into(), (self.params.min_gap as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        Ok(lexical_chunks(input, self.sizes, |s| texttiling(s, &self.params)))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        Some(lexical_explain(input, self.sizes, |s| texttiling(s, &self.params), chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
