//! Typed errors of the chunking engine, each mapped to an error code (docs/contract.md#error-codes).

use std::fmt;

/// The error codes of docs/contract.md#error-codes, as they appear on the wire (`x-error-code`,
/// `chunking_failures.error_code`, the CLI's `CHUNKING_FAILED <CODE>` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Not JSON, or a schema/field violation.
    InvalidMessage,
    /// The markdown bytes are not valid UTF-8.
    InvalidUtf8,
    /// The markdown is larger than the configured limit.
    DocumentTooLarge,
    /// `markdown_uri` could not be read.
    SourceUnavailable,
    /// `markdown_sha256` does not match the bytes.
    ChecksumMismatch,
    /// The requested chunking profile does not exist.
    UnknownProfile,
    /// The document already belongs to another tenant.
    TenantMismatch,
    /// A chunk broke the docs/contract.md#validation checklist (a bug, never silently emitted).
    ValidationFailed,
    /// Redelivered past the delivery limit.
    DeliveryLimit,
    /// An unexpected internal error (e.g. a caught panic).
    Internal,
    /// A profile's chat model (`llm_chaptering`) could not be asked: the
    /// endpoint unreachable, timing out or refusing after every retry, or
    /// answering without a readable list of boundaries.
    LlmUnavailable,
}

impl ErrorCode {
    /// The wire spelling, e.g. `INVALID_UTF8`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidMessage => "INVALID_MESSAGE",
            Self::InvalidUtf8 => "INVALID_UTF8",
            Self::DocumentTooLarge => "DOCUMENT_TOO_LARGE",
            Self::SourceUnavailable => "SOURCE_UNAVAILABLE",
            Self::ChecksumMismatch => "CHECKSUM_MISMATCH",
            Self::UnknownProfile => "UNKNOWN_PROFILE",
            Self::TenantMismatch => "TENANT_MISMATCH",
            Self::ValidationFailed => "VALIDATION_FAILED",
            Self::DeliveryLimit => "DELIVERY_LIMIT",
            Self::Internal => "INTERNAL",
            Self::LlmUnavailable => "LLM_UNAVAILABLE",
        }
    }

    /// Every code, in the order of docs/contract.md#error-codes.
    pub const ALL: [ErrorCode; 11] = [
        Self::InvalidMessage,
        Self::InvalidUtf8,
        Self::DocumentTooLarge,
        Self::SourceUnavailable,
        Self::ChecksumMismatch,
        Self::UnknownProfile,
        Self::TenantMismatch,
        Self::ValidationFailed,
        Self::DeliveryLimit,
        Self::Internal,
        Self::LlmUnavailable,
    ];

    /// Parses the wire spelling.
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why chunking one document failed. Every variant names what was wrong and
/// where, and maps to exactly one [`ErrorCode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// The input is not UTF-8; `byte_offset` is the first invalid byte.
    #[error("markdown is not valid UTF-8: invalid byte sequence at byte offset {byte_offset}")]
    InvalidUtf8 {
        /// Offset of the first byte of the invalid sequence.
        byte_offset: usize,
    },
    /// No profile of that name; `valid` lists the known ones.
    #[error("unknown chunking profile {name:?}; valid profiles: {}", valid.join(", "))]
    UnknownProfile {
        /// The requested name.
        name: String,
        /// The names that exist.
        valid: Vec<String>,
    },
    /// A profile definition is invalid: not TOML, an unknown key, a value
    /// out of range, inconsistent budgets, a name already taken.
    #[error("invalid chunking profile {name:?} ({origin}): {reason}")]
    InvalidProfile {
        /// The profile's name (`<unparsed>` when the TOML did not parse).
        name: String,
        /// Where it was defined (`built-in`, `file my.toml`).
        origin: String,
        /// What is wrong with it, naming the key, value and valid range.
        reason: String,
    },
    /// The profile's strategy is experimental and experimental strategies
    /// are not enabled (the Chunking System specification).
    #[error("profile {profile:?} uses the experimental strategy {strategy:?}, which is disabled; set experimental.enabled = true in the settings (CLI: --experimental) to use it")]
    ExperimentalDisabled {
        /// The profile's name.
        profile: String,
        /// Its strategy.
        strategy: String,
    },
    /// The profile's strategy embeds sentences and the engine was built
    /// without an embedder (the model is not loaded).
    #[error("profile {profile:?} uses the {strategy:?} strategy, which needs the sentence-embedding model, and none is loaded; run scripts/fetch-model.sh and set semantic.model_dir (CLI: --model-dir) to the unpacked model")]
    EmbedderMissing {
        /// The profile's name.
        profile: String,
        /// Its strategy.
        strategy: String,
    },
    /// The profile's `[embedder]` names a tokenizer file (or the model's)
    /// that the caller did not load.
    #[error("profile {profile:?} fits chunks to an embedder counted with the tokenizer {tokenizer:?}, which is not loaded; for \"model\" run scripts/fetch-model.sh and set semantic.model_dir (CLI: --model-dir), for a file check the path")]
    WindowTokenizerMissing {
        /// The profile's name.
        profile: String,
        /// The `[embedder] tokenizer` spelling.
        tokenizer: String,
    },
    /// A `gpu_required` profile and no CUDA device (the Chunking System specification
    /// `gpu_semantic_checks`): the engine refuses to build rather than fall
    /// back to the CPU.
    #[error("profile {profile:?} sets gpu_required = true, and {reason}; build with the `cuda` feature on a machine with a CUDA GPU, or remove the profile (there is no silent CPU fallback)")]
    GpuRequired {
        /// The profile's name.
        profile: String,
        /// What is missing: no embedder, or an embedder on the CPU.
        reason: String,
    },
    /// The embedder failed on a document (an inference or device error).
    #[error("sentence embedding failed: {0}")]
    Embedding(String),
    /// The normalized document does not align with the original text, so
    /// positions in the original cannot be given (a bug: normalization only
    /// deletes text or replaces runs).
    #[error("cannot map chunk positions back to the original text: {0}")]
    SourcePositions(String),
    /// The chat model of an `llm_chaptering` profile could not be asked, or
    /// gave no readable answer (the message names the endpoint and what
    /// happened, never document text).
    #[error("the chat model could not be asked: {0}")]
    Llm(String),
    /// An HTML page could not be converted to Markdown.
    #[error("the HTML page could not be converted to Markdown: {0}")]
    Html(String),
    /// A TEI document (GROBID's XML) is not well-formed or not TEI.
    #[error("the TEI document could not be read: {0}")]
    InvalidTei(String),
    /// A strategy panicked on its own thread (an auxiliary of a
    /// multi-granularity profile): a bug, reported instead of propagated.
    #[error("the {strategy:?} strategy panicked while chunking the document")]
    StrategyPanicked {
        /// The strategy that panicked.
        strategy: String,
    },
    /// The produced chunks break the docs/contract.md#validation checklist.
    #[error("chunk validation failed ({} violation(s)): {}", violations.len(), violations.first().map(String::as_str).unwrap_or(""))]
    Validation {
        /// One line per violated rule, naming the chunk.
        violations: Vec<String>,
    },
}

