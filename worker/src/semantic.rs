//! The sentence-embedding model at run time (`[semantic]`, CLI
//! `--model-dir`/`--device`): loaded once per process, only when a profile
//! that will be used needs it, and handed to the engine as its
//! [`shared::Embedder`].
//!
//! The worker loads it when `semantic.enabled = true` (messages may then
//! name a semantic profile) or when a configured profile (`chunking.*`)
//! needs it; a profile with `gpu_required = true` makes the engine refuse to
//! build on a machine without a CUDA GPU (no silent CPU fallback). The CLI
//! loads it when the chosen profile needs it.

use std::path::PathBuf;

use embed::{DeviceChoice, Options};
use serde::Deserialize;

/// `[semantic]`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSemantic {
    #[serde(default)]
    enabled: bool,
    #[serde(default = "default_model_dir")]
    model_dir: String,
    #[serde(default = "default_device")]
    device: String,
    #[serde(default = "default_cache_entries")]
    cache_entries: usize,
    #[serde(default = "default_batch_tokens")]
    batch_tokens: usize,
}

impl Default for RawSemantic {
    fn default() -> Self {
        Self {
            enabled: false,
            model_dir: default_model_dir(),
            device: default_device(),
            cache_entries: default_cache_entries(),
            batch_tokens: default_batch_tokens(),
        }
    }
}

fn default_model_dir() -> String {
    embed::DEFAULT_MODEL_DIR.to_owned()
}
fn default_device() -> String {
    "cpu".to_owned()
}
fn default_cache_entries() -> usize {
    50_000
}
fn default_batch_tokens() -> usize {
    4096
}

/// Validated `[semantic]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticSettings {
    /// Load the model at start-up even if no configured profile needs it.
    pub enabled: bool,
    /// The unpacked model (`scripts/fetch-model.sh` puts it there).
    pub model_dir: PathBuf,
    /// Where inference runs.
    pub device: DeviceChoice,
    /// Sentence vectors cached across documents.
    pub cache_entries: usize,
    /// Word pieces per forward pass.
    pub batch_tokens: usize,
}

impl Default for SemanticSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            model_dir: PathBuf::from(embed::DEFAULT_MODEL_DIR),
            device: DeviceChoice::Cpu,
            cache_entries: 50_000,
            batch_tokens: 4096,
        }
    }
}

/// `cpu` or `cuda`.
pub fn parse_device(s: &str) -> Result<DeviceChoice, String> {
    match s {
        "cpu" => Ok(DeviceChoice::Cpu),
        "cuda" => Ok(DeviceChoice::Cuda),
        other => Err(format!(
            "{other:?} is not a device; valid: \"cpu\", \"cuda\""
        )),
    }
}

impl TryFrom<RawSemantic> for SemanticSettings {
    type Error = (String, String);

    fn try_from(raw: RawSemantic) -> Result<Self, Self::Error> {
        let device = parse_device(&raw.device).map_err(|e| ("semantic.device".to_owned(), e))?;
        if !(16..=65_536).contains(&raw.batch_tokens) {
            return Err((
                "semantic.batch_tokens".into(),
                format!("{} is out of range; valid: 16..=65536", raw.batch_tokens),
            ));
        }
        Ok(Self {
            enabled: raw.enabled,
            model_dir: PathBuf::from(raw.model_dir),
            device,
            cache_entries: raw.cache_entries,
            batch_tokens: raw.batch_tokens,
        })
    }
}

impl SemanticSettings {
    /// What the engine builder needs to know of the model.
    pub fn model_setup(&self) -> embed::engine::ModelSetup {
        embed::engine::ModelSetup {
            always: self.enabled,
            dir: self.model_dir.clone(),
            options: Options {
                device: self.device,
                cache_entries: self.cache_entries,
                batch_tokens: self.batch_tokens,
            },
        }
    }
}
