//! LlamaIndex's `HierarchicalNodeParser.from_defaults(chunk_sizes,
//! chunk_overlap)` (llama-index-core 0.14.25,
//! `node_parser/relational/hierarchical.py`,
//! `_recursively_get_nodes_from_nodes`; `scripts/peers/ADAPTERS.md`
//! section 5) as byte ranges of the document: level 0 is the
//! [`SentenceSplitter`] of the first size over the document, each node of
//! level *l* is split again by the splitter of size *l + 1* and is the
//! parent of what that gives (a node within the next size is its own only
//! child). Nodes come in LlamaIndex's order: every level-0 node, then
//! every level-1 node (the first parent's children first), and so on.
//!
//! The `llama.hierarchical` strategy gives one level's nodes per
//! configured chunker (`crate::strategy::llama_hierarchical`).

use std::ops::Range;

use super::split::SentenceSplitter;

/// One node of the hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HierarchicalNode {
    /// Its byte range in the document (a child's lies in its parent's).
    pub range: Range<usize>,
    /// Its depth, 0 at the top.
    pub level: usize,
    /// Its parent's index in the list, `None` at level 0.
    pub parent: Option<usize>,
}

/// The nodes of `text`: `splitter` configured as every level is except for
/// its size (LlamaIndex's default overlap here is 20), one level per
/// entry of `chunk_sizes`. The empty document has no node (LlamaIndex: one
/// empty node per level).
pub fn hierarchical_nodes(
    text: &str,
    splitter: &SentenceSplitter,
    chunk_sizes: &[usize],
) -> Vec<HierarchicalNode> {
    let mut nodes: Vec<HierarchicalNode> = Vec::new();
    let mut level_start = 0;
    for (level, &size) in chunk_sizes.iter().enumerate() {
        let level_splitter = SentenceSplitter {
            chunk_size: size,
            ..splitter.clone()
        };
        let split = |range: &Range<usize>| -> Vec<Range<usize>> {
            let base = range.start;
            text.get(range.clone())
                .map(|t| level_splitter.split_text(t))
                .unwrap_or_default()
                .into_iter()
                .map(|r| base + r.start..base + r.end)
                .collect()
        };
        if level == 0 {
            nodes.extend(split(&(0..text.len())).into_iter().map(|range| {
                HierarchicalNode {
                    range,
                    level,
                    parent: None,
                }
            }));
            continue;
        }
        let level_end = nodes.len();
        for parent in level_start..level_end {
            let children = split(&nodes[parent].range);
            nodes.extend(children.into_iter().map(|range| HierarchicalNode {
                range,
                level,
                parent: Some(parent),
            }));
        }
        level_start = level_end;
    }
    nodes
}
