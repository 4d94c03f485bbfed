//! Message contracts (docs/contract.md#messages): the only serde wire types.
//!
//! * [`NormalizeMarkdownCompleted`]: the input message upstream publishes
//!   (`normalize_markdown.completed/v1`), parsed and checked by
//!   [`NormalizeMarkdownCompleted::parse`] so that every violation names the
//!   field it is about.
//! * [`ChunkingCompleted`]: the embed-ready event (`chunking.completed/v1`).
//! * [`ChunkingFailed`]: the pipeline-status event of a dead-lettered message
//!   (`chunking.failed/v1`).
//!
//! Pure: no I/O, no clock. Times travel as RFC 3339 strings; the worker parses
//! and produces them.

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

/// `schema` of the input message.
pub const INPUT_SCHEMA: &str = "normalize_markdown.completed/v1";
/// `schema` of the embed-ready event.
pub const COMPLETED_SCHEMA: &str = "chunking.completed/v1";
/// `schema` of the failure event.
pub const FAILED_SCHEMA: &str = "chunking.failed/v1";

/// Routing key of the input message on `ingest.events`.
pub const INPUT_ROUTING_KEY: &str = "normalize_markdown.completed";
/// Routing key of [`ChunkingCompleted`] on `ingest.events`.
pub const COMPLETED_ROUTING_KEY: &str = "chunking.completed";
/// Routing key of [`ChunkingFailed`] on `ingest.events`, and of dead-lettered
/// messages on `ingest.dlx`.
pub const FAILED_ROUTING_KEY: &str = "chunking.failed";

/// Longest `document_id` accepted, in characters (docs/contract.md#input-message).
pub const MAX_DOCUMENT_ID_CHARS: usize = 256;
/// Longest `event_id` accepted, in characters.
pub const MAX_EVENT_ID_CHARS: usize = 128;
/// Longest `source_version_id` accepted, in characters (docs/contract.md#input-message).
pub const MAX_SOURCE_VERSION_ID_CHARS: usize = 128;

/// Where the document came from (docs/contract.md#input-message `source_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceType {
    /// A Confluence page.
    Confluence,
    /// A converted file (PDF, DOCX, ...).
    File,
    /// An HTML page (the LangChain-style factory specification): converted to Markdown before chunking.
    Html,
}

/// The input message `normalize_markdown.completed/v1` (docs/contract.md#input-message).
///
/// Obtain one with [`NormalizeMarkdownCompleted::parse`], which also runs
/// [`NormalizeMarkdownCompleted::validate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NormalizeMarkdownCompleted {
    /// Must equal [`INPUT_SCHEMA`].
    pub schema: String,
    /// Id of the upstream event (a UUID upstream; any opaque id of 1..=128
    /// characters is accepted).
    pub event_id: String,
    /// Owning tenant, `^[a-z0-9-]{3,64}$`.
    pub tenant_id: String,
    /// Opaque document id, 1..256 chars, no control characters.
    pub document_id: String,
    /// Opaque source version id, 1..128 chars.
    pub source_version_id: String,
    /// Monotonic version number per document, when upstream has one.
    #[serde(default)]
    pub source_version_seq: Option<i64>,
    /// `confluence` or `file`.
    #[serde(default)]
    pub source_type: Option<SourceType>,
    /// Inline markdown (exactly one of `markdown` / `markdown_uri`).
    #[serde(default)]
    pub markdown: Option<String>,
    /// `file://` URI of the markdown (exactly one of `markdown` / `markdown_uri`).
    #[serde(default)]
    pub markdown_uri: Option<String>,
    /// Lowercase or uppercase hex sha256 of the markdown bytes.
    #[serde(default)]
    pub markdown_sha256: Option<String>,
    /// Document metadata (`title`, `source_url`, `file_path`, `space_key`,
    /// `page_id`, `labels`, `author`, `updated_at`, ...): an object, kept
    /// as sent; read leniently through [`NormalizeMarkdownCompleted::title`]
    /// and friends so that an unexpected type in a field the worker does not
    /// use (a numeric `page_id`) never rejects a document.
    #[serde(default)]
    pub metadata: serde_json::Value,
    /// Chunking profile override (`None` = the default profile).
    #[serde(default)]
    pub profile: Option<String>,
    /// Correlation id carried through to every event.
    #[serde(default)]
    pub correlation_id: Option<String>,
    /// When upstream produced the version (RFC 3339).
    #[serde(default)]
    pub occurred_at: Option<String>,
}

