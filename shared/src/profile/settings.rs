//! The settings of a profile that strategies and the chunk toolkit read
//! ([`Settings`]): name, strategy, tokenizer, granularity, id formula,
//! breadcrumbs, embedder window and the chunker's sizes and rules. A
//! [`crate::Profile`] holds them beside its configured chunker and derefs to
//! them; a chunker gets them in [`crate::strategy::chunker::ChunkInput`], so
//! strategies depend on these settings, never on the profile that owns them.

use serde::Deserialize;

use crate::chunk::record::Granularity;
use crate::profile::window::EmbedderWindow;
use crate::strategy::limits::{Limits, Rules};
use crate::tokens::TokenizerKind;

/// Which stable-id formula a profile uses (docs/contract.md#ids).
///
/// Profile files name it `text` or `span`; the names the formulas had first,
/// `seed000` and `seed003`, still load. Only the variant reaches the hash
/// (`ids::chunk_id`), never its name, so renaming changed no chunk id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdFormula {
    /// Chunking Specification v1: `sha256(tenant|document|version|ordinal|canonical_text)`:
    /// the chunk's text and its place in the version.
    #[serde(alias = "seed000")]
    Text,
    /// The Russian enterprise specification:
    /// `sha256(document:block_start:block_end:char_start:char_end)`: the
    /// chunk's span in the document.
    #[serde(alias = "seed003")]
    Span,
}

impl IdFormula {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Span => "span",
        }
    }
}

/// When `embed_text` gets a breadcrumb prefix (the per-chunk file format `breadcrumbMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreadcrumbMode {
    /// Only where the chunk lacks context (see `chunk::build`).
    Conditional,
    /// Always prefix the full breadcrumb.
    Always,
    /// Never: `embed_text == chunk_text`.
    None,
}

impl BreadcrumbMode {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conditional => "conditional",
            Self::Always => "always",
            Self::None => "none",
        }
    }
}

/// What strategies and the chunk toolkit read of a profile.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Name (`spec-v1`).
    pub name: String,
    /// Registered strategy that runs it (`structural`).
    pub strategy: String,
    /// Tokenizer all budgets are measured in.
    pub tokenizer: TokenizerKind,
    /// Granularity of the produced chunks.
    pub granularity: Granularity,
    /// Stable-id formula.
    pub id_formula: IdFormula,
    /// Breadcrumb policy for `embed_text`.
    pub breadcrumb: BreadcrumbMode,
    /// `strategy:version` (`structural:1.0.0`), recorded on every chunk.
    pub chunker_version: String,
    /// The embedder the chunks are made for (`[embedder]`): `embed_text`
    /// fits its window and records carry `embed_token_count`.
    pub embedder: Option<EmbedderWindow>,
    /// What documents go through before chunking (`normalization`; the
    /// strategy's default unless the profile names one).
    pub normalization: crate::normalize::Normalization,
    /// The configured chunker's sizes (`Chunker::limits`, read once).
    pub(crate) limits: Limits,
    /// The configured chunker's rules (`Chunker::rules`, read once).
    pub(crate) rules: Rules,
}

impl Settings {
    /// Sizes every chunk of this profile keeps.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// No chunk is ever larger (tokens of `chunk_text`).
    pub fn hard_max_tokens(&self) -> usize {
        self.limits.hard_max_tokens
    }

    /// The validation rules the strategy declares on top of the universal ones.
    pub fn rules(&self) -> Rules {
        self.rules
    }
}
