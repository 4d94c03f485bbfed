//! Text exports of PDFs (pdftotext, pypdf) seldom leave blank lines: a page
//! comes out as one long paragraph whose lines are the printed lines, with
//! section titles and running headers and footers among them. Such a
//! paragraph is split at those lines, each becoming a one-line paragraph
//! block of its own (same bytes, new block ranges), so that the page and
//! heading analyses see them as they see lines standing alone.
//!
//! A paragraph is wrapped when it has at least three lines and its upper
//! quartile line is long (a printed line, not a short Markdown line). In it a line is
//! split off when it is
//! - furniture: a page marker ("Page 3 of 9", "3/9"), or a line whose
//!   repetition key recurs on three or more lines of the document;
//! - a title: title-like (short, capitalised, no sentence end), clearly
//!   shorter than the printed width, without code punctuation, after a line
//!   that ends a sentence (or a title, or the paragraph's start), and before
//!   body text (a full-width line or a sentence end), or before another title
//!   that is.

use rustc_hash::FxHashMap;

use super::infer::{title_like, MAX_PLAIN_WORDS};
use super::pages::{marker, repeat_key, Marker, MAX_FURNITURE_CHARS, MIN_REPEATS};
use crate::markdown::{Block, BlockKind};

/// A paragraph's lines are printed lines when the printed width (the upper
/// quartile of its line lengths, in characters) is this long.
const MIN_PRINTED_WIDTH: usize = 45;
/// A title is at most this share of the printed width.
const TITLE_SHARE: f64 = 0.6;

/// One line of a paragraph: its byte range and its trimmed text.
#[derive(Debug, Clone, Copy)]
struct Line<'t> {
    start: usize,
    end: usize,
    text: &'t str,
}

fn lines_of(text: &str, range: std::ops::Range<usize>) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut at = range.start;
    for raw in text[range.clone()].split('\n') {
        let end = at + raw.len();
        out.push(Line {
            start: at,
            end: at + raw.trim_end().len(),
            text: raw.trim(),
        });
        at = end + 1;
    }
    out
}

/// How many lines of each repetition key the paragraphs of `text` have.
fn repeat_counts(text: &str, blocks: &[Block]) -> FxHashMap<String, usize> {
    let mut counts: FxHashMap<String, usize> = FxHashMap::default();
    for b in blocks.iter().filter(|b| b.kind == BlockKind::Paragraph) {
        for line in lines_of(text, b.range.clone()) {
            if !line.text.is_empty() && line.text.chars().count() <= MAX_FURNITURE_CHARS {
                *counts.entry(repeat_key(line.text)).or_default() += 1;
            }
        }
    }
    counts
}

/// Code or a list item rather than a title: code punctuation (a slash or
/// parentheses alone are a title's too: "Input/output (draft)").
fn codeish(s: &str) -> bool {
    s.contains(['{', '}', ';', '=', '<', '>', '[', ']', '`', '|', '\\', '•', '●', '▪'])
        || ["::", "()", "->", "//", "/*"].iter().any(|m| s.contains(m))
        || s.starts_with(['-', '*', '+', '#'])
}

/// Whether a line ends a sentence (closing quotes and brackets aside).
fn sentence_end(s: &str) -> bool {
    s.trim_end_matches(['"', '\u{201d}', '\'', '\u{2019}', ')'])
        .ends_with(['.', '!', '?', ':'])
}

fn paragraph(range: std::ops::Range<usize>) -> Block {
    Block {
        kind: BlockKind::Paragraph,
        range,
        heading_text: String::new(),
        items: Vec::new(),
        nested_code: Vec::new(),
    }
}

