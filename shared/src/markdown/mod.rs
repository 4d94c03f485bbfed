//! Markdown blocks with exact byte offsets (docs/contract.md#blocks-and-boundaries).
//!
//! [`parse_blocks`] turns a normalized document into its top-level blocks,
//! in order, each with the byte range it covers (trailing whitespace trimmed).
//! pulldown-cmark types stay inside this module. Text that belongs to no block
//! (link reference definitions, for example) becomes an [`BlockKind::Other`]
//! block, so that every non-whitespace byte of the document is in a block.

pub mod anchors;
pub mod block;
mod nested;
mod offsets;
pub(crate) mod parse;
pub mod pipe_rows;

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

pub use block::{Block, BlockKind};
pub use nested::nested_nodes;
pub use offsets::CharIndex;
pub(crate) use offsets::UnitIndex;
use parse::body_events;

/// Parses the top-level blocks of a normalized document.
pub fn parse_blocks(text: &str) -> Vec<Block> {
    let (raw, _) = raw_blocks(text, false);
    finish_blocks(raw, text, |offset| offset)
}

/// The blocks of `source` as the parser reports them: ranges not trimmed
/// (a block's start already moved back to its line start over indentation),
/// heading texts final. With `protect`, also the byte ranges normalization
/// keeps verbatim: code blocks, tables and HTML blocks at any depth, and
/// front matter, merged where they touch (see `crate::normalize`).
pub(crate) fn raw_blocks(source: &str, protect: bool) -> (Vec<Block>, Vec<Range<usize>>) {
    let mut blocks: Vec<Block> = Vec::new();
    let mut protected: Vec<Range<usize>> = Vec::new();
    let mut depth = 0usize;
    let mut heading: Option<String> = None;
    let mut list_depth = 0usize;
    let (fm, events) = body_events(source);
    if fm > 0 {
        blocks.push(block(BlockKind::FrontMatter, 0..fm));
        if protect {
            protected.push(0..fm);
        }
    }
    for (event, range) in events {
        match event {
            Event::Start(tag) => {
                if protect && matches!(tag, Tag::CodeBlock(_) | Tag::Table(_) | Tag::HtmlBlock) {
                    match protected.last_mut() {
                        Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                        _ => protected.push(range.clone()),
                    }
                }
                if depth == 0 {
                    let kind = match &tag {
                        Tag::Heading { level, .. } => {
                            heading = Some(String::new());
                            BlockKind::Heading {
                                level: *level as u8,
                            }
                        }
                        Tag::Paragraph => BlockKind::Paragraph,
                        Tag::List(first) => BlockKind::List {
                            ordered: first.is_some(),
                        },
                        Tag::Table(_) => BlockKind::Table,
                        Tag::CodeBlock(k) => BlockKind::Code {
                            fenced: matches!(k, CodeBlockKind::Fenced(_)),
                        },
                        Tag::BlockQuote(_) => BlockKind::Quote,
                        Tag::HtmlBlock => BlockKind::Html,
                        _ => BlockKind::Other,
                    };
                    blocks.push(block(kind, line_start(source, range.start)..range.end));
                }
                if matches!(tag, Tag::List(_)) {
                    list_depth += 1;
                }
                if depth > 0 && matches!(tag, Tag::CodeBlock(_)) {
                    if let Some(b) = blocks.last_mut() {
                        b.nested_code.push(range.clone());
                    }
                }
                if matches!(tag, Tag::Item) && list_depth == 1 && depth == 1 {
                    if let Some(b) = blocks.last_mut() {
                        b.items.push(range.clone());
                    }
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if matches!(end, TagEnd::List(_)) {
                    list_depth = list_depth.saturating_sub(1);
                }
                if depth == 0 {
                    if let (TagEnd::Heading(_), Some(h)) = (end, heading.take()) {
                        if let Some(b) = blocks.last_mut() {
                            b.heading_text = collapse(&h);
                        }
                    }
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = heading.as_mut() {
                    h.push(' ');
                }
            }
            Event::Rule if depth == 0 => blocks.push(block(BlockKind::ThematicBreak, range)),
            // Top-level inline HTML or stray text outside a block: keep as text.
            Event::Html(_) | Event::InlineHtml(_) if depth == 0 => {
                blocks.push(block(BlockKind::Other, range))
            }
            _ => {}
        }
    }
    (blocks, protected)
}

/// A block of `kind` over `range`, with no heading text, items or nested code yet.
fn block(kind: BlockKind, range: Range<usize>) -> Block {
    Block {
        kind,
        range,
        heading_text: String::new(),
        items: Vec::new(),
        nested_code: Vec::new(),
    }
}

/// The blocks of `text` from the [`raw_blocks`] of a source whose offsets
/// `map` takes to `text`'s: ranges mapped and trimmed, empty blocks dropped,
/// gaps filled, flattened tables found. For `text` itself, `map` is the
/// identity; for the text before normalization collapsed its whitespace,
/// it follows the collapsed runs (`crate::normalize::Collapsed`).
pub(crate) fn finish_blocks(
    raw: Vec<Block>,
    text: &str,
    map: impl Fn(usize) -> usize,
) -> Vec<Block> {
    let place = |r: &Range<usize>| trim_end(text, map(r.start)..map(r.end));
    let mut blocks: Vec<Block> = raw
        .into_iter()
        .map(|b| Block {
            range: place(&b.range),
            items: b.items.iter().map(place).collect(),
            nested_code: b.nested_code.iter().map(place).collect(),
            ..b
        })
        .collect();
    blocks.retain(|b| !b.range.is_empty());
    blocks.sort_by_key(|b| b.range.start);
    let mut blocks = fill_gaps(text, blocks);
    // A list of one-line pipe rows is a table flattened by an export.
    for b in &mut blocks {
        if matches!(b.kind, BlockKind::List { .. })
            && pipe_rows::is_pipe_row_list(b.items.iter().map(|r| &text[r.clone()]))
        {
            b.kind = BlockKind::Table;
        }
    }
    blocks
}

/// Adds an `Other` block for every stretch of non-whitespace text that no
/// block covers, and drops blocks nested inside an earlier one.
fn fill_gaps(text: &str, blocks: Vec<Block>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    let mut covered = 0usize;
    for b in blocks {
        if b.range.end <= covered {
            continue;
        }
        let start = b.range.start.max(covered);
        push_gap(text, covered..start, &mut out);
        covered = b.range.end;
        out.push(Block {
            range: start..b.range.end,
            ..b
        });
    }
    push_gap(text, covered..text.len(), &mut out);
    out
}

fn push_gap(text: &str, gap: Range<usize>, out: &mut Vec<Block>) {
    let slice = &text[gap.clone()];
    let lead = slice.len() - slice.trim_start().len();
    let range = trim_end(text, gap.start + lead..gap.end);
    if !range.is_empty() {
        out.push(Block {
            kind: BlockKind::Other,
            range,
            heading_text: String::new(),
            items: Vec::new(),
            nested_code: Vec::new(),
        });
    }
}

/// `pos` moved back to the start of its line when only spaces and tabs
/// precede it there: indentation belongs to the block (an indented code
/// block's first line keeps its four spaces).
fn line_start(text: &str, pos: usize) -> usize {
    let before = &text[..pos];
    let line = before.rfind('\n').map_or(0, |p| p + 1);
    if before[line..].bytes().all(|b| b == b' ' || b == b'\t') {
        line
    } else {
        pos
    }
}

fn trim_end(text: &str, range: Range<usize>) -> Range<usize> {
    let end = range.start + text[range.clone()].trim_end().len();
    range.start..end
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(BlockKind, &str)> {
        parse_blocks(text)
            .into_iter()
            .map(|b| (b.kind, &text[b.range]))
            .collect()
    }

    #[test]
    fn blocks_cover_the_document_in_order() {
        let doc = "---\ntitle: x\n---\n# Title *one*\n\nPara  one.\n\n- a\n  - nested\n- b\n\n1. x\n\n| h | i |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```\n\n> quote\n\n***\n\n[ref]: http://example.com\n";
        let got = kinds(doc);
        let want = vec![
            (BlockKind::FrontMatter, "---\ntitle: x\n---"),
            (BlockKind::Heading { level: 1 }, "# Title *one*"),
            (BlockKind::Paragraph, "Para  one."),
            (BlockKind::List { ordered: false }, "- a\n  - nested\n- b"),
            (BlockKind::List { ordered: true }, "1. x"),
            (BlockKind::Table, "| h | i |\n|---|---|\n| 1 | 2 |"),
            (
                BlockKind::Code { fenced: true },
                "```rust\nfn main() {}\n```",
            ),
            (BlockKind::Quote, "> quote"),
            (BlockKind::ThematicBreak, "***"),
            (BlockKind::Other, "[ref]: http://example.com"),
        ];
        assert_eq!(got, want);
        let blocks = parse_blocks(doc);
        assert_eq!(blocks[1].heading_text, "Title one");
        assert_eq!(blocks[3].items.len(), 2);
    }

    #[test]
    fn setext_heading_text_is_plain() {
        let b = parse_blocks("Hello &amp; `world`\n===\n");
        assert_eq!(b[0].kind, BlockKind::Heading { level: 1 });
        assert_eq!(b[0].heading_text, "Hello & world");
    }
}