/// Why an input message was rejected: always `INVALID_MESSAGE`, always naming
/// the field (or saying the body is not JSON).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// The body is not a JSON object of the expected shape.
    #[error("body is not a valid {INPUT_SCHEMA} JSON object: {0}")]
    NotJson(String),
    /// A field is present but violates its rule.
    #[error("field `{field}`: {reason}")]
    Field {
        /// The offending field (`tenant_id`, `metadata.title`, ...).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

impl ContractError {
    /// The error code (docs/contract.md#error-codes): always [`ErrorCode::InvalidMessage`].
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidMessage
    }

    fn field(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Field {
            field,
            reason: reason.into(),
        }
    }
}

impl NormalizeMarkdownCompleted {
    /// Parses and validates a message body.
    pub fn parse(body: &[u8]) -> Result<Self, ContractError> {
        let msg: Self =
            serde_json::from_slice(body).map_err(|e| ContractError::NotJson(e.to_string()))?;
        msg.validate()?;
        Ok(msg)
    }

    /// Checks every field rule of docs/contract.md#input-message; the error names the first field
    /// that breaks one.
    pub fn validate(&self) -> Result<(), ContractError> {
        if self.schema != INPUT_SCHEMA {
            return Err(ContractError::field(
                "schema",
                format!("must be {INPUT_SCHEMA:?}, got {:?}", self.schema),
            ));
        }
        check_opaque_id("event_id", &self.event_id, MAX_EVENT_ID_CHARS)?;
        if !is_tenant_id(&self.tenant_id) {
            return Err(ContractError::field(
                "tenant_id",
                format!(
                    "must match ^[a-z0-9-]{{3,64}}$, got {:?}",
                    truncate(&self.tenant_id)
                ),
            ));
        }
        check_opaque_id("document_id", &self.document_id, MAX_DOCUMENT_ID_CHARS)?;
        check_opaque_id(
            "source_version_id",
            &self.source_version_id,
            MAX_SOURCE_VERSION_ID_CHARS,
        )?;
        if let Some(seq) = self.source_version_seq {
            if seq < 0 {
                return Err(ContractError::field(
                    "source_version_seq",
                    format!("must not be negative, got {seq}"),
                ));
            }
        }
        match (&self.markdown, &self.markdown_uri) {
            (Some(_), Some(_)) => {
                return Err(ContractError::field(
                    "markdown",
                    "exactly one of `markdown` and `markdown_uri` may be set, both are",
                ))
            }
            (None, None) => {
                return Err(ContractError::field(
                    "markdown",
                    "exactly one of `markdown` and `markdown_uri` must be set, neither is",
                ))
            }
            (None, Some(uri)) => {
                if !uri.starts_with("file://") {
                    return Err(ContractError::field(
                        "markdown_uri",
                        format!("only file:// URIs are supported, got {:?}", truncate(uri)),
                    ));
                }
            }
            (Some(_), None) => {}
        }
        if let Some(sha) = &self.markdown_sha256 {
            if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ContractError::field(
                    "markdown_sha256",
                    format!("must be 64 hex digits, got {:?}", truncate(sha)),
                ));
            }
        }
        if let Some(profile) = &self.profile {
            if profile.is_empty() || profile.chars().any(char::is_control) {
                return Err(ContractError::field(
                    "profile",
                    "must be a non-empty name without control characters",
                ));
            }
        }
        if !(self.metadata.is_object() || self.metadata.is_null()) {
            return Err(ContractError::field("metadata", "must be a JSON object"));
        }
        for key in ["title", "source_url", "file_path"] {
            let v = &self.metadata[key];
            if !(v.is_string() || v.is_null()) {
                return Err(ContractError::field(
                    match key {
                        "title" => "metadata.title",
                        "source_url" => "metadata.source_url",
                        _ => "metadata.file_path",
                    },
                    "must be a string or null",
                ));
            }
        }
        if let Some(at) = &self.occurred_at {
            if !looks_like_rfc3339(at) {
                return Err(ContractError::field(
                    "occurred_at",
                    format!("must be an RFC 3339 timestamp, got {:?}", truncate(at)),
                ));
            }
        }
        Ok(())
    }
}

