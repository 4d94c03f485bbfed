//! The structural strategy (profiles spec-v1, enterprise-v1, docs-v1):
//! heading-aware packing of Markdown blocks under token budgets.

use crate::chunk::build::{build_chunks, BuildContext};
use crate::chunk::overlap::add_overlap;
use crate::chunk::pack::pack;
use crate::chunk::profile::Profile;
use crate::chunk::record::{Chunk, DocumentMeta};
use crate::error::ChunkError;
use crate::markdown::{parse_blocks, BlockKind};
use crate::normalize::NormalizedDocument;
use crate::strategy::Chunker;
use crate::tokens::DocumentTokens;

/// Tokens kept free under the hard max for a closing fence line (`\n` plus
/// up to three spaces and a fence: at most four tokens in cl100k/o200k).
const FENCE_RESERVE: usize = 4;

/// Heading-aware packing of Markdown blocks under token budgets (SPEC 3.3-3.5).
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
        doc: &NormalizedDocument,
        meta: &DocumentMeta,
        profile: &Profile,
    ) -> Result<Vec<Chunk>, ChunkError> {
        let text = doc.text.as_str();
        let blocks = parse_blocks(text);
        let tokens = DocumentTokens::new(profile.tokenizer.counter(), text);
        // Packing keeps a few tokens below the hard max in reserve for the
        // closing fence that a chunk cut through a nested fence receives.
        let mut packing = profile.clone();
        packing.hard_max_tokens = profile.hard_max_tokens.saturating_sub(FENCE_RESERVE);
        packing.soft_max_tokens = profile.soft_max_tokens.min(packing.hard_max_tokens);
        packing.target_tokens = profile.target_tokens.min(packing.soft_max_tokens);
        let mut pieces = pack(text, &blocks, &tokens, &packing);
        add_overlap(&mut pieces, &tokens, &packing);
        let title = meta.title.clone().or_else(|| {
            blocks
                .iter()
                .find(|b| b.kind == BlockKind::Heading { level: 1 })
                .map(|b| b.heading_text.clone())
        });
        let ctx = BuildContext {
            tokens: &tokens,
            profile,
            meta,
            chunker_version: format!("{}:{}", self.name(), self.version()),
            title,
        };
        Ok(build_chunks(pieces, &ctx))
    }
}
