//! What a command sets up before chunking: the engine and profile, and each
//! document's metadata (defaults from the file, flags over them).

use std::fs;
use std::path::Path;

use shared::DocumentMeta;
use shared::Engine;

use crate::cli::{ChunkArgs, ProfileSelectArgs};

use super::inputs::Input;
use super::outcome::OfflineError;

/// The engine with the built-in profiles plus `--profile-file`s, and the
/// embedding model when a profile in `used` needs it; a bad file or a
/// missing model is a usage error naming it.
pub fn engine_for(select: &ProfileSelectArgs, used: &[&str]) -> Result<Engine, OfflineError> {
    crate::profiles::load_engine(
        None,
        &select.profile_files,
        select.experimental,
        &select.semantic_settings(),
        used,
    )
    .map_err(OfflineError::Usage)
}

/// The engine and the profile `chunk` (and `links`) use: `--profile`, else
/// the last `--profile-file`'s profile, else the default; checked before any
/// input is read.
pub fn engine_and_profile(args: &ChunkArgs) -> Result<(Engine, String), OfflineError> {
    let name = match (&args.profile, args.select.profile_files.last()) {
        (Some(name), _) => name.clone(),
        (None, Some(file)) => fs::read_to_string(file)
            .ok()
            .and_then(|src| crate::profiles::profile_name_in(&src))
            .unwrap_or_else(|| shared::profile::DEFAULT_PROFILE.to_owned()),
        (None, None) => shared::profile::DEFAULT_PROFILE.to_owned(),
    };
    let mut engine = engine_for(&args.select, &[&name])?;
    if let Some(mode) = args.breadcrumb_mode {
        engine.set_breadcrumb_mode(mode.mode());
    }
    engine
        .profile(Some(&name))
        .map_err(|e| OfflineError::Usage(e.to_string()))?;
    Ok((engine, name))
}

/// `--metadata FILE.json`: a JSON object, else a usage error naming the file.
pub(crate) fn read_metadata(args: &ChunkArgs) -> Result<Option<serde_json::Value>, OfflineError> {
    let Some(path) = &args.metadata else {
        return Ok(None);
    };
    let shown = path.display();
    let bytes = fs::read(path)
        .map_err(|e| OfflineError::Usage(format!("cannot read --metadata {shown}: {e}")))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| OfflineError::Usage(format!("--metadata {shown} is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(OfflineError::Usage(format!(
            "--metadata {shown} must hold a JSON object"
        )));
    }
    Ok(Some(value))
}

/// The usage checks that need the input list: something to do, and the
/// per-document flags only with a single document.
pub(super) fn check_inputs(args: &ChunkArgs, inputs: &[Input]) -> Result<(), OfflineError> {
    if inputs.is_empty() {
        let given: Vec<_> = args.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(OfflineError::Usage(format!(
            "no input files found: no *.md files under {}",
            given.join(", ")
        )));
    }
    if inputs.len() > 1 {
        let per_document = [
            ("--document-id", args.document_id.is_some()),
            ("--source-version", args.source_version.is_some()),
            ("--title", args.title.is_some()),
            ("--metadata", args.metadata.is_some()),
        ];
        let used: Vec<_> = per_document
            .iter()
            .filter(|(_, set)| *set)
            .map(|(flag, _)| *flag)
            .collect();
        if !used.is_empty() {
            return Err(OfflineError::Usage(format!(
                "{} can only be used with a single input file, but {} were given or found \
                 (without it, each file gets its own default)",
                used.join(" and "),
                inputs.len()
            )));
        }
    }
    Ok(())
}

/// The metadata of one file: the flags where given, else the per-file
/// defaults documented in `chunk --help`. Without `--title` the engine
/// takes the first H1, else the file name (`file_path`), as the title.
pub fn document_meta(args: &ChunkArgs, path: &Path, markdown: &[u8]) -> DocumentMeta {
    let mut meta = default_meta(&args.tenant, path, markdown);
    if let Some(id) = &args.document_id {
        meta.document_id = id.clone();
    }
    if let Some(v) = &args.source_version {
        meta.source_version_id = v.clone();
    }
    meta.title = args.title.clone();
    meta
}

/// The per-file defaults: document id = the file name without its
/// extension, source version from the bytes, the path as given.
pub(crate) fn default_meta(tenant: &str, path: &Path, markdown: &[u8]) -> DocumentMeta {
    DocumentMeta {
        tenant_id: tenant.to_owned(),
        document_id: file_stem(path),
        source_version_id: default_source_version(markdown),
        title: None,
        source_url: None,
        file_path: Some(path.display().to_string()),
        metadata: None,
    }
}

/// Applies a metadata object as the worker applies a message's: carried onto
/// every chunk; its title and source URL used where no flag gave one.
pub fn with_metadata(meta: &mut DocumentMeta, metadata: &serde_json::Value) {
    meta.apply_metadata(metadata);
}

/// `sha256:` + the first 16 hex digits of the sha256 of the file's bytes:
/// changes whenever the content does, and is the same on every machine.
pub fn default_source_version(markdown: &[u8]) -> String {
    DocumentMeta::default_source_version(markdown)
}

/// The file name without its last extension (`docs/intro.md` -> `intro`).
pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
