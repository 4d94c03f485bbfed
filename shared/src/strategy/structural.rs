//! The structural strategy (profiles spec-v1, enterprise-v1, docs-v1).

use crate::chunk::profile::Profile;
use crate::chunk::record::{Chunk, DocumentMeta};
use crate::error::ChunkError;
use crate::normalize::NormalizedDocument;
use crate::strategy::Chunker;

/// Heading-aware packing of Markdown blocks under token budgets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Structural;

impl Chunker for Structural {
    fn name(&self) -> &'static str {
        "structural"
    }
    fn version(&self) -> &'static str {
        "1.0.0"
    }
    fn chunk(
        &self,
        _doc: &NormalizedDocument,
        _meta: &DocumentMeta,
        _profile: &Profile,
    ) -> Result<Vec<Chunk>, ChunkError> {
        Ok(Vec::new())
    }
}
