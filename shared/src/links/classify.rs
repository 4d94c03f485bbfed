//! Classification of link targets: which URLs are Confluence pages, spaces,
//! attachments or tiny links, Jira issues, anchors, relative or external
//! (docs/contract.md#links). Hosts are known from configuration and the document's own
//! `source_url`, never guessed from names.

use url::Url;

use super::model::{LinkConfig, LinkType, Target};

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
}
