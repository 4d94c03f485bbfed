//! The `layout_aware` analysis: structure only from the layout annotations
//! a converter left in the Markdown (Azure Document Intelligence's
//! `<!-- PageHeader="..." -->`, `<!-- PageFooter="..." -->`,
//! `<!-- PageNumber="N" -->` and `<!-- PageBreak -->`, `<!-- page N -->`
//! comments, marker-pdf's `{N}------` page separators, form feeds), with
//! no inference from the text:
//!
//! - the annotations are furniture (out of `embed_text`), and number the
//!   pages;
//! - every page starts a chunk: the annotations between two pages become a
//!   copy of the current section's heading, so the packer closes the chunk
//!   there and the heading path stays the same; except where a paragraph
//!   runs on across the break (no sentence end before it, a lowercase letter
//!   after it) or no section has started yet.

use crate::markdown::{Block, BlockKind};

use super::infer::with_headings;
use super::pages::{analyse, Pages};

/// Whether block text is a converter's annotation, not the author's text.
fn annotation(line: &str) -> bool {
    let line = line.trim();
    (line.starts_with("<!--") && line.ends_with("-->") && !line[4..line.len() - 3].contains("-->"))
        || (line.starts_with('{') && line.contains("}---"))
}

/// Whether the text before a break runs on after it.
fn runs_on(before: &str, after: &str) -> bool {
    !before
        .trim_end()
        .trim_end_matches(['"', '\u{201d}', ')'])
        .ends_with(['.', '!', '?', ':', ';'])
        && after.trim_start().chars().next().is_some_and(char::is_lowercase)
}

/// The layout of `text`; with `hard_pages`, each page starts a chunk.
pub(super) fn layout(
    text: &str,
    blocks: &[Block],
    breaks: &[usize],
    hard_pages: bool,
) -> (Pages, Vec<Block>) {
    let mut pages = analyse(text, blocks, breaks);
    pages
        .furniture
        .retain(|&i| annotation(&text[blocks[i].range.clone()]));
    let mut out = with_headings(blocks, &[], &pages.furniture);
    if !hard_pages {
        return (pages, out);
    }
    let furniture = |i: usize| pages.furniture.binary_search(&i).is_ok();
    let mut heading: Option<(BlockKind, String)> = None;
    let mut i = 0;
    while i < out.len() {
        if matches!(out[i].kind, BlockKind::Heading { .. }) && !furniture(i) {
            heading = Some((out[i].kind, out[i].heading_text.clone()));
        }
        if !furniture(i) {
            i += 1;
            continue;
        }
        // A run of furniture: does a new page start inside it (or at the
        // block after it)?
        let start = i;
        while i < out.len() && furniture(i) {
            i += 1;
        }
        let from = out[start].range.start;
        let to = out.get(i).map_or(text.len(), |b| b.range.start);
        let new_page = pages.starts.iter().any(|&(at, _)| at > 0 && at >= from && at <= to);
        let (Some((kind, name)), true) = (&heading, new_page) else {
            continue;
        };
        let before = start.checked_sub(1).map_or("", |b| &text[out[b].range.clone()]);
        let after = out.get(i).map_or("", |b| &text[b.range.clone()]);
        if start == 0 || i == out.len() || runs_on(before, after) {
            continue;
        }
        if matches!(out[start].kind, BlockKind::Heading { .. }) {
            continue; // already travelling with a real heading
        }
        for b in &mut out[start..i] {
            b.kind = *kind;
            b.heading_text = name.clone();
            b.items.clear();
        }
    }
    (pages, out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::markdown::parse_blocks;

    #[test]
    fn annotated_pages_start_chunks_and_their_annotations_are_furniture() {
        let text = "<!-- PageHeader=\"Contoso\" -->\n\n# Report\n\nFirst page text.\n\n<!-- PageFooter=\"Confidential\" -->\n\n<!-- PageNumber=\"1\" -->\n\n<!-- PageBreak -->\n\n<!-- PageHeader=\"Contoso\" -->\n\nSecond page text, which is\n\n<!-- PageBreak -->\n\ncontinued on the third page.\n";
        let blocks = parse_blocks(text);
        let (pages, blocks_out) = layout(text, &blocks, &[], true);
        let furniture: Vec<&str> = pages.furniture.iter().map(|&i| &text[blocks[i].range.clone()]).collect();
        assert_eq!(furniture.len(), 6, "{furniture:?}");
        assert_eq!(pages.page_at(text.find("First").unwrap()), Some(1));
        assert_eq!(pages.page_at(text.find("Second").unwrap()), Some(2));
        assert_eq!(pages.page_at(text.find("continued").unwrap()), Some(3));
        // The run between pages 1 and 2 repeats "Report"; the one before
        // "continued" does not (the sentence runs on).
        let copies: Vec<&str> = blocks_out
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::Heading { .. }))
            .map(|b| &text[b.range.clone()])
            .collect();
        assert_eq!(
            copies,
            [
                "<!-- PageHeader=\"Contoso\" -->",
                "# Report",
                "<!-- PageFooter=\"Confidential\" -->",
                "<!-- PageNumber=\"1\" -->",
                "<!-- PageBreak -->",
                "<!-- PageHeader=\"Contoso\" -->"
            ]
        );
    }
}
