//! Link extraction and classification (SPEC 3.7, seed 000 §9).
//!
//! Links are read from the parsed Markdown (pulldown-cmark events), not with
//! regexes over raw text: inline, reference and autolinks, bare `http(s)://`
//! URLs in text, and images that point at attachments or relative files.
//! Each link gets its position, the chunk whose own span holds it, its anchor
//! text and a [`LinkType`]. Which hosts are Confluence or Jira is decided by
//! configuration ([`LinkConfig`]) and by the host of the document's own
//! `source_url` when it is a Confluence page, never by guessing from names.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType as MdLinkType, Tag, TagEnd};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::chunk::record::{Chunk, Granularity};
use crate::markdown::CharIndex;
use crate::normalize::body_events;

/// Which hosts are Confluence and Jira, e.g.
/// `https://acme.atlassian.net/wiki`, `https://confluence.acme.com`,
/// `https://jira.acme.com`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkConfig {
    /// Base URLs of Confluence sites (scheme, host, optional path prefix).
    pub confluence_base_urls: Vec<String>,
    /// Base URLs of Jira sites.
    pub jira_base_urls: Vec<String>,
}

/// The kind of a link target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkType {
    /// A Confluence page (by id, or by space key + title).
    ConfluencePage,
    /// A Confluence space home or overview.
    ConfluenceSpace,
    /// A file attached to a Confluence page.
    ConfluenceAttachment,
    /// A Confluence tiny link (`/x/CODE`), decoded to the page id.
    ConfluenceTiny,
    /// A Jira issue (`/browse/KEY-123`).
    JiraIssue,
    /// A fragment within the same document (`#section`).
    Anchor,
    /// A relative link that does not resolve to a known site.
    Relative,
    /// Any other absolute link.
    External,
}

impl LinkType {
    /// The wire spelling (`confluence_page`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConfluencePage => "confluence_page",
            Self::ConfluenceSpace => "confluence_space",
            Self::ConfluenceAttachment => "confluence_attachment",
            Self::ConfluenceTiny => "confluence_tiny",
            Self::JiraIssue => "jira_issue",
            Self::Anchor => "anchor",
            Self::Relative => "relative",
            Self::External => "external",
        }
    }

    /// Whether the target is a Confluence page that may resolve to a document.
    pub fn targets_page(self) -> bool {
        matches!(
            self,
            Self::ConfluencePage | Self::ConfluenceTiny | Self::ConfluenceAttachment
        )
    }
}

/// What a URL points at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Confluence space key (`ENG`).
    pub space_key: Option<String>,
    /// Confluence page id (`123456`); for attachments the owning page.
    pub page_id: Option<String>,
    /// Page title (decoded), or the attachment's file name.
    pub title: Option<String>,
    /// Fragment (`#rollback` gives `rollback`).
    pub anchor: Option<String>,
    /// Jira issue key (`OPS-1234`).
    pub issue_key: Option<String>,
}

fn section() -> Granularity {
    Granularity::Section
}

fn is_section(g: &Granularity) -> bool {
    *g == Granularity::Section
}

/// One link occurrence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Position among the document's links, 0..n-1.
    pub link_ordinal: u32,
    /// Ordinal of the chunk whose own span holds the link.
    pub chunk_ordinal: u32,
    /// Granularity of that chunk: the coarsest one below `document` whose
    /// chunks cover the link (written only when it is not `section`).
    #[serde(default = "section", skip_serializing_if = "is_section")]
    pub chunk_granularity: Granularity,
    /// The URL as written in the document.
    pub url: String,
    /// The absolute URL after resolving against the document's source URL.
    pub resolved_url: Option<String>,
    /// Link text (or image alt text), plain.
    pub anchor_text: String,
    /// Classification.
    pub link_type: LinkType,
    /// Parsed target.
    pub target: Target,
    /// The link is an image.
    pub is_image: bool,
    /// Byte offset of the link in the normalized document.
    pub byte_start: u64,
    /// Byte end (exclusive).
    pub byte_end: u64,
    /// Char offset of the link in the normalized document.
    pub char_start: u64,
}

/// A compiled [`LinkConfig`] plus the document's own source URL.
#[derive(Debug, Clone)]
pub struct Classifier {
    confluence: Vec<Url>,
    jira: Vec<Url>,
    base: Option<Url>,
}

