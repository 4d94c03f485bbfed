//! The experimental `graph_partition` strategy, profile
//! `graph_partition-v1`: [`crate::segment::graph_partition()`] (Malioutov &
//! Barzilay's minimum normalised cut of a lexical sentence-similarity graph,
//! by dynamic programming, segments of at most `target_tokens`) run on the
//! sentences and blocks of each section ([`crate::chunk::topic`] units), its
//! boundaries closing chunks once they hold `min_tokens`; headings are hard
//! stops, runs over the hard max are cut where word overlap is weakest.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{graph_partition, GraphParams};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::tokens::TokenCounter;

/// The minimum-cut model.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphPartition;

const KEYS: [&str; 5] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "max_distance",
    "max_window",
];

impl Strategy for GraphPartition {
    fn name(&self) -> &'static str {
        "graph_partition"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Minimum cut (Malioutov & Barzilay): normalised cut of a sentence-similarity graph by dynamic programming"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/graph_partition-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = GraphParams::default();
        let params = GraphParams {
            max_segment_tokens: sizes.target_tokens,
            max_distance: p.usize_in("max_distance", Some(d.max_distance), 1..=256)?,
            max_window: p.usize_in(
                "max_window",
                Some(d.max_window),
                16..=crate::segment::graph_partition::MAX_WINDOW,
            )?,
            ..d
        };
        Ok(Arc::new(GraphPartitionChunker { sizes, params }))
    }
}

/// The graph_partition strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct GraphPartitionChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: GraphParams,
}

impl Chunker for GraphPartitionChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert(
            "max_distance".into(),
            (self.params.max_distance as i64).into(),
        );
        t.insert("max_window".into(), (self.params.max_window as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let counter = input.tokens.counter();
        Ok(lexical_chunks(input, self.sizes, |s| {
            let tokens: Vec<usize> = s.iter().map(|t| counter.count(t)).collect();
            graph_partition(s, &tokens, &self.params)
        }))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let counter = input.tokens.counter();
        let segment = |s: &[&str]| {
            let tokens: Vec<usize> = s.iter().map(|t| counter.count(t)).collect();
            graph_partition(s, &tokens, &self.params)
        };
        Some(lexical_explain(input, self.sizes, segment, chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
