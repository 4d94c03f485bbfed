//! Patterns of the clinical role tagger: doses with units, frequencies,
//! routes (→ `dose_regimen`), and effect statistics (→ `pico_outcome`, or
//! `adverse_event` when the unit is about harms).

use std::sync::OnceLock;

use regex::Regex;

use super::role::Role;

/// What the patterns found in one lower-cased unit.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Evidence {
    /// A dose with its unit (`10 mg`, `6mg/kg`, `0.8 ml`, `40 мг`).
    pub dose: f32,
    /// A frequency (`once daily`, `twice a day`, `bid`, `q12h`, `every other week`).
    pub freq: f32,
    /// A route (`orally`, `subcutaneous`, `intravenous`).
    pub route: f32,
    /// Effect statistics (p-values, CIs, ratios, "n (x%)").
    pub stats: f32,
    /// Words of harm.
    pub harm: bool,
    /// Participant flow: a count of people who were enrolled, received,
    /// completed ("1161 patients received", "66 patients were enrolled").
    pub flow: bool,
}

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

fn found(cell: &'static OnceLock<Option<Regex>>, pattern: &str, text: &str) -> bool {
    re(cell, pattern).is_some_and(|r| r.is_match(text))
}

static DOSE: OnceLock<Option<Regex>> = OnceLock::new();
static FREQ: OnceLock<Option<Regex>> = OnceLock::new();
static ROUTE: OnceLock<Option<Regex>> = OnceLock::new();
static PVAL: OnceLock<Option<Regex>> = OnceLock::new();
static CI: OnceLock<Option<Regex>> = OnceLock::new();
static RATIO: OnceLock<Option<Regex>> = OnceLock::new();
static COUNT: OnceLock<Option<Regex>> = OnceLock::new();
static HARM: OnceLock<Option<Regex>> = OnceLock::new();
static FLOW: OnceLock<Option<Regex>> = OnceLock::new();

impl Evidence {
    /// The evidence in `lower` (lower-cased text).
    pub fn of(lower: &str) -> Self {
        let dose = found(
            &DOSE,
            r"\d(?:[.,]\d+)?(?:/\d+)?\s?(?:mg|mcg|µg|μg|g|ml|iu|units?|мг|мкг|мл|ме)(?:/(?:kg|day|m2|m²|кг|сут))?(?:\b|$|[^a-zа-я/])",
            lower,
        ) && !lower.contains("mg/dl");
        let freq = found(
            &FREQ,
            r"\b(?:once|twice|three times|four times)\s+(?:a\s+|per\s+|every\s+)?(?:day|daily|weekly|week)|\b(?:bid|tid|qid|qd|qw|q2w|qow|b\.i\.d|t\.i\.d)\b|\bq\d+h\b|\bevery\s+(?:other\s+)?(?:\d+\s+)?(?:hours?|days?|weeks?|months?)\b|\bdaily\b|/day\b|раза? в (?:сутки|день|неделю)",
            lower,
        );
        let route = found(
            &ROUTE,
            r"\b(?:orally|oral|subcutaneous(?:ly)?|intravenous(?:ly)?|intramuscular(?:ly)?|iv|po|injection|infusion|bolus)\b|внутрь|внутривенно|подкожно",
            lower,
        );
        let mut stats = 0.0;
        if found(&PVAL, r"\bp\s*(?:[<=>≤≥]|&lt;)\s*0?[.·]\d", lower) {
            stats += 0.8;
        }
        if found(
            &CI,
            r"\b95\s?%\s*ci\b|confidence interval|\bci\s*[\[(:]?\s*\d",
            lower,
        ) {
            stats += 0.6;
        }
        if found(&RATIO, r"\b(?:a?or|hr|rr|aor)\s*[\[(:=]?\s*\d[.·]\d", lower) {
            stats += 0.7;
        }
        if found(
            &COUNT,
            r"\d\s*[\[(]\s*\d+(?:[.·]\d+)?\s*%|\d+\s*/\s*\d+\s*[\[(]\s*\d",
            lower,
        ) {
            stats += 0.4;
        }
        let harm = found(
            &HARM,
            r"adverse|side effect|toxicit|tolerat|safety|elevation|myopathy|rhabdomyolysis|hemorrhag|haemorrhag|infection|reaction|побочн|нежелательн",
            lower,
        );
        let flow = found(
            &FLOW,
            r"\b\d[\d,]*\s+(?:\w+\s+)?(?:patients|participants|subjects|children|adults|women|men|infants)\s+(?:were\s+(?:enrolled|randomi[sz]ed|included|recruited|allocated|analy[sz]ed)|received|completed|underwent)\b",
            lower,
        );
        Self {
            flow,
            dose: if dose { 0.6 } else { 0.0 },
            freq: if freq { 0.5 } else { 0.0 },
            route: if route { 0.3 } else { 0.0 },
            stats,
            harm,
        }
    }

    /// Adds the evidence to the role scores; `section` is the role the
    /// heading path gives, if any.
    pub fn add_to(&self, score: &mut [f32; 9], section: Option<Role>) {
        // Doses in a warnings section qualify a harm (rule: the harm wins).
        let scale = if section == Some(Role::AdverseEvent) {
            0.4
        } else {
            1.0
        };
        score[Role::DoseRegimen as usize] += (self.dose + self.freq + self.route) * scale;
        if self.flow {
            score[Role::Population as usize] += 0.5;
        }
        if self.stats > 0.0 {
            let harms = self.harm || section == Some(Role::AdverseEvent);
            let to = if harms {
                Role::AdverseEvent
            } else {
                Role::Outcome
            };
            score[to as usize] += self.stats;
            // Numbers reported are results, not a schedule.
            score[Role::DoseRegimen as usize] -= (self.dose + self.freq).min(self.stats);
        }
    }
}