impl Classifier {
    /// Compiles `config`; `source_url` is the document's own URL (relative
    /// links resolve against it; if it is a Confluence page URL, its site
    /// counts as Confluence too). Unparseable base URLs are ignored (the
    /// worker validates its configuration at start-up).
    pub fn new(config: &LinkConfig, source_url: Option<&str>) -> Self {
        let parse = |list: &[String]| {
            list.iter()
                .filter_map(|u| Url::parse(u.trim()).ok())
                .collect::<Vec<_>>()
        };
        let mut confluence = parse(&config.confluence_base_urls);
        let base = source_url.and_then(|u| Url::parse(u).ok());
        if let Some(own) = base.as_ref().and_then(confluence_site_of) {
            if !confluence.iter().any(|c| same_site(c, &own)) {
                confluence.push(own);
            }
        }
        Self {
            confluence,
            jira: parse(&config.jira_base_urls),
            base,
        }
    }

    /// Classifies one URL as written in the document.
    pub fn classify(&self, raw: &str) -> (LinkType, Option<String>, Target) {
        let raw = raw.trim();
        if let Some(frag) = raw.strip_prefix('#') {
            let target = Target {
                anchor: Some(decode(frag)),
                ..Target::default()
            };
            return (LinkType::Anchor, None, target);
        }
        let (absolute, was_relative) = match Url::parse(raw) {
            Ok(u) => (Some(u), false),
            Err(_) => (self.base.as_ref().and_then(|b| b.join(raw).ok()), true),
        };
        let Some(url) = absolute else {
            return (LinkType::Relative, None, Target::default());
        };
        let resolved = Some(url.to_string());
        if let Some(rest) = self.confluence.iter().find_map(|b| strip_base(b, &url)) {
            if let Some((kind, target)) = confluence_target(&rest, &url) {
                return (kind, resolved, target);
            }
        }
        if let Some(rest) = self.jira.iter().find_map(|b| strip_base(b, &url)) {
            let segs = segments(&rest);
            if let [browse, key] = segs.as_slice() {
                if browse == "browse" && is_issue_key(key) {
                    let target = Target {
                        issue_key: Some(key.clone()),
                        ..Target::default()
                    };
                    return (LinkType::JiraIssue, resolved, target);
                }
            }
        }
        let target = Target {
            anchor: url.fragment().map(decode),
            ..Target::default()
        };
        let kind = if was_relative {
            LinkType::Relative
        } else {
            LinkType::External
        };
        (kind, resolved, target)
    }
}

/// The Confluence site of a Confluence page URL: Cloud `…/wiki/…` gives
/// `origin/wiki`; Server/Data Center shapes (`/display/`, `/spaces/`,
/// `/pages/viewpage.action`) give the origin.
fn confluence_site_of(url: &Url) -> Option<Url> {
    let path = url.path();
    let prefix = if path.starts_with("/wiki/") {
        "/wiki"
    } else if path.starts_with("/display/")
        || path.starts_with("/spaces/")
        || path.starts_with("/pages/")
    {
        ""
    } else {
        return None;
    };
    let mut site = url.clone();
    site.set_path(prefix);
    site.set_query(None);
    site.set_fragment(None);
    Some(site)
}

fn same_site(a: &Url, b: &Url) -> bool {
    a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}

/// The path of `url` below `base` (http and https count as the same site),
/// or None if `url` is not on that site.
fn strip_base(base: &Url, url: &Url) -> Option<String> {
    let scheme_ok =
        matches!(url.scheme(), "http" | "https") && matches!(base.scheme(), "http" | "https");
    let port = |u: &Url| u.port().unwrap_or(0);
    if !scheme_ok
        || !base.host_str()?.eq_ignore_ascii_case(url.host_str()?)
        || port(base) != port(url)
    {
        return None;
    }
    let prefix = base.path().trim_end_matches('/');
    let path = url.path();
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('/')).then(|| rest.to_owned())
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect()
}

fn decode(s: &str) -> String {
    let plus = s.replace('+', " ");
    percent_decode(&plus)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_issue_key(key: &str) -> bool {
    let Some((project, number)) = key.split_once('-') else {
        return false;
    };
    !project.is_empty()
        && project
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase())
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

fn is_page_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 20 && s.chars().all(|c| c.is_ascii_digit())
}

