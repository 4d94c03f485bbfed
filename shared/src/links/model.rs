//! What a link is: its kind, its target, the occurrence with the chunk that
//! holds it, and which hosts are Confluence and Jira.

use serde::{Deserialize, Serialize};

use crate::chunk::record::Granularity;

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
