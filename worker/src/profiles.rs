//! Chunking profiles at run time: the engine built from the built-in
//! profiles plus profile files (`profiles.dir`, CLI `--profile-file`), the
//! experimental opt-in, and which profile a message gets (the Chunking System specification
//! "per-source profile").
//!
//! Selection, first match wins: the message's `profile`, then
//! `chunking.tenants.<tenant>.profiles_by_source_type.<type>`, then
//! `chunking.tenants.<tenant>.profile`, then
//! `chunking.profiles_by_source_type.<type>`, then `chunking.default_profile`.
//! Every configured name is checked against the engine at start-up, so an
//! unknown or disabled profile stops the process naming the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use shared::Engine;

use embed::MiniLm;

use crate::semantic::{RawSemantic, SemanticSettings};

/// `[chunking]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawChunking {
    #[serde(default)]
    default_profile: Option<String>,
    #[serde(default)]
    profiles_by_source_type: BTreeMap<String, String>,
    #[serde(default)]
    tenants: BTreeMap<String, RawTenantChunking>,
    #[serde(default = "multi_default")]
    multi_granularity: bool,
}

fn multi_default() -> bool {
    true
}

impl Default for RawChunking {
    fn default() -> Self {
        Self {
            default_profile: None,
            profiles_by_source_type: BTreeMap::new(),
            tenants: BTreeMap::new(),
            multi_granularity: true,
        }
    }
}

/// `[chunking.tenants.<tenant>]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTenantChunking {
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    profiles_by_source_type: BTreeMap<String, String>,
}

/// `[profiles]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProfiles {
    #[serde(default)]
    dir: String,
}

/// `[experimental]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExperimental {
    #[serde(default)]
    enabled: bool,
}

/// A profile setting that does not hold: the dotted key and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid setting `{key}`: {reason}")]
pub struct ProfileSettingError {
    /// Dotted key, e.g. `chunking.tenants.acme-prod.profile`.
    pub key: String,
    /// Why it is rejected.
    pub reason: String,
}

/// Which profile a tenant's documents get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantProfiles {
    /// `chunking.tenants.<tenant>.profile`.
    pub profile: Option<String>,
    /// `chunking.tenants.<tenant>.profiles_by_source_type`.
    pub by_source_type: BTreeMap<String, String>,
}

/// The validated profile settings and the engine they describe.
#[derive(Debug, Clone)]
pub struct ChunkingSettings {
    /// The one engine of the process: built-in profiles plus files.
    pub engine: Arc<Engine>,
    /// `chunking.default_profile` (`spec-v1` when not set).
    pub default_profile: String,
    /// `chunking.profiles_by_source_type`.
    pub by_source_type: BTreeMap<String, String>,
    /// `chunking.tenants`.
    pub tenants: BTreeMap<String, TenantProfiles>,
    /// `profiles.dir`, if set.
    pub profiles_dir: Option<PathBuf>,
    /// `[semantic]`.
    pub semantic: SemanticSettings,
    /// The sentence-embedding model, when a profile needs it (also inside
    /// the engine; kept here for its counters).
    pub model: Option<Arc<MiniLm>>,
}

impl ChunkingSettings {
    /// The profile name for a message: see the module documentation.
    pub fn select<'a>(
        &'a self,
        tenant_id: &str,
        source_type: Option<&str>,
        message_profile: Option<&'a str>,
    ) -> &'a str {
        if let Some(p) = message_profile {
            return p;
        }
        let tenant = self.tenants.get(tenant_id);
        let by_type = |map: &'a BTreeMap<String, String>| {
            source_type.and_then(|t| map.get(t)).map(String::as_str)
        };
        tenant
            .and_then(|t| by_type(&t.by_source_type))
            .or_else(|| tenant.and_then(|t| t.profile.as_deref()))
            .or_else(|| by_type(&self.by_source_type))
            .unwrap_or(&self.default_profile)
    }
}

