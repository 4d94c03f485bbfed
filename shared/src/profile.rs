//! Chunking profiles: budgets and policies as data (TOML), validated on load.
//!
//! The built-in profiles live in `shared/profiles/*.toml` and are compiled in,
//! so the engine needs no files at run time. A profile is parsed raw, then
//! checked once into a [`Profile`] whose fields are consistent.

use serde::Deserialize;

use crate::chunk::record::Granularity;
use crate::error::ChunkError;
use crate::tokens::TokenizerKind;

const BUILTIN: [(&str, &str); 3] = [
    ("spec-v1", include_str!("../../profiles/spec-v1.toml")),
    (
        "enterprise-v1",
        include_str!("../../profiles/enterprise-v1.toml"),
    ),
    ("docs-v1", include_str!("../../profiles/docs-v1.toml")),
];

/// The profile used when none is named.
pub const DEFAULT_PROFILE: &str = "spec-v1";

/// How much of the previous chunk a prose chunk repeats at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// No overlap.
    None,
    /// Up to this many tokens; if `sentence_aligned`, starting at a sentence start.
    Tokens {
        /// Token budget of the overlap.
        tokens: usize,
        /// Start the overlap at a sentence boundary.
        sentence_aligned: bool,
    },
    /// The last `n` sentences of the previous chunk (still within the hard max).
    Sentences(usize),
}

/// Which stable-id formula a profile uses (SPEC 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdFormula {
    /// Seed 000: `sha256(tenant|document|version|ordinal|canonical_text)`.
    Seed000,
    /// Seed 003: `sha256(document:block_start:block_end:char_start:char_end)`.
    Seed003,
}

/// When `embed_text` gets a breadcrumb prefix (seed 002 `breadcrumbMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreadcrumbMode {
    /// Only where the chunk lacks context (see `chunk::embed`).
    Conditional,
    /// Always prefix the full breadcrumb.
    Always,
    /// Never: `embed_text == chunk_text`.
    None,
}

/// A validated chunking profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Name (`spec-v1`).
    pub name: String,
    /// One line for `--help` and error messages.
    pub description: String,
    /// Registered strategy that runs it (`structural`).
    pub strategy: String,
    /// Tokenizer all budgets are measured in.
    pub tokenizer: TokenizerKind,
    /// Granularity of the produced chunks.
    pub granularity: Granularity,
    /// Packing aims at this size.
    pub target_tokens: usize,
    /// Packing stops before passing this (equals the hard max when not set).
    pub soft_max_tokens: usize,
    /// Without a soft max (seed 003), a chunk closes once it reaches the
    /// target: blocks are added "until the target is reached".
    pub close_at_target: bool,
    /// No chunk is ever larger.
    pub hard_max_tokens: usize,
    /// Chunks below this are allowed only where seed 003 allows them.
    pub min_tokens: usize,
    /// Prose overlap policy.
    pub overlap: Overlap,
    /// Stable-id formula.
    pub id_formula: IdFormula,
    /// Breadcrumb policy for `embed_text`.
    pub breadcrumb: BreadcrumbMode,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    #[serde(default)]
    description: String,
    strategy: String,
    tokenizer: String,
    granularity: Granularity,
    target_tokens: usize,
    soft_max_tokens: Option<usize>,
    hard_max_tokens: usize,
    #[serde(default)]
    min_tokens: usize,
    #[serde(default)]
    overlap: RawOverlap,
    id_formula: IdFormula,
    breadcrumb_mode: BreadcrumbMode,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverlap {
    percent_of_target: Option<usize>,
    tokens: Option<usize>,
    sentences: Option<usize>,
    #[serde(default)]
    sentence_aligned: bool,
}

