//! One message in, one outcome out. The error type is the ack decision:
//! [`HandlerError::Permanent`] dead-letters the message with its
//! [`ErrorCode`], [`HandlerError::Transient`] retries it (the fault is in the
//! database or the network, not in the message).

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use sha2::{Digest, Sha256};
use shared::contract::NormalizeMarkdownCompleted;
use shared::links::{extract_links, Classifier, Link, LinkConfig};
use shared::{ChunkError, ChunkedDocument, DocumentMeta, ErrorCode};

use tracing::Instrument;

use crate::context::Context;
use crate::ops::metrics::{Stage, StrategyLabels};
use crate::store::is_transient;
use crate::store::versions::{
    self, Existing, NewVersionKey, OwnedVersion, StoreError, StoreOutcome,
};

pub use crate::pipeline::failure::Failure;

/// Why a message was not handled; decides ack / dead-letter / retry.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// The message can never succeed: dead-letter it.
    #[error("{}: {}", .0.code, .0.detail())]
    Permanent(Failure),
    /// The environment failed: retry later, never dead-letter.
    #[error("transient fault: {0}")]
    Transient(String),
}

impl From<Failure> for HandlerError {
    fn from(f: Failure) -> Self {
        Self::Permanent(f)
    }
}

fn db_error(context: &str, e: sqlx::Error) -> HandlerError {
    if is_transient(&e) {
        HandlerError::Transient(format!("{context}: {e}"))
    } else {
        HandlerError::Permanent(Failure::new(ErrorCode::Internal, format!("{context}: {e}")))
    }
}

/// What handling a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new version was stored.
    Stored {
        /// Whether it became the current version.
        is_current: bool,
        /// Chunks stored.
        chunk_count: usize,
        /// Chunks new or changed relative to the previous current version.
        changed: usize,
    },
    /// The version was already stored.
    Duplicate,
}

/// Ids a message names, read leniently so that even an invalid message's
/// failure row says as much as it can.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageIds {
    /// `event_id`, or the AMQP `message_id`.
    pub event_id: Option<String>,
    /// `tenant_id`.
    pub tenant_id: Option<String>,
    /// `document_id`.
    pub document_id: Option<String>,
    /// `source_version_id`.
    pub source_version_id: Option<String>,
    /// `correlation_id`.
    pub correlation_id: Option<String>,
    /// `profile` (the settings choose when absent).
    pub profile: Option<String>,
    /// `source_type`, for the settings' choice of profile.
    pub source_type: Option<String>,
}

impl MessageIds {
    /// Best-effort extraction from any body; string fields of at most 256
    /// characters only.
    pub fn from_body(body: &[u8], message_id: Option<&str>) -> Self {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let get = |k: &str| {
            value
                .get(k)
                .and_then(serde_json::Value::as_str)
                .filter(|s| s.chars().count() <= 256)
                .map(str::to_owned)
        };
        Self {
            event_id: get("event_id").or_else(|| message_id.map(str::to_owned)),
            tenant_id: get("tenant_id"),
            document_id: get("document_id"),
            source_version_id: get("source_version_id"),
            correlation_id: get("correlation_id"),
            profile: get("profile"),
            source_type: get("source_type"),
        }
    }
}

/// Largest message body accepted before parsing: the markdown limit with
/// room for JSON escaping (up to 6 bytes per byte for `\u00XX`) and metadata.
fn max_body_bytes(max_document_bytes: u64) -> u64 {
    max_document_bytes
        .saturating_mul(6)
        .saturating_add(1024 * 1024)
}

/// Whether the handler looks for the stored version before reading and
/// chunking a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precheck {
    /// The message may have been handled before (redelivered, back from
    /// the retry queue, replayed, or retried after a transient fault): a
    /// duplicate then costs a grouped query instead of chunking.
    Check,
    /// A first delivery: chunked at once and stored as a new document's
    /// first version; storing still decides (a document row that exists
    /// sends the version to the transaction, which finds a stored version a
    /// duplicate and another tenant's document a mismatch).
    Skip,
}

