//! The layout heuristic strategy (profile `layout-v1`): Markdown converted
//! from PDF, DOCX or slides that lost its headings. It infers the structure
//! the layout implies, then packs like `structural`:
//!
//! - `pages.rs`: page markers (`<!-- page N -->`, "Page N of M", page
//!   numbers in sequence) and running headers and footers (a short line on
//!   three or more pages): the chunks' `page_start`/`page_end`, and lines
//!   left out of `embed_text`;
//! - `infer.rs`: pseudo-headings (bold-only, ALL CAPS, numbered or short
//!   lines standing alone) become heading blocks of a derived block list
//!   (same byte ranges), which structural's packer reads, so the inferred
//!   path is each chunk's `headings_path`;
//! - `lines.rs`: a text export's pages that run titles and furniture into
//!   one paragraph are split at those lines first;
//! - line-wrapped paragraphs are joined for sentence splitting only: the
//!   packer splits a same-length copy of the text whose wrapped lines are
//!   joined by spaces; the chunk text stays the source text.
//!
//! Running headers and footers stay in `chunk_text`: an own span is one
//! slice of the document, and validation's coverage rule skips only front
//! matter and thematic breaks, so furniture in the middle of a chunk cannot
//! leave its text. It leaves its `embed_text` instead.

mod annotated;
mod infer;
mod lines;
mod pages;

use std::sync::Arc;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::explain::generic::{next_chunks, one};
use crate::explain::reason::EndReason;
use crate::markdown::{Block, BlockKind};
use crate::normalize::NormalizedDocument;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::structural::{Overlap, StructuralChunker, StructuralParams};

use infer::{infer, with_headings};
use pages::{analyse, Pages};

/// Structure inferred from the layout of converted documents, packed like
/// `structural`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LayoutHeuristic;

impl Strategy for LayoutHeuristic {
    fn name(&self) -> &'static str {
        "layout_heuristic"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "converted PDF/DOCX Markdown: inferred headings, page numbers, running headers kept out of embed text"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &[
            "target_tokens",
            "soft_max_tokens",
            "hard_max_tokens",
            "min_tokens",
            "overlap",
        ]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/layout-v1.toml")]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let params = StructuralParams::parse(params)?;
        Ok(Arc::new(LayoutChunker::new(params, Mode::Heuristic)))
    }
}

/// Where the structure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inferred from the layout of the text (`layout_heuristic`).
    Heuristic,
    /// Only from the layout annotations a converter left (`layout_aware`):
    /// no inferred headings, furniture only where annotated, and every page
    /// starts a chunk.
    Annotations,
    /// As `Annotations`, but pages only number the chunks (`grobid`: a
    /// paper's sections run across pages).
    PageNumbers,
}

/// The layout heuristic strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LayoutChunker {
    inner: StructuralChunker,
    params: StructuralParams,
    mode: Mode,
}

impl LayoutChunker {
    /// The strategy with `params`, its structure found as `mode` says.
    pub fn new(params: StructuralParams, mode: Mode) -> Self {
        Self {
            inner: StructuralChunker::new(params.clone()),
            params,
            mode,
        }
    }
}

/// What the analysis of one document found.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Page furniture and page starts.
    pub pages: Pages,
    /// The blocks with the inferred headings as heading blocks.
    pub blocks: Vec<Block>,
}

/// Analyses `text` with its `blocks` and the places of its form feeds.
pub(crate) fn layout(text: &str, blocks: &[Block], breaks: &[usize], mode: Mode) -> Layout {
    if mode != Mode::Heuristic {
        let (pages, blocks) = annotated::layout(text, blocks, breaks, mode == Mode::Annotations);
        return Layout { pages, blocks };
    }
    let blocks = &lines::split_wrapped(text, blocks, breaks);
    let pages = analyse(text, blocks, breaks);
    let headings = infer(text, blocks, &pages.furniture);
    let blocks = with_headings(blocks, &headings, &pages.furniture);
    Layout { pages, blocks }
}

/// `text` with the line feeds inside plain paragraphs replaced by spaces
/// (same length, same offsets): a wrapped line that ends with a period is
/// then no sentence end unless the next line starts like a sentence.
fn joined_lines(text: &str, blocks: &[Block], furniture: &[usize]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for (i, b) in blocks.iter().enumerate() {
        if b.kind != BlockKind::Paragraph || furniture.binary_search(&i).is_ok() {
            continue;
        }
        for p in b.range.clone() {
            let lone = bytes[p] == b'\n'
                && p > b.range.start
                && bytes[p - 1] != b'\n'
                && bytes.get(p + 1).is_some_and(|&n| n != b'\n');
            if lone {
                bytes[p] = b' ';
            }
        }
    }
    // Only ASCII line feeds became ASCII spaces: still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
}

/// The byte ranges of the blocks that are furniture.
fn furniture_ranges(layout: &Layout) -> Vec<std::ops::Range<usize>> {
    layout
        .pages
        .furniture
        .iter()
        .map(|&i| layout.blocks[i].range.clone())
        .collect()
}

