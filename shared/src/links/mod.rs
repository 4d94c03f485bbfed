//! Link extraction and classification (docs/contract.md#links, Chunking Specification v1 §9).
//!
//! Links are read from the parsed Markdown (pulldown-cmark events), not with
//! regexes over raw text: inline, reference and autolinks, bare `http(s)://`
//! URLs in text, and images that point at attachments or relative files.
//! Each link gets its position, the chunk whose own span holds it, its anchor
//! text and a [`LinkType`]. Which hosts are Confluence or Jira is decided by
//! configuration ([`LinkConfig`]) and by the host of the document's own
//! `source_url` when it is a Confluence page, never by guessing from names.
//! This module finds the links; its `classify` submodule says what each one
//! points at.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType as MdLinkType, Tag, TagEnd};

use crate::chunk::record::{Chunk, Granularity};
use crate::markdown::parse::body_events;
use crate::markdown::CharIndex;

mod classify;
mod model;

pub use classify::{decode_tiny, encode_tiny, Classifier};
pub use model::{Link, LinkConfig, LinkType, Target};

/// Extracts every link of a normalized document, in document order, with the
/// chunk whose own span holds it. Links outside every chunk (front matter)
/// are skipped.
pub fn extract_links(text: &str, chunks: &[Chunk], classifier: &Classifier) -> Vec<Link> {
    let chars = CharIndex::new(text);
    let mut raw: Vec<(Range<usize>, String, String, bool)> = Vec::new();
    let mut open: Vec<(Range<usize>, String, String, bool)> = Vec::new();
    let mut code_depth = 0usize;
    let (_, events) = body_events(text);
    for (event, range) in events {
        match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => {
                if link_type != MdLinkType::Email {
                    open.push((range, dest_url.into_string(), String::new(), false));
                } else {
                    // E-mail autolinks are personal data, not document links.
                    open.push((range, String::new(), String::new(), false));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                open.push((range, dest_url.into_string(), String::new(), true))
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(link) = open.pop() {
                    if !link.1.is_empty() {
                        raw.push(link);
                    }
                }
            }
            Event::Start(Tag::CodeBlock(_)) => code_depth += 1,
            Event::End(TagEnd::CodeBlock) => code_depth = code_depth.saturating_sub(1),
            Event::Text(t) | Event::Code(t) if !open.is_empty() => {
                if let Some(l) = open.last_mut() {
                    l.2.push_str(&t);
                }
            }
            Event::Text(t) if code_depth == 0 => {
                for (off, url) in bare_urls(&t) {
                    let source = &text[range.clone()];
                    let start = if source.len() == t.len() {
                        range.start + off
                    } else {
                        source.find(url).map_or(range.start, |p| range.start + p)
                    };
                    raw.push((
                        start..start + url.len(),
                        url.to_owned(),
                        url.to_owned(),
                        false,
                    ));
                }
            }
            _ => {}
        }
    }
    raw.sort_by_key(|l| l.0.start);
    let holders = holders(chunks);
    let mut out = Vec::new();
    for (range, url, anchor, is_image) in raw {
        let Some((chunk_granularity, chunk)) = chunk_at(&holders, range.start) else {
            continue;
        };
        let (link_type, resolved_url, target) = classifier.classify(&url);
        if is_image
            && !matches!(
                link_type,
                LinkType::ConfluenceAttachment | LinkType::Relative
            )
        {
            continue;
        }
        out.push(Link {
            link_ordinal: u32::try_from(out.len()).unwrap_or(u32::MAX),
            chunk_ordinal: chunk,
            chunk_granularity,
            url,
            resolved_url,
            anchor_text: anchor.split_whitespace().collect::<Vec<_>>().join(" "),
            link_type,
            target,
            is_image,
            byte_start: range.start as u64,
            byte_end: range.end as u64,
            char_start: chars.char_offset(range.start),
        });
    }
    out
}

/// The chunks links may belong to, by granularity, coarse to fine, each in
/// ordinal order (own spans increasing): every granularity but `document`
/// (the head of a document, beside its sections), unless that is all there is.
fn holders(chunks: &[Chunk]) -> Vec<Vec<&Chunk>> {
    let mut kinds: Vec<Granularity> = chunks.iter().map(|c| c.granularity).collect();
    kinds.sort_by_key(|g| crate::chunk::record::rank(*g));
    kinds.dedup();
    if kinds.len() > 1 {
        kinds.retain(|g| *g != Granularity::Document);
    }
    kinds
        .into_iter()
        .map(|g| chunks.iter().filter(|c| c.granularity == g).collect())
        .collect()
}

/// The granularity and ordinal of the chunk whose own span holds byte
/// `pos`: the coarsest granularity that covers it.
fn chunk_at(holders: &[Vec<&Chunk>], pos: usize) -> Option<(Granularity, u32)> {
    let pos = pos as u64;
    holders.iter().find_map(|group| {
        let i = group.partition_point(|c| c.byte_end <= pos);
        group
            .get(i)
            .filter(|c| c.byte_start <= pos)
            .map(|c| (c.granularity, c.ordinal))
    })
}

/// Bare `http://` / `https://` URLs in plain text: (byte offset, url), with
/// trailing sentence punctuation and unbalanced closing brackets dropped.
fn bare_urls(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("http") {
        let start = from + found;
        let rest = &text[start..];
        if !(rest.starts_with("http://") || rest.starts_with("https://"))
            || text[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric())
        {
            from = start + 4;
            continue;
        }
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`'))
            .unwrap_or(rest.len());
        let mut url = &rest[..len];
        loop {
            let trimmed = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '*', '_']);
            let trimmed = match trimmed.chars().last() {
                Some(')') if trimmed.matches('(').count() < trimmed.matches(')').count() => {
                    &trimmed[..trimmed.len() - 1]
                }
                Some(']') if trimmed.matches('[').count() < trimmed.matches(']').count() => {
                    &trimmed[..trimmed.len() - 1]
                }
                _ => trimmed,
            };
            if trimmed.len() == url.len() {
                break;
            }
            url = trimmed;
        }
        if url.len() > "https://".len() {
            out.push((start, url));
        }
        from = start + len.max(4);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report

    use super::*;

    #[test]
    fn bare_urls_drop_trailing_punctuation() {
        let got: Vec<_> =
            bare_urls("See https://x.org/a_(b). And (http://y.org/z), done https://q.org.")
                .into_iter()
                .map(|(_, u)| u)
                .collect();
        assert_eq!(
            got,
            ["https://x.org/a_(b)", "http://y.org/z", "https://q.org"]
        );
    }
}
