//! Page furniture of a converted document: page markers (`<!-- page N -->`
//! comments, "Page N of M" lines, lone page numbers in sequence) and running
//! headers and footers (short lines that recur on three or more pages).
//!
//! Everything works on single-line blocks: an export puts furniture on lines
//! of its own, with blank lines around. Form feeds (a PDF text export's page
//! breaks) are removed by normalization with the other C0 controls
//! (docs/contract.md#normalization), which keeps their places
//! ([`NormalizedDocument::page_breaks`](crate::normalize::NormalizedDocument)):
//! where the text names no page numbers, the form feeds number the pages
//! from 1.

use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::markdown::{Block, BlockKind};

/// A line repeated on at least this many pages is a running header or footer.
pub(super) const MIN_REPEATS: usize = 3;
/// Longer lines are never furniture.
pub(super) const MAX_FURNITURE_CHARS: usize = 100;

/// What the page analysis found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pages {
    /// Indices of the blocks that are furniture (page markers, page
    /// numbers, running headers and footers), in order.
    pub furniture: Vec<usize>,
    /// `(byte, page)`: from `byte` on, the text is on `page`; sorted, empty
    /// when the document carries no page markers.
    pub starts: Vec<(usize, u32)>,
}

impl Pages {
    /// The page holding byte `pos`, when the document has page markers.
    pub fn page_at(&self, pos: usize) -> Option<u32> {
        let i = self.starts.partition_point(|&(at, _)| at <= pos);
        match i {
            0 => self.starts.first().map(|&(_, p)| p),
            i => self.starts.get(i - 1).map(|&(_, p)| p),
        }
    }
}

/// How a page-number line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    /// `<!-- page N -->` (or `<!-- PageNumber="N" -->`): page N starts here.
    Comment(u32),
    /// `<!-- PageBreak -->`: the next page starts after it.
    Break,
    /// "Page N of M", "Page N", "- N -", "N / M": a header or footer of page N.
    Explicit(u32),
    /// A number alone on its line: a page number if it is one of a sequence.
    Lone(u32),
    /// `<!-- PageHeader="..." -->`, `<!-- PageFooter="..." -->` (Azure
    /// Document Intelligence): furniture that names no page.
    Region,
}

