//! The drop-in `llama.sentence` strategy, profile `llama.sentence`:
//! LlamaIndex's `SentenceSplitter` (llama-index-core 0.14.25), ported line
//! for line (`scripts/peers/ADAPTERS.md` section 4) on the text exactly as
//! sent (`normalization = "none"`), sizes in tokens of the profile's
//! tokenizer (LlamaIndex's default, `cl100k_base`, in the built-in
//! profile), each piece counted alone, a special token's spelling as that
//! token (`allowed_special="all"`).
//!
//! A text over `chunk_size` tokens is split into paragraphs
//! (`paragraph_separator`, three newlines by default), else sentences
//! (NLTK's untrained Punkt, [`punkt`]), else pieces of the
//! `secondary_chunking_regex`, else words (`separator`), else characters;
//! a piece still too large is split the same way. Pieces are merged
//! greedily up to `chunk_size` tokens (sums of the pieces' counts), whole
//! pieces of the previous chunk's end carried over while they fit
//! `chunk_overlap`; each chunk is stripped of whitespace.
//!
//! Intended differences: the empty document gives LlamaIndex one node with
//! empty text and us no record; a chunk of whitespace alone is not a record
//! (LlamaIndex drops those too). One character of more tokens than
//! `chunk_size` (possible only under 4) is a chunk of its own where
//! LlamaIndex raises "Single token exceeded chunk size". Separators must
//! not be empty (Python's `str.split` raises on one when it gets there);
//! `secondary_chunking_regex` is a Rust `regex` pattern (no look-around),
//! its whole matches are the pieces (Python's `findall` gives the groups of
//! a pattern that has some) and text it does not match joins the next
//! match (Python drops it: the default pattern matches everything).
//! Document metadata is not counted against the chunk size (LlamaIndex
//! subtracts the tokens of a node's metadata string; our fixtures'
//! documents have none).

use std::sync::Arc;

use regex::Regex;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::TokenizerKind;

mod hierarchical;
pub use crate::sentence::punkt;
mod split;

pub use hierarchical::{hierarchical_nodes, HierarchicalNode};
pub use split::{split_keep_separator, LlamaTokens, SentenceSplitter, Split};

/// LlamaIndex's `SentenceSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlamaSentence;

const KEYS: [&str; 5] = [
    "chunk_size",
    "chunk_overlap",
    "separator",
    "paragraph_separator",
    "secondary_chunking_regex",
];

/// LlamaIndex's default `secondary_chunking_regex`.
pub const DEFAULT_SECONDARY_REGEX: &str = "[^,.;。？！]+[,.;。？！]?|[,.;。？！]";

impl Strategy for LlamaSentence {
    fn name(&self) -> &'static str {
        "llama.sentence"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LlamaIndex's SentenceSplitter (llama-index-core 0.14.25): paragraphs, untrained Punkt sentences, words merged to a token size, with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/llama.sentence.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let chunk_size = p.usize_in("chunk_size", Some(1024), 1..=1_000_000)?;
        let chunk_overlap = p.usize_in("chunk_overlap", Some(200), 0..=1_000_000)?;
        if chunk_overlap > chunk_size {
            return Err(p.error(
                "chunk_overlap",
                format!(
                    "= {chunk_overlap} is larger than chunk_size = {chunk_size}; it must not be (LlamaIndex: Got a larger chunk overlap than chunk size, should be smaller)"
                ),
            ));
        }
        let non_empty = |key: &str, default: &str| -> Result<String, ParamError> {
            let s = p.opt_string(key)?.unwrap_or_else(|| default.to_owned());
            if s.is_empty() {
                return Err(p.error(key, "= \"\" is empty; a separator must have a character"));
            }
            Ok(s)
        };
        let separator = non_empty("separator", " ")?;
        let paragraph_separator = non_empty("paragraph_separator", "\n\n\n")?;
        let pattern = p
            .opt_string("secondary_chunking_regex")?
            .unwrap_or_else(|| DEFAULT_SECONDARY_REGEX.to_owned());
        let secondary = Regex::new(&pattern).map_err(|e| {
            p.error(
                "secondary_chunking_regex",
                format!("= {pattern:?} is not a pattern this port reads (Rust regex, no look-around): {e}"),
            )
        })?;
        Ok(Arc::new(LlamaSentenceChunker {
            splitter: SentenceSplitter {
                chunk_size,
                chunk_overlap,
                separator,
                paragraph_separator,
                secondary,
                punkt: punkt::Punkt::untrained(),
                tokens: LlamaTokens::new(TokenizerKind::Cl100kBase),
            },
        }))
    }
}

/// The llama.sentence strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LlamaSentenceChunker {
    /// The configured splitter (its counter is replaced by the profile's
    /// tokenizer when a document is chunked).
    pub splitter: SentenceSplitter,
}

impl Chunker for LlamaSentenceChunker {
    fn limits(&self) -> Limits {
        let size = self.splitter.chunk_size;
        Limits {
            target_tokens: size,
            // A chunk's own count may exceed the sum of its pieces' counts
            // LlamaIndex measures: pieces counted alone merge differently
            // joined, and a special token's spelling (one token to
            // LlamaIndex) is up to 8 ordinary ones.
            hard_max_tokens: size.saturating_mul(8).saturating_add(64),
            min_tokens: 0,
            overlap_tokens: self.splitter.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LlamaIndex SentenceSplitter",
            package: "llama-index-core 0.14.25",
            unit: Some("tokens"),
        })
    }

    fn params(&self) -> toml::Table {
        let s = &self.splitter;
        let mut t = toml::Table::new();
        t.insert("chunk_size".into(), (s.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (s.chunk_overlap as i64).into());
        t.insert("separator".into(), s.separator.clone().into());
        t.insert(
            "paragraph_separator".into(),
            s.paragraph_separator.clone().into(),
        );
        t.insert(
            "secondary_chunking_regex".into(),
            s.secondary.as_str().to_owned().into(),
        );
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let splitter = SentenceSplitter {
            tokens: LlamaTokens::new(input.profile.tokenizer),
            ..self.splitter.clone()
        };
        let spans = splitter.split_text(input.doc.text.as_str());
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests;
