//! Clinical sentence roles: every sentence, list item and table of a
//! clinical text (trial registry records, drug labels, structured
//! abstracts) tagged with one of nine roles ([`Role`]) and a confidence in
//! `[0, 1]`, by rules over the heading path, registry field names, cue
//! phrases ([`lexicon`]) and patterns (doses and units, frequencies,
//! routes, p-values, confidence intervals, effect ratios).
//!
//! How a unit is scored ([`tag_unit`]):
//! - a registry field name at the start (`Enrollment:`, `Minimum age:`,
//!   `Time frame:`, `Other names:`) decides outright;
//! - the deepest heading on the path with a cue gives its role a weight
//!   (criteria and outcome-measure sections almost decide: every unit of
//!   them is `eligibility` / `endpoint`); arm and intervention entries of a
//!   registry (`Arm: ... (Placebo Comparator)`) are the comparison when they
//!   name a placebo, sham or comparator, else dose and schedule;
//! - cue phrases add their weights; a dose with a unit, a frequency and a
//!   route add to `dose_regimen`; p-values, CIs, ratios and "n (x%)" counts
//!   add to `pico_outcome`, or to `adverse_event` when the unit is about
//!   harms;
//! - the best role wins when its score reaches 0.35, else `general`; the
//!   confidence grows with the score and with its margin over the runner-up.
//!
//! English first. Russian gets the headings of drug instructions and trial
//! reports (показания, противопоказания, способ применения и дозы, побочное
//! действие, особые указания, критерии включения/исключения, результаты,
//! выводы...), a few cue phrases, and the dose units (мг, мкг, мл) and
//! frequencies ("раза в сутки"); statistics patterns are language-neutral.

pub mod lexicon;
mod patterns;
pub mod role;
pub mod units;

pub use role::{Role, Tag};
pub use units::{role_units, RoleUnit, Shape};

use lexicon::{CUES, FIELDS, HEADINGS};
use patterns::Evidence;

/// A score below this is no evidence: the unit is `general`.
const MIN_SCORE: f32 = 0.35;

/// Tags one unit of text under the headings `path` (outermost first; the
/// first is the document title when there is more than one).
pub fn tag_unit(text: &str, path: &[String], shape: Shape) -> Tag {
    if shape == Shape::Heading {
        return Tag {
            role: Role::General,
            confidence: 0.0,
        };
    }
    let lower = text.to_lowercase();
    let start = lower.trim_start_matches(['\\', '-', '*', ' ']);
    if let Some((_, role)) = FIELDS.iter().find(|(f, _)| start.starts_with(f)) {
        return Tag {
            role: *role,
            confidence: 0.95,
        };
    }
    let mut score = [0f32; 9];
    let title = path.first().map(|t| t.to_lowercase()).unwrap_or_default();
    let section = section_role(path, &lower, &title);
    let ev = Evidence::of(&lower);
    if let Some((role, w)) = section {
        score[role.index()] += w;
        // Criteria and outcome-measure entries: every unit is the section's.
        if w >= 0.9 && matches!(role, Role::Eligibility | Role::Endpoint) {
            let general = cue_score(&lower, Role::General);
            if general < 1.2 {
                return Tag {
                    role,
                    confidence: 0.9,
                };
            }
        }
    }
    if is_trial_name(text) {
        return Tag {
            role: Role::General,
            confidence: 0.8,
        };
    }
    for (cue, role, w) in CUES {
        if lower.contains(cue) {
            score[role.index()] += w;
        }
    }
    ev.add_to(&mut score, section.map(|(r, _)| r));
    if let Some((role, _)) = section {
        // Ties go to the section's role.
        score[role.index()] += 0.01;
    }
    best(&score)
}

/// A run-in trial name used as a paragraph heading: a short line without
/// a final stop ending in an acronym, "Treating to New Targets Study (TNT)".
fn is_trial_name(text: &str) -> bool {
    let t = text.trim();
    let words = t.split_whitespace().count();
    let acronym = t
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once('('))
        .is_some_and(|(_, a)| {
            a.len() >= 3
                && a.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-')
        });
    acronym && words <= 14 && !t.contains(". ")
}

/// The sum of the cue weights of `role` found in `lower`.
fn cue_score(lower: &str, role: Role) -> f32 {
    CUES.iter()
        .filter(|(c, r, _)| *r == role && lower.contains(c))
        .map(|(_, _, w)| w)
        .sum()
}

