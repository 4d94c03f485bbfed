//! The validated profile as the engine holds it: its [`Settings`], the
//! configured chunker, its auxiliaries, and how it prints as TOML.

use std::fmt::Write as _;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::chunk::record::{rank, Granularity};
use crate::profile::settings::{BreadcrumbMode, IdFormula, Settings};
use crate::strategy::chunker::{Chunker, Strategy};
use crate::tokens::TokenizerKind;

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
    /// What strategies read: name, strategy, tokenizer, granularity, id
    /// formula, breadcrumbs, chunker version, embedder window, sizes, rules.
    pub settings: Settings,
    /// One line for listings and error messages.
    pub description: String,
    /// Where it was defined.
    pub origin: ProfileOrigin,
    /// The strategy is marked experimental in the registry.
    pub experimental: bool,
    /// `deprecated = true` (the Chunking System specification): still usable, but users are told,
    /// and pointed at `replacement` when one is named.
    pub deprecation: Option<Deprecation>,
    /// Auxiliary granularities (`[[auxiliary]]`), run beside the primary
    /// when `multi_granularity` is on.
    pub auxiliaries: Vec<Auxiliary>,
    /// `multi_granularity` (default true): false runs the primary alone,
    /// exactly as a profile without auxiliaries.
    pub multi_granularity: bool,
    /// `strategy:version` of the primary alone.
    pub(super) primary_version: String,
    /// The granularity whose ids are not namespaced: the profile's own, or
    /// for an auxiliary's sub-profile the main profile's.
    pub(crate) id_primary: Granularity,
    /// The strategy's own normalization (printed when the profile's differs
    /// or is not the standard one).
    pub(super) strategy_normalization: crate::normalize::Normalization,
    pub(super) chunker: Arc<dyn Chunker>,
}

/// A deprecated profile's successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// The profile to use instead (`replacement = "..."`), if any.
    pub replacement: Option<String>,
}

impl Deref for Profile {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.settings
    }
}

impl DerefMut for Profile {
    fn deref_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }
}

/// One auxiliary granularity of a multi-granularity profile.
#[derive(Debug, Clone)]
pub struct Auxiliary {
    /// The sub-profile that runs it: the main profile's common settings with
    /// this auxiliary's strategy, granularity and parameters.
    pub profile: Profile,
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.to_toml() == other.to_toml()
    }
}

impl Profile {
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
        out.sort_by_key(|g| rank(*g));
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
    pub fn with_chunker(name: &str, strategy: &dyn Strategy, chunker: Arc<dyn Chunker>) -> Self {
        Self {
            settings: Settings {
                name: name.to_owned(),
                strategy: strategy.name().to_owned(),
                tokenizer: TokenizerKind::Cl100kBase,
                granularity: Granularity::Section,
                id_formula: IdFormula::Text,
                breadcrumb: BreadcrumbMode::Conditional,
                chunker_version: format!("{}:{}", strategy.name(), strategy.version()),
                embedder: None,
                normalization: strategy.normalization(),
                limits: chunker.limits(),
                rules: chunker.rules(),
            },
            description: String::new(),
            origin: ProfileOrigin::Builtin,
            experimental: strategy.experimental(),
            deprecation: None,
            auxiliaries: Vec::new(),
            multi_granularity: true,
            primary_version: format!("{}:{}", strategy.name(), strategy.version()),
            id_primary: Granularity::Section,
            strategy_normalization: strategy.normalization(),
            chunker,
        }
    }

    /// The configured strategy.
    pub fn chunker(&self) -> &dyn Chunker {
        self.chunker.as_ref()
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
        let standard = crate::normalize::Normalization::Standard;
        if self.normalization != standard || self.strategy_normalization != standard {
            let _ = writeln!(
                out,
                "normalization = {}",
                quote(self.normalization.as_str())
            );
        }
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

impl Auxiliary {
    /// The `[[auxiliary]]` table that defines it, for `Profile::to_toml`.
    pub(crate) fn to_toml(&self) -> String {
        let p = &self.profile;
        let mut out = String::from("\n[[auxiliary]]\n");
        out.push_str(&format!(
            "strategy = {}\n",
            toml::Value::String(p.strategy.clone())
        ));
        out.push_str(&format!(
            "granularity = {}\n",
            toml::Value::String(p.granularity.as_str().to_owned())
        ));
        out.push_str(&format!(
            "params = {}\n",
            inline_value(&toml::Value::Table(p.chunker().params()))
        ));
        out
    }
}
