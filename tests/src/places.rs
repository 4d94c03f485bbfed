//! Where a test's things are: a fresh name suffix, the workspace's
//! `config/` directory.

use std::path::{Path, PathBuf};

/// A fresh name suffix.
pub fn random_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()
}

/// The workspace's `config/` directory.
pub fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}
