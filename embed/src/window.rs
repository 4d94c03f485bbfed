//! An embedder's tokenizer as a counter ([`shared::embed::EmbedTokenizer`]):
//! what a profile's `[embedder] tokenizer` names when it is a
//! `tokenizer.json` (WordPiece or BPE, any Hugging Face tokenizer) or the
//! configured model's (`model`). It counts every token the embedder would
//! see, special tokens included, with truncation and padding turned off.

use std::path::{Path, PathBuf};

use shared::embed::EmbedTokenizer;
use tokenizers::Tokenizer;

use crate::error::LoadError;

/// A loaded `tokenizer.json`.
#[derive(Debug)]
pub struct TokenizerFile {
    id: String,
    tokenizer: Tokenizer,
}

impl TokenizerFile {
    /// Loads `path`; a missing or invalid file is an error naming it.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        if !path.is_file() {
            return Err(LoadError::Missing {
                path: path.to_owned(),
            });
        }
        let mut tokenizer = Tokenizer::from_file(path).map_err(|e| LoadError::Invalid {
            path: PathBuf::from(path),
            reason: e.to_string(),
        })?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| LoadError::Invalid {
                path: PathBuf::from(path),
                reason: e.to_string(),
            })?;
        tokenizer.with_padding(None);
        Ok(Self {
            id: path.display().to_string(),
            tokenizer,
        })
    }
}

impl EmbedTokenizer for TokenizerFile {
    fn id(&self) -> &str {
        &self.id
    }

    fn count(&self, text: &str) -> usize {
        // Encoding fails only on pathological input the tokenizer rejects;
        // then count bytes, which no tokenizer exceeds by more than its
        // specials, so a window is never overrun.
        self.tokenizer
            .encode(text, true)
            .map_or(text.len() + 2, |e| e.len())
    }
}
