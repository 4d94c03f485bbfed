//! Chunking profiles: a strategy and its parameters as data (TOML), checked
//! once when loaded.
//!
//! A profile has common keys (name, description, strategy, tokenizer,
//! granularity, id formula, breadcrumb mode) and a `[params]` table that the
//! named strategy parses and validates itself ([`crate::strategy::chunker::Strategy`]).
//! The built-in profiles live beside their strategy
//! (`strategy/<name>/profiles/*.toml`) and are compiled in; more come from files at run time (the caller reads them: this crate
//! does no I/O). [`Profile::to_toml`] prints a profile in the same format, with
//! every parameter spelled out, so a printed profile loads again.

pub mod auxiliary;
pub mod model;
pub mod settings;
pub mod window;

use std::sync::Arc;

use serde::Deserialize;

use crate::chunk::record::Granularity;
use crate::error::ChunkError;
use crate::strategy::params::Params;
use crate::strategy::Registry;
use crate::tokens::TokenizerKind;

pub use crate::chunk::record::rank;
pub use model::{Auxiliary, Deprecation, Profile, ProfileOrigin};
pub use settings::{BreadcrumbMode, IdFormula, Settings};
pub use window::{EmbedderWindow, WindowTokenizer};

/// The profile used when none is named.
pub const DEFAULT_PROFILE: &str = "spec-v1";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    #[serde(default)]
    description: String,
    strategy: String,
    #[serde(default = "default_tokenizer")]
    tokenizer: String,
    #[serde(default = "default_granularity")]
    granularity: Granularity,
    #[serde(default = "default_id_formula")]
    id_formula: IdFormula,
    #[serde(default = "default_breadcrumb")]
    breadcrumb_mode: BreadcrumbMode,
    #[serde(default)]
    embedder: Option<window::RawWindow>,
    #[serde(default)]
    deprecated: bool,
    #[serde(default)]
    replacement: Option<String>,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    multi_granularity: Option<bool>,
    #[serde(default)]
    normalization: Option<crate::normalize::Normalization>,
    #[serde(default)]
    auxiliary: Vec<auxiliary::RawAuxiliary>,
}

fn default_tokenizer() -> String {
    TokenizerKind::Cl100kBase.name().to_owned()
}
fn default_granularity() -> Granularity {
    Granularity::Section
}
fn default_id_formula() -> IdFormula {
    IdFormula::Text
}
fn default_breadcrumb() -> BreadcrumbMode {
    BreadcrumbMode::Conditional
}

/// A profile name: what may follow `--profile` and appear in a message.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Profile {
    /// Parses and validates one profile from TOML; `registry` supplies the
    /// strategy that checks the `[params]`.
    pub fn parse(
        source: &str,
        origin: ProfileOrigin,
        registry: &Registry,
    ) -> Result<Self, ChunkError> {
        let described = origin.describe();
        let invalid = |name: &str, reason: String| ChunkError::InvalidProfile {
            name: name.to_owned(),
            origin: described.clone(),
            reason,
        };
        let raw: RawProfile = toml::from_str(source)
            .map_err(|e| invalid("<unparsed>", format!("not a valid profile: {e}")))?;
        if !valid_name(&raw.name) {
            return Err(invalid(
                &raw.name,
                "name must be 1-64 ASCII letters, digits, '-', '_' or '.'".into(),
            ));
        }
        let tokenizer = TokenizerKind::parse(&raw.tokenizer).ok_or_else(|| {
            let valid: Vec<_> = TokenizerKind::ALL.iter().map(|k| k.name()).collect();
            invalid(
                &raw.name,
                format!(
                    "unknown tokenizer {:?}; valid: {}",
                    raw.tokenizer,
                    valid.join(", ")
                ),
            )
        })?;
        let strategy = registry.get(&raw.strategy).ok_or_else(|| {
            invalid(
                &raw.name,
                format!(
                    "unknown strategy {:?}; valid strategies: {}",
                    raw.strategy,
                    registry.names().join(", ")
                ),
            )
        })?;
        if let Some(g) = strategy
            .fixed_granularity()
            .filter(|g| *g != raw.granularity)
        {
            return Err(invalid(
                &raw.name,
                format!(
                    "the {} strategy produces {} chunks only; set granularity = {:?}",
                    raw.strategy,
                    g.as_str(),
                    g.as_str()
                ),
            ));
        }
        let embedder = raw
            .embedder
            .map(EmbedderWindow::from_raw)
            .transpose()
            .map_err(|e| invalid(&raw.name, e))?;
        if raw.replacement.is_some() && !raw.deprecated {
            return Err(invalid(
                &raw.name,
                "replacement names a successor, so it needs deprecated = true".into(),
            ));
        }
        if let Some(r) = raw.replacement.as_deref().filter(|r| !valid_name(r)) {
            return Err(invalid(
                &raw.name,
                format!("replacement {r:?} is not a profile name"),
            ));
        }
        let deprecation = raw.deprecated.then(|| Deprecation {
            replacement: raw.replacement.clone(),
        });
        let params = Params::new(&raw.params, "params");
        let chunker = strategy
            .configure(&params)
            .and_then(|c| params.finish(strategy.param_keys()).map(|()| c))
            .map_err(|e| invalid(&raw.name, e.0))?;
        let version = format!("{}:{}", strategy.name(), strategy.version());
        let mut profile = Self {
            settings: Settings {
                name: raw.name,
                strategy: raw.strategy,
                tokenizer,
                granularity: raw.granularity,
                id_formula: raw.id_formula,
                breadcrumb: raw.breadcrumb_mode,
                chunker_version: version.clone(),
                embedder,
                normalization: raw.normalization.unwrap_or(strategy.normalization()),
                limits: chunker.limits(),
                rules: chunker.rules(),
            },
            description: raw.description,
            origin,
            experimental: strategy.experimental(),
            deprecation,
            auxiliaries: Vec::new(),
            multi_granularity: raw.multi_granularity.unwrap_or(true),
            primary_version: version,
            strategy_normalization: strategy.normalization(),
            id_primary: raw.granularity,
            chunker,
        };
        profile.auxiliaries = auxiliary::parse_auxiliaries(&raw.auxiliary, &profile, registry)
            .map_err(|e| invalid(&profile.name, e))?;
        if raw.multi_granularity.is_some() && profile.auxiliaries.is_empty() {
            return Err(invalid(
                &profile.name,
                "multi_granularity applies to profiles with [[auxiliary]] tables; this one has none"
                    .into(),
            ));
        }
        profile.experimental |= profile.auxiliaries.iter().any(|a| a.profile.experimental);
        let multi = profile.multi_granularity;
        profile.set_multi_granularity(multi);
        Ok(profile)
    }
}