/// Logs the use of a deprecated profile (the Chunking System specification): one WARN per profile and
/// minute, naming the replacement; returns the deprecation for the caller
/// (the API adds `Deprecation` and `Link` headers).
pub fn note_use(profile: &shared::Profile) -> Option<&shared::Deprecation> {
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};
    static WARNED: OnceLock<Mutex<BTreeMap<String, Instant>>> = OnceLock::new();
    let deprecation = profile.deprecation.as_ref()?;
    let now = Instant::now();
    let due = WARNED
        .get_or_init(Mutex::default)
        .lock()
        .map(|mut warned| {
            let due = warned
                .get(&profile.name)
                .is_none_or(|at| now.duration_since(*at) >= Duration::from_secs(60));
            if due {
                warned.insert(profile.name.clone(), now);
            }
            due
        })
        .unwrap_or(false);
    if due {
        tracing::warn!(
            profile = %profile.name,
            replacement = deprecation.replacement.as_deref(),
            "a deprecated profile is in use (this warning repeats at most once a minute per profile)"
        );
    }
    Some(deprecation)
}

/// Reads profile files and builds the engine. `files` are `--profile-file`
/// arguments, `dir` a directory whose `*.toml` files are profiles (read in
/// name order). Errors name the file and what is wrong in it.
///
/// The sentence-embedding model is loaded (and given to the engine) when
/// `semantic.enabled`, when one of the profiles named in `used` needs it, or
/// when some profile sets `gpu_required` (then the engine refuses to build
/// without a GPU).
pub fn load_engine(
    dir: Option<&Path>,
    files: &[PathBuf],
    experimental: bool,
    semantic: &SemanticSettings,
    used: &[&str],
) -> Result<Engine, String> {
    build_engine(dir, files, (experimental, true), semantic, used).map(|(engine, _)| engine)
}

/// [`load_engine`], also returning the model when it was loaded.
fn build_engine(
    dir: Option<&Path>,
    files: &[PathBuf],
    (experimental, multi): (bool, bool),
    semantic: &SemanticSettings,
    used: &[&str],
) -> Result<(Engine, Option<Arc<MiniLm>>), String> {
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read profile directory {}: {e}", dir.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .collect();
        found.sort();
        paths.extend(found);
    }
    paths.extend(files.iter().cloned());
    let mut sources = Vec::with_capacity(paths.len());
    for path in &paths {
        let src = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile file {}: {e}", path.display()))?;
        sources.push((path.display().to_string(), src));
    }
    let chat = crate::llm::http_chat();
    let spec = embed::engine::EngineSpec {
        sources: &sources,
        experimental,
        multi_granularity: multi,
        chat: Some(&chat),
    };
    embed::engine::build_engine(spec, &semantic.model_setup(), used)
}

/// The profile name defined in a profile file, without validating it (to
/// select the profile a `--profile-file` adds).
pub fn profile_name_in(src: &str) -> Option<String> {
    let table: toml::Table = src.parse().ok()?;
    table.get("name")?.as_str().map(str::to_owned)
}

