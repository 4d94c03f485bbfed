//! Arguments more than one subcommand takes.

use std::path::PathBuf;

use clap::Args;

/// The tenant used when `--tenant` is not given.
pub const DEFAULT_TENANT: &str = "local";

/// Where profiles come from, shared by `chunk`, `links` and `profiles`.
#[derive(Debug, Clone, Default, Args)]
pub struct ProfileSelectArgs {
    /// Add the profile defined in FILE (TOML, one profile, the format
    /// `profiles show` prints) and use it unless --profile names another;
    /// repeatable (the last one is used).
    #[arg(long = "profile-file", value_name = "FILE")]
    pub profile_files: Vec<PathBuf>,

    /// Allow profiles of experimental strategies.
    #[arg(long)]
    pub experimental: bool,

    /// The sentence-embedding model for semantic profiles (semantic-v1),
    /// as scripts/fetch-model.sh unpacks it; loaded only when the profile
    /// needs it.
    #[arg(
        long,
        value_name = "DIR",
        env = "CHUNK_WORKER_MODEL_DIR",
        default_value = embed::DEFAULT_MODEL_DIR
    )]
    pub model_dir: PathBuf,

    /// Where the embedding model runs: cpu, or cuda (a `--features cuda`
    /// build with an NVIDIA GPU).
    #[arg(long, value_name = "DEVICE", default_value = "cpu", value_parser = crate::semantic::parse_device)]
    pub device: embed::DeviceChoice,
}

impl ProfileSelectArgs {
    /// The model settings these options give.
    pub fn semantic_settings(&self) -> crate::semantic::SemanticSettings {
        crate::semantic::SemanticSettings {
            model_dir: self.model_dir.clone(),
            device: self.device,
            ..Default::default()
        }
    }
}
