//! What storing a version takes and gives: the version, the outcome, the
//! error, and the version order.

use shared::Chunk;
use time::OffsetDateTime;

/// Everything stored for one source version.
#[derive(Debug)]
pub struct NewVersion<'a> {
    /// Owning tenant.
    pub tenant_id: &'a str,
    /// Document id.
    pub document_id: &'a str,
    /// Source version id.
    pub source_version_id: &'a str,
    /// Upstream's version number, if any.
    pub source_version_seq: Option<i64>,
    /// Upstream's timestamp, if any.
    pub occurred_at: Option<OffsetDateTime>,
    /// `confluence` / `file`.
    pub source_type: Option<&'a str>,
    /// The input message's event id.
    pub causation_id: &'a str,
    /// Correlation id.
    pub correlation_id: Option<&'a str>,
    /// sha256 hex of the markdown bytes.
    pub content_sha256: String,
    /// The normalized document.
    pub normalized: &'a str,
    /// The input's metadata object.
    pub metadata: serde_json::Value,
    /// Profile name.
    pub profile: &'a str,
    /// `strategy:version`.
    pub chunker_version: &'a str,
    /// Tokenizer name.
    pub tokenizer: &'a str,
    /// The validated chunks, in ordinal order.
    pub chunks: &'a [Chunk],
    /// AMQP headers of the event (trace context).
    pub event_headers: serde_json::Value,
}

/// What storing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreOutcome {
    /// The version was stored; its event is in the outbox.
    Stored {
        /// Whether it became the document's current version.
        is_current: bool,
        /// Chunks stored.
        chunk_count: usize,
        /// Chunks whose content is new relative to the previous current version.
        changed: usize,
        /// Its event, to hand to the relay (`None` when the outbox had it
        /// already: the relay's scan finds it).
        event: Option<crate::outbox::committed::Pending>,
    },
    /// The version was already stored: nothing was written.
    AlreadyStored,
}

/// Why storing failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The document id belongs to another tenant.
    #[error("document {document_id:?} belongs to another tenant than {tenant_id:?}")]
    TenantMismatch {
        /// The tenant of the message.
        tenant_id: String,
        /// The document.
        document_id: String,
    },
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
}

/// Ordering facts of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionOrder<'a> {
    /// Source version id (the final tie-break).
    pub source_version_id: &'a str,
    /// `source_version_seq`.
    pub seq: Option<i64>,
    /// `occurred_at`.
    pub occurred_at: Option<OffsetDateTime>,
}

/// Whether `new` should replace `current` as the document's current version.
///
/// `source_version_seq` decides when both have one and they differ; otherwise
/// `occurred_at` when both have one and they differ; otherwise, when both
/// carry the same ordering facts, the larger version id wins so the result
/// does not depend on delivery order; with no facts to compare, the later
/// arrival wins.
pub fn is_newer(new: &VersionOrder<'_>, current: &VersionOrder<'_>) -> bool {
    if let (Some(a), Some(b)) = (new.seq, current.seq) {
        if a != b {
            return a > b;
        }
    }
    if let (Some(a), Some(b)) = (new.occurred_at, current.occurred_at) {
        if a != b {
            return a > b;
        }
    }
    let comparable = (new.seq.is_some() && current.seq.is_some())
        || (new.occurred_at.is_some() && current.occurred_at.is_some());
    if comparable {
        new.source_version_id > current.source_version_id
    } else {
        true
    }
}

/// Identifies a version.
#[derive(Debug, Clone, Copy)]
pub struct NewVersionKey<'a> {
    /// Tenant.
    pub tenant_id: &'a str,
    /// Document.
    pub document_id: &'a str,
    /// Version.
    pub source_version_id: &'a str,
}

/// Result of a pre-check ([`Prechecks::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Stored already.
    Yes,
    /// Not stored; the document has other versions.
    No,
    /// Not stored, and the document has no row yet.
    NewDocument,
    /// The document belongs to another tenant.
    OtherTenant,
}