/// The role and weight the heading path gives (deepest heading with a cue;
/// the title only when it is the only heading).
///
/// Among the headings with a cue the strongest wins, a deeper one by a
/// margin of 0.05 a level ("2.2 ... in Pediatric Patients" under "2 DOSAGE
/// AND ADMINISTRATION" is dosage; "4.3 Pregnancy" under "4
/// CONTRAINDICATIONS" is pregnancy). An arm or intervention entry decides.
fn section_role(path: &[String], lower: &str, title: &str) -> Option<(Role, f32)> {
    let skip = usize::from(path.len() > 1);
    let mut best: Option<(Role, f32, f32)> = None;
    for (depth, h) in path.iter().enumerate().skip(skip).rev() {
        let h = h.to_lowercase();
        if let Some(r) = arm_role(&h, lower, title) {
            return Some(r);
        }
        if let Some((_, role, w)) = HEADINGS.iter().find(|(c, _, _)| h.contains(c)) {
            let key = w + 0.05 * depth as f32;
            if best.is_none_or(|(_, _, k)| key > k) {
                best = Some((*role, *w, key));
            }
        }
    }
    best.map(|(r, w, _)| (r, w))
}

/// Registry arm and intervention entries: the comparison when the entry is
/// a placebo, sham or comparator (unless the unit names the drug of the
/// title, the experimental one), else the schedule of the drug.
fn arm_role(heading: &str, lower: &str, title: &str) -> Option<(Role, f32)> {
    if !(heading.starts_with("arm:") || heading.starts_with("intervention:")) {
        return None;
    }
    let control = [
        "placebo",
        "sham",
        "saline",
        "no intervention",
        "usual care",
        "standard care",
    ]
    .iter()
    .any(|c| heading.contains(c));
    let comparator = heading.contains("comparator");
    let names_title_drug = title_words(title).any(|w| lower.contains(w) && !heading.contains(w));
    if control || (comparator && !heading_names_title_drug(heading, title)) {
        if names_title_drug && !control {
            return Some((Role::DoseRegimen, 0.7));
        }
        return Some((Role::Comparison, 2.0));
    }
    Some((Role::DoseRegimen, 0.6))
}

/// The part of a title that names the experimental treatment: before "vs",
/// "versus" or "compared".
fn experimental_part(title: &str) -> &str {
    [" vs", " versus ", " compared "]
        .iter()
        .filter_map(|m| title.find(m))
        .min()
        .map_or(title, |i| &title[..i])
}

/// Words of the experimental part of a title that may name a drug: six
/// letters or more, not a common word of trial titles.
fn title_words(title: &str) -> impl Iterator<Item = &str> {
    experimental_part(title)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 6 && !TITLE_STOPWORDS.contains(w))
}

/// Common words of trial titles that name no drug.
const TITLE_STOPWORDS: &[&str] = &[
    "patients",
    "participants",
    "subjects",
    "effects",
    "effect",
    "efficacy",
    "safety",
    "treatment",
    "therapy",
    "disease",
    "syndrome",
    "failure",
    "reduced",
    "physical",
    "activity",
    "children",
    "adults",
    "infants",
    "prevention",
    "randomized",
    "randomised",
    "placebo",
    "versus",
    "comparison",
    "controlled",
    "clinical",
    "chronic",
    "acute",
    "healthy",
    "volunteers",
    "responses",
    "response",
    "immune",
    "prophylaxis",
    "severe",
];

/// Whether an arm heading names a drug of the title (an arm typed
/// "Active Comparator" that is in fact the experimental drug).
fn heading_names_title_drug(heading: &str, title: &str) -> bool {
    let name = heading
        .trim_start_matches("arm:")
        .trim_start_matches("intervention:");
    title_words(title).any(|w| name.contains(w))
}

/// The best role of the scores (`general` below [`MIN_SCORE`]) and its
/// confidence.
fn best(score: &[f32; 9]) -> Tag {
    let mut order: Vec<usize> = (0..9).collect();
    // Highest first; ties to the earlier role (stable sort).
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let (top, second) = (score[order[0]], score[order[1]]);
    if top < MIN_SCORE {
        return Tag {
            role: Role::General,
            confidence: (0.6 - top).clamp(0.3, 0.6),
        };
    }
    let strength = top / (top + 0.4);
    let margin = (top - second) / top;
    Tag {
        role: Role::ALL[order[0]],
        confidence: (strength * (0.55 + 0.45 * margin)).clamp(0.0, 1.0),
    }
}

