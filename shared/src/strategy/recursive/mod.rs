//! The `recursive` strategy: LangChain's `RecursiveCharacterTextSplitter`
//! (`from_tiktoken_encoder`), ported to byte ranges (the LangChain-style factory specification, profile
//! `recursive-v1`).
//!
//! The text after front matter is split at the first separator (of
//! `separators`, in order) that occurs in it; pieces under `chunk_size`
//! tokens are merged greedily with LangChain's merge (overlap of up to
//! `chunk_overlap` tokens carried from the end of the previous chunk), and a
//! piece at or over `chunk_size` is split again with the remaining
//! separators. `split.rs` is a line-for-line port of `_split_text`,
//! `_merge_splits` and `_split_text_with_regex`; the parity test
//! (`shared/tests/langchain_parity.rs`) compares our chunk texts with
//! LangChain's own on corpus documents.
//!
//! Deliberate differences, each an improvement:
//! - every chunk has exact offsets (LangChain's `start_index` searches for the
//!   chunk text and is wrong when text repeats), an id, a type, a headings
//!   path, and passes the universal invariants;
//! - LangChain measures pieces apart and joins them, so a chunk can exceed
//!   `chunk_size`, and a piece with no separator left is emitted whole however
//!   long: ours re-measures every chunk and cuts one over `chunk_size` into
//!   token windows, so no chunk is ever over;
//! - a chunk wholly inside the previous one (nothing new) is dropped;
//! - with `stub_tokens = N` (off by default), a chunk under N tokens or of
//!   headings only (`## Design Details` before a subsection too big to join)
//!   joins the next chunk, else the previous one, when the size allows, else
//!   takes the next chunk's first tokens with it (issue 17's "no stub");
//! - with `keep_separator = false`, a chunk is the document slice from its
//!   first to its last piece (LangChain rejoins the pieces with the separator
//!   string, which differs from the text where an empty piece was dropped
//!   or the separator is a regex);
//! - with `sectioned_chunk_size` (and `sectioned_chunk_overlap`), a document
//!   with at least two headings is split at that size instead: sections are
//!   coherent units, and measured at equal context larger chunks retrieve
//!   better there while plain text wants smaller ones
//!   (`retrieval-lexical-v1`);
//! - with `wrap_aware = true`, a document whose prose lines end sentences
//!   (not hard-wrapped, [`wrap::hard_wrapped`]) is split at line breaks
//!   before sentences: a line there is a paragraph, while in hard-wrapped
//!   text a line break falls mid-sentence and sentences come first, as
//!   `separators` lists them (`retrieval-minilm-v2`).

mod params;
mod split;
pub mod wrap;

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::error::ChunkError;
use crate::explain::generic::{next_chunks, one};
use crate::explain::reason::EndReason;
use crate::markdown::parse::front_matter_len;
use crate::strategy::params::{ParamError, Params};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

pub use params::{
    KeepSeparator, RecursiveParams, DEFAULT_SEPARATORS, MARKDOWN_SEPARATORS, SENTENCE_SEPARATOR,
};
pub(crate) use params::{Separators, RECURSIVE_KEYS};
pub(crate) use split::Splitter;

/// LangChain's recursive character splitter, sized in tokens.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recursive;

impl Strategy for Recursive {
    fn name(&self) -> &'static str {
        "recursive"
    }

    /// 1.1.0: `conditional` breadcrumbs follow the per-chunk file format exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap, 64 + overlap
    /// for strategies without a minimum).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    ///
    /// 1.2.0 (issue 17): `stub_tokens` and the `<sentence>` separator, both
    /// off unless a profile names them; `retrieval-v1` and
    /// `retrieval-minilm-v1` now do (their output changed, that of profiles
    /// without them did not).
    fn version(&self) -> &'static str {
        "1.2.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's RecursiveCharacterTextSplitter in tokens, with exact offsets and a true hard max"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &RECURSIVE_KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/recursive-v1.toml"),
            include_str!("profiles/retrieval-v1.toml"),
            include_str!("profiles/retrieval-minilm-v1.toml"),
            include_str!("profiles/retrieval-lexical-v1.toml"),
            include_str!("profiles/retrieval-minilm-v2.toml"),
        ]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let params = RecursiveParams::parse(params, 1000, 200)?;
        let separators = Separators::compile(&params).map_err(ParamError)?;
        let unwrapped = match params.unwrapped_separators() {
            Some(list) if params.wrap_aware => {
                Some(Separators::compile_list(&params, &list).map_err(ParamError)?)
            }
            _ => None,
        };
        Ok(Arc::new(RecursiveChunker {
            params,
            separators,
            unwrapped,
        }))
    }
}

/// The recursive strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct RecursiveChunker {
    params: RecursiveParams,
    separators: Separators,
    /// With `wrap_aware`: the separators for text that is not hard-wrapped.
    unwrapped: Option<Separators>,
}

impl RecursiveChunker {
    /// The parameters.
    pub fn params(&self) -> &RecursiveParams {
        &self.params
    }
}

impl Chunker for RecursiveChunker {
    fn limits(&self) -> Limits {
        let (size, overlap) = self.params.sectioned.unwrap_or((0, 0));
        Limits {
            target_tokens: self.params.chunk_size,
            hard_max_tokens: self.params.chunk_size.max(size),
            min_tokens: 0,
            overlap_tokens: self.params.chunk_overlap.max(overlap),
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        self.params.to_table()
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let params = self.params.for_document(input.blocks);
        let separators = match &self.unwrapped {
            Some(unwrapped) if !wrap::hard_wrapped(text, input.blocks) => unwrapped,
            _ => &self.separators,
        };
        let splitter = Splitter::new(input.tokens, &params, separators);
        let spans = splitter.split(body..text.len());
        Ok(chunks_from_spans(input, &spans, true))
    }

    /// The separator at each boundary: the first configured one (in the
    /// order they are tried) in the whitespace between the chunk and the
    /// next; regular-expression separators are left to the generic rules.
    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        if self.params.separators_regex {
            return None;
        }
        let text = input.doc.text.as_str();
        let next = next_chunks(chunks);
        let reasons = chunks.iter().zip(&next).map(|(c, n)| {
            let Some(next) = n.map(|j| &chunks[j]) else {
                return EndReason::EndOfDocument;
            };
            let (end, start) = (c.byte_end as usize, next.byte_start as usize);
            let gap = text.get(end..start.max(end)).unwrap_or_default();
            let sep = self
                .params
                .separators
                .iter()
                .find(|s| if s.is_empty() { gap.is_empty() } else { gap.contains(s.as_str()) });
            match sep {
                Some(s) => EndReason::Separator { text: s.clone() },
                None => one(input.blocks, input.tokens, c, next, self.limits()),
            }
        });
        Some(reasons.collect())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
