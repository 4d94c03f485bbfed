//! The drop-in `langchain.token` strategy, profile `langchain.token`:
//! LangChain's `TokenTextSplitter` (langchain-text-splitters 1.1.3,
//! `split_text_on_tokens`; `scripts/peers/ADAPTERS.md` section 1) on the
//! text exactly as sent: windows of `chunk_size` tokens of the document's
//! encoding (`encoding_name`), each starting `chunk_size - chunk_overlap`
//! tokens after the one before, the last ending at the last token.
//!
//! Intended differences: LangChain decodes a window whose edge falls
//! inside a character into U+FFFD replacement characters; here a chunk is
//! a slice of the document, so a character cut by a window edge is kept
//! whole in both chunks. LangChain's default encoding, `gpt2`, is not built
//! in: `encoding_name` is `cl100k_base` (the default here) or `o200k_base`.
//! A text holding a special token's spelling (`<|endoftext|>`) is chunked
//! as ordinary text, where tiktoken's `disallowed_special="all"` raises.
//! A window of whitespace alone is not a record.

use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::chunker::Framework;
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::{ceil_char_boundary, floor_char_boundary, TokenizerKind};

/// LangChain's `TokenTextSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LangchainToken;

const KEYS: [&str; 3] = ["encoding_name", "chunk_size", "chunk_overlap"];

impl Strategy for LangchainToken {
    fn name(&self) -> &'static str {
        "langchain.token"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's TokenTextSplitter (langchain-text-splitters 1.1.3): token windows of the document's encoding, with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/langchain.token.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let encoding = match p.opt_string("encoding_name")? {
            None => TokenizerKind::Cl100kBase,
            Some(name) => TokenizerKind::parse(&name).ok_or_else(|| {
                p.error(
                    "encoding_name",
                    format!("= {name:?} is not built in; valid: \"cl100k_base\", \"o200k_base\""),
                )
            })?,
        };
        let chunk_size = p.usize_in("chunk_size", Some(4000), 1..=1_000_000)?;
        let chunk_overlap = p.usize_in("chunk_overlap", Some(200), 0..=1_000_000)?;
        if chunk_overlap >= chunk_size {
            return Err(p.error(
                "chunk_overlap",
                format!(
                    "= {chunk_overlap} must be smaller than chunk_size = {chunk_size} (LangChain: tokens_per_chunk must be greater than chunk_overlap)"
                ),
            ));
        }
        Ok(Arc::new(LangchainTokenChunker {
            encoding,
            chunk_size,
            chunk_overlap,
        }))
    }
}

/// The langchain.token strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LangchainTokenChunker {
    /// The encoding whose tokens make the windows.
    pub encoding: TokenizerKind,
    /// Tokens of a window.
    pub chunk_size: usize,
    /// Tokens a window shares with the one before.
    pub chunk_overlap: usize,
}

impl LangchainTokenChunker {
    /// The windows' byte ranges, their edges moved out to character
    /// boundaries.
    pub fn windows(&self, text: &str) -> Vec<std::ops::Range<usize>> {
        let ends = self.encoding.counter().token_ends(text);
        let offset = |k: usize| if k == 0 { 0 } else { ends[k - 1] };
        let stride = self.chunk_size - self.chunk_overlap;
        let mut spans = Vec::new();
        let mut start = 0;
        while start < ends.len() {
            let end = (start + self.chunk_size).min(ends.len());
            let span =
                floor_char_boundary(text, offset(start))..ceil_char_boundary(text, offset(end));
            if !span.is_empty() {
                spans.push(span);
            }
            if end == ends.len() {
                break;
            }
            start += stride;
        }
        spans
    }
}

impl Chunker for LangchainTokenChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.chunk_size,
            // A window's text counted alone may take a few tokens more than
            // its share of the document's encoding (a cut character kept
            // whole, pieces merged differently at its edges).
            hard_max_tokens: (self.chunk_size * 2).max(self.chunk_size + 16),
            min_tokens: 0,
            overlap_tokens: self.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LangChain TokenTextSplitter",
            package: "langchain-text-splitters 1.1.3",
            unit: Some("tokens"),
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("encoding_name".into(), self.encoding.name().into());
        t.insert("chunk_size".into(), (self.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (self.chunk_overlap as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let spans = self.windows(input.doc.text.as_str());
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn windows_stride_by_size_minus_overlap_and_keep_cut_characters_whole() {
        let c = LangchainTokenChunker {
            encoding: TokenizerKind::Cl100kBase,
            chunk_size: 3,
            chunk_overlap: 1,
        };
        // " one two three four five" is one token a word.
        let text = "zero one two three four five";
        let w: Vec<&str> = c.windows(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(w, ["zero one two", " two three four", " four five"]);
        // Every byte of an emoji run is in some window, whole characters only.
        let emoji = "😀😀😀😀😀";
        let w = c.windows(emoji);
        assert!(w.iter().all(|r| emoji.is_char_boundary(r.start) && emoji.is_char_boundary(r.end)));
        assert_eq!(w.first().map(|r| r.start), Some(0));
        assert_eq!(w.last().map(|r| r.end), Some(emoji.len()));
        assert!(c.windows("").is_empty());
    }
}
