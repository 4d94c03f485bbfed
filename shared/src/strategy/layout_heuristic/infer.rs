//! Pseudo-headings of a converted document: short lines standing alone that
//! are bold only (`**Title**`), ALL CAPS, or numbered (`3.2 Results`,
//! `III. METHODS`, `A.1 Scope`), or (lowest rank) a plain short line before
//! a paragraph. Their level comes from the numbering depth, else from the
//! typographic rank (caps above bold above plain), one level below a title.

use std::sync::OnceLock;

use regex::Regex;

use super::pages::alone;
use crate::markdown::{Block, BlockKind};

/// Longer lines are never headings.
const MAX_CHARS: usize = 90;
/// Lines of more words are never headings.
const MAX_WORDS: usize = 12;
/// A plain line (no bold, caps or numbering) is a heading only this short.
pub(super) const MAX_PLAIN_WORDS: usize = 8;
/// At most this much text (bytes) between a title and the first heading
/// after it: a subtitle, an author line.
const MAX_SUBTITLE: usize = 300;

/// How a pseudo-heading shows itself, highest typographic rank first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Style {
    /// ALL CAPS.
    Caps,
    /// `**bold**` only.
    Bold,
    /// A short line of its own.
    Plain,
}

/// A heading inferred for one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inferred {
    /// The block it replaces.
    pub block: usize,
    /// Its level, 1-6.
    pub level: u8,
    /// Its plain text (emphasis markers dropped).
    pub text: String,
}

#[derive(Debug, Clone)]
struct Candidate {
    block: usize,
    style: Style,
    /// Depth of the numbering (`3.2` is 2), if numbered.
    depth: Option<u8>,
    /// Lettered at depth one (`A. Scope`): a level below roman numbering.
    lettered: bool,
    text: String,
}

/// The numbering at the start of `line` and its depth, with the rest.
fn numbering(line: &str) -> Option<(u8, bool, &str)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| {
            Regex::new(
                r"^(?:(\d{1,2}(?:\.\d{1,2})*)\.?|([IVXLC]{1,6})\.|([A-Z](?:\.\d{1,2})+)\.?|([A-Z])\.)\s+(\S.*)$",
            )
            .ok()
        })
        .as_ref()?;
    let c = re.captures(line)?;
    let rest = c.get(5)?.as_str();
    let dotted = |s: &str| u8::try_from(s.split('.').count()).unwrap_or(6);
    if let Some(n) = c.get(1).or_else(|| c.get(3)) {
        return Some((dotted(n.as_str()), false, rest));
    }
    if c.get(2).is_some() {
        return Some((1, false, rest));
    }
    Some((1, true, rest))
}

/// Whether `s` reads as a title: not too long, starting with an uppercase
/// letter or a digit, not ending like a sentence or a clause (a line
/// ending in a colon introduces what follows: `**Steps:**`); a question
/// may be one ("Why sampling?").
pub(super) fn title_like(s: &str, max_words: usize) -> bool {
    let words = s.split_whitespace().count();
    let first = s.chars().next();
    (1..=max_words).contains(&words)
        && s.chars().count() <= MAX_CHARS
        && s.chars().any(char::is_alphabetic)
        && first.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        && !s.ends_with(['.', ',', ';', ':', '!', '|'])
        && !s.contains("](")
}

/// Whether every cased letter of `s` is uppercase (at least three letters).
fn all_caps(s: &str) -> bool {
    s.chars().filter(|c| c.is_alphabetic()).count() >= 3 && !s.chars().any(char::is_lowercase)
}

/// The text inside `**...**` or `__...__` when that is the whole line.
fn bold_only(line: &str) -> Option<&str> {
    ["**", "__"].iter().find_map(|m| {
        let inner = line.strip_prefix(m)?.strip_suffix(m)?.trim();
        (!inner.is_empty() && !inner.contains(m)).then_some(inner)
    })
}