/// Validates `[chunking]`, `[profiles]`, `[experimental]` and `[semantic]`:
/// builds the engine (with the embedding model when a configured profile
/// needs it) and checks that every configured profile name can be used.
pub(crate) fn validate(
    chunking: RawChunking,
    profiles: RawProfiles,
    experimental: RawExperimental,
    semantic: RawSemantic,
) -> Result<ChunkingSettings, ProfileSettingError> {
    let semantic = SemanticSettings::try_from(semantic)
        .map_err(|(key, reason)| ProfileSettingError { key, reason })?;
    let profiles_dir = (!profiles.dir.trim().is_empty()).then(|| PathBuf::from(&profiles.dir));
    let default_profile = chunking
        .default_profile
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| shared::profile::DEFAULT_PROFILE.to_owned());
    // Every configured name, with its key.
    let mut named: Vec<(String, String)> =
        vec![("chunking.default_profile".into(), default_profile.clone())];
    for (t, name) in &chunking.profiles_by_source_type {
        named.push((
            format!("chunking.profiles_by_source_type.{t}"),
            name.clone(),
        ));
    }
    for (tenant, raw) in &chunking.tenants {
        if let Some(name) = &raw.profile {
            named.push((format!("chunking.tenants.{tenant}.profile"), name.clone()));
        }
        for (t, name) in &raw.profiles_by_source_type {
            named.push((
                format!("chunking.tenants.{tenant}.profiles_by_source_type.{t}"),
                name.clone(),
            ));
        }
    }
    let used: Vec<&str> = named.iter().map(|(_, n)| n.as_str()).collect();
    let (engine, model) = build_engine(
        profiles_dir.as_deref(),
        &[],
        (experimental.enabled, chunking.multi_granularity),
        &semantic,
        &used,
    )
    .map_err(|reason| ProfileSettingError {
        key: if profiles_dir.is_some() {
            "profiles.dir".into()
        } else {
            "semantic.model_dir".into()
        },
        reason,
    })?;
    for (key, name) in &named {
        engine
            .profile(Some(name))
            .map_err(|e| ProfileSettingError {
                key: key.clone(),
                reason: e.to_string(),
            })?;
    }
    let tenants = chunking
        .tenants
        .into_iter()
        .map(|(tenant, raw)| {
            (
                tenant,
                TenantProfiles {
                    profile: raw.profile,
                    by_source_type: raw.profiles_by_source_type,
                },
            )
        })
        .collect();
    Ok(ChunkingSettings {
        engine: Arc::new(engine),
        default_profile,
        by_source_type: chunking.profiles_by_source_type,
        tenants,
        profiles_dir,
        semantic,
        model,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn settings(src: &str) -> Result<ChunkingSettings, ProfileSettingError> {
        #[derive(Deserialize)]
        struct Doc {
            #[serde(default)]
            chunking: RawChunking,
            #[serde(default)]
            profiles: RawProfiles,
            #[serde(default)]
            experimental: RawExperimental,
            #[serde(default)]
            semantic: RawSemantic,
        }
        let d: Doc = toml::from_str(src).unwrap();
        validate(d.chunking, d.profiles, d.experimental, d.semantic)
    }

    #[test]
    fn selection_goes_message_tenant_type_tenant_type_default() {
        let s = settings(
            r#"
[chunking]
default_profile = "docs-v1"
profiles_by_source_type = { file = "recursive-v1" }
[chunking.tenants.acme-prod]
profile = "enterprise-v1"
profiles_by_source_type = { confluence = "markdown-v1" }
"#,
        )
        .unwrap();
        assert_eq!(
            s.select("acme-prod", Some("confluence"), Some("token-v1")),
            "token-v1"
        );
        assert_eq!(
            s.select("acme-prod", Some("confluence"), None),
            "markdown-v1"
        );
        assert_eq!(s.select("acme-prod", Some("file"), None), "enterprise-v1");
        assert_eq!(s.select("other", Some("file"), None), "recursive-v1");
        assert_eq!(s.select("other", Some("confluence"), None), "docs-v1");
        assert_eq!(s.select("other", None, None), "docs-v1");
        assert_eq!(settings("").unwrap().select("x", None, None), "spec-v1");
    }

    #[test]
    fn an_unknown_profile_names_its_key() {
        let err = settings("[chunking.tenants.acme-prod]\nprofile = \"nope\"\n").unwrap_err();
        assert_eq!(err.key, "chunking.tenants.acme-prod.profile");
        assert!(err.reason.contains("spec-v1"), "{err}");
        let err = settings("[chunking]\nprofiles_by_source_type = { file = \"x\" }\n").unwrap_err();
        assert_eq!(err.key, "chunking.profiles_by_source_type.file");
    }

    #[test]
    fn profile_files_in_the_directory_are_loaded_and_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("cw-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("small.toml"),
            "name = \"small-v1\"\nstrategy = \"recursive\"\n[params]\nchunk_size = 200\nchunk_overlap = 20\n",
        )
        .unwrap();
        let toml_dir = format!("[profiles]\ndir = {:?}\n", dir.display().to_string());
        let s = settings(&format!(
            "{toml_dir}[chunking]\ndefault_profile = \"small-v1\"\n"
        ))
        .unwrap();
        assert_eq!(
            s.engine
                .profile(Some("small-v1"))
                .unwrap()
                .hard_max_tokens(),
            200
        );
        std::fs::write(
            dir.join("bad.toml"),
            "name = \"bad\"\nstrategy = \"token\"\n[params]\nchunk_size = 5\n",
        )
        .unwrap();
        let err = settings(&toml_dir).unwrap_err();
        assert_eq!(err.key, "profiles.dir");
        assert!(
            err.reason.contains("bad.toml") && err.reason.contains("params.chunk_size = 5"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
