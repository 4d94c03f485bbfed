//! The experimental `graphrag` strategy, profile `graphrag-v1`:
//! [`crate::segment::entity_communities()`] (the communities of an entity
//! co-occurrence graph, as GraphRAG builds its index from, found by label
//! propagation; a boundary where the sentences' community changes) run on
//! the sentences and blocks of each section ([`crate::chunk::topic`] units),
//! its boundaries closing chunks once they hold `min_tokens`; headings are
//! hard stops, runs over the hard max are cut where word overlap is
//! weakest. GraphRAG itself answers from community summaries that an LLM
//! writes; here the communities only decide where contiguous chunks end,
//! so every chunk is still a slice of the document.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::error::ChunkError;
use crate::explain::reason::EndReason;
use crate::segment::{entity_communities, EntityGraphParams};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};

/// Entity-community segmentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphRag;

const KEYS: [&str; 4] = ["target_tokens", "hard_max_tokens", "min_tokens", "min_mentions"];

impl Strategy for GraphRag {
    fn name(&self) -> &'static str {
        "graphrag"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Entity co-occurrence communities (GraphRAG-style, label propagation) cut into contiguous chunks"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/graphrag-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = EntityGraphParams::default();
        let params = EntityGraphParams {
            min_mentions: p.usize_in("min_mentions", Some(d.min_mentions), 1..=100)?,
            ..d
        };
        Ok(Arc::new(GraphRagChunker { sizes, params }))
    }
}

/// The graphrag strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct GraphRagChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: EntityGraphParams,
}

impl Chunker for GraphRagChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("min_mentions".into(), (self.params.min_mentions as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        Ok(lexical_chunks(input, self.sizes, |s| entity_communities(s, &self.params)))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        Some(lexical_explain(input, self.sizes, |s| entity_communities(s, &self.params), chunks))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
