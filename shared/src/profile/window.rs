//! A profile's `[embedder]` table (issue 17): the embedder its chunks are
//! made for, so that every chunk's `embed_text` fits that embedder's window
//! in the embedder's own tokens.
//!
//! ```toml
//! [embedder]
//! name = "all-MiniLM-L6-v2"
//! max_tokens = 256          # what the embedder reads, special tokens included
//! tokenizer = "model"       # cl100k_base | o200k_base | model | path/to/tokenizer.json
//! ```
//!
//! `model` is the `tokenizer.json` of the configured embedding model (the
//! worker's `semantic.model_dir`); a path names any Hugging Face
//! `tokenizer.json` (WordPiece or BPE). Files are read by the caller (this
//! crate does no I/O) and attached with
//! [`crate::EngineBuilder::window_tokenizer`].

use std::sync::Arc;

use serde::Deserialize;

use crate::embed::{BpeWindow, EmbedTokenizer};
use crate::tokens::TokenizerKind;

/// The fewest tokens an embedder window may have.
pub const MIN_WINDOW: usize = 16;
/// The most (no embedder reads more; a typo is caught).
pub const MAX_WINDOW: usize = 1_000_000;

/// Where the window's tokenizer comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowTokenizer {
    /// An OpenAI-style embedder: cl100k_base or o200k_base.
    Bpe(TokenizerKind),
    /// The configured embedding model's own `tokenizer.json`.
    Model,
    /// A `tokenizer.json` file, as named (relative to the working directory).
    File(String),
}

impl WindowTokenizer {
    /// Reads the TOML spelling.
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(kind) = TokenizerKind::parse(s) {
            return Ok(Self::Bpe(kind));
        }
        match s {
            "model" => Ok(Self::Model),
            f if f.ends_with(".json") => Ok(Self::File(f.to_owned())),
            other => Err(format!(
                "[embedder] tokenizer {other:?} is not cl100k_base, o200k_base, model or a tokenizer.json path"
            )),
        }
    }

    /// The TOML spelling, also the key callers attach a counter under.
    pub fn spelling(&self) -> String {
        match self {
            Self::Bpe(k) => k.name().to_owned(),
            Self::Model => "model".to_owned(),
            Self::File(f) => f.clone(),
        }
    }
}

/// The embedder a profile's chunks are made for.
#[derive(Debug, Clone)]
pub struct EmbedderWindow {
    /// The embedder's name, as the profile gives it (for listings).
    pub name: String,
    /// Tokens it reads of one text, special tokens included.
    pub max_tokens: usize,
    /// What those tokens are.
    pub tokenizer: WindowTokenizer,
    counter: Option<Arc<dyn EmbedTokenizer>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWindow {
    name: String,
    max_tokens: usize,
    #[serde(default = "default_tokenizer")]
    tokenizer: String,
}

fn default_tokenizer() -> String {
    TokenizerKind::Cl100kBase.name().to_owned()
}

impl EmbedderWindow {
    /// Checks a profile's `[embedder]` table.
    pub(crate) fn from_raw(raw: RawWindow) -> Result<Self, String> {
        if raw.name.trim().is_empty() {
            return Err("[embedder] name is empty".into());
        }
        if !(MIN_WINDOW..=MAX_WINDOW).contains(&raw.max_tokens) {
            return Err(format!(
                "[embedder] max_tokens = {} is outside {MIN_WINDOW}..={MAX_WINDOW}",
                raw.max_tokens
            ));
        }
        let tokenizer = WindowTokenizer::parse(&raw.tokenizer)?;
        let counter: Option<Arc<dyn EmbedTokenizer>> = match tokenizer {
            WindowTokenizer::Bpe(kind) => Some(Arc::new(BpeWindow(kind))),
            _ => None,
        };
        Ok(Self {
            name: raw.name,
            max_tokens: raw.max_tokens,
            tokenizer,
            counter,
        })
    }

    /// The counter, once attached (BPE ones always are).
    pub fn counter(&self) -> Option<&dyn EmbedTokenizer> {
        self.counter.as_deref()
    }

    /// Attaches the counter of a file or model tokenizer.
    pub(crate) fn attach(&mut self, counter: Arc<dyn EmbedTokenizer>) {
        self.counter = Some(counter);
    }

    /// The table as TOML (after a `[embedder]` line).
    pub(crate) fn to_toml(&self) -> String {
        let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
        format!(
            "name = {}\nmax_tokens = {}\ntokenizer = {}\n",
            quote(&self.name),
            self.max_tokens,
            quote(&self.tokenizer.spelling())
        )
    }
}