/// The candidate block `i` is, if any.
fn candidate(
    text: &str,
    blocks: &[Block],
    i: usize,
    first: bool,
    next_content: Option<usize>,
    next_body: Option<usize>,
) -> Option<Candidate> {
    let b = &blocks[i];
    let line = text[b.range.clone()].trim();
    // A line right before a table (real headings between them aside) is
    // its caption: a table chunk starts with real headings or its header
    // row only.
    if next_body.is_some_and(|n| blocks[n].kind == BlockKind::Table) {
        return None;
    }
    let single_item = matches!(b.kind, BlockKind::List { ordered: true }) && b.items.len() == 1;
    if !(b.kind == BlockKind::Paragraph || single_item) || line.contains('\n') || !alone(text, blocks, i) {
        return None;
    }
    let bold = bold_only(line);
    let inner = bold.unwrap_or(line);
    let numbered = numbering(inner);
    let body = numbered.map_or(inner, |(_, _, rest)| rest);
    let style = if all_caps(body) {
        Style::Caps
    } else if bold.is_some() {
        Style::Bold
    } else {
        Style::Plain
    };
    if !title_like(body, MAX_WORDS) {
        return None;
    }
    if single_item && numbered.is_none() {
        return None;
    }
    if style == Style::Plain && numbered.is_none() {
        // A plain short line heads the longer paragraph or list after it.
        let next = next_content.map(|n| &blocks[n])?;
        let next_line = !text[next.range.clone()].contains('\n');
        if first && next_line && next.range.len() <= MAX_CHARS {
            // A document title followed by a heading line.
            return Some(Candidate {
                block: i,
                style,
                depth: None,
                lettered: false,
                text: inner.to_owned(),
            });
        }
        let long = next.range.len() > 2 * line.len();
        let content = matches!(next.kind, BlockKind::Paragraph | BlockKind::List { .. } | BlockKind::Table);
        if !(title_like(body, MAX_PLAIN_WORDS) && long && content) {
            return None;
        }
    }
    Some(Candidate {
        block: i,
        style,
        depth: numbered.map(|(d, _, _)| d.clamp(1, 6)),
        lettered: numbered.is_some_and(|(_, l, _)| l),
        text: inner.to_owned(),
    })
}

/// The pseudo-headings of `text` with its `blocks`, the `furniture` blocks
/// (sorted indices) left out.
pub(crate) fn infer(text: &str, blocks: &[Block], furniture: &[usize]) -> Vec<Inferred> {
    let content: Vec<usize> = (0..blocks.len())
        .filter(|i| furniture.binary_search(i).is_err())
        .filter(|&i| !matches!(blocks[i].kind, BlockKind::FrontMatter | BlockKind::ThematicBreak))
        .collect();
    let mut cands: Vec<Candidate> = content
        .iter()
        .enumerate()
        .filter(|(_, &i)| !matches!(blocks[i].kind, BlockKind::Heading { .. }))
        .filter_map(|(k, &i)| {
            let rest = content.get(k + 1..).unwrap_or_default();
            let next_body = rest
                .iter()
                .copied()
                .find(|&n| !matches!(blocks[n].kind, BlockKind::Heading { .. }));
            candidate(text, blocks, i, k == 0, rest.first().copied(), next_body)
        })

        .collect();
    // Numbering counts when it is consistent: two or more numbered lines.
    // A lone plain numbered line ("2 Apples") is no heading.
    let numbered = cands.iter().filter(|c| c.depth.is_some()).count();
    if numbered < 2 {
        cands.retain(|c| c.depth.is_none() || c.style != Style::Plain);
        for c in &mut cands {
            c.depth = None;
        }
    }
    if cands.is_empty() {
        return Vec::new();
    }
    let roman = cands.iter().any(|c| c.depth.is_some() && !c.lettered && numbering_roman(&c.text));
    // A title: the first candidate, before any content, followed at once
    // by another candidate, of a style no other un-numbered one has, or of
    // three words or more with only a short subtitle before the next one
    // (section names are short: "INTRODUCTION", "EXECUTIVE SUMMARY").
    let first = &cands[0];
    let subtitle = cands.get(1).is_some_and(|next| {
        blocks[next.block].range.start - blocks[first.block].range.end <= MAX_SUBTITLE
            && first.text.split_whitespace().count() >= 3
    });
    let title = content.first() == Some(&first.block)
        && first.depth.is_none()
        && (cands.get(1).is_some_and(|c| content.get(1) == Some(&c.block))
            || subtitle
            || !cands[1..].iter().any(|c| c.depth.is_none() && c.style == first.style));
    let shift = u8::from(title);
    let max_depth = cands.iter().filter_map(|c| c.depth).max();
    let mut styles: Vec<Style> = cands
        .iter()
        .skip(usize::from(title))
        .filter(|c| c.depth.is_none())
        .map(|c| c.style)
        .collect();
    styles.sort_unstable();
    styles.dedup();
    cands
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let level = if k == 0 && title {
                1
            } else if let Some(d) = c.depth {
                d + u8::from(c.lettered && roman) + shift
            } else {
                let rank = styles.iter().position(|&s| s == c.style).unwrap_or(0) as u8;
                match max_depth {
                    Some(_) if c.style == Style::Caps => 1 + shift,
                    Some(m) => m + rank + shift,
                    None => 1 + rank + shift,
                }
            };
            Inferred {
                block: c.block,
                level: level.clamp(1, 6),
                text: c.text.clone(),
            }
        })
        .collect()
}