fn regex(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// The page marker `line` (trimmed, emphasis removed) is, if any.
pub(super) fn marker(line: &str) -> Option<Marker> {
    static COMMENT: OnceLock<Option<Regex>> = OnceLock::new();
    static EXPLICIT: OnceLock<Option<Regex>> = OnceLock::new();
    static DASHED: OnceLock<Option<Regex>> = OnceLock::new();
    let number = |s: &str| s.parse::<u32>().ok();
    if let Some(c) = regex(
        &COMMENT,
        r#"(?i)^<!--\s*(?:page\s*(?:number)?\s*[:=]?\s*"?(\d{1,5})"?|(pagebreak|page-break|page break))\s*-->$"#,
    )
    .and_then(|r| r.captures(line))
    {
        return match c.get(1) {
            Some(n) => number(n.as_str()).map(Marker::Comment),
            None => Some(Marker::Break),
        };
    }
    static REGION: OnceLock<Option<Regex>> = OnceLock::new();
    if regex(&REGION, r#"(?i)^<!--\s*page\s*(?:header|footer)\s*=.*-->$"#).is_some_and(|r| r.is_match(line)) {
        return Some(Marker::Region);
    }
    // marker-pdf's paginated output: `{N}----...` starts page N + 1.
    static PAGINATED: OnceLock<Option<Regex>> = OnceLock::new();
    if let Some(c) = regex(&PAGINATED, r"^\{(\d{1,5})\}-{8,}$").and_then(|r| r.captures(line)) {
        return c.get(1).and_then(|n| number(n.as_str())).map(|n| Marker::Comment(n + 1));
    }
    let plain = line.trim_matches(|c: char| c == '*' || c == '_').trim();
    if let Some(c) = regex(
        &EXPLICIT,
        r"(?i)^(?:page|pg\.|p\.|стр\.|страница)\s*(\d{1,5})(?:\s*(?:of|/|из)\s*\d{1,5})?$",
    )
    .and_then(|r| r.captures(plain))
    {
        return c.get(1).and_then(|n| number(n.as_str())).map(Marker::Explicit);
    }
    if let Some(c) = regex(&DASHED, r"^(?:[-–—]\s*(\d{1,5})\s*[-–—]|(\d{1,5})\s*/\s*\d{1,5})$")
        .and_then(|r| r.captures(plain))
    {
        return c
            .get(1)
            .or_else(|| c.get(2))
            .and_then(|n| number(n.as_str()))
            .map(Marker::Explicit);
    }
    if !plain.is_empty() && plain.len() <= 4 && plain.bytes().all(|b| b.is_ascii_digit()) {
        return number(plain).map(Marker::Lone);
    }
    None
}

/// The page number a running footer's line ends with ("... 3/13", "... Page
/// 3 of 13").
fn trailing_number(line: &str) -> Option<Marker> {
    static TRAILING: OnceLock<Option<Regex>> = OnceLock::new();
    regex(
        &TRAILING,
        r"(?i)\s(?:(?:page|pg\.|p\.|стр\.|страница)\s*(\d{1,5})(?:\s*(?:of|/|из)\s*\d{1,5})?|(\d{1,5})\s*/\s*\d{1,5})$",
    )
    .and_then(|r| r.captures(line))
    .and_then(|c| c.get(1).or_else(|| c.get(2)))
    .and_then(|n| n.as_str().parse().ok())
    .map(Marker::Explicit)
}

/// Whether block `i` stands alone: blank lines (or the document's edges)
/// before and after it, or a line split off a wrapped paragraph
/// ([`super::lines`]): two paragraphs one line feed apart are never
/// Markdown's, only that split's.
pub(super) fn alone(text: &str, blocks: &[Block], i: usize) -> bool {
    let r = &blocks[i].range;
    let before = &text[..r.start];
    let after = &text[r.end..];
    let split = |j: usize, between: std::ops::Range<usize>| {
        blocks[i].kind == BlockKind::Paragraph
            && blocks.get(j).is_some_and(|b| b.kind == BlockKind::Paragraph)
            && text.get(between) == Some("\n")
    };
    let blank_before = i == 0
        || before.trim_end_matches([' ', '\t']).ends_with("\n\n")
        || split(i - 1, blocks[i - 1].range.end..r.start);
    let rest = after.trim_start_matches([' ', '\t']);
    let blank_after = rest.trim().is_empty()
        || rest.starts_with("\n\n")
        || rest.starts_with("\n \n")
        || blocks.get(i + 1).is_some_and(|n| split(i + 1, r.end..n.range.start));
    blank_before && blank_after
}

/// Whether block `i` is a line standing alone that furniture could be (a list of
/// one item too: `- 3 -` reads as a bullet).
pub(crate) fn one_line(text: &str, blocks: &[Block], i: usize) -> bool {
    let b = &blocks[i];
    alone(text, blocks, i)
        && matches!(
        b.kind,
        BlockKind::Paragraph | BlockKind::Html | BlockKind::Other | BlockKind::List { .. }
    ) && !text[b.range.clone()].contains('\n')
}

/// A line's repetition key: lowercase, digits as `#`, emphasis markers and
/// spaces dropped, so "Page 3" and "Page 4", or a header with its date,
/// compare equal.
pub(super) fn repeat_key(line: &str) -> String {
    line.chars()
        .filter(|c| !matches!(c, '*' | '_' | ' '))
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Finds the page furniture and page starts of `text` with its `blocks`.
/// `breaks` are the form feeds' places (empty when there were none).
pub(crate) fn analyse(text: &str, blocks: &[Block], breaks: &[usize]) -> Pages {
    let lines: Vec<(usize, &str)> = blocks
        .iter()
        .enumerate()
        .filter(|&(i, _)| one_line(text, blocks, i))
        .map(|(i, b)| (i, text[b.range.clone()].trim()))
        .collect();
    // A running footer that ends with its page number ("file:///x.html
    // 3/13", "ACME report Page 3 of 13"): a line whose repetition key
    // recurs on three or more lines.
    let mut keys: FxHashMap<String, usize> = FxHashMap::default();
    for &(_, line) in &lines {
        *keys.entry(repeat_key(line)).or_default() += 1;
    }
    let mut markers: Vec<(usize, Marker)> = lines
        .iter()
        .filter_map(|&(i, line)| {
            marker(line)
                .or_else(|| {
                    let repeated = line.chars().count() <= MAX_FURNITURE_CHARS
                        && keys.get(&repeat_key(line)).is_some_and(|&n| n >= MIN_REPEATS);
                    repeated.then(|| trailing_number(line)).flatten()
                })
                .map(|m| (i, m))
        })
        .collect();
    // A lone number is a page number when the page number before or after
    // it (lone or explicit) is its neighbour in sequence.
    let numbers: Vec<(usize, u32, bool)> = markers
        .iter()
        .filter_map(|&(i, m)| match m {
            Marker::Lone(n) => Some((i, n, true)),
            Marker::Explicit(n) => Some((i, n, false)),
            _ => None,
        })
        .collect();
    let numbers: Vec<usize> = (0..numbers.len())
        .filter(|&k| {
            let (_, n, _) = numbers[k];
            (k > 0 && numbers[k - 1].1 + 1 == n)
                || numbers.get(k + 1).is_some_and(|&(_, m, _)| m == n + 1)
        })
        .filter(|&k| numbers[k].2)
        .map(|k| numbers[k].0)
        .collect();
    markers.retain(|&(i, m)| !matches!(m, Marker::Lone(_)) || numbers.binary_search(&i).is_ok());
    let mut furniture: Vec<usize> = markers.iter().map(|&(i, _)| i).collect();
    // Running headers and footers: the same short line on three or more
    // pages.
    let mut seen: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for &(i, line) in &lines {
        if line.chars().count() <= MAX_FURNITURE_CHARS && furniture.binary_search(&i).is_err() {
            seen.entry(repeat_key(line)).or_default().push(i);
        }
    }
    let mut repeated: Vec<usize> = seen
        .values()
        .filter(|found| found.len() >= MIN_REPEATS)
        .flatten()
        .copied()
        .collect();
    repeated.sort_unstable();
    let mut starts = page_starts(blocks, &markers, &repeated);
    if starts.is_empty() && !breaks.is_empty() {
        starts = form_feed_starts(breaks);
    }
    let pages = Pages {
        furniture: Vec::new(),
        starts,
    };
    for found in seen.into_values() {
        let mut on: Vec<Option<u32>> = found
            .iter()
            .map(|&i| pages.page_at(blocks[i].range.start))
            .collect();
        on.dedup();
        // Without page markers a repeated line is no furniture: "N/A" or
        // "Yes." may answer several questions of one page.
        if !pages.starts.is_empty() && on.len() >= MIN_REPEATS {
            furniture.extend(found);
        }
    }
    furniture.sort_unstable();
    furniture.dedup();
    Pages { furniture, ..pages }
}

/// The page starts form feeds imply: page 1 from the start, page k + 1
/// after the k-th form feed (one at the very end starts a page no text is
/// on).
fn form_feed_starts(breaks: &[usize]) -> Vec<(usize, u32)> {
    let mut starts = vec![(0, 1)];
    for (k, &at) in breaks.iter().enumerate() {
        let page = u32::try_from(k + 2).unwrap_or(u32::MAX);
        match starts.last_mut() {
            Some(last) if last.0 == at => last.1 = page,
            _ => starts.push((at, page)),
        }
    }
    starts
}

/// The page starts the markers imply. A comment starts its page; an
/// explicit or lone page number is a footer (the text before it is on its
/// page) unless the first one comes before any content, then they are
/// headers (the text after it is on its page).
fn page_starts(
    blocks: &[Block],
    markers: &[(usize, Marker)],
    repeated: &[usize],
) -> Vec<(usize, u32)> {
    let mut starts: Vec<(usize, u32)> = Vec::new();
    let numbered: Vec<usize> = markers
        .iter()
        .filter(|(_, m)| matches!(m, Marker::Explicit(_) | Marker::Lone(_)))
        .map(|&(i, _)| i)
        .collect();
    let headers = numbered.first().is_some_and(|&first| {
        blocks[..first].iter().enumerate().all(|(i, b)| {
            markers.binary_search_by_key(&i, |&(m, _)| m).is_ok()
                || repeated.binary_search(&i).is_ok()
                || matches!(b.kind, BlockKind::FrontMatter | BlockKind::ThematicBreak)
        })
    });
    let mut current: Option<u32> = None;
    for &(i, m) in markers {
        let r = &blocks[i].range;
        match m {
            Marker::Region => {}
            Marker::Comment(n) => starts.push((r.start, n)),
            Marker::Break => {
                let next = current.map_or(2, |p| p + 1);
                starts.push((r.end, next));
            }
            Marker::Explicit(n) | Marker::Lone(n) if headers => starts.push((r.start, n)),
            Marker::Explicit(n) | Marker::Lone(n) => {
                if starts.is_empty() {
                    starts.push((0, n));
                }
                starts.push((r.end, n + 1));
            }
        }
        current = starts.last().map(|&(_, p)| p);
    }
    if starts.first().is_some_and(|&(at, _)| at > 0) {
        // Text before the first marker that starts a page is on the page
        // before it (page 1 when the marker names page 1).
        let first = starts[0].1;
        starts.insert(0, (0, first.saturating_sub(1).max(1)));
    }
    // A later marker wins where two name the same byte (a footer's end and
    // the next page's comment).
    let mut merged: Vec<(usize, u32)> = Vec::with_capacity(starts.len());
    for s in starts {
        match merged.last_mut() {
            Some(last) if last.0 == s.0 => *last = s,
            _ => merged.push(s),
        }
    }
    merged.sort_by_key(|&(at, _)| at);
    merged
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::markdown::parse_blocks;

    #[test]
    fn markers_read_comments_page_lines_and_numbers() {
        assert_eq!(marker("<!-- page 3 -->"), Some(Marker::Comment(3)));
        assert_eq!(marker("<!-- PageNumber=\"7\" -->"), Some(Marker::Comment(7)));
        assert_eq!(marker("<!-- PageBreak -->"), Some(Marker::Break));
        assert_eq!(marker("<!-- PageHeader=\"Contoso\" -->"), Some(Marker::Region));
        assert_eq!(marker("{2}------------------------------------------------"), Some(Marker::Comment(3)));
        assert_eq!(marker("Page 2 of 9"), Some(Marker::Explicit(2)));
        assert_eq!(marker("*Page 4*"), Some(Marker::Explicit(4)));
        assert_eq!(marker("- 12 -"), Some(Marker::Explicit(12)));
        assert_eq!(marker("3 / 10"), Some(Marker::Explicit(3)));
        assert_eq!(marker("14"), Some(Marker::Lone(14)));
        assert_eq!(marker("Page two"), None);
        assert_eq!(marker("2024 results"), None);
    }

    #[test]
    fn footers_end_their_page_and_running_lines_repeat() {
        let text = "ACME REPORT\n\nFirst page text.\n\nPage 1 of 3\n\nACME REPORT\n\nSecond page text.\n\nPage 2 of 3\n\nACME REPORT\n\nThird.\n\nPage 3 of 3\n";
        let blocks = parse_blocks(text);
        let p = analyse(text, &blocks, &[]);
        let furniture: Vec<&str> = p
            .furniture
            .iter()
            .map(|&i| &text[blocks[i].range.clone()])
            .collect();
        assert_eq!(
            furniture,
            ["ACME REPORT", "Page 1 of 3", "ACME REPORT", "Page 2 of 3", "ACME REPORT", "Page 3 of 3"]
        );
        assert_eq!(p.page_at(text.find("First").unwrap()), Some(1));
        assert_eq!(p.page_at(text.find("Second").unwrap()), Some(2));
        assert_eq!(p.page_at(text.find("Third").unwrap()), Some(3));
    }

    #[test]
    fn form_feeds_number_the_pages_when_the_text_does_not() {
        let src = "ACME REPORT\n\nFirst page text.\n\u{c}ACME REPORT\n\nSecond page\ntext.\n\u{c}ACME REPORT\n\nThird.\n\u{c}";
        let doc = crate::normalize::normalize(src.as_bytes()).unwrap();
        let text = doc.text.as_str();
        let blocks = super::super::lines::split_wrapped(text, &parse_blocks(text), &doc.page_breaks);
        let p = analyse(text, &blocks, &doc.page_breaks);
        assert_eq!(p.page_at(text.find("First").unwrap()), Some(1));
        assert_eq!(p.page_at(text.find("Second").unwrap()), Some(2));
        assert_eq!(p.page_at(text.rfind("text.\nACME").unwrap()), Some(2));
        assert_eq!(p.page_at(text.find("Third").unwrap()), Some(3));
        let furniture: Vec<&str> = p
            .furniture
            .iter()
            .map(|&i| &text[blocks[i].range.clone()])
            .collect();
        assert_eq!(furniture, ["ACME REPORT"; 3]);
        // Numbers in the text win over the form feeds.
        let numbered = "Intro.\n\nPage 7 of 9\n\u{c}More.\n\nPage 8 of 9\n";
        let doc = crate::normalize::normalize(numbered.as_bytes()).unwrap();
        let p = analyse(&doc.text, &parse_blocks(&doc.text), &doc.page_breaks);
        assert_eq!(p.page_at(doc.text.find("More").unwrap()), Some(8));
    }

    #[test]
    fn a_running_footer_ending_with_the_page_number_numbers_its_page() {
        let text = "First page text.\n\nfile:///tmp/x.html 1/3\n\nSecond page text.\n\nfile:///tmp/x.html 2/3\n\nThird.\n\nfile:///tmp/x.html 3/3\n\nThe share is 1/3 of it\n";
        let blocks = parse_blocks(text);
        let p = analyse(text, &blocks, &[]);
        assert_eq!(p.page_at(text.find("First").unwrap()), Some(1));
        assert_eq!(p.page_at(text.find("Second").unwrap()), Some(2));
        assert_eq!(p.page_at(text.find("Third").unwrap()), Some(3));
        assert_eq!(p.furniture.len(), 3);
        assert_eq!(trailing_number("The share is 1/3"), Some(Marker::Explicit(1)));
    }

    #[test]
    fn lone_numbers_count_only_in_sequence() {
        let text = "Intro text here.\n\n1\n\nMore text.\n\n2\n\nThe answer is\n\n42\n";
        let blocks = parse_blocks(text);
        let p = analyse(text, &blocks, &[]);
        assert_eq!(p.furniture.len(), 2);
        assert_eq!(p.page_at(text.find("More").unwrap()), Some(2));
    }

    #[test]
    fn no_markers_no_pages() {
        let text = "Just text.\n\nMore text.\n";
        let p = analyse(text, &parse_blocks(text), &[]);
        assert!(p.starts.is_empty() && p.furniture.is_empty());
        assert_eq!(p.page_at(3), None);
    }
}