/// A set of named profiles, in definition order.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    profiles: Vec<Profile>,
}

impl ProfileSet {
    /// The profiles the registry's strategies ship, in registration order.
    pub fn builtin(registry: &Registry) -> Result<Self, ChunkError> {
        let mut set = Self::default();
        for strategy in registry.iter() {
            for src in strategy.builtin_profiles() {
                set.add(Profile::parse(src, ProfileOrigin::Builtin, registry)?)?;
            }
        }
        Ok(set)
    }

    /// Adds a profile. A name may be defined once; a file that repeats a
    /// built-in profile exactly (`profiles show` output) is accepted as is.
    pub fn add(&mut self, profile: Profile) -> Result<(), ChunkError> {
        if let Some(existing) = self.profiles.iter().find(|p| p.name == profile.name) {
            if existing.to_toml() == profile.to_toml() {
                return Ok(());
            }
            return Err(ChunkError::InvalidProfile {
                name: profile.name.clone(),
                origin: profile.origin.describe(),
                reason: format!(
                    "the name is already taken by the {} profile; give this one another name",
                    existing.origin.describe()
                ),
            });
        }
        self.profiles.push(profile);
        Ok(())
    }

    /// The profile called `name`, or an error listing the valid names.
    pub fn get(&self, name: &str) -> Result<&Profile, ChunkError> {
        self.profiles
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ChunkError::UnknownProfile {
                name: name.to_owned(),
                valid: self.names(),
            })
    }

    /// Every profile name, in definition order.
    pub fn names(&self) -> Vec<String> {
        self.profiles.iter().map(|p| p.name.clone()).collect()
    }

    /// Every profile.
    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.profiles.iter()
    }

    /// Sets every profile's breadcrumb mode.
    pub(crate) fn set_breadcrumb_mode(&mut self, mode: BreadcrumbMode) {
        for p in &mut self.profiles {
            p.breadcrumb = mode;
            for a in &mut p.auxiliaries {
                a.profile.breadcrumb = mode;
            }
        }
    }

    /// Runs every profile's primary strategy alone (the engine-wide
    /// `multi_granularity = false`).
    pub(crate) fn disable_multi_granularity(&mut self) {
        for p in &mut self.profiles {
            p.set_multi_granularity(false);
        }
    }

    /// Attaches `counter` to every profile whose `[embedder] tokenizer` is
    /// spelled `spelling`.
    pub(crate) fn attach_window_tokenizer(
        &mut self,
        spelling: &str,
        counter: &Arc<dyn crate::embed::EmbedTokenizer>,
    ) {
        let attach = |w: &mut Option<EmbedderWindow>| {
            if let Some(w) = w.as_mut().filter(|w| w.tokenizer.spelling() == spelling) {
                w.attach(Arc::clone(counter));
            }
        };
        for p in &mut self.profiles {
            attach(&mut p.embedder);
            for a in &mut p.auxiliaries {
                attach(&mut a.profile.embedder);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::strategy::structural::{Overlap, StructuralParams};

    fn registry() -> Registry {
        Registry::builtin()
    }

    fn parse(src: &str) -> Result<Profile, ChunkError> {
        Profile::parse(src, ProfileOrigin::File("my.toml".into()), &registry())
    }

    #[test]
    fn a_deprecated_profile_names_its_replacement_and_round_trips() {
        let set = ProfileSet::builtin(&registry()).unwrap();
        let base = set
            .get("spec-v1")
            .unwrap()
            .to_toml()
            .replace("name = \"spec-v1\"", "name = \"old-v1\"");
        let with = |extra: &str| base.replace("\n[params]", &format!("{extra}\n[params]"));
        let p = parse(&with("deprecated = true\nreplacement = \"spec-v1\"\n")).unwrap();
        assert_eq!(
            p.deprecation,
            Some(Deprecation {
                replacement: Some("spec-v1".into())
            })
        );
        assert_eq!(parse(&p.to_toml()).unwrap(), p);
        let e = parse(&with("replacement = \"spec-v1\"\n")).unwrap_err();
        assert!(e.to_string().contains("deprecated = true"), "{e}");
        assert!(parse(&base).unwrap().deprecation.is_none());
    }

    #[test]
    fn builtin_profiles_load_with_the_seed_budgets() -> Result<(), ChunkError> {
        let set = ProfileSet::builtin(&registry())?;
        let spec = StructuralParams::of(set.get("spec-v1")?).unwrap();
        assert_eq!(
            (
                spec.target_tokens,
                spec.soft_max_tokens,
                spec.hard_max_tokens
            ),
            (350, 450, 520)
        );
        assert_eq!(
            spec.overlap,
            Overlap::Tokens {
                tokens: 52,
                sentence_aligned: true
            }
        );
        let ent = set.get("enterprise-v1")?;
        let ent_params = StructuralParams::of(ent).unwrap();
        assert_eq!(
            (
                ent_params.target_tokens,
                ent_params.hard_max_tokens,
                ent_params.min_tokens
            ),
            (650, 900, 120)
        );
        assert_eq!(ent.id_formula, IdFormula::Span);
        assert_eq!(set.get("recursive-v1")?.hard_max_tokens(), 1000);
        assert_eq!(set.get("token-v1")?.hard_max_tokens(), 512);
        Ok(())
    }

    #[test]
    fn the_id_formulas_first_names_still_load_and_print_as_the_new_ones() {
        let set = ProfileSet::builtin(&registry()).unwrap();
        let base = set.get("spec-v1").unwrap().to_toml();
        assert!(base.contains("id_formula = \"text\""), "{base}");
        for (old, formula, new) in [
            ("seed000", IdFormula::Text, "text"),
            ("seed003", IdFormula::Span, "span"),
        ] {
            let src = base.replace("id_formula = \"text\"", &format!("id_formula = \"{old}\""));
            let p = parse(&src).unwrap();
            assert_eq!(p.id_formula, formula);
            assert!(p.to_toml().contains(&format!("id_formula = \"{new}\"")));
        }
    }

    #[test]
    fn every_builtin_profile_prints_as_toml_that_loads_as_the_same_profile(
    ) -> Result<(), ChunkError> {
        let set = ProfileSet::builtin(&registry())?;
        for p in set.iter() {
            let again = parse(&p.to_toml())?;
            assert_eq!(again.to_toml(), p.to_toml(), "{}", p.name);
            // And the set accepts it as a repeat of the built-in.
            let mut copy = set.clone();
            copy.add(again)?;
            assert_eq!(copy.names(), set.names());
        }
        Ok(())
    }

    #[test]
    fn unknown_profile_error_lists_the_valid_names() -> Result<(), ChunkError> {
        let err = ProfileSet::builtin(&registry())?
            .get("spec-v9")
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("spec-v9")
                && msg.contains("spec-v1, enterprise-v1, docs-v1, recursive-v1"),
            "{msg}"
        );
        Ok(())
    }

    #[test]
    fn bad_profiles_are_rejected_naming_the_file_key_value_and_valid_choices() {
        let base = r#"name = "bad"
strategy = "structural"
tokenizer = "cl100k_base"

[params]
target_tokens = 400
hard_max_tokens = 500
"#;
        assert!(parse(base).is_ok());
        let err = parse(&base.replace("= 400", "= 600"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"bad\"") && err.contains("my.toml") && err.contains("min <= target"),
            "{err}"
        );
        let err = parse(&base.replace("cl100k_base", "gpt2"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("gpt2") && err.contains("o200k_base"), "{err}");
        let err = parse(&base.replace("= 400", "= 50"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("params.target_tokens = 50 is out of range; valid: 100..=4096"),
            "{err}"
        );
        let err = parse(&format!("{base}colour = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown key params.colour; valid keys:") && err.contains("target_tokens"),
            "{err}"
        );
        let err = parse(&base.replace("structural", "fancy"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"fancy\"")
                && err.contains("my.toml")
                && err.contains("structural, recursive"),
            "{err}"
        );
        let err = parse("name = \"x\"\nstrategy = \n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("my.toml") && err.contains("not a valid profile"),
            "{err}"
        );
    }

    #[test]
    fn a_file_may_not_take_a_builtin_name_with_other_settings() -> Result<(), ChunkError> {
        let mut set = ProfileSet::builtin(&registry())?;
        let src = set.get("spec-v1")?.to_toml().replace("= 350", "= 300");
        let err = set.add(parse(&src)?).unwrap_err().to_string();
        assert!(err.contains("already taken by the built-in"), "{err}");
        Ok(())
    }
}
