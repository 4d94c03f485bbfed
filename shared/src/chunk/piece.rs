//! A planned chunk: spans and extra text, before ids and metadata.

use std::ops::Range;

use crate::chunk::record::ChunkType;

/// Text a chunk carries in front of its own span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// Nothing: the chunk text starts at the own span.
    None,
    /// Overlap: the document text from this byte offset up to the own span
    /// (the tail of the previous chunk and the whitespace after it).
    Overlap(usize),
    /// Synthetic text: a repeated table header or a re-opened code fence.
    Text(String),
}

/// One planned chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Kind of content.
    pub chunk_type: ChunkType,
    /// Own span (bytes of the normalized document).
    pub own: Range<usize>,
    /// What precedes the own span in the chunk text.
    pub prefix: Prefix,
    /// Closing fence text after the own span (empty if none).
    pub suffix: String,
    /// First and last block index.
    pub blocks: (usize, usize),
    /// Headings in effect.
    pub headings: Vec<String>,
    /// Serialized position inside a split block, e.g. `table[2] rows 41-80`.
    pub detail: Option<String>,
    /// The own span starts with heading lines.
    pub starts_with_heading: bool,
    /// Start of the trailing run of paragraph text that overlap may copy from
    /// (None when the piece ends with a list, quote, table or code).
    pub overlap_source: Option<usize>,
}

impl Piece {
    /// The text in front of the own span (`text`: the normalized document).
    pub fn prefix_text<'a>(&'a self, text: &'a str) -> &'a str {
        match &self.prefix {
            Prefix::None => "",
            Prefix::Overlap(start) => &text[*start..self.own.start],
            Prefix::Text(t) => t,
        }
    }

    /// Whether this is prose that overlap may join (docs/contract.md#size-policy).
    pub fn is_prose(&self) -> bool {
        matches!(self.chunk_type, ChunkType::Paragraph | ChunkType::Mixed)
    }
}