impl NormalizeMarkdownCompleted {
    /// `metadata.title`, when it is a string.
    pub fn title(&self) -> Option<&str> {
        self.metadata
            .get("title")
            .and_then(serde_json::Value::as_str)
    }

    /// `metadata.source_url`, when it is a string.
    pub fn source_url(&self) -> Option<&str> {
        self.metadata
            .get("source_url")
            .and_then(serde_json::Value::as_str)
    }

    /// `metadata.file_path`, when it is a string.
    pub fn file_path(&self) -> Option<&str> {
        self.metadata
            .get("file_path")
            .and_then(serde_json::Value::as_str)
    }
}

/// The embed-ready event `chunking.completed/v1` (docs/contract.md#completed-event), plus the
/// change set relative to the document's previous current version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkingCompleted {
    /// [`COMPLETED_SCHEMA`].
    pub schema: String,
    /// Stable id: the same source version always gets the same event id.
    pub event_id: String,
    /// The input message's `event_id`.
    pub causation_id: String,
    /// Owning tenant.
    pub tenant_id: String,
    /// Document id.
    pub document_id: String,
    /// Source version id.
    pub source_version_id: String,
    /// The input's `source_version_seq`, if any.
    pub source_version_seq: Option<i64>,
    /// Whether this version is the document's current version after the
    /// commit (false for a version that arrived after a newer one).
    pub is_current: bool,
    /// Profile used.
    pub profile: String,
    /// Strategy and version (`structural:1.0.0`).
    pub chunker_version: String,
    /// Tokenizer name.
    pub tokenizer: String,
    /// Number of chunks stored.
    pub chunk_count: u32,
    /// Every chunk id, in ordinal order.
    pub chunk_ids: Vec<String>,
    /// Sum of the chunks' token counts.
    pub total_tokens: u64,
    /// The version this one was compared with (the document's current version
    /// before this commit), if any.
    pub previous_source_version_id: Option<String>,
    /// Chunk ids (ordinal order) whose content (`content_hash`) did not exist in
    /// the previous version: the only ones the embedder has to embed.
    pub changed_chunk_ids: Vec<String>,
    /// Chunks whose content is unchanged, with the id of the previous chunk
    /// that has the same content (its embedding can be reused).
    pub unchanged_chunks: Vec<UnchangedChunk>,
    /// Correlation id from the input.
    pub correlation_id: Option<String>,
    /// When the chunks were committed (RFC 3339).
    pub occurred_at: String,
    /// The document metadata of the input (its known keys: title,
    /// source_url, file_path, space_key, page_id, labels, author, updated_at,
    /// page_no), once per event; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// The chunk ids and changed ids of each granularity (issue 10), when
    /// the version has more than one (a multi-granularity profile, or tables
    /// kept as `table` chunks); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularities: Option<std::collections::BTreeMap<String, GranularityChunks>>,
}

/// The chunks of one granularity of a version, for the completed event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GranularityChunks {
    /// Every chunk id of the granularity, in ordinal order.
    pub chunk_ids: Vec<String>,
    /// Those whose content did not exist at this granularity before.
    pub changed_chunk_ids: Vec<String>,
}