impl Profile {
    /// Parses and validates one profile from TOML.
    pub fn from_toml(source: &str) -> Result<Self, ChunkError> {
        let raw: RawProfile = toml::from_str(source).map_err(|e| ChunkError::InvalidProfile {
            name: "<unparsed>".into(),
            reason: e.to_string(),
        })?;
        let invalid = |reason: String| ChunkError::InvalidProfile {
            name: raw.name.clone(),
            reason,
        };
        let tokenizer = TokenizerKind::parse(&raw.tokenizer).ok_or_else(|| {
            let valid: Vec<_> = TokenizerKind::ALL.iter().map(|k| k.name()).collect();
            invalid(format!(
                "unknown tokenizer {:?}; valid: {}",
                raw.tokenizer,
                valid.join(", ")
            ))
        })?;
        let soft_max = raw.soft_max_tokens.unwrap_or(raw.hard_max_tokens);
        if raw.hard_max_tokens < 16 {
            return Err(invalid(format!(
                "hard_max_tokens {} is below 16",
                raw.hard_max_tokens
            )));
        }
        if !(raw.min_tokens <= raw.target_tokens
            && raw.target_tokens <= soft_max
            && soft_max <= raw.hard_max_tokens)
        {
            return Err(invalid(format!(
                "budgets must satisfy min <= target <= soft_max <= hard_max, got {} <= {} <= {} <= {}",
                raw.min_tokens, raw.target_tokens, soft_max, raw.hard_max_tokens
            )));
        }
        let o = &raw.overlap;
        let overlap = match (o.percent_of_target, o.tokens, o.sentences) {
            (None, None, None) => Overlap::None,
            (Some(p), None, None) if p < 50 => Overlap::Tokens {
                tokens: raw.target_tokens * p / 100,
                sentence_aligned: o.sentence_aligned,
            },
            (None, Some(t), None) if t < raw.hard_max_tokens / 2 => {
                Overlap::Tokens { tokens: t, sentence_aligned: o.sentence_aligned }
            }
            (None, None, Some(n)) if n <= 8 => Overlap::Sentences(n),
            _ => {
                return Err(invalid(
                    "overlap takes exactly one of percent_of_target (< 50), tokens (< hard_max/2) or sentences (<= 8)"
                        .into(),
                ))
            }
        };
        Ok(Self {
            name: raw.name,
            description: raw.description,
            strategy: raw.strategy,
            tokenizer,
            granularity: raw.granularity,
            target_tokens: raw.target_tokens,
            soft_max_tokens: soft_max,
            close_at_target: raw.soft_max_tokens.is_none(),
            hard_max_tokens: raw.hard_max_tokens,
            min_tokens: raw.min_tokens,
            overlap,
            id_formula: raw.id_formula,
            breadcrumb: raw.breadcrumb_mode,
        })
    }
}

/// A set of named profiles.
#[derive(Debug, Clone)]
pub struct ProfileSet {
    profiles: Vec<Profile>,
}

impl ProfileSet {
    /// The profiles compiled into the library.
    pub fn builtin() -> Result<Self, ChunkError> {
        let profiles = BUILTIN
            .iter()
            .map(|(file_name, src)| {
                let p = Profile::from_toml(src)?;
                if p.name != *file_name {
                    return Err(ChunkError::InvalidProfile {
                        name: p.name,
                        reason: format!("defined in {file_name}.toml under another name"),
                    });
                }
                Ok(p)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { profiles })
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    #[test]
    fn builtin_profiles_load_with_the_seed_budgets() -> Result<(), ChunkError> {
        let set = ProfileSet::builtin()?;
        let spec = set.get("spec-v1")?;
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
        assert_eq!(
            (ent.target_tokens, ent.hard_max_tokens, ent.min_tokens),
            (650, 900, 120)
        );
        assert_eq!(ent.id_formula, IdFormula::Seed003);
        Ok(())
    }

    #[test]
    fn unknown_profile_error_lists_the_valid_names() -> Result<(), ChunkError> {
        let err = ProfileSet::builtin()?.get("spec-v9").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("spec-v9") && msg.contains("spec-v1, enterprise-v1, docs-v1"),
            "{msg}"
        );
        Ok(())
    }

    #[test]
    fn inconsistent_budgets_are_rejected_naming_the_profile() {
        let src = r#"name = "bad"
strategy = "structural"
tokenizer = "cl100k_base"
granularity = "section"
target_tokens = 600
hard_max_tokens = 500
id_formula = "seed000"
breadcrumb_mode = "none""#;
        let err = Profile::from_toml(src).unwrap_err().to_string();
        assert!(
            err.contains("\"bad\"") && err.contains("min <= target"),
            "{err}"
        );
        let src = src.replace("cl100k_base", "gpt2");
        let err = Profile::from_toml(&src).unwrap_err().to_string();
        assert!(err.contains("gpt2") && err.contains("o200k_base"), "{err}");
    }
}