/// The part `range` of block `b`: a list where it starts at one of the
/// list's items (with the items inside it), else a paragraph.
fn piece(b: &Block, range: std::ops::Range<usize>) -> Block {
    if !b.items.iter().any(|item| item.start == range.start) {
        return paragraph(range);
    }
    let items = b
        .items
        .iter()
        .filter(|item| item.start < range.end && item.end > range.start)
        .map(|item| item.start.max(range.start)..item.end.min(range.end))
        .collect();
    Block {
        kind: b.kind,
        range,
        heading_text: String::new(),
        items,
        nested_code: Vec::new(),
    }
}

/// A page's first line run into the paragraph that ends the page before
/// (a form feed and no blank line) starts a paragraph of its own.
fn split_at_breaks(text: &str, blocks: &[Block], breaks: &[usize]) -> Vec<Block> {
    let inside = |b: &Block| {
        let lo = breaks.partition_point(|&at| at <= b.range.start);
        let hi = breaks.partition_point(|&at| at < b.range.end);
        breaks[lo..hi]
            .iter()
            .copied()
            .filter(|&at| text.as_bytes().get(at.wrapping_sub(1)) == Some(&b'\n'))
            .collect::<Vec<usize>>()
    };
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        let cuts = if b.kind == BlockKind::Paragraph { inside(b) } else { Vec::new() };
        if cuts.is_empty() {
            out.push(b.clone());
            continue;
        }
        let mut start = b.range.start;
        for at in cuts {
            out.push(paragraph(start..at - 1));
            start = at;
        }
        out.push(paragraph(start..b.range.end));
    }
    out
}

