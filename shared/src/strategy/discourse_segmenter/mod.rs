//! The experimental `discourse_segmenter` strategy, profile
//! `discourse_segmenter-v1`: [`crate::segment::discourse()`] (boundaries
//! before sentences opening with a discourse cue whose confidence reaches
//! `threshold`; English and Russian lexicon in
//! [`crate::segment::discourse::CUES`]) run on the sentences and blocks of
//! each section ([`crate::chunk::topic`] units), its boundaries closing
//! chunks once they hold `min_tokens`; headings are hard stops, runs over
//! the hard max are cut where word overlap is weakest.

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::topic::{lexical_chunks, PackLimits};
use crate::chunk::topic_explain::lexical_explain;
use crate::explain::generic::next_chunks;
use crate::explain::reason::EndReason;
use crate::error::ChunkError;
use crate::segment::{discourse, DiscourseParams};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Discourse-cue segmentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscourseSegmenter;

const KEYS: [&str; 4] = ["target_tokens", "hard_max_tokens", "min_tokens", "threshold"];

impl Strategy for DiscourseSegmenter {
    fn name(&self) -> &'static str {
        "discourse_segmenter"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Discourse cues (topic shifts, enumerations, conclusions, connectives; English and Russian) at sentence starts"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/discourse_segmenter-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (350, 520, 120))?;
        let d = DiscourseParams::default();
        let params = DiscourseParams {
            threshold: p.f64_in("threshold", d.threshold, 0.0..=1.0)?,
        };
        Ok(Arc::new(DiscourseChunker { sizes, params }))
    }
}

/// The discourse_segmenter strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct DiscourseChunker {
    sizes: PackLimits,
    /// The segmenter's parameters.
    pub params: DiscourseParams,
}

impl Chunker for DiscourseChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("threshold".into(), self.params.threshold.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        Ok(lexical_chunks(input, self.sizes, |s| discourse(s, &self.params)))
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let mut reasons = lexical_explain(input, self.sizes, |s| discourse(s, &self.params), chunks);
        // A boundary the segmenter chose opens with a cue: name it.
        for (r, n) in reasons.iter_mut().zip(next_chunks(chunks)) {
            let next = n.and_then(|j| chunks.get(j));
            let opening = next.and_then(|c| input.doc.text.get(c.byte_start as usize..c.byte_end as usize));
            if let (EndReason::TopicBoundary { cue: c, confidence, .. }, Some(found)) =
                (r, opening.and_then(crate::segment::discourse::cue))
            {
                *c = Some(found.phrase.to_owned());
                *confidence = Some(found.confidence);
            }
        }
        Some(reasons)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
