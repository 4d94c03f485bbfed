//! The mdast node types inside a chunk, and the heading depths and slugs of
//! its heading path.

use crate::chunk::trail::{block_span, HeadingTrail};
use crate::markdown::anchors::{github_slug, Anchor};
use crate::markdown::{Block, BlockKind};

/// The mdast name of a block kind.
pub(super) fn node_name(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Heading { .. } => "heading",
        BlockKind::Paragraph | BlockKind::Other => "paragraph",
        BlockKind::List { .. } => "list",
        BlockKind::Table => "table",
        BlockKind::Code { .. } => "code",
        BlockKind::Quote => "blockquote",
        BlockKind::Html => "html",
        BlockKind::ThematicBreak => "thematicBreak",
        BlockKind::FrontMatter => "yaml",
    }
}

/// The mdast names of the node types inside the own span, in order of
/// first appearance: the top-level blocks it touches, then the blocks
/// nested in them that start inside it (a code block in a list item or
/// between the tags of an HTML block, a table in a quote, `<pre>` in
/// HTML, ...).
pub(super) fn node_types(
    blocks: &[Block],
    nested: &[(usize, BlockKind)],
    own: &std::ops::Range<usize>,
) -> Vec<&'static str> {
    let (first, last) = block_span(blocks, own);
    let mut found: Vec<(usize, &'static str)> = blocks
        .get(first..=last)
        .unwrap_or(&[])
        .iter()
        .map(|b| (b.range.start.max(own.start), node_name(b.kind)))
        .collect();
    let from = nested.partition_point(|(at, _)| *at < own.start);
    found.extend(
        nested[from..]
            .iter()
            .take_while(|(at, _)| *at < own.end)
            .map(|&(at, kind)| (at, node_name(kind))),
    );
    found.sort_by_key(|(at, _)| *at);
    let mut out: Vec<&'static str> = Vec::new();
    for (_, name) in found {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Depths and slugs of a chunk's heading path.
#[derive(Debug)]
pub(super) struct Header {
    pub(super) depths: Vec<u8>,
    pub(super) slugs: Vec<String>,
}

/// The heading stacks of a document with each heading's anchor, to find
/// the headings a chunk's `headings_path` names.
#[derive(Debug)]
pub(super) struct Trails<'a> {
    pub(super) trail: HeadingTrail<'a>,
    /// The anchors, in block order.
    pub(super) anchors: &'a [Anchor],
}

impl Trails<'_> {
    pub(super) fn anchor(&self, block: usize) -> Option<&Anchor> {
        let k = self
            .anchors
            .binary_search_by_key(&block, |a| a.block)
            .ok()?;
        self.anchors.get(k)
    }

    /// The headings of `path` as the latest heading stack before `end` that
    /// spells it; levels by position and computed slugs if none does.
    pub(super) fn header(&self, path: &[String], end: usize) -> Header {
        if path.is_empty() {
            return Header {
                depths: Vec::new(),
                slugs: Vec::new(),
            };
        }
        let found = self.trail.stacks_before(end).find_map(|stack| {
            let anchors: Option<Vec<&Anchor>> = stack.iter().map(|&b| self.anchor(b)).collect();
            anchors
                .filter(|a| a.len() == path.len() && a.iter().zip(path).all(|(a, p)| a.text == *p))
        });
        match found {
            Some(anchors) => Header {
                depths: anchors.iter().map(|a| a.level).collect(),
                slugs: anchors.iter().map(|a| a.slug.clone()).collect(),
            },
            None => Header {
                depths: (1..=path.len())
                    .map(|d| u8::try_from(d.min(6)).unwrap_or(6))
                    .collect(),
                slugs: path.iter().map(|p| github_slug(p)).collect(),
            },
        }
    }
}
