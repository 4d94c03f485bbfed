//! The `document` strategy: one chunk per document, the head of the
//! document up to `max_tokens` (ending at a sentence end when one lies in
//! the last 15%, else at a word start), for document-level retrieval (seed
//! 001 "document" granularity). The one granularity exempt from "nothing
//! lost": the rest of a long document is left to the finer granularities of
//! a multi-granularity profile (`hierarchy-v1`). Profile `document-v1`.

use std::sync::Arc;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::granular::assign_granularities;
use crate::chunk::record::Chunk;
use crate::chunk::trail::{trim_range, HeadingTrail};
use crate::chunk::unit::plain_piece;
use crate::error::ChunkError;
use crate::markdown::parse::front_matter_len;
use crate::sentence::sentence_spans;
use crate::strategy::params::{ParamError, Params, MAX_HARD_MAX};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// The head of the document as one chunk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Document;

impl Strategy for Document {
    fn name(&self) -> &'static str {
        "document"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "one chunk per document: its head up to max_tokens (document-level retrieval)"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &["max_tokens"]
    }

    fn fixed_granularity(&self) -> Option<crate::chunk::record::Granularity> {
        Some(crate::chunk::record::Granularity::Document)
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/document-v1.toml"),
            include_str!("profiles/hierarchy-v1.toml"),
        ]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let max_tokens = p.usize_in("max_tokens", Some(1024), 32..=MAX_HARD_MAX)?;
        Ok(Arc::new(DocumentChunker { max_tokens }))
    }
}

/// The document strategy configured by one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentChunker {
    /// The chunk's size, at most.
    pub max_tokens: usize,
}

impl Chunker for DocumentChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.max_tokens,
            hard_max_tokens: self.max_tokens,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("max_tokens".into(), (self.max_tokens as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let tokens = input.tokens;
        let body = trim_range(text, front_matter_len(text)..text.len());
        if body.is_empty() {
            return Ok(Vec::new());
        }
        let mut end = tokens.window_end(body.start, body.end, self.max_tokens);
        if end < body.end {
            // A sentence end in the last 15% of the head, if there is one.
            let floor = tokens.window_end(body.start, end, self.max_tokens * 85 / 100);
            let sentences = sentence_spans(&text[body.start..end]);
            if let Some(e) = sentences
                .iter()
                .map(|s| body.start + s.start + text[body.start + s.start..body.start + s.end].trim_end().len())
                .rfind(|&e| e >= floor && e > body.start)
            {
                end = e;
            }
        }
        let mut own = trim_range(text, body.start..end);
        // Whitespace can share a token with what precedes it: shorten until
        // the trimmed head fits.
        while !own.is_empty() && tokens.exceeds(own.clone(), self.max_tokens) {
            own = trim_range(text, own.start..tokens.window_end(own.start, own.end, self.max_tokens - 1));
        }
        if own.is_empty() {
            return Ok(Vec::new());
        }
        let trail = HeadingTrail::new(input.blocks);
        let mut ctx = BuildContext::new(input, document_title(input.meta, input.blocks));
        ctx.close_fences = false;
        let mut chunks = build_chunks(vec![plain_piece(input.blocks, &trail, own)], &ctx);
        let g = input.profile.granularity;
        assign_granularities(&mut chunks, |_| g);
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