/// Parses the Confluence URL shapes below the site root.
fn confluence_target(rest: &str, url: &Url) -> Option<(LinkType, Target)> {
    let rest = rest
        .strip_prefix("/wiki")
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .unwrap_or(rest);
    let segs = segments(rest);
    let seg: Vec<&str> = segs.iter().map(String::as_str).collect();
    let query = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let anchor = url.fragment().map(decode);
    let page = |space: Option<&str>, id: Option<&str>, title: Option<&str>| Target {
        space_key: space.map(str::to_owned),
        page_id: id.map(str::to_owned),
        title: title.map(str::to_owned),
        anchor: anchor.clone(),
        issue_key: None,
    };
    match seg.as_slice() {
        // At most a title after the id: deeper paths are not page URLs
        // (e.g. a relative file link resolved below a page URL).
        ["spaces", key, "pages", id, rest @ ..] if is_page_id(id) && rest.len() <= 1 => Some((
            LinkType::ConfluencePage,
            page(Some(key), Some(id), rest.first().copied()),
        )),
        ["spaces", "viewspace.action"] => {
            query("key").map(|k| (LinkType::ConfluenceSpace, page(Some(&k), None, None)))
        }
        ["spaces", key] | ["spaces", key, "overview" | "pages"] | ["display", key] => {
            Some((LinkType::ConfluenceSpace, page(Some(key), None, None)))
        }
        // Server blog posts: /display/KEY/2024/05/17/Title.
        ["display", key, y, m, d, title, ..]
            if [y, m, d]
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) =>
        {
            Some((LinkType::ConfluencePage, page(Some(key), None, Some(title))))
        }
        ["display", key, title, ..] => {
            Some((LinkType::ConfluencePage, page(Some(key), None, Some(title))))
        }
        ["pages", "viewpage.action"] => {
            match (query("pageId"), query("spaceKey"), query("title")) {
                (Some(id), _, _) if is_page_id(&id) => {
                    Some((LinkType::ConfluencePage, page(None, Some(&id), None)))
                }
                (_, Some(space), Some(title)) => Some((
                    LinkType::ConfluencePage,
                    page(Some(&space), None, Some(&title)),
                )),
                _ => None,
            }
        }
        ["x", code] => decode_tiny(code).map(|id| {
            (
                LinkType::ConfluenceTiny,
                page(None, Some(&id.to_string()), None),
            )
        }),
        ["download", "attachments", id, file, ..] if is_page_id(id) => Some((
            LinkType::ConfluenceAttachment,
            page(None, Some(id), Some(file)),
        )),
        _ => None,
    }
}

/// Decodes a Confluence tiny-link code (`/x/3YE5C`) to the page id: URL-safe
/// base64 (`-` for `/`, `_` for `+`), padded with `A`, little-endian.
pub fn decode_tiny(code: &str) -> Option<u64> {
    // 11 characters carry 66 bits: more than any 64-bit page id needs.
    if code.is_empty() || code.len() > 11 {
        return None;
    }
    let mut padded: Vec<u8> = code.bytes().collect();
    while padded.len() % 4 != 0 {
        padded.push(b'A');
    }
    let mut bytes = Vec::with_capacity(padded.len() / 4 * 3);
    for group in padded.chunks(4) {
        let mut acc = 0u32;
        for &c in group {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'-' | b'/' => 63,
                b'_' | b'+' => 62,
                _ => return None,
            };
            acc = (acc << 6) | u32::from(v);
        }
        bytes.extend_from_slice(&acc.to_be_bytes()[1..]);
    }
    if bytes.iter().skip(8).any(|&b| b != 0) {
        return None;
    }
    let id = bytes
        .iter()
        .take(8)
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    (id > 0).then_some(id)
}

