//! Chunking profiles: a strategy and its parameters as data (TOML), checked
//! once when loaded.
//!
//! A profile has common keys (name, description, strategy, tokenizer,
//! granularity, id formula, breadcrumb mode) and a `[params]` table that the
//! named strategy parses and validates itself ([`crate::strategy::Strategy`]).
//! The built-in profiles live beside their strategy
//! (`strategy/<name>/profiles/*.toml`) and are compiled in; more come from files at run time (the caller reads them: this crate
//! does no I/O). [`Profile::to_toml`] prints a profile in the same format, with
//! every parameter spelled out, so a printed profile loads again.

pub mod auxiliary;
pub mod window;

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Deserialize;

use crate::chunk::record::Granularity;
use crate::error::ChunkError;
use crate::strategy::params::Params;
use crate::strategy::{Chunker, Limits, Registry, Rules};
use crate::tokens::TokenizerKind;

pub use auxiliary::{rank, Auxiliary};
pub use window::{EmbedderWindow, WindowTokenizer};

/// The profile used when none is named.
pub const DEFAULT_PROFILE: &str = "spec-v1";

/// Which stable-id formula a profile uses (SPEC 3.5).
///
/// Profile files name it `text` or `span`; the names the formulas had first,
/// `seed000` and `seed003`, still load. Only the variant reaches the hash
/// (`ids::chunk_id`), never its name, so renaming changed no chunk id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdFormula {
    /// `sha256(tenant|document|version|ordinal|canonical_text)`: the
    /// chunk's text and place in the version.
    #[serde(alias = "seed000")]
    Text,
    /// `sha256(document:block_start:block_end:char_start:char_end)`: the
    /// chunk's span in the document.
    #[serde(alias = "seed003")]
    Span,
}

impl IdFormula {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Span => "span",
        }
    }
}

/// When `embed_text` gets a breadcrumb prefix (seed 002 `breadcrumbMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreadcrumbMode {
    /// Only where the chunk lacks context (see `chunk::build`).
    Conditional,
    /// Always prefix the full breadcrumb.
    Always,
    /// Never: `embed_text == chunk_text`.
    None,
}

impl BreadcrumbMode {
    /// The TOML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conditional => "conditional",
            Self::Always => "always",
            Self::None => "none",
        }
    }
}

/// Where a profile was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileOrigin {
    /// Compiled into the library.
    Builtin,
    /// Loaded from this file (as the caller named it).
    File(String),
}

impl ProfileOrigin {
    /// `built-in` or the file name, for listings and messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Builtin => "built-in".to_owned(),
            Self::File(f) => format!("file {f}"),
        }
    }
}

/// A validated chunking profile: common settings and the configured strategy.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Name (`spec-v1`).
    pub name: String,
    /// One line for listings and error messages.
    pub description: String,
    /// Registered strategy that runs it (`structural`).
    pub strategy: String,
    /// Tokenizer all budgets are measured in.
    pub tokenizer: TokenizerKind,
    /// Granularity of the produced chunks.
    pub granularity: Granularity,
    /// Stable-id formula.
    pub id_formula: IdFormula,
    /// Breadcrumb policy for `embed_text`.
    pub breadcrumb: BreadcrumbMode,
    /// Where it was defined.
    pub origin: ProfileOrigin,
    /// The strategy is marked experimental in the registry.
    pub experimental: bool,
    /// `strategy:version` (`structural:1.0.0`), recorded on every chunk.
    pub chunker_version: String,
    /// The embedder the chunks are made for (`[embedder]`): `embed_text`
    /// fits its window and records carry `embed_token_count`.
    pub embedder: Option<EmbedderWindow>,
    /// `deprecated = true` (seed 001): still usable, but users are told,
    /// and pointed at `replacement` when one is named.
    pub deprecation: Option<Deprecation>,
    /// Auxiliary granularities (`[[auxiliary]]`), run beside the primary
    /// when `multi_granularity` is on.
    pub auxiliaries: Vec<Auxiliary>,
    /// `multi_granularity` (default true): false runs the primary alone,
    /// exactly as a profile without auxiliaries.
    pub multi_granularity: bool,
    /// `strategy:version` of the primary alone.
    primary_version: String,
    /// The granularity whose ids are not namespaced: the profile's own, or
    /// for an auxiliary's sub-profile the main profile's.
    pub(crate) id_primary: Granularity,
    chunker: Arc<dyn Chunker>,
}

