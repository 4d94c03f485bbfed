//! The `clinical_role` strategy, profile `clinical-v1`: every sentence,
//! list item and table is tagged with a clinical role by
//! [`crate::clinical`] (rules and lexicons: heading path, registry fields,
//! cue phrases, dose and statistics patterns; English, with Russian
//! headings and cues), and chunks end where the role changes:
//! - consecutive units of one role are packed up to `target_tokens`; a
//!   run over `hard_max_tokens` is cut at a heading, a role change or a
//!   packing point (the [`crate::chunk::topic`] packer); a heading is glued
//!   to what follows, and starts a chunk when the role after it differs
//!   from the run before it (a section of the same role continues the run,
//!   up to the target);
//! - an `endpoint` unit and the units right after it in its section that
//!   report an effect (p-values, CIs, ratios, percentages) stay in one
//!   chunk;
//! - a role change closes a chunk once it holds `min_tokens` (0: always);
//! - each chunk gets `facet_json = {"facet_type": ..., "role_confidence":
//!   ..., "roles": {...}}`: `facet_type` is the chunk's dominant role (most
//!   units) when that role's mean confidence reaches
//!   `confidence_threshold`, else `general`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::chunk::topic::{fit_unit, pack, PackLimits, Unit, UnitKind, GLUED, HEADING_GAP};
use crate::chunk::topic_explain::explain_gaps;
use crate::clinical::{reports_effect, role_units, tag_units, Role, Shape, Tag};
use crate::error::ChunkError;
use crate::explain::reason::EndReason;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::semantic::{parse_sizes, sizes_limits, sizes_table};

/// Clinical role chunking.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClinicalRole;

const KEYS: [&str; 4] = [
    "target_tokens",
    "hard_max_tokens",
    "min_tokens",
    "confidence_threshold",
];

/// Default `confidence_threshold`.
pub const DEFAULT_THRESHOLD: f64 = 0.6;

impl Strategy for ClinicalRole {
    fn name(&self) -> &'static str {
        "clinical_role"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Clinical sentence roles (PICO, eligibility, endpoint, adverse event, dose/regimen): chunks end where the role changes; facet_type per chunk"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/clinical-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let sizes = parse_sizes(p, (400, 800, 0))?;
        let threshold = p.f64_in("confidence_threshold", DEFAULT_THRESHOLD, 0.0..=1.0)?;
        Ok(Arc::new(ClinicalChunker { sizes, threshold }))
    }
}

/// The clinical_role strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct ClinicalChunker {
    sizes: PackLimits,
    /// A chunk's dominant role becomes its `facet_type` when its mean
    /// confidence reaches this.
    pub threshold: f64,
}

