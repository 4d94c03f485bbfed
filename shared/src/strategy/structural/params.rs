//! The structural strategy's parameters and how they are read.

use crate::strategy::params::{ParamError, Params, MAX_HARD_MAX, TARGET_TOKENS};

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

/// The structural strategy's parameters (`[params]` of its profiles).
#[derive(Debug, Clone, PartialEq)]
pub struct StructuralParams {
    /// Packing aims at this size.
    pub target_tokens: usize,
    /// Packing stops before passing this (equals the hard max when not set).
    pub soft_max_tokens: usize,
    /// Without a soft max (the Russian enterprise specification), a chunk closes once it reaches the
    /// target: blocks are added "until the target is reached".
    pub close_at_target: bool,
    /// No chunk is ever larger.
    pub hard_max_tokens: usize,
    /// Chunks below this are allowed only where the Russian enterprise specification allows them.
    pub min_tokens: usize,
    /// Prose overlap policy.
    pub overlap: Overlap,
    /// The overlap as written (`percent_of_target = 15`), for printing.
    pub(super) overlap_spec: toml::Table,
}

impl StructuralParams {
    /// Parameters given in code (tests, embedding programs): no range checks
    /// beyond consistency of the budgets.
    pub fn new(
        target_tokens: usize,
        soft_max_tokens: Option<usize>,
        hard_max_tokens: usize,
        min_tokens: usize,
        overlap: Overlap,
    ) -> Self {
        let mut overlap_spec = toml::Table::new();
        match overlap {
            Overlap::None => {}
            Overlap::Tokens {
                tokens,
                sentence_aligned,
            } => {
                overlap_spec.insert("tokens".into(), (tokens as i64).into());
                overlap_spec.insert("sentence_aligned".into(), sentence_aligned.into());
            }
            Overlap::Sentences(n) => {
                overlap_spec.insert("sentences".into(), (n as i64).into());
            }
        }
        Self {
            target_tokens,
            soft_max_tokens: soft_max_tokens.unwrap_or(hard_max_tokens),
            close_at_target: soft_max_tokens.is_none(),
            hard_max_tokens,
            min_tokens,
            overlap,
            overlap_spec,
        }
    }

    pub(crate) fn parse(p: &Params<'_>) -> Result<Self, ParamError> {
        let target = p.usize_in("target_tokens", None, TARGET_TOKENS)?;
        let hard = p.usize_in("hard_max_tokens", None, 16..=MAX_HARD_MAX)?;
        let soft = p.opt_usize_in("soft_max_tokens", 1..=MAX_HARD_MAX)?;
        let min = p.usize_in("min_tokens", Some(0), 0..=MAX_HARD_MAX)?;
        let soft_or_hard = soft.unwrap_or(hard);
        if !(min <= target && target <= soft_or_hard && soft_or_hard <= hard) {
            return Err(ParamError(format!(
                "budgets must satisfy min <= target <= soft_max <= hard_max, got {min} <= {target} <= {soft_or_hard} <= {hard}"
            )));
        }
        let mut spec = toml::Table::new();
        let overlap = match p.table("overlap")? {
            None => Overlap::None,
            Some(o) => {
                let percent = o.opt_usize_in("percent_of_target", 0..=49)?;
                let tokens = o.opt_usize_in("tokens", 0..=(hard / 2).saturating_sub(1))?;
                let sentences = o.opt_usize_in("sentences", 0..=8)?;
                let aligned = o.bool_or("sentence_aligned", false)?;
                let overlap = match (percent, tokens, sentences) {
                    (None, None, None) => Overlap::None,
                    (Some(pct), None, None) => Overlap::Tokens {
                        tokens: target * pct / 100,
                        sentence_aligned: aligned,
                    },
                    (None, Some(t), None) => Overlap::Tokens {
                        tokens: t,
                        sentence_aligned: aligned,
                    },
                    (None, None, Some(n)) => Overlap::Sentences(n),
                    _ => {
                        return Err(p.error(
                            "overlap",
                            "takes exactly one of percent_of_target (0..=49), tokens (< hard_max/2) or sentences (0..=8)",
                        ))
                    }
                };
                for (k, v) in [
                    ("percent_of_target", percent),
                    ("tokens", tokens),
                    ("sentences", sentences),
                ] {
                    if let Some(v) = v {
                        spec.insert(k.into(), (v as i64).into());
                    }
                }
                if sentences.is_none() && overlap != Overlap::None {
                    spec.insert("sentence_aligned".into(), aligned.into());
                }
                o.finish(&[
                    "percent_of_target",
                    "tokens",
                    "sentences",
                    "sentence_aligned",
                ])?;
                overlap
            }
        };
        let mut params = Self::new(target, soft, hard, min, overlap);
        params.overlap_spec = spec;
        Ok(params)
    }
}