/// A chunk whose content already existed in the previous version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnchangedChunk {
    /// The new chunk's id.
    pub chunk_id: String,
    /// The previous version's chunk with the same `content_hash`.
    pub previous_chunk_id: String,
}

/// The failure event `chunking.failed/v1` (docs/contract.md#failures).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkingFailed {
    /// [`FAILED_SCHEMA`].
    pub schema: String,
    /// Stable id of this failure event.
    pub event_id: String,
    /// The input message's `event_id` (or AMQP `message_id`), when known.
    pub causation_id: Option<String>,
    /// Tenant, when the message got far enough to name one.
    pub tenant_id: Option<String>,
    /// Document, when known.
    pub document_id: Option<String>,
    /// Source version, when known.
    pub source_version_id: Option<String>,
    /// error code (docs/contract.md#error-codes).
    pub error_code: ErrorCode,
    /// What was wrong and where.
    pub error_detail: String,
    /// Deliveries of the message so far, this one included.
    pub attempts: u32,
    /// Correlation id, when known.
    pub correlation_id: Option<String>,
    /// When the failure was recorded (RFC 3339).
    pub occurred_at: String,
}

fn truncate(s: &str) -> String {
    // Error details quote the offending value; 80 chars is enough to recognise
    // it without copying a huge or hostile value into logs and headers.
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(MAX).collect();
        t.push('…');
        t
    }
}

/// The rule of an opaque id (`document_id`, `source_version_id`, ...):
/// 1..=`max_chars` characters, no control characters; the error names
/// `field`.
pub fn check_opaque_id(
    field: &'static str,
    value: &str,
    max_chars: usize,
) -> Result<(), ContractError> {
    let n = value.chars().count();
    if n == 0 || n > max_chars {
        return Err(ContractError::field(
            field,
            format!("must be 1..={max_chars} characters, got {n}"),
        ));
    }
    if let Some((i, c)) = value.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(ContractError::field(
            field,
            format!(
                "must not contain control characters, found U+{:04X} at character {i}",
                c as u32
            ),
        ));
    }
    Ok(())
}

