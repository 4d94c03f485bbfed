//! The drop-in `langchain.character` strategy, profile `langchain.character`:
//! LangChain's `CharacterTextSplitter` (langchain-text-splitters 1.1.3),
//! ported line for line (`scripts/peers/ADAPTERS.md` section 2), on the text
//! exactly as sent (`normalization = "none"`), lengths in characters (code
//! points, Python's `len`).
//!
//! The text is split at `separator` (a literal, or a regular expression with
//! `is_separator_regex`), empty pieces dropped, the separator kept at the
//! start or end of a piece with `keep_separator`; pieces are merged greedily
//! while the joined length stays within `chunk_size`, whole pieces of the
//! previous chunk's end carried over while they fit `chunk_overlap`; each
//! chunk stripped of whitespace (`strip_whitespace`). A piece longer than
//! `chunk_size` is a chunk of its own, as in LangChain.
//!
//! Intended differences: a chunk is the document's slice from its first to
//! its last piece, so where LangChain dropped an empty piece between two
//! separators (`a\n\n\n\nb`) and rejoined with one, the slice keeps both;
//! separator patterns are Rust `regex` (no look-around: such a pattern is
//! refused); a chunk of whitespace alone is not a record.

use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::chunker::Framework;
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::strategy::params::{ParamError, Params};

pub(crate) mod split;

pub use split::{KeepSeparator, Pieces};

/// LangChain's `CharacterTextSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LangchainCharacter;

const KEYS: [&str; 6] = [
    "separator",
    "is_separator_regex",
    "keep_separator",
    "chunk_size",
    "chunk_overlap",
    "strip_whitespace",
];


impl Strategy for LangchainCharacter {
    fn name(&self) -> &'static str {
        "langchain.character"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's CharacterTextSplitter (langchain-text-splitters 1.1.3): its chunk texts, in characters, with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/langchain.character.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let separator = p.opt_string("separator")?.unwrap_or_else(|| "\n\n".to_owned());
        let is_regex = p.bool_or("is_separator_regex", false)?;
        let keep = KeepSeparator::read(p, KeepSeparator::No)?;
        let chunk_size = p.usize_in("chunk_size", Some(4000), 1..=10_000_000)?;
        let chunk_overlap = p.usize_in("chunk_overlap", Some(200), 0..=10_000_000)?;
        if chunk_overlap > chunk_size {
            return Err(p.error(
                "chunk_overlap",
                format!("= {chunk_overlap} is larger than chunk_size = {chunk_size}; it must not be"),
            ));
        }
        let strip = p.bool_or("strip_whitespace", true)?;
        let pieces = Pieces::new(&separator, is_regex, keep)
            .map_err(|e| p.error("separator", e))?;
        Ok(Arc::new(LangchainCharacterChunker {
            separator,
            is_regex,
            keep,
            chunk_size,
            chunk_overlap,
            strip,
            pieces,
        }))
    }
}

/// The langchain.character strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LangchainCharacterChunker {
    separator: String,
    is_regex: bool,
    keep: KeepSeparator,
    /// The most characters of a chunk (a longer piece stays whole).
    pub chunk_size: usize,
    /// The most characters carried over from the previous chunk.
    pub chunk_overlap: usize,
    strip: bool,
    pieces: Pieces,
}

impl Chunker for LangchainCharacterChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.chunk_size,
            hard_max_tokens: NO_TOKEN_LIMIT,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LangChain CharacterTextSplitter",
            package: "langchain-text-splitters 1.1.3",
            unit: Some("chars"),
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("separator".into(), self.separator.clone().into());
        t.insert("is_separator_regex".into(), self.is_regex.into());
        t.insert("keep_separator".into(), self.keep.to_toml());
        t.insert("chunk_size".into(), (self.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (self.chunk_overlap as i64).into());
        t.insert("strip_whitespace".into(), self.strip.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let pieces = self.pieces.split(text);
        let spans = split::merge(
            text,
            &pieces,
            self.pieces.merge_separator(),
            (self.chunk_size, self.chunk_overlap),
            self.strip,
        );
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
