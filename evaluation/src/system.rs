//! What is evaluated: a chunker (a profile at a granularity, or another
//! system's chunks) and the chunks it produced on a dataset.

use std::collections::BTreeMap;

use shared::Granularity;

use crate::external;
use crate::metrics::ChunkSpan;

/// One chunk of a system, on a dataset document.
#[derive(Debug, Clone)]
pub struct SysChunk {
    /// Spans in normalized code points.
    pub span: ChunkSpan,
    /// What the embedder would see.
    pub embed_text: String,
    /// What a reader sees.
    pub chunk_text: String,
    /// Tokens of `chunk_text`.
    pub tokens: u32,
    /// Tokens of `embed_text`.
    pub embed_tokens: u32,
    /// cl100k tokens of `chunk_text`: what it costs in a context budget.
    pub budget_tokens: u32,
}

/// What a system produced on a dataset: chunks per document and latencies.
#[derive(Debug, Clone, Default)]
pub struct SystemOutput {
    /// Chunks of every document, in document order.
    pub chunks: Vec<SysChunk>,
    /// Milliseconds per document (empty for external systems).
    pub latencies_ms: Vec<(String, f64)>,
}

/// A chunker under evaluation.
#[derive(Debug, Clone)]
pub enum System {
    /// A profile of the engine, at one of its granularities.
    Profile {
        /// The profile's name.
        profile: String,
        /// The granularity whose chunks are measured; `None`: the
        /// profile's primary one.
        granularity: Option<Granularity>,
        /// Its name in the leaderboard.
        label: String,
    },
    /// Chunks made by another system, loaded from JSONL.
    External {
        /// Its name in the leaderboard.
        name: String,
        /// Its chunks, by document name.
        chunks: BTreeMap<String, Vec<external::ExternalChunk>>,
    },
}

impl System {
    /// `profile` at its primary granularity, named as the profile.
    pub fn profile(profile: &str) -> Self {
        Self::Profile {
            profile: profile.to_owned(),
            granularity: None,
            label: profile.to_owned(),
        }
    }

    /// `profile` at `granularity`, named `profile [granularity]`.
    pub fn profile_at(profile: &str, granularity: Granularity) -> Self {
        Self::Profile {
            profile: profile.to_owned(),
            granularity: Some(granularity),
            label: format!("{profile} [{}]", granularity.as_str()),
        }
    }

    /// The leaderboard name.
    pub fn name(&self) -> &str {
        match self {
            Self::Profile { label, .. } => label,
            Self::External { name, .. } => name,
        }
    }
}
