//! Where a range of the document sits: the headings in effect at any
//! position ([`HeadingTrail`]), the blocks a range touches and its chunk
//! type, and ranges trimmed of whitespace. Shared by every way of building
//! pieces (block units, spans, embedder windows, the per-chunk files).

use std::ops::Range;

use crate::chunk::record::ChunkType;
use crate::markdown::{Block, BlockKind};

/// The headings in effect at any position of a document.
#[derive(Debug)]
pub(crate) struct HeadingTrail<'a> {
    blocks: &'a [Block],
    /// For each heading block (by block index), the heading stack after it
    /// (block indices, outermost first).
    paths: Vec<(usize, Vec<usize>)>,
}

impl<'a> HeadingTrail<'a> {
    /// Walks the heading blocks once.
    pub fn new(blocks: &'a [Block]) -> Self {
        let mut stack: Vec<(u8, usize)> = Vec::new();
        let mut paths = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            if let BlockKind::Heading { level } = b.kind {
                while stack.last().is_some_and(|(l, _)| *l >= level) {
                    stack.pop();
                }
                stack.push((level, i));
                paths.push((i, stack.iter().map(|(_, b)| *b).collect()));
            }
        }
        Self { blocks, paths }
    }

    /// The heading texts of stack `k`.
    fn texts(&self, k: usize) -> Vec<String> {
        self.paths[k]
            .1
            .iter()
            .map(|&b| self.blocks[b].heading_text.clone())
            .collect()
    }

    /// The path after every heading block that ends at or before `pos`.
    pub fn path_at(&self, pos: usize) -> Vec<String> {
        let n = self
            .paths
            .partition_point(|(i, _)| self.blocks[*i].range.end <= pos);
        n.checked_sub(1).map(|k| self.texts(k)).unwrap_or_default()
    }

    /// The heading stacks (block indices) after the headings that start
    /// before `end`, latest first.
    pub fn stacks_before(&self, end: usize) -> impl Iterator<Item = &[usize]> + '_ {
        let n = self
            .paths
            .partition_point(|(i, _)| self.blocks[*i].range.start < end);
        self.paths[..n]
            .iter()
            .rev()
            .map(|(_, stack)| stack.as_slice())
    }

    /// The headings path (docs/contract.md#chunk-record) of a chunk with own span `own`: the headings
    /// in effect at its first content block (not a heading, thematic break or
    /// front matter), or after its last heading for a chunk without content.
    pub fn path_of(&self, own: &Range<usize>) -> Vec<String> {
        let first = self.blocks.partition_point(|b| b.range.end <= own.start);
        let content = self.blocks[first..]
            .iter()
            .take_while(|b| b.range.start < own.end)
            .find(|b| b.kind.is_content());
        match content {
            Some(b) => self.path_at(b.range.start.max(own.start)),
            // Headings only (or a piece of one long heading): the path after
            // the last heading the chunk reaches into.
            None => {
                let n = self
                    .paths
                    .partition_point(|(i, _)| self.blocks[*i].range.start < own.end);
                n.checked_sub(1).map(|k| self.texts(k)).unwrap_or_default()
            }
        }
    }
}

/// Indices of the first and last block touching `own` (0, 0 when none).
pub(crate) fn block_span(blocks: &[Block], own: &Range<usize>) -> (usize, usize) {
    let first = blocks.partition_point(|b| b.range.end <= own.start);
    let end = blocks.partition_point(|b| b.range.start < own.end);
    if first < end {
        (first, end - 1)
    } else {
        let i = first.min(blocks.len().saturating_sub(1));
        (i, i)
    }
}

/// The chunk type of `own` by the content blocks it touches: one kind gives
/// that type, several give `mixed`.
/// Whether `own` starts at a heading block.
pub(crate) fn starts_with_heading(blocks: &[Block], own: &Range<usize>) -> bool {
    blocks
        .get(blocks.partition_point(|b| b.range.end <= own.start))
        .is_some_and(|b| b.range.start <= own.start && matches!(b.kind, BlockKind::Heading { .. }))
}

pub(crate) fn chunk_type_of(blocks: &[Block], own: &Range<usize>) -> ChunkType {
    let (first, last) = block_span(blocks, own);
    let mut kind: Option<ChunkType> = None;
    for b in blocks.get(first..=last).unwrap_or(&[]) {
        let k = match b.kind {
            BlockKind::Table => ChunkType::Table,
            BlockKind::Code { .. } => ChunkType::Code,
            BlockKind::List { .. } => ChunkType::List,
            BlockKind::Quote => ChunkType::Quote,
            BlockKind::Paragraph | BlockKind::Html | BlockKind::Other => ChunkType::Paragraph,
            BlockKind::Heading { .. } | BlockKind::ThematicBreak | BlockKind::FrontMatter => {
                continue
            }
        };
        match kind {
            None => kind = Some(k),
            Some(prev) if prev != k => return ChunkType::Mixed,
            Some(_) => {}
        }
    }
    kind.unwrap_or(ChunkType::Paragraph)
}

/// Whether every block `own` touches is a thematic break.
pub(crate) fn only_breaks(blocks: &[Block], own: &Range<usize>) -> bool {
    let (first, last) = block_span(blocks, own);
    let touched = blocks.get(first..=last).unwrap_or(&[]);
    !touched.is_empty()
        && touched.iter().all(|b| {
            b.kind == BlockKind::ThematicBreak
                && b.range.start <= own.start
                && own.end <= b.range.end
        })
}

/// `r` without leading and trailing whitespace.
pub(crate) fn trim_range(text: &str, r: Range<usize>) -> Range<usize> {
    let s = &text[r.clone()];
    let start = r.start + (s.len() - s.trim_start().len());
    let end = r.end - (s.len() - s.trim_end().len());
    start..end.max(start)
}