/// `blocks` with the paragraphs split at page breaks (`breaks`: where the
/// form feeds were) and the wrapped ones at their titles and furniture.
pub(crate) fn split_wrapped(text: &str, blocks: &[Block], breaks: &[usize]) -> Vec<Block> {
    let blocks = &split_at_breaks(text, blocks, breaks);
    // A list's lazy continuation lines run on too: "1. ..." in an export
    // makes a list of the rest of the page.
    let wrapped = |b: &Block| {
        (b.kind == BlockKind::Paragraph
            || (matches!(b.kind, BlockKind::List { .. }) && b.nested_code.is_empty()))
            && text[b.range.clone()].matches('\n').count() >= 2
    };
    if !blocks.iter().any(wrapped) {
        return blocks.to_vec();
    }
    let counts = repeat_counts(text, blocks);
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        if !wrapped(b) {
            out.push(b.clone());
            continue;
        }
        let lines = lines_of(text, b.range.clone());
        let mut widths: Vec<usize> = lines.iter().map(|l| l.text.chars().count()).collect();
        widths.sort_unstable();
        let width = widths[widths.len() * 3 / 4];
        if width < MIN_PRINTED_WIDTH {
            out.push(b.clone());
            continue;
        }
        let short = |l: &Line<'_>| (l.text.chars().count() as f64) <= TITLE_SHARE * width as f64;
        let furniture = |l: &Line<'_>| {
            matches!(marker(l.text), Some(Marker::Explicit(_) | Marker::Comment(_) | Marker::Break))
                || (l.text.chars().count() <= MAX_FURNITURE_CHARS
                    && counts.get(&repeat_key(l.text)).is_some_and(|&n| n >= MIN_REPEATS))
        };
        let titleish =
            |l: &Line<'_>| short(l) && !codeish(l.text) && title_like(l.text, MAX_PLAIN_WORDS);
        let body = |l: &Line<'_>| !short(l) || sentence_end(l.text);
        let mut cut = vec![false; lines.len()];
        for j in 0..lines.len() {
            let line = &lines[j];
            if line.text.is_empty() {
                continue;
            }
            if furniture(line) {
                cut[j] = true;
                continue;
            }
            let after_end = j == 0 || cut[j - 1] || sentence_end(lines[j - 1].text);
            // What follows, the page's furniture skipped: body text, or a
            // title before body text; or nothing (a title at a page's foot).
            let mut next = lines[j + 1..].iter().filter(|n| !n.text.is_empty() && !furniture(n));
            let before_body = match (next.next(), next.next()) {
                (None, _) => j + 1 < lines.len(),
                (Some(n), m) => body(n) || (titleish(n) && m.is_some_and(body)),
            };
            if after_end && before_body && titleish(line) {
                cut[j] = true;
            }
        }
        if !cut.iter().any(|&c| c) {
            out.push(b.clone());
            continue;
        }
        // Runs of uncut lines stay together; each cut line is a block.
        let mut start: Option<usize> = None;
        let push = |from: usize, to: usize, out: &mut Vec<Block>| {
            let range = lines[from].start..lines[to].end;
            if !text[range.clone()].trim().is_empty() {
                out.push(piece(b, range));
            }
        };
        for (j, &c) in cut.iter().enumerate() {
            if c {
                if let Some(s) = start.take() {
                    push(s, j - 1, &mut out);
                }
                push(j, j, &mut out);
            } else if start.is_none() {
                start = Some(j);
            }
        }
        if let Some(s) = start {
            push(s, lines.len() - 1, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::markdown::parse_blocks;

    fn pieces(text: &str) -> Vec<&str> {
        split_wrapped(text, &parse_blocks(text), &[])
            .iter()
            .map(|b| &text[b.range.clone()])
            .collect()
    }

    #[test]
    fn titles_inside_a_printed_page_are_split_off() {
        let text = "This is an RFC to make all struct fields private by default. This includes both tuple\nstructs and structural structs.\nMotivation\nReasons for default private visibility\nVisibility is often how soundness is achieved for many types in rust. These types are\nnormally wrapping unsafe behavior of an FFI type or some other rust-specific behavior.\nfn main() {\n";
        assert_eq!(
            pieces(text),
            [
                "This is an RFC to make all struct fields private by default. This includes both tuple\nstructs and structural structs.",
                "Motivation",
                "Reasons for default private visibility",
                "Visibility is often how soundness is achieved for many types in rust. These types are\nnormally wrapping unsafe behavior of an FFI type or some other rust-specific behavior.\nfn main() {"
            ]
        );
    }

    #[test]
    fn a_page_run_into_the_last_paragraph_starts_a_block() {
        let src = "Last words of a page.\n\u{c}ACME REPORT\nNext page.\n";
        let doc = crate::normalize::normalize(src.as_bytes()).unwrap();
        let text = doc.text.as_str();
        let split = split_wrapped(text, &parse_blocks(text), &doc.page_breaks);
        let got: Vec<&str> = split.iter().map(|b| &text[b.range.clone()]).collect();
        assert_eq!(got, ["Last words of a page.", "ACME REPORT\nNext page."]);
    }

    #[test]
    fn a_list_that_runs_on_is_split_too() {
        let text = "1. The direct cost of compute to effectively sample data, such as a tail sampling proxy.\n2. The indirect engineering cost of maintaining effective sampling methodologies as more\napplications, systems, and data are involved.\nHead Sampling\nHead sampling is a sampling technique used to make a sampling decision as early as possible.\n";
        let blocks = split_wrapped(text, &parse_blocks(text), &[]);
        let got: Vec<(&str, bool)> = blocks
            .iter()
            .map(|b| (&text[b.range.clone()], matches!(b.kind, BlockKind::List { .. })))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].1 && got[0].0.ends_with("are involved."));
        assert_eq!(blocks[0].items.len(), 2);
        assert_eq!(got[1], ("Head Sampling", false));
        assert!(!got[2].1);
    }

    #[test]
    fn short_markdown_lines_and_sentences_stay() {
        let poem = "Roses are red\nViolets are blue\nSugar is sweet\n";
        assert_eq!(pieces(poem), [poem.trim_end()]);
        let prose = "A long printed line of text that goes on and on and on for a while.\nIt ends here.\nAnd a line that follows the end of that sentence right here.\n";
        assert_eq!(pieces(prose), [prose.trim_end()]);
    }
}