/// `embed_text` without the furniture in the chunk's document text (own span
/// and an overlap prefix copied from the text before it); unchanged when
/// nothing would be left.
fn without_furniture(c: &Chunk, text: &str, furniture: &[std::ops::Range<usize>]) -> Option<String> {
    let prefix = c.prefix();
    let end = c.byte_end as usize;
    let start = (c.byte_start as usize).checked_sub(prefix.len())?;
    if text.get(start..c.byte_start as usize) != Some(prefix) {
        return None;
    }
    // Furniture ranges are sorted and disjoint (blocks in order).
    let first = furniture.partition_point(|r| r.start < start);
    let inside: Vec<&std::ops::Range<usize>> = furniture[first..]
        .iter()
        .take_while(|r| r.end <= end)
        .collect();
    if inside.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut pos = start;
    for r in inside {
        parts.push(&text[pos..r.start]);
        pos = r.end;
    }
    parts.push(&text[pos..end]);
    let kept: Vec<&str> = parts
        .iter()
        .map(|p| p.trim_matches('\n'))
        .filter(|p| !p.trim().is_empty())
        .collect();
    if kept.is_empty() {
        return None;
    }
    let crumb = c.embed_text.strip_suffix(c.chunk_text.as_str())?;
    Some(format!("{crumb}{}{}", kept.join("\n\n"), c.suffix()))
}

/// The first and last bytes of the chunk's own span outside furniture.
fn content_bounds(c: &Chunk, layout: &Layout) -> (usize, usize) {
    let (start, end) = (c.byte_start as usize, c.byte_end as usize);
    let blocks = &layout.blocks;
    let first = blocks.partition_point(|b| b.range.end <= start);
    let content: Vec<usize> = (first..blocks.len())
        .take_while(|&i| blocks[i].range.start < end)
        .filter(|i| layout.pages.furniture.binary_search(i).is_err())
        .collect();
    match (content.first(), content.last()) {
        (Some(&a), Some(&z)) => (
            blocks[a].range.start.max(start),
            blocks[z].range.end.min(end).saturating_sub(1).max(start),
        ),
        _ => (start, end.saturating_sub(1)),
    }
}

impl Chunker for LayoutChunker {
    fn limits(&self) -> Limits {
        self.inner.limits()
    }

    fn rules(&self) -> Rules {
        self.inner.rules()
    }

    fn params(&self) -> toml::Table {
        self.inner.params()
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let layout = layout(text, input.blocks, &input.doc.page_breaks, self.mode);
        let joined = NormalizedDocument {
            text: joined_lines(text, &layout.blocks, &layout.pages.furniture),
            page_breaks: input.doc.page_breaks.clone(),
        };
        let planning = ChunkInput {
            doc: &joined,
            blocks: &layout.blocks,
            ..*input
        };
        let pieces = self.inner.plan(&planning);
        let building = ChunkInput {
            blocks: &layout.blocks,
            ..*input
        };
        let mut ctx = BuildContext::new(&building, document_title(input.meta, &layout.blocks));
        if matches!(self.params.overlap, Overlap::Sentences(_)) {
            ctx.overlap_tokens = None;
        }
        let mut chunks = build_chunks(pieces, &ctx);
        let furniture = furniture_ranges(&layout);
        let window = input.profile.embedder.as_ref().and_then(|w| w.counter());
        for c in &mut chunks {
            if !layout.pages.starts.is_empty() {
                let (a, z) = content_bounds(c, &layout);
                c.page_start = layout.pages.page_at(a);
                c.page_end = layout.pages.page_at(z);
            }
            if let Some(embed) = without_furniture(c, text, &furniture) {
                if let (Some(w), Some(_)) = (window, c.embed_token_count) {
                    c.embed_token_count = Some(u32::try_from(w.count(&embed)).unwrap_or(u32::MAX));
                }
                c.embed_text = embed;
            }
        }
        Ok(chunks)
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let layout = layout(&input.doc.text, input.blocks, &input.doc.page_breaks, self.mode);
        let next = next_chunks(chunks);
        let limits = self.limits();
        let reasons = chunks.iter().zip(&next).map(|(c, n)| {
            let Some(next) = n.map(|j| &chunks[j]) else {
                return EndReason::EndOfDocument;
            };
            match one(&layout.blocks, input.tokens, c, next, limits) {
                // A heading the source has is a heading; one only the
                // layout implies is inferred.
                EndReason::Heading { level, text }
                    if !matches!(one(input.blocks, input.tokens, c, next, limits), EndReason::Heading { .. }) =>
                {
                    match self.mode {
                        // layout_aware's only added headings start pages.
                        Mode::Annotations | Mode::PageNumbers => EndReason::PageBreak {
                            page: next.page_start.unwrap_or_default(),
                        },
                        Mode::Heuristic => EndReason::InferredHeading { text, level },
                    }
                }
                EndReason::Paragraph | EndReason::Sentence
                    if next.page_start.is_some() && next.page_start > c.page_end =>
                {
                    EndReason::PageBreak {
                        page: next.page_start.unwrap_or_default(),
                    }
                }
                r => r,
            }
        });
        Some(reasons.collect())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::markdown::parse_blocks;

    #[test]
    fn wrapped_lines_are_joined_in_a_copy_of_the_same_length() {
        let text = "A para-\ngraph wrapped\nover lines.\n\n- a list\n- stays\n";
        let joined = joined_lines(text, &parse_blocks(text), &[]);
        assert_eq!(joined.len(), text.len());
        assert_eq!(
            joined,
            "A para- graph wrapped over lines.\n\n- a list\n- stays\n"
        );
    }

    #[test]
    fn the_analysis_marks_headings_and_furniture() {
        let text = "ACME | Report\n\n**Plan**\n\nWe plan to plan.\n\nPage 1 of 3\n\nACME | Report\n\nMore text here.\n\nPage 2 of 3\n\nACME | Report\n\nThe end.\n\nPage 3 of 3\n";
        let blocks = parse_blocks(text);
        let l = layout(text, &blocks, &[], Mode::Heuristic);
        assert_eq!(l.pages.furniture.len(), 6);
        // The running header before the first heading copies it.
        assert_eq!(l.blocks[0].kind, BlockKind::Heading { level: 1 });
        assert_eq!(l.blocks[1].heading_text, "Plan");
    }
}
