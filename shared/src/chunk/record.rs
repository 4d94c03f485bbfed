//! The chunk record (docs/contract.md#chunk-record) and the document metadata it is built from.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What the caller knows about the document being chunked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentMeta {
    /// Tenant that owns the document (`acme-prod`).
    pub tenant_id: String,
    /// Opaque document id (`confluence:ENG:123456`).
    pub document_id: String,
    /// Opaque source version id (`v42`).
    pub source_version_id: String,
    /// Document title, used in breadcrumbs; defaults to the first H1.
    pub title: Option<String>,
    /// Where the document lives (Confluence page URL), if known.
    pub source_url: Option<String>,
    /// The file the document came from, if known.
    pub file_path: Option<String>,
    /// The message's document metadata (the LangChain-style factory specification "metadata preservation"):
    /// a JSON object of the known keys that were given (title, source_url,
    /// file_path, space_key, page_id, labels, author, updated_at, page_no),
    /// carried onto every chunk record. Shared, not copied per chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Arc<serde_json::Value>>,
}

/// The metadata keys carried from a message or `--metadata` file to chunks.
pub const METADATA_KEYS: [&str; 9] = [
    "title",
    "source_url",
    "file_path",
    "space_key",
    "page_id",
    "labels",
    "author",
    "updated_at",
    "page_no",
];

impl DocumentMeta {
    /// The source version a caller gets without naming one (the CLI, the
    /// API, the Python package): `sha256:` + the first 16 hex digits of the
    /// sha256 of the bytes; changes whenever the content does.
    pub fn default_source_version(markdown: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let digest = hex::encode(Sha256::digest(markdown));
        format!("sha256:{}", &digest[..16])
    }

    /// Applies a metadata object as the worker applies a message's: its
    /// known keys carried onto every chunk; its title and source URL used
    /// where none was set.
    pub fn apply_metadata(&mut self, metadata: &serde_json::Value) {
        let text = |key: &str| {
            metadata
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        if self.title.is_none() {
            self.title = text("title");
        }
        if self.source_url.is_none() {
            self.source_url = text("source_url");
        }
        self.metadata = Self::carried_metadata(metadata);
    }

    /// The known keys of a metadata object that are present and not null,
    /// in a stable order; `None` when there are none.
    pub fn carried_metadata(metadata: &serde_json::Value) -> Option<Arc<serde_json::Value>> {
        let obj = metadata.as_object()?;
        let kept: serde_json::Map<String, serde_json::Value> = METADATA_KEYS
            .iter()
            .filter_map(|k| {
                obj.get(*k)
                    .filter(|v| !v.is_null())
                    .map(|v| ((*k).to_owned(), v.clone()))
            })
            .collect();
        (!kept.is_empty()).then(|| Arc::new(serde_json::Value::Object(kept)))
    }
}

/// The granularity a chunk was produced at (the Chunking System specification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// Heading-bounded sections packed under the budget (the default).
    Section,
    /// One paragraph per chunk.
    Paragraph,
    /// Fixed token windows.
    Window,
    /// Table pieces.
    Table,
    /// The whole document.
    Document,
}

impl Granularity {
    /// Every granularity, coarse to fine.
    pub const ALL: [Granularity; 5] = [
        Self::Document,
        Self::Section,
        Self::Paragraph,
        Self::Table,
        Self::Window,
    ];

    /// The wire spelling (`section`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Section => "section",
            Self::Paragraph => "paragraph",
            Self::Window => "window",
            Self::Table => "table",
            Self::Document => "document",
        }
    }
}

/// The order in which granularities are stored and listed, coarse to fine;
/// a chunk's parent is the containing chunk of the nearest coarser rank.
pub fn rank(g: Granularity) -> u8 {
    match g {
        Granularity::Document => 0,
        Granularity::Section => 1,
        Granularity::Paragraph => 2,
        Granularity::Table => 3,
        Granularity::Window => 4,
    }
}

/// The kind of content a chunk holds (the Russian enterprise specification §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkType {
    /// Prose paragraphs (and HTML blocks, treated as text).
    Paragraph,
    /// A list or part of one.
    List,
    /// A table or a piece of one (header repeated).
    Table,
    /// A code block or a piece of one (re-fenced).
    Code,
    /// A block quote.
    Quote,
    /// Short blocks of different kinds merged under one heading path.
    Mixed,
}

impl ChunkType {
    /// The wire spelling (`paragraph`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paragraph => "paragraph",
            Self::List => "list",
            Self::Table => "table",
            Self::Code => "code",
            Self::Quote => "quote",
            Self::Mixed => "mixed",
        }
    }
}

