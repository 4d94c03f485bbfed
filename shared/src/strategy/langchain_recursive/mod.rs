//! The drop-in `langchain.recursive` strategy, profile `langchain.recursive`:
//! LangChain's `RecursiveCharacterTextSplitter` (langchain-text-splitters
//! 1.1.3, `character.py` `_split_text`), called as its constructor is,
//! lengths in characters (code points, Python's `len`), on the text exactly
//! as sent. With `encoding_name`, lengths are that encoding's token counts,
//! as `RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name=...)`
//! gives them.
//!
//! The first separator (in order) that occurs in the text splits it; pieces
//! under `chunk_size` are merged greedily with `chunk_overlap`
//! (`_merge_splits`, as `langchain.character`), a longer piece is split
//! again with the remaining separators, or kept whole when none is left.
//!
//! This is the plain LangChain splitter. The `recursive` strategy
//! (`recursive-v1`) is our tuned relative: token lengths, normalized text,
//! no chunk over `chunk_size`. Intended differences: a chunk is the
//! document's slice from its first to its last piece (where LangChain
//! dropped an empty piece between two separators and rejoined with one, the
//! slice keeps both); separator patterns are Rust `regex` (no look-around);
//! a special token's spelling counts as ordinary text with `encoding_name`
//! (tiktoken raises); a chunk of whitespace alone is not a record.

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::langchain_character::split::merge_by;
use crate::strategy::langchain_character::{KeepSeparator, Pieces};
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::pystr::py_strip;
use crate::tokens::{TokenCounter, TokenizerKind};

/// LangChain's `RecursiveCharacterTextSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LangchainRecursive;

const KEYS: [&str; 7] = [
    "separators",
    "keep_separator",
    "is_separator_regex",
    "chunk_size",
    "chunk_overlap",
    "strip_whitespace",
    "encoding_name",
];

const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];

impl Strategy for LangchainRecursive {
    fn name(&self) -> &'static str {
        "langchain.recursive"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's RecursiveCharacterTextSplitter (langchain-text-splitters 1.1.3): its chunk texts, in characters (or an encoding's tokens), with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/langchain.recursive.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let separators = match p.value("separators") {
            None => DEFAULT_SEPARATORS.iter().map(|s| (*s).to_owned()).collect(),
            Some(_) => p.strings("separators")?,
        };
        if separators.is_empty() {
            return Err(p.error("separators", "is empty; give at least one (\"\" splits into characters)"));
        }
        let is_regex = p.bool_or("is_separator_regex", false)?;
        let keep = KeepSeparator::read(p, KeepSeparator::Start)?;
        let chunk_size = p.usize_in("chunk_size", Some(4000), 1..=10_000_000)?;
        let chunk_overlap = p.usize_in("chunk_overlap", Some(200), 0..=10_000_000)?;
        if chunk_overlap > chunk_size {
            return Err(p.error(
                "chunk_overlap",
                format!("= {chunk_overlap} is larger than chunk_size = {chunk_size}; it must not be"),
            ));
        }
        let strip = p.bool_or("strip_whitespace", true)?;
        let encoding = match p.opt_string("encoding_name")? {
            None => None,
            Some(name) => Some(TokenizerKind::parse(&name).ok_or_else(|| {
                p.error(
                    "encoding_name",
                    format!("= {name:?} is not built in; valid: \"cl100k_base\", \"o200k_base\""),
                )
            })?),
        };
        let pieces = separators
            .iter()
            .map(|s| Pieces::new(s, is_regex, keep).map_err(|e| p.error("separators", e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(LangchainRecursiveChunker {
            separators,
            is_regex,
            keep,
            chunk_size,
            chunk_overlap,
            strip,
            encoding,
            pieces,
        }))
    }
}

/// The langchain.recursive strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LangchainRecursiveChunker {
    separators: Vec<String>,
    is_regex: bool,
    keep: KeepSeparator,
    /// The most characters (or tokens) of a merged chunk.
    pub chunk_size: usize,
    /// The most characters (or tokens) carried over from the chunk before.
    pub chunk_overlap: usize,
    strip: bool,
    /// Token lengths of this encoding instead of characters.
    pub encoding: Option<TokenizerKind>,
    pieces: Vec<Pieces>,
}