/// Handles one `normalize_markdown.completed/v1` body; `event_headers` go
/// onto the `chunking.completed` event (the continued trace context).
pub async fn handle(
    ctx: &Context,
    body: &[u8],
    event_headers: &serde_json::Value,
    precheck: Precheck,
) -> Result<Outcome, HandlerError> {
    let max = ctx.settings.max_document_bytes;
    if body.len() as u64 > max_body_bytes(max) {
        return Err(Failure::new(
            ErrorCode::DocumentTooLarge,
            format!(
                "message body is {} bytes, over the limit derived from limits.max_document_bytes = {max}",
                body.len()
            ),
        )
        .into());
    }
    if let Err(e) = std::str::from_utf8(body) {
        // JSON must be UTF-8; a body that is a valid message once its bad
        // bytes are replaced carries non-UTF-8 markdown (Chunking Specification v1 §2.2).
        let lossy = String::from_utf8_lossy(body);
        if NormalizeMarkdownCompleted::parse(lossy.as_bytes()).is_ok_and(|m| m.markdown.is_some()) {
            return Err(Failure::new(
                ErrorCode::InvalidUtf8,
                format!(
                    "field `markdown`: invalid UTF-8 byte sequence at byte offset {} of the message body",
                    e.valid_up_to()
                ),
            )
            .into());
        }
    }
    let msg = NormalizeMarkdownCompleted::parse(body)
        .map_err(|e| Failure::new(e.code(), e.to_string()))?;
    let occurred_at = match &msg.occurred_at {
        Some(s) => Some(crate::clock::parse_rfc3339(s).ok_or_else(|| {
            Failure::new(
                ErrorCode::InvalidMessage,
                format!("field `occurred_at`: not an RFC 3339 timestamp: {s:?}"),
            )
        })?),
        None => None,
    };
    let source_type = msg.source_type.map(|t| match t {
        shared::contract::SourceType::Confluence => "confluence",
        shared::contract::SourceType::File => "file",
        shared::contract::SourceType::Html => "html",
    });
    let is_html = source_type == Some("html")
        || msg
            .markdown_uri
            .as_deref()
            .is_some_and(shared::html::is_html_name);
    let chosen = ctx
        .settings
        .chunking
        .select(&msg.tenant_id, source_type, msg.profile.as_deref());
    let profile = ctx
        .engine
        .profile(Some(chosen))
        .map_err(|e| Failure::new(e.code(), e.to_string()))?;
    crate::profiles::note_use(profile);
    let profile_name = profile.name.clone();
    let labels = StrategyLabels::of(profile);
    let tokenizer = profile.tokenizer.name().to_owned();
    let chunker_version = profile.chunker_version.clone();

    let key = NewVersionKey {
        tenant_id: &msg.tenant_id,
        document_id: &msg.document_id,
        source_version_id: &msg.source_version_id,
    };
    // Cheap duplicate / ownership check before reading and chunking, for a
    // message that may repeat an earlier one; the store decides for real.
    let existing = match precheck {
        Precheck::Check => ctx
            .prechecks
            .check(&ctx.pool, &key)
            .await
            .map_err(|e| db_error("checking for the stored version", e))?,
        Precheck::Skip => Existing::NewDocument,
    };
    let new_document = match existing {
        Existing::Yes => return Ok(Outcome::Duplicate),
        Existing::OtherTenant => return Err(tenant_mismatch(&msg).into()),
        Existing::No => false,
        Existing::NewDocument => true,
    };

    // The document's share of the budget of the messages in flight is held
    // from here until the version is stored: taken before the inline
    // markdown is copied, or once a file's size is known by reading it.
    let (bytes, _memory): (Vec<u8>, _) = match (&msg.markdown, &msg.markdown_uri) {
        (Some(md), _) => {
            if md.len() as u64 > max {
                return Err(crate::pipeline::source::too_large(md.len() as u64, max).into());
            }
            let held = ctx.memory.hold(md.len()).await;
            (md.as_bytes().to_vec(), held)
        }
        (None, Some(uri)) => {
            let root = &ctx.settings.source_root;
            let path = crate::pipeline::source::resolve(uri, root)?;
            let bytes =
                crate::pipeline::source::read(&path, root, max, ctx.settings.worker.source_retry)
                    .await?;
            let held = ctx.memory.hold(bytes.len()).await;
            (bytes, held)
        }
        // `validate` guarantees exactly one of the two.
        (None, None) => {
            return Err(Failure::new(ErrorCode::InvalidMessage, "no markdown source").into())
        }
    };
    let digest = hex::encode(Sha256::digest(&bytes));
    if let Some(expected) = &msg.markdown_sha256 {
        if !expected.eq_ignore_ascii_case(&digest) {
            return Err(Failure::new(
                ErrorCode::ChecksumMismatch,
                format!("markdown_sha256 is {expected} but the markdown bytes hash to {digest}"),
            )
            .into());
        }
    }
    if bytes.contains(&0) {
        let field = if msg.markdown.is_some() {
            "markdown"
        } else {
            "markdown_uri"
        };
        return Err(Failure::new(
            ErrorCode::InvalidMessage,
            format!(
                "field `{field}`: the markdown contains NUL characters, which cannot be stored"
            ),
        )
        .into());
    }

    let meta = DocumentMeta {
        tenant_id: msg.tenant_id.clone(),
        document_id: msg.document_id.clone(),
        source_version_id: msg.source_version_id.clone(),
        title: msg.title().map(str::to_owned),
        source_url: msg.source_url().map(str::to_owned),
        file_path: msg.file_path().map(str::to_owned),
        metadata: DocumentMeta::carried_metadata(&msg.metadata),
    };
    let link_config = ctx.settings.links.for_tenant(&msg.tenant_id);
    let started = Instant::now();
    let is_tei = msg
        .markdown_uri
        .as_deref()
        .is_some_and(shared::tei::is_tei_name);
    let source = Source {
        bytes,
        is_html: is_html && !is_tei,
        is_tei,
    };
    let (doc, links) = chunk_off_runtime(ctx, source, meta, profile_name.clone(), link_config)
        .instrument(tracing::info_span!("chunk"))
        .await?;
    ctx.metrics.observe_stage(Stage::Chunk, started.elapsed());

    let metadata = match &msg.metadata {
        serde_json::Value::Null => serde_json::json!({}),
        other => other.clone(),
    };
    let token_counts: Vec<u32> = doc.chunks.iter().map(|c| c.token_count).collect();
    let started = Instant::now();
    // Owned, so that a new document's first version can go in with others'
    // in one statement; a later version is stored through a view of it.
    let version = OwnedVersion {
        tenant_id: msg.tenant_id.clone(),
        document_id: msg.document_id.clone(),
        source_version_id: msg.source_version_id.clone(),
        source_version_seq: msg.source_version_seq,
        occurred_at,
        source_type,
        causation_id: msg.event_id.clone(),
        correlation_id: msg.correlation_id.clone(),
        content_sha256: digest,
        normalized: doc.normalized,
        metadata,
        profile: profile_name.clone(),
        chunker_version,
        tokenizer,
        chunks: doc.chunks,
        event_headers: event_headers.clone(),
        links,
    };
    let store = async {
        if new_document {
            // A document the check did not find is most likely new.
            ctx.first_versions.store(&ctx.pool, version).await
        } else {
            let view = version.view();
            versions::store_later_version_with_links(&ctx.pool, &view, &version.links).await
        }
    };
    let stored = store
        .instrument(tracing::info_span!(
            "store",
            chunk_count = token_counts.len()
        ))
        .await;
    match stored {
        Ok(StoreOutcome::Stored {
            is_current,
            chunk_count,
            changed,
            event,
        }) => {
            ctx.metrics.observe_stage(Stage::Store, started.elapsed());
            ctx.metrics
                .chunks_stored(Some(&msg.tenant_id), &labels, token_counts);
            match event {
                Some(event) => ctx.outbox.push(event),
                None => ctx.outbox.wake(),
            }
            Ok(Outcome::Stored {
                is_current,
                chunk_count,
                changed,
            })
        }
        Ok(StoreOutcome::AlreadyStored) => Ok(Outcome::Duplicate),
        Err(StoreError::TenantMismatch { .. }) => Err(tenant_mismatch(&msg).into()),
        Err(StoreError::Db(e)) => Err(db_error("storing the version", e)),
    }
}