/// One retrieval-ready chunk (docs/contract.md#chunk-record). Field order is the JSONL order.
///
/// Invariant: `chunk_text == prefix + normalized[char_start..char_end] + suffix`
/// where `prefix` is the first `overlap_prefix_chars` chars of `chunk_text`
/// and `suffix` its last `closing_suffix_chars` chars.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Stable id (docs/contract.md#ids), lowercase hex sha256.
    pub chunk_id: String,
    /// Owning tenant.
    pub tenant_id: String,
    /// Document id.
    pub document_id: String,
    /// Source version id.
    pub source_version_id: String,
    /// Position in the document, 0..n-1, contiguous.
    pub ordinal: u32,
    /// Granularity this chunk was produced at.
    pub granularity: Granularity,
    /// Kind of content.
    pub chunk_type: ChunkType,
    /// Plain texts of the headings in effect.
    pub headings_path: Vec<String>,
    /// Serialized heading/list/table path, e.g. `Intro > Setup / table[2] rows 41-80`.
    pub chunk_path: String,
    /// The Markdown to display.
    pub chunk_text: String,
    /// Breadcrumb-prefixed text for the embedder.
    pub embed_text: String,
    /// Tokens of `embed_text` in the profile's embedder's own tokenizer,
    /// special tokens included: never above its `[embedder] max_tokens`.
    /// Only for profiles that name an embedder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_token_count: Option<u32>,
    /// Exact token count of `chunk_text` with `tokenizer`.
    pub token_count: u32,
    /// Start of the own span, in code points of the normalized document.
    pub char_start: u64,
    /// End (exclusive) of the own span, in code points.
    pub char_end: u64,
    /// Start of the own span, in bytes of the normalized document.
    pub byte_start: u64,
    /// End (exclusive) of the own span, in bytes.
    pub byte_end: u64,
    /// Index of the first block the chunk draws from.
    pub block_start_idx: u32,
    /// Index of the last block the chunk draws from (inclusive).
    pub block_end_idx: u32,
    /// Leading chars of `chunk_text` not from the own span.
    pub overlap_prefix_chars: u32,
    /// Trailing chars of `chunk_text` added to close a split code fence.
    pub closing_suffix_chars: u32,
    /// sha256 of the canonical text and headings path (no ordinal): tells
    /// whether a chunk's content changed between versions.
    pub content_hash: String,
    /// Profile name (`spec-v1`).
    pub profile: String,
    /// Strategy and version (`structural:1.0.0`).
    pub chunker_version: String,
    /// Tokenizer name (`cl100k_base`).
    pub tokenizer: String,
    /// The document's source URL, if any.
    pub source_url: Option<String>,
    /// The document's file path, if any.
    pub file_path: Option<String>,
    /// The document metadata of the message (absent when none was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Arc<serde_json::Value>>,
    /// The Chunking System specification's readable key, `{document_id}:{strategy}:{granularity}:{ordinal}`,
    /// on every chunk the engine emits (an `Option` only so that records
    /// written before it was universal still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_key: Option<String>,
    /// The id of the chunk of the next coarser granularity whose own span
    /// contains this chunk's own span (multi-granularity profiles), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_chunk_id: Option<String>,
    /// Whether the chunk holds (a piece of) a table (granularity `table` or
    /// type `table`); on every chunk, as `chunk_key` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_table: Option<bool>,
    /// The `table` strategy's structured digest of a table (columns, row
    /// count, value ranges, the grouping used and any fallback, the full
    /// table for the summary mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facet_json: Option<serde_json::Value>,
    /// The page (1-based, as the document's page markers number it) where
    /// the chunk's own content starts, when the document carries page
    /// markers (`layout_heuristic`: `<!-- page N -->`, "Page N of M",
    /// page numbers in sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_start: Option<u32>,
    /// The page where the chunk's own content ends (inclusive); present
    /// exactly when `page_start` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_end: Option<u32>,
}

impl Chunk {
    /// The leading `overlap_prefix_chars` characters of `chunk_text` (overlap,
    /// a repeated table header or a re-opened fence); "" if they run past it.
    pub fn prefix(&self) -> &str {
        let n: usize = self
            .chunk_text
            .chars()
            .take(self.overlap_prefix_chars as usize)
            .map(char::len_utf8)
            .sum();
        self.chunk_text.get(..n).unwrap_or("")
    }

    /// The trailing `closing_suffix_chars` characters of `chunk_text` (a
    /// closing fence).
    pub fn suffix(&self) -> &str {
        let n: usize = self
            .chunk_text
            .chars()
            .rev()
            .take(self.closing_suffix_chars as usize)
            .map(char::len_utf8)
            .sum();
        &self.chunk_text[self.chunk_text.len() - n..]
    }
}
