//! The keys a document's links resolve by, and the version a link row
//! belongs to.

use shared::links::{Classifier, Link, LinkConfig, LinkType};
use shared::Chunk;

/// The keys other documents' links resolve by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentKeys {
    /// Confluence page id.
    pub page_id: Option<String>,
    /// Confluence space key.
    pub space_key: Option<String>,
    /// Title.
    pub title: Option<String>,
}

impl DocumentKeys {
    /// Reads `metadata.page_id` (string or integer), `metadata.space_key` and
    /// `metadata.title`; page id and space key fall back to what
    /// `metadata.source_url` says when it is a Confluence page URL.
    pub fn from_metadata(metadata: &serde_json::Value) -> Self {
        let text = |key: &str| match metadata.get(key) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(serde_json::Value::Number(n)) if n.is_u64() => Some(n.to_string()),
            _ => None,
        };
        let from_url = metadata
            .get("source_url")
            .and_then(serde_json::Value::as_str)
            .map(|url| {
                let (kind, _, target) =
                    Classifier::new(&LinkConfig::default(), Some(url)).classify(url);
                if kind == LinkType::ConfluencePage {
                    target
                } else {
                    shared::links::Target::default()
                }
            })
            .unwrap_or_default();
        Self {
            page_id: text("page_id").or(from_url.page_id),
            space_key: text("space_key").or(from_url.space_key),
            title: metadata
                .get("title")
                .and_then(serde_json::Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned),
        }
    }

    /// Whether a version with these keys and `links` takes part in link
    /// resolution: other documents' links could match its keys, or it has
    /// page links of its own to resolve.
    pub fn takes_part_in_resolution(&self, links: &[Link]) -> bool {
        let has_keys = self.page_id.is_some() || (self.space_key.is_some() && self.title.is_some());
        has_keys || links.iter().any(|l| l.link_type.targets_page())
    }
}

/// The tenant, document and version a link row belongs to.
#[derive(Debug, Clone, Copy)]
pub struct VersionKey<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// The document containing the links.
    pub document_id: &'a str,
    /// The version.
    pub source_version_id: &'a str,
}

/// The document, version and content whose links are written.
#[derive(Debug, Clone, Copy)]
pub struct LinkSource<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// The document containing the links.
    pub document_id: &'a str,
    /// Its (new current) version.
    pub source_version_id: &'a str,
    /// The version's chunks, in ordinal order.
    pub chunks: &'a [Chunk],
    /// The version's links.
    pub links: &'a [Link],
    /// The document's resolution keys (already written to its row).
    pub keys: &'a DocumentKeys,
    /// Whether this is the document's first version in this transaction's
    /// view: it has no links of its own yet and no link resolves to it.
    pub first_version: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_come_from_metadata_then_from_the_source_url() {
        let k = DocumentKeys::from_metadata(&json!({
            "title": "Deploy Guide", "space_key": "ENG", "page_id": 123456
        }));
        assert_eq!(k.page_id.as_deref(), Some("123456"));
        assert_eq!(k.space_key.as_deref(), Some("ENG"));
        assert_eq!(k.title.as_deref(), Some("Deploy Guide"));
        let k = DocumentKeys::from_metadata(&json!({
            "title": "T",
            "source_url": "https://acme.atlassian.net/wiki/spaces/OPS/pages/987/T"
        }));
        assert_eq!(
            (k.page_id.as_deref(), k.space_key.as_deref()),
            (Some("987"), Some("OPS"))
        );
        assert_eq!(
            DocumentKeys::from_metadata(&json!({"source_url": "https://example.com/a"})),
            DocumentKeys::default()
        );
    }
}