impl LangchainRecursiveChunker {
    /// The chunks' byte ranges (`_split_text(text, separators)`).
    pub fn spans(&self, text: &str) -> Vec<Range<usize>> {
        let counter = self.encoding.map(TokenizerKind::counter);
        let len = |s: &str| match &counter {
            Some(c) => c.count(s),
            None => s.chars().count(),
        };
        let mut out = Vec::new();
        self.split(text, 0..text.len(), 0, &len, &mut out);
        out
    }

    fn split(
        &self,
        text: &str,
        range: Range<usize>,
        first: usize,
        len: &dyn Fn(&str) -> usize,
        out: &mut Vec<Range<usize>>,
    ) {
        let part = &text[range.clone()];
        // The first separator that occurs (the empty one always does, and
        // leaves none after it).
        let last = self.pieces.len() - 1;
        let chosen = (first..=last)
            .find(|&i| self.separators[i].is_empty() || self.pieces[i].occurs_in(part))
            .unwrap_or(last);
        let rest = if self.separators[chosen].is_empty() {
            None
        } else {
            Some(chosen + 1).filter(|&r| r <= last)
        };
        let pieces = &self.pieces[chosen];
        let splits: Vec<Range<usize>> = pieces
            .split(part)
            .into_iter()
            .map(|r| range.start + r.start..range.start + r.end)
            .collect();
        let sizes = (self.chunk_size, self.chunk_overlap);
        let mut good: Vec<Range<usize>> = Vec::new();
        for s in splits {
            if len(&text[s.clone()]) < self.chunk_size {
                good.push(s);
                continue;
            }
            if !good.is_empty() {
                out.extend(merge_by(text, &good, pieces.merge_separator(), sizes, self.strip, len));
                good.clear();
            }
            match rest {
                // Kept whole, as LangChain appends it (not stripped there;
                // a record never starts or ends with whitespace anyway).
                None => out.push(if self.strip { py_strip(text, s.clone()) } else { s }),
                Some(r) => self.split(text, s, r, len, out),
            }
        }
        if !good.is_empty() {
            out.extend(merge_by(text, &good, pieces.merge_separator(), sizes, self.strip, len));
        }
    }
}

impl Chunker for LangchainRecursiveChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: if self.encoding.is_some() {
                self.chunk_size
            } else {
                NO_TOKEN_LIMIT
            },
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
            call: if self.encoding.is_some() {
                "LangChain RecursiveCharacterTextSplitter.from_tiktoken_encoder"
            } else {
                "LangChain RecursiveCharacterTextSplitter"
            },
            package: "langchain-text-splitters 1.1.3",
            unit: Some(if self.encoding.is_some() { "tokens" } else { "chars" }),
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let seps: Vec<toml::Value> = self.separators.iter().map(|s| s.clone().into()).collect();
        t.insert("separators".into(), seps.into());
        t.insert("keep_separator".into(), self.keep.to_toml());
        t.insert("is_separator_regex".into(), self.is_regex.into());
        t.insert("chunk_size".into(), (self.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (self.chunk_overlap as i64).into());
        t.insert("strip_whitespace".into(), self.strip.into());
        if let Some(e) = self.encoding {
            t.insert("encoding_name".into(), e.name().into());
        }
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let spans = self.spans(input.doc.text.as_str());
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

    fn chunker(size: usize, overlap: usize) -> LangchainRecursiveChunker {
        let separators: Vec<String> = DEFAULT_SEPARATORS.iter().map(|s| (*s).to_owned()).collect();
        let pieces = separators
            .iter()
            .map(|s| Pieces::new(s, false, KeepSeparator::Start).unwrap())
            .collect();
        LangchainRecursiveChunker {
            separators,
            is_regex: false,
            keep: KeepSeparator::Start,
            chunk_size: size,
            chunk_overlap: overlap,
            strip: true,
            encoding: None,
            pieces,
        }
    }

    #[test]
    fn long_pieces_are_split_again_with_the_next_separators() {
        // LangChain: RecursiveCharacterTextSplitter(chunk_size=10,
        // chunk_overlap=0).split_text("aaa bbb\n\nccc ddd eee fff")
        // == ['aaa bbb', 'ccc ddd', 'eee fff'].
        let text = "aaa bbb\n\nccc ddd eee fff";
        let c = chunker(10, 0);
        let got: Vec<&str> = c.spans(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, ["aaa bbb", "ccc ddd", "eee fff"]);
        // No separator left: characters; never an empty chunk.
        let text = "abcdefghij";
        let got: Vec<&str> = chunker(4, 1).spans(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, ["abcd", "defg", "ghij"]);
        assert!(chunker(4, 0).spans("").is_empty());
    }
}