/// Encodes a page id as a Confluence tiny-link code (the inverse of
/// [`decode_tiny`]).
pub fn encode_tiny(id: u64) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let le = id.to_le_bytes();
    let len = le.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    let mut out = String::new();
    for group in le[..len].chunks(3) {
        let mut acc = [0u8; 3];
        acc[..group.len()].copy_from_slice(group);
        let v = (u32::from(acc[0]) << 16) | (u32::from(acc[1]) << 8) | u32::from(acc[2]);
        for k in 0..=group.len() {
            out.push(ALPHABET[((v >> (18 - 6 * k)) & 63) as usize] as char);
        }
    }
    out.trim_end_matches('A').to_owned()
}

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
    kinds.sort_by_key(|g| crate::profile::rank(*g));
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

    fn classifier() -> Classifier {
        Classifier::new(
            &LinkConfig {
                confluence_base_urls: vec!["https://confluence.acme.com".into()],
                jira_base_urls: vec!["https://jira.acme.com".into()],
            },
            Some("https://acme.atlassian.net/wiki/spaces/ENG/pages/123456/Deploy+Guide"),
        )
    }

    fn kind(url: &str) -> (LinkType, Target) {
        let (k, _, t) = classifier().classify(url);
        (k, t)
    }

    #[test]
    fn tiny_links_decode_to_known_page_ids_and_back() {
        assert_eq!(decode_tiny("3YE5C"), Some(137_986_525));
        assert_eq!(decode_tiny("LIQHD"), Some(201_819_180));
        assert_eq!(encode_tiny(137_986_525), "3YE5C");
        assert_eq!(encode_tiny(201_819_180), "LIQHD");
        for id in [1u64, 255, 65_536, 98_765_432, 4_294_967_297] {
            assert_eq!(decode_tiny(&encode_tiny(id)), Some(id), "{id}");
        }
        assert_eq!(decode_tiny("not valid!"), None);
    }

    #[test]
    fn confluence_cloud_and_server_shapes_are_recognised() {
        let (k, t) =
            kind("https://acme.atlassian.net/wiki/spaces/OPS/pages/987/Runbook+Index#step-2");
        assert_eq!(k, LinkType::ConfluencePage);
        assert_eq!(
            (
                t.space_key.as_deref(),
                t.page_id.as_deref(),
                t.title.as_deref(),
                t.anchor.as_deref()
            ),
            (
                Some("OPS"),
                Some("987"),
                Some("Runbook Index"),
                Some("step-2")
            )
        );
        let (k, t) = kind("https://confluence.acme.com/display/OPS/Runbook+Index%20%D0%A0");
        assert_eq!(
            (k, t.title.as_deref()),
            (LinkType::ConfluencePage, Some("Runbook Index Р"))
        );
        let (k, t) = kind("https://confluence.acme.com/pages/viewpage.action?pageId=987654");
        assert_eq!(
            (k, t.page_id.as_deref()),
            (LinkType::ConfluencePage, Some("987654"))
        );
        let (k, t) = kind("https://acme.atlassian.net/wiki/x/3YE5C");
        assert_eq!(
            (k, t.page_id.as_deref()),
            (LinkType::ConfluenceTiny, Some("137986525"))
        );
        let (k, t) =
            kind("https://confluence.acme.com/download/attachments/123456/diagram.png?version=1");
        assert_eq!(
            (k, t.page_id.as_deref(), t.title.as_deref()),
            (
                LinkType::ConfluenceAttachment,
                Some("123456"),
                Some("diagram.png")
            )
        );
        assert_eq!(
            kind("https://confluence.acme.com/display/OPS").0,
            LinkType::ConfluenceSpace
        );
        let (k, t) = kind("https://confluence.acme.com/display/OPS/2024/05/17/Release+Notes");
        assert_eq!(
            (k, t.title.as_deref()),
            (LinkType::ConfluencePage, Some("Release Notes"))
        );
        assert_eq!(
            kind("https://acme.atlassian.net/wiki/spaces/ENG/overview").0,
            LinkType::ConfluenceSpace
        );
        let (k, t) = kind("https://jira.acme.com/browse/OPS-1234");
        assert_eq!(
            (k, t.issue_key.as_deref()),
            (LinkType::JiraIssue, Some("OPS-1234"))
        );
    }

    #[test]
    fn other_links_are_anchor_relative_or_external() {
        assert_eq!(kind("#rollback").0, LinkType::Anchor);
        assert_eq!(kind("https://example.com/a").0, LinkType::External);
        // A host that merely looks like Confluence is not trusted.
        assert_eq!(
            kind("https://confluence.other.org/display/X/Y").0,
            LinkType::External
        );
        // Relative links resolve against the page; onto the Confluence site they classify as such.
        assert_eq!(kind("../../pages/555/Other").0, LinkType::ConfluencePage);
        assert_eq!(
            kind("/wiki/spaces/ENG/pages/42").1.page_id.as_deref(),
            Some("42")
        );
        assert_eq!(kind("./runbooks/queue-backlog.md").0, LinkType::Relative);
        let file_doc = Classifier::new(&LinkConfig::default(), None);
        assert_eq!(file_doc.classify("../other/page.md").0, LinkType::Relative);
    }

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