impl Chunker for ClinicalChunker {
    fn limits(&self) -> Limits {
        sizes_limits(&self.sizes)
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = sizes_table(&self.sizes);
        t.insert("confidence_threshold".into(), self.threshold.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let (units, tags) = tagged_units(input, self.sizes.hard_max_tokens);
        let (candidate, coherence) = gaps(text, &units, &tags, self.sizes.target_tokens);
        // Headings are plain units to the packer: `gaps` decides where a
        // section continues the run before it.
        let flat: Vec<Unit> = units
            .iter()
            .map(|u| Unit {
                kind: UnitKind::Sentence,
                ..u.clone()
            })
            .collect();
        let spans = pack(&flat, &candidate, &coherence, input.tokens, self.sizes);
        let mut chunks = chunks_from_spans(input, &spans, true);
        for c in &mut chunks {
            let own = c.byte_start as usize..c.byte_end as usize;
            c.facet_json = Some(facet(&units, &tags, &own, self.threshold));
        }
        Ok(chunks)
    }

    fn explain(&self, input: &ChunkInput<'_>, chunks: &[Chunk]) -> Option<Vec<EndReason>> {
        let text = input.doc.text.as_str();
        let (units, tags) = tagged_units(input, self.sizes.hard_max_tokens);
        let (candidate, coherence) = gaps(text, &units, &tags, self.sizes.target_tokens);
        let role = |i: usize| tags[i].map_or(Role::General, |t| t.role).name().to_owned();
        let gaps = (units.as_slice(), candidate.as_slice(), coherence.as_slice());
        // A role change is the candidate `gaps` scores 0.
        Some(explain_gaps(input, chunks, gaps, self.limits(), |g, score| {
            (score.abs() < f32::EPSILON && g > 0).then(|| EndReason::RoleChange {
                from: role(g - 1),
                to: role(g),
            })
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The packer's units (role units cut to the hard max) and the tag of
/// each (`None` for headings).
fn tagged_units(input: &ChunkInput<'_>, hard_max: usize) -> (Vec<Unit>, Vec<Option<Tag>>) {
    let text = input.doc.text.as_str();
    let runits = role_units(text, input.blocks);
    let tags = tag_units(text, &runits);
    let mut units = Vec::new();
    let mut out_tags = Vec::new();
    let mut section = 0;
    for (u, tag) in runits.iter().zip(tags) {
        let kind = match u.shape {
            Shape::Heading => {
                section += 1;
                UnitKind::Heading
            }
            Shape::Sentence => UnitKind::Sentence,
            Shape::ListItem | Shape::Table | Shape::Other => UnitKind::Block,
        };
        for part in fit_unit(input.tokens, u.range.clone(), hard_max) {
            units.push(Unit {
                tokens: input.tokens.count(part.clone()),
                range: part,
                kind,
                section,
            });
            out_tags.push((kind != UnitKind::Heading).then_some(tag));
        }
    }
    (units, out_tags)
}

/// Candidate gaps and gap strengths for the packer: a role change is a
/// candidate (strength 0), so is the gap where a run of one role reaches
/// the target (0.5); inside a run 1. A heading is a candidate when the
/// role after it differs from the run before it or the run would pass the
/// target (strength -1: the first place an over-long run is cut); a
/// section of the same role continues the run. The gap after a heading and
/// the gaps between an endpoint and the effect reports right after it are
/// glued.
fn gaps(text: &str, units: &[Unit], tags: &[Option<Tag>], target: usize) -> (Vec<bool>, Vec<f32>) {
    let n = units.len();
    let mut candidate = vec![false; n];
    let mut coherence = vec![GLUED; n];
    let mut last: Option<Role> = None;
    let mut run = 0usize;
    let mut in_endpoint = false;
    let mut after_heading = false;
    for g in 0..n {
        let cur = &units[g];
        if cur.kind == UnitKind::Heading {
            if g > 0 && !after_heading {
                let next = (g + 1..n).find(|&i| tags[i].is_some());
                let next_role = next.and_then(|i| tags[i]).map(|t| t.role);
                let next_tokens = next.map_or(0, |i| units[i].tokens);
                coherence[g] = HEADING_GAP;
                if next_role != last || run + cur.tokens + next_tokens > target {
                    candidate[g] = true;
                    run = 0;
                }
            }
            run += cur.tokens;
            in_endpoint = false;
            after_heading = true;
            continue;
        }
        let role = tags[g].map(|t| t.role);
        if g == 0 || after_heading {
            // Glued to its heading; the heading's gap decided.
            after_heading = false;
        } else if in_endpoint
            && role != Some(Role::Endpoint)
            && reports_effect(&text[cur.range.clone()])
        {
            // An endpoint keeps the sentences reporting its effect.
            run += cur.tokens;
            last = role;
            continue;
        } else if role != last {
            candidate[g] = true;
            coherence[g] = 0.0;
            run = 0;
        } else if run + cur.tokens > target {
            candidate[g] = true;
            coherence[g] = 0.5;
            run = 0;
        } else {
            coherence[g] = 1.0;
        }
        run += cur.tokens;
        in_endpoint = role == Some(Role::Endpoint);
        last = role;
    }
    (candidate, coherence)
}

/// The facet of a chunk with own span `own`: the dominant role of the
/// units it holds (most units; ties to the higher mean confidence, then
/// the earlier role), its mean confidence, and the unit count per role.
fn facet(units: &[Unit], tags: &[Option<Tag>], own: &Range<usize>, threshold: f64) -> serde_json::Value {
    let mut per: BTreeMap<Role, (usize, f64)> = BTreeMap::new();
    for (u, t) in units.iter().zip(tags) {
        if let Some(t) = t {
            if u.range.start >= own.start && u.range.start < own.end {
                let e = per.entry(t.role).or_default();
                e.0 += 1;
                e.1 += f64::from(t.confidence);
            }
        }
    }
    let dominant = per
        .iter()
        .map(|(r, (k, sum))| (*r, *k, sum / *k as f64))
        .max_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)).then(b.0.cmp(&a.0)));
    let (facet_type, confidence) = match dominant {
        Some((role, _, mean)) if mean >= threshold => (role, mean),
        Some((_, _, mean)) => (Role::General, mean),
        None => (Role::General, 0.0),
    };
    let roles: serde_json::Map<String, serde_json::Value> = per
        .iter()
        .map(|(r, (k, _))| (r.name().to_owned(), (*k as u64).into()))
        .collect();
    serde_json::json!({
        "facet_type": facet_type.name(),
        "role_confidence": (confidence * 1000.0).round() / 1000.0,
        "roles": roles,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::{DocumentMeta, Engine};

    const TRIAL: &str = "# Trial of Drug X in Heart Failure\n\n\
## Participants\n\n\
We enrolled 240 adults with chronic heart failure at 12 hospital sites in 3 countries.\n\n\
## Interventions\n\n\
Patients were randomly assigned to drug X or placebo.\n\n\
Drug X was given at 10 mg orally once daily for 12 weeks. The dose was titrated to 20 mg twice daily after 2 weeks.\n\n\
## Outcomes\n\n\
The primary endpoint was the change in 6-minute walk distance from baseline to week 12. \
The mean difference was 32 m (95% CI 12 to 52; p=0.002). \
Response occurred in 41% versus 22% of patients.\n\n\
## Safety\n\n\
Adverse events were reported in 18% of patients; the most common adverse reaction was headache.\n";

    fn chunks(doc: &str) -> Vec<crate::chunk::record::Chunk> {
        let engine = Engine::builtin().unwrap();
        engine
            .chunk(doc.as_bytes(), &DocumentMeta::default(), Some("clinical-v1"))
            .unwrap()
            .chunks
    }

    fn facet_type(c: &crate::chunk::record::Chunk) -> String {
        c.facet_json.as_ref().unwrap()["facet_type"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_profile_is_stable_and_every_chunk_has_a_facet_type() {
        let engine = Engine::builtin().unwrap();
        assert!(!engine.profiles().get("clinical-v1").unwrap().experimental);
        let out = chunks(TRIAL);
        assert!(out.len() >= 4, "{out:?}");
        assert!(out.iter().all(|c| c.facet_json.is_some()));
        let at = |needle: &str| out.iter().find(|c| c.chunk_text.contains(needle)).unwrap();
        assert_eq!(facet_type(at("We enrolled 240 adults")), "pico_population");
        assert_eq!(facet_type(at("10 mg orally once daily")), "dose_regimen");
        assert_eq!(facet_type(at("Adverse events were reported")), "adverse_event");
    }

    #[test]
    fn an_endpoint_and_its_effect_stay_in_one_chunk() {
        let out = chunks(TRIAL);
        let c = out
            .iter()
            .find(|c| c.chunk_text.contains("The primary endpoint was"))
            .unwrap();
        assert!(c.chunk_text.contains("95% CI 12 to 52"), "{}", c.chunk_text);
        assert!(c.chunk_text.contains("41% versus 22%"), "{}", c.chunk_text);
    }

    #[test]
    fn runs_are_identical() {
        let a = chunks(TRIAL);
        let b = chunks(TRIAL);
        let key = |v: &[crate::chunk::record::Chunk]| -> Vec<(String, String, Option<serde_json::Value>)> {
            v.iter()
                .map(|c| (c.chunk_id.clone(), c.chunk_text.clone(), c.facet_json.clone()))
                .collect()
        };
        assert_eq!(key(&a), key(&b));
    }

    #[test]
    fn empty_and_tiny_inputs_do_not_panic() {
        for doc in ["", "\n", "# Title\n", "One sentence.", "- item\n", "| a |\n|---|\n| 1 |\n"] {
            let out = chunks(doc);
            assert!(out.len() <= 1, "{doc:?}: {out:?}");
        }
    }
}