impl ChunkError {
    /// A profile asks a chat model and the engine has no client for one.
    pub fn chat_missing(profile: &str) -> Self {
        Self::Llm(format!(
            "profile {profile:?} asks a chat model, and this engine has no chat-completions client (the CLI, worker and API have one; a library caller gives one with EngineBuilder::chat)"
        ))
    }

    /// The error code (docs/contract.md#error-codes) this error is reported under.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidUtf8 { .. } => ErrorCode::InvalidUtf8,
            Self::Html(_) | Self::InvalidTei(_) => ErrorCode::InvalidMessage,
            Self::UnknownProfile { .. }
            | Self::ExperimentalDisabled { .. }
            | Self::EmbedderMissing { .. }
            | Self::WindowTokenizerMissing { .. } => ErrorCode::UnknownProfile,
            // Start-up refusals, and a failing model: not the sender's fault.
            Self::GpuRequired { .. }
            | Self::Embedding(_)
            | Self::SourcePositions(_)
            | Self::StrategyPanicked { .. } => ErrorCode::Internal,
            // A broken built-in profile or strategy table is our bug, not the sender's.
            Self::InvalidProfile { .. } => ErrorCode::Internal,
            Self::Validation { .. } => ErrorCode::ValidationFailed,
            Self::Llm(_) => ErrorCode::LlmUnavailable,
        }
    }
}