fn tenant_mismatch(msg: &NormalizeMarkdownCompleted) -> Failure {
    Failure::new(
        ErrorCode::TenantMismatch,
        format!(
            "document {:?} already belongs to another tenant than {:?}",
            msg.document_id, msg.tenant_id
        ),
    )
}

/// The document as received: Markdown, or an HTML page or a TEI paper
/// (`*.tei.xml`) to convert first.
struct Source {
    bytes: Vec<u8>,
    is_html: bool,
    is_tei: bool,
}

/// Chunks and extracts the links (classified with `links` and the
/// document's `source_url`) on the blocking pool, never on a runtime thread;
/// a panic in the engine is caught and becomes `INTERNAL`. An HTML page
/// becomes Markdown there first (the LangChain-style factory specification): that Markdown is the stored,
/// normalized document, its `<title>` the title when the metadata has none,
/// and what it left out is logged by kind and count, never its text.
async fn chunk_off_runtime(
    ctx: &Context,
    source: Source,
    mut meta: DocumentMeta,
    profile: String,
    links: LinkConfig,
) -> Result<(ChunkedDocument, Vec<Link>), Failure> {
    let engine = ctx.engine.clone();
    // The conversion's log line keeps the delivery's fields.
    let span = tracing::Span::current();
    let joined = tokio::task::spawn_blocking(move || {
        let _entered = span.enter();
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let bytes = if source.is_tei {
                let paper = shared::tei::to_markdown(&source.bytes)?;
                if meta.title.is_none() {
                    meta.title = paper.title;
                }
                paper.markdown.into_bytes()
            } else if source.is_html {
                let page = shared::html::to_markdown(&source.bytes)?;
                if !page.dropped.is_empty() {
                    tracing::info!(left_out = %page.dropped_summary(), "converted an HTML page to Markdown");
                }
                if meta.title.is_none() {
                    meta.title = page.title;
                }
                page.markdown.into_bytes()
            } else {
                source.bytes
            };
            engine.chunk(&bytes, &meta, Some(&profile)).map(|doc| {
                let classifier = Classifier::new(&links, meta.source_url.as_deref());
                let found = extract_links(&doc.normalized, &doc.chunks, &classifier);
                (doc, found)
            })
        }))
    })
    .await;
    match joined {
        Ok(Ok(Ok(doc))) => Ok(doc),
        Ok(Ok(Err(e))) => Err(chunk_failure(&e)),
        Ok(Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".to_owned());
            Err(Failure::new(
                ErrorCode::Internal,
                format!("the chunking engine panicked: {what}"),
            ))
        }
        Err(join) => Err(Failure::new(
            ErrorCode::Internal,
            format!("the chunking task failed: {join}"),
        )),
    }
}

fn chunk_failure(e: &ChunkError) -> Failure {
    Failure::new(e.code(), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_broken_messages_too() {
        let ids = MessageIds::from_body(br#"{"tenant_id":"acme","document_id":7}"#, Some("m-1"));
        assert_eq!(ids.tenant_id.as_deref(), Some("acme"));
        assert_eq!(ids.document_id, None);
        assert_eq!(ids.event_id.as_deref(), Some("m-1"));
        assert_eq!(MessageIds::from_body(b"\xff", None), MessageIds::default());
    }
}