/// A deprecated profile's successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The profile to use instead (`replacement = "..."`), if any.
    pub replacement: Option<String>,
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.to_toml() == other.to_toml()
    }
}

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
            name: raw.name,
            description: raw.description,
            strategy: raw.strategy,
            tokenizer,
            granularity: raw.granularity,
            id_formula: raw.id_formula,
            breadcrumb: raw.breadcrumb_mode,
            origin,
            experimental: strategy.experimental(),
            chunker_version: version.clone(),
            embedder,
            deprecation,
            auxiliaries: Vec::new(),
            multi_granularity: raw.multi_granularity.unwrap_or(true),
            primary_version: version,
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

    /// Turns the auxiliaries on or off (the profile's `multi_granularity`,
    /// or the engine-wide setting): off, the profile is its primary alone,
    /// `chunker_version` included.
    pub fn set_multi_granularity(&mut self, on: bool) {
        self.multi_granularity = on;
        self.chunker_version = if on && !self.auxiliaries.is_empty() {
            let mut v = self.primary_version.clone();
            for a in &self.auxiliaries {
                v.push('+');
                v.push_str(&a.profile.primary_version);
            }
            v
        } else {
            self.primary_version.clone()
        };
        let version = self.chunker_version.clone();
        for a in &mut self.auxiliaries {
            a.profile.chunker_version.clone_from(&version);
        }
    }

    /// Every granularity the profile's chunks may have, coarse to fine: the
    /// primary's (and what its strategy adds) and the active auxiliaries'.
    pub fn granularities(&self) -> Vec<Granularity> {
        let mut out = vec![self.granularity];
        out.extend_from_slice(self.chunker.extra_granularities());
        out.extend(
            self.active_auxiliaries()
                .iter()
                .map(|a| a.profile.granularity),
        );
        out.sort_by_key(|g| auxiliary::rank(*g));
        out.dedup();
        out
    }

    /// The auxiliaries that run: none when `multi_granularity` is off.
    pub fn active_auxiliaries(&self) -> &[Auxiliary] {
        if self.multi_granularity {
            &self.auxiliaries
        } else {
            &[]
        }
    }

    /// Whether chunking needs the sentence embedder (the primary's strategy;
    /// auxiliaries never do).
    pub fn needs_embedder(&self) -> bool {
        self.chunker.needs_embedder()
    }

    /// A profile around an already configured chunker (tests and embedding
    /// programs that build parameters in code, bypassing the TOML ranges).
    pub fn with_chunker(
        name: &str,
        strategy: &dyn crate::strategy::Strategy,
        chunker: Arc<dyn Chunker>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            description: String::new(),
            strategy: strategy.name().to_owned(),
            tokenizer: TokenizerKind::Cl100kBase,
            granularity: Granularity::Section,
            id_formula: IdFormula::Text,
            breadcrumb: BreadcrumbMode::Conditional,
            origin: ProfileOrigin::Builtin,
            experimental: strategy.experimental(),
            chunker_version: format!("{}:{}", strategy.name(), strategy.version()),
            embedder: None,
            deprecation: None,
            auxiliaries: Vec::new(),
            multi_granularity: true,
            primary_version: format!("{}:{}", strategy.name(), strategy.version()),
            id_primary: Granularity::Section,
            chunker,
        }
    }

    /// The configured strategy.
    pub fn chunker(&self) -> &dyn Chunker {
        self.chunker.as_ref()
    }

    /// Sizes every chunk of this profile keeps.
    pub fn limits(&self) -> Limits {
        self.chunker.limits()
    }

    /// No chunk is ever larger (tokens of `chunk_text`).
    pub fn hard_max_tokens(&self) -> usize {
        self.chunker.limits().hard_max_tokens
    }

    /// The validation rules the strategy declares on top of the universal ones.
    pub fn rules(&self) -> Rules {
        self.chunker.rules()
    }

    /// The profile as TOML, every parameter spelled out; loads again as the
    /// same profile.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
        let _ = writeln!(out, "name = {}", quote(&self.name));
        let _ = writeln!(out, "description = {}", quote(&self.description));
        let _ = writeln!(out, "strategy = {}", quote(&self.strategy));
        let _ = writeln!(out, "tokenizer = {}", quote(self.tokenizer.name()));
        let _ = writeln!(out, "granularity = {}", quote(self.granularity.as_str()));
        let _ = writeln!(out, "id_formula = {}", quote(self.id_formula.as_str()));
        let _ = writeln!(out, "breadcrumb_mode = {}", quote(self.breadcrumb.as_str()));
        if let Some(d) = &self.deprecation {
            out.push_str("deprecated = true\n");
            if let Some(r) = &d.replacement {
                let _ = writeln!(out, "replacement = {}", quote(r));
            }
        }
        if !self.auxiliaries.is_empty() {
            let _ = writeln!(out, "multi_granularity = {}", self.multi_granularity);
        }
        if let Some(e) = &self.embedder {
            out.push_str("\n[embedder]\n");
            out.push_str(&e.to_toml());
        }
        out.push_str("\n[params]\n");
        for (k, v) in &self.chunker.params() {
            let _ = writeln!(out, "{k} = {}", inline_value(v));
        }
        for a in &self.auxiliaries {
            out.push_str(&a.to_toml());
        }
        out
    }

    /// The effective parameters, as `key=value` pairs on one line.
    pub fn params_line(&self) -> String {
        self.chunker
            .params()
            .iter()
            .map(|(k, v)| format!("{k}={}", inline_value(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A TOML value on one line: strings as basic strings with escapes (a JSON
/// string is a valid TOML basic string), arrays and tables inline.
pub(crate) fn inline_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        toml::Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(inline_value)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        toml::Value::Table(t) => format!(
            "{{ {} }}",
            t.iter()
                .map(|(k, v)| format!("{k} = {}", inline_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
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