fn numbering_roman(line: &str) -> bool {
    line.split_once(". ")
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| "IVXLC".contains(c)))
}

/// `blocks` with the inferred headings as heading blocks (same ranges).
/// Furniture right before a heading (a page's footer and the next page's
/// running header, a page marker) becomes a copy of that heading, so that it
/// travels with that section instead of making a chunk of its own.
pub(crate) fn with_headings(
    blocks: &[Block],
    inferred: &[Inferred],
    furniture: &[usize],
) -> Vec<Block> {
    let mut out = blocks.to_vec();
    for h in inferred {
        if let Some(b) = out.get_mut(h.block) {
            b.kind = BlockKind::Heading { level: h.level };
            b.heading_text = h.text.clone();
            b.items.clear();
        }
    }
    let mut run: Vec<usize> = Vec::new();
    for i in 0..out.len() {
        if furniture.binary_search(&i).is_ok() {
            run.push(i);
            continue;
        }
        if out[i].kind == BlockKind::FrontMatter && run.is_empty() {
            continue;
        }
        if matches!(out[i].kind, BlockKind::Heading { .. }) {
            let (kind, heading) = (out[i].kind, out[i].heading_text.clone());
            for &f in &run {
                out[f].kind = kind;
                out[f].heading_text = heading.clone();
                out[f].items.clear();
            }
        }
        run.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::markdown::parse_blocks;

    fn headings(text: &str) -> Vec<(u8, String)> {
        let blocks = parse_blocks(text);
        infer(text, &blocks, &[])
            .into_iter()
            .map(|h| (h.level, h.text))
            .collect()
    }

    #[test]
    fn numbering_gives_depth() {
        assert_eq!(numbering("3.2 Results").map(|n| n.0), Some(2));
        assert_eq!(numbering("III. METHODS").map(|n| n.0), Some(1));
        assert_eq!(numbering("A.1 Scope").map(|n| n.0), Some(2));
        assert_eq!(numbering("B. Data").map(|n| (n.0, n.1)), Some((1, true)));
        assert_eq!(numbering("2024 was a year"), None);
    }

    #[test]
    fn numbered_lines_nest_by_depth_under_a_title() {
        let text = "**A Study of Things**\n\n1 Introduction\n\nSome text about the things we study here.\n\n2 Methods\n\nHow we did it, in some detail.\n\n2.1 Data\n\nWhere the data came from and how.\n";
        assert_eq!(
            headings(text),
            [
                (1, "A Study of Things".into()),
                (2, "1 Introduction".into()),
                (2, "2 Methods".into()),
                (3, "2.1 Data".into())
            ]
        );
    }

    #[test]
    fn caps_rank_above_bold_and_sentences_are_no_headings() {
        let text = "INTRODUCTION\n\nThe opening paragraph of the document.\n\n**Background**\n\nMore words that explain the background.\n\nThis short line ends.\n\nA closing paragraph that is long enough.\n\nMETHODS\n\nMethod text goes here for a while.\n";
        assert_eq!(
            headings(text),
            [
                (1, "INTRODUCTION".into()),
                (2, "Background".into()),
                (1, "METHODS".into())
            ]
        );
    }

    #[test]
    fn a_lone_numbered_line_or_a_line_inside_a_paragraph_is_no_heading() {
        assert!(headings("2 Apples\n\nWe bought apples at the market today.\n").is_empty());
        assert!(headings("Text line one\nRESULTS\nmore text.\n").is_empty());
        // A bold label that introduces a list is no heading.
        assert!(headings("**Steps:**\n\n- one\n- two\n\nSome closing words here.\n").is_empty());
    }
}