/// `^[a-z0-9-]{3,64}$`.
pub fn is_tenant_id(s: &str) -> bool {
    (3..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A shape check of `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`; the worker
/// parses the value for real.
fn looks_like_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    fn valid() -> serde_json::Value {
        serde_json::json!({
            "schema": INPUT_SCHEMA,
            "event_id": "0b6c1c1e-1111-4222-8333-444455556666",
            "tenant_id": "acme-prod",
            "document_id": "confluence:ENG:123456",
            "source_version_id": "v42",
            "source_version_seq": 42,
            "source_type": "confluence",
            "markdown": "# Title\n\nHello.\n",
            "metadata": {"title": "Title", "labels": ["runbook"]},
            "profile": null,
            "correlation_id": "c-1",
            "occurred_at": "2026-11-20T10:00:01Z"
        })
    }

    fn parse(v: &serde_json::Value) -> Result<NormalizeMarkdownCompleted, ContractError> {
        NormalizeMarkdownCompleted::parse(v.to_string().as_bytes())
    }

    fn field_of(e: ContractError) -> &'static str {
        match e {
            ContractError::Field { field, .. } => field,
            ContractError::NotJson(m) => panic!("expected a field error, got NotJson({m})"),
        }
    }

    #[test]
    fn accepts_the_spec_example() {
        let m = parse(&valid()).unwrap();
        assert_eq!(m.tenant_id, "acme-prod");
        assert_eq!(m.source_version_seq, Some(42));
        assert_eq!(m.title(), Some("Title"));
        assert_eq!(m.metadata["labels"][0], "runbook");
    }

    #[test]
    fn rejects_non_json() {
        let e = NormalizeMarkdownCompleted::parse(b"not json").unwrap_err();
        assert!(matches!(e, ContractError::NotJson(_)));
        assert_eq!(e.code(), ErrorCode::InvalidMessage);
    }

    #[test]
    fn missing_required_field_is_named() {
        let mut v = valid();
        v.as_object_mut().unwrap().remove("tenant_id");
        let e = parse(&v).unwrap_err();
        assert!(e.to_string().contains("tenant_id"), "{e}");
    }

    #[test]
    fn each_rule_names_its_field() {
        let cases: Vec<(&str, serde_json::Value, &str)> = vec![
            ("schema", serde_json::json!("other/v1"), "schema"),
            ("event_id", serde_json::json!(""), "event_id"),
            ("metadata", serde_json::json!([1]), "metadata"),
            ("tenant_id", serde_json::json!("AC"), "tenant_id"),
            ("tenant_id", serde_json::json!("Acme"), "tenant_id"),
            ("document_id", serde_json::json!(""), "document_id"),
            (
                "document_id",
                serde_json::json!("a\u{0007}b"),
                "document_id",
            ),
            (
                "document_id",
                serde_json::json!("x".repeat(257)),
                "document_id",
            ),
            (
                "source_version_id",
                serde_json::json!("x".repeat(129)),
                "source_version_id",
            ),
            (
                "source_version_seq",
                serde_json::json!(-1),
                "source_version_seq",
            ),
            (
                "markdown_sha256",
                serde_json::json!("abc"),
                "markdown_sha256",
            ),
            ("occurred_at", serde_json::json!("yesterday"), "occurred_at"),
        ];
        for (key, value, field) in cases {
            let mut v = valid();
            v[key] = value;
            assert_eq!(field_of(parse(&v).unwrap_err()), field, "{key}");
        }
    }

    #[test]
    fn exactly_one_markdown_source() {
        let mut both = valid();
        both["markdown_uri"] = serde_json::json!("file:///data/x.md");
        assert_eq!(field_of(parse(&both).unwrap_err()), "markdown");
        let mut neither = valid();
        neither.as_object_mut().unwrap().remove("markdown");
        assert_eq!(field_of(parse(&neither).unwrap_err()), "markdown");
        let mut http = valid();
        http.as_object_mut().unwrap().remove("markdown");
        http["markdown_uri"] = serde_json::json!("https://example.com/x.md");
        assert_eq!(field_of(parse(&http).unwrap_err()), "markdown_uri");
    }

    #[test]
    fn unexpected_types_in_unused_metadata_are_accepted() {
        let mut v = valid();
        v["metadata"] = serde_json::json!({"page_id": 123456, "labels": null, "title": null});
        v["event_id"] = serde_json::json!("evt-42");
        let m = parse(&v).unwrap();
        assert_eq!(m.title(), None);
        v["metadata"] = serde_json::json!({"title": 5});
        assert_eq!(field_of(parse(&v).unwrap_err()), "metadata.title");
        v.as_object_mut().unwrap().remove("metadata");
        parse(&v).unwrap();
    }

    #[test]
    fn boundary_lengths_are_accepted() {
        let mut v = valid();
        v["document_id"] = serde_json::json!("x".repeat(256));
        v["source_version_id"] = serde_json::json!("y".repeat(128));
        v["tenant_id"] = serde_json::json!("a".repeat(64));
        parse(&v).unwrap();
    }

    #[test]
    fn events_round_trip() {
        let ev = ChunkingFailed {
            schema: FAILED_SCHEMA.into(),
            event_id: "e".into(),
            causation_id: None,
            tenant_id: None,
            document_id: None,
            source_version_id: None,
            error_code: ErrorCode::TenantMismatch,
            error_detail: "d".into(),
            attempts: 1,
            correlation_id: None,
            occurred_at: "2026-11-20T10:00:01Z".into(),
        };
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(json["error_code"], "TENANT_MISMATCH");
        let back: ChunkingFailed = serde_json::from_value(json).unwrap();
        assert_eq!(back, ev);
    }
}