/// Tags every unit of `text` (headings get `general` with confidence 0).
pub fn tag_units(text: &str, units: &[RoleUnit]) -> Vec<Tag> {
    units
        .iter()
        .map(|u| tag_unit(&text[u.range.clone()], &u.path, u.shape))
        .collect()
}

/// Whether a unit reports an effect (a p-value, a CI, a ratio, counts with
/// percentages): such units after an `endpoint` stay in its chunk.
pub fn reports_effect(text: &str) -> bool {
    let percent = text
        .char_indices()
        .any(|(i, c)| c == '%' && text[..i].trim_end().ends_with(|d: char| d.is_ascii_digit()));
    percent || Evidence::of(&text.to_lowercase()).stats > 0.0
}

/// The units of a Markdown document and their tags, headings left out.
pub fn tag_document(text: &str) -> Vec<(RoleUnit, Tag)> {
    let blocks = crate::markdown::parse_blocks(text);
    let units = role_units(text, &blocks);
    let tags = tag_units(text, &units);
    units
        .into_iter()
        .zip(tags)
        .filter(|(u, _)| u.shape != Shape::Heading)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(text: &str, path: &[&str]) -> Role {
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        tag_unit(text, &path, Shape::Sentence).role
    }

    #[test]
    fn a_population_sentence() {
        assert_eq!(
            role(
                "We recruited 2325 participants between March 1, 2013, and Sept 30, 2017.",
                &["Trial", "Findings"]
            ),
            Role::Population
        );
        assert_eq!(
            role("Enrollment: 65 (Actual)", &["Trial"]),
            Role::Population
        );
    }

    #[test]
    fn a_dose_sentence() {
        let t = tag_unit(
            "The recommended starting dose is 10 mg once daily.",
            &["Label".to_owned(), "2 DOSAGE AND ADMINISTRATION".to_owned()],
            Shape::Sentence,
        );
        assert_eq!(t.role, Role::DoseRegimen);
        assert!(t.confidence > 0.6 && t.confidence <= 1.0, "{t:?}");
        assert_eq!(
            role(
                "Metformin 500 mg orally twice daily with meals.",
                &["Trial"]
            ),
            Role::DoseRegimen
        );
    }

    #[test]
    fn sections_criteria_outcomes_and_harms() {
        let crit = ["Trial", "Eligibility Criteria"];
        assert_eq!(
            role("History of severe allergic reaction to 40 mg doses", &crit),
            Role::Eligibility
        );
        assert_eq!(
            role("Time frame: Week 16", &["Trial", "Outcome Measures"]),
            Role::Endpoint
        );
        assert_eq!(
            role("The primary outcome was functional status at day 90, measured by the modified Rankin Scale.", &["Trial", "Methods"]),
            Role::Endpoint
        );
        assert_eq!(
            role(
                "Mortality did not differ between groups (OR 0.88, 95% CI 0.76-1.03; p=0.11).",
                &["Trial", "Results"]
            ),
            Role::Outcome
        );
        assert_eq!(
            role(
                "Serious adverse events occurred in 379 (33%) vs 417 (36%) patients (p=0.03).",
                &["Trial", "Results"]
            ),
            Role::AdverseEvent
        );
        assert_eq!(
            role(
                "Placebo tablet taken orally.",
                &["Trial", "Arms", "Intervention: Drug: Placebo"]
            ),
            Role::Comparison
        );
    }

    #[test]
    fn russian_headings_and_cues() {
        assert_eq!(
            role(
                "По 1 таблетке 2 раза в сутки.",
                &["Инструкция", "Способ применения и дозы"]
            ),
            Role::DoseRegimen
        );
        assert_eq!(
            role(
                "Беременность и период лактации.",
                &["Инструкция", "Противопоказания"]
            ),
            Role::Eligibility
        );
        assert_eq!(
            role(
                "Головная боль, тошнота.",
                &["Инструкция", "Побочное действие"]
            ),
            Role::AdverseEvent
        );
    }

    #[test]
    fn no_evidence_is_general_and_empty_text_does_not_panic() {
        assert_eq!(
            role("The sky was blue that morning.", &["Notes"]),
            Role::General
        );
        assert_eq!(tag_unit("", &[], Shape::Sentence).role, Role::General);
        assert!(tag_document("").is_empty());
        assert!(tag_document("# Only a heading\n").is_empty());
    }
}
