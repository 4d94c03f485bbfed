//! Discourse-cue segmentation: a boundary before a sentence that opens with
//! a discourse marker signalling a new segment, in the tradition of
//! Passonneau & Litman (1997) and Marcu's cue-phrase discourse parsing
//! (2000): topic-shift phrases ("Turning to", "Что касается"), enumerations
//! ("First,", "Secondly", "Finally", "Во-первых"), conclusions ("In
//! conclusion", "Итак", "Таким образом") and, weighted lower, contrastive
//! and additive connectives ("However,", "Moreover", "Однако", "Кроме
//! того").
//!
//! 1. Each sentence's opening is lowercased (`ё` folded to `е`) after
//!    leading punctuation and Markdown emphasis (`**`, quotes, brackets) are
//!    skipped.
//! 2. The longest phrase of the lexicon ([`CUES`]) that the opening starts
//!    with, ending at a word boundary, is the sentence's cue, with the
//!    phrase's confidence (0..1, how reliably it opens a new segment).
//! 3. A boundary falls before every sentence (not the first) whose cue's
//!    confidence is at least [`DiscourseParams::threshold`].
//!
//! Linear, deterministic, no input panics.

/// A discourse cue: the phrase (lowercase, `ё` folded) and its confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cue {
    /// The phrase as the lexicon holds it.
    pub phrase: &'static str,
    /// How reliably it opens a new segment, 0..1.
    pub confidence: f64,
}

/// The lexicon: `(phrase, confidence)`, English then Russian. Confidences
/// reflect the cue's role: explicit topic shifts and conclusions highest,
/// enumerations next, contrastive and additive connectives (which mostly
/// continue a topic) lowest.
#[rustfmt::skip]
pub const CUES: &[(&str, f64)] = &[
    // English: topic shifts.
    ("turning to", 0.85), ("let us now turn", 0.9), ("let us turn", 0.85), ("let's now turn", 0.9),
    ("let's turn", 0.85), ("we now turn", 0.9), ("we turn now", 0.9), ("now we turn", 0.9),
    ("moving on", 0.8), ("moving on to", 0.85), ("next, we", 0.7), ("next,", 0.6),
    ("as for", 0.6), ("as regards", 0.6), ("regarding", 0.55), ("with regard to", 0.6),
    ("with respect to", 0.55), ("speaking of", 0.65), ("another topic", 0.8),
    ("in the next section", 0.8), ("in this section", 0.75), ("the next step", 0.55),
    ("meanwhile", 0.45), ("in the meantime", 0.45),
    // English: enumerations.
    ("first,", 0.7), ("firstly", 0.7), ("first of all", 0.7), ("to begin with", 0.7),
    ("to start with", 0.65), ("second,", 0.7), ("secondly", 0.7), ("third,", 0.7),
    ("thirdly", 0.7), ("fourth,", 0.7), ("fourthly", 0.7), ("fifth,", 0.7), ("finally", 0.65),
    ("lastly", 0.65), ("last but not least", 0.7), ("last,", 0.6),
    // English: conclusions and summaries.
    ("in conclusion", 0.9), ("to conclude", 0.9), ("to sum up", 0.85), ("summing up", 0.85),
    ("to summarize", 0.85), ("to summarise", 0.85), ("in summary", 0.85), ("in sum", 0.8),
    ("all in all", 0.65), ("overall,", 0.5), ("in short", 0.5), ("in brief", 0.5),
    // English: connectives (weighted lower).
    ("however", 0.3), ("nevertheless", 0.25), ("nonetheless", 0.25), ("on the other hand", 0.35),
    ("in contrast", 0.35), ("by contrast", 0.35), ("conversely", 0.3), ("in addition", 0.35),
    ("additionally", 0.35), ("furthermore", 0.35), ("moreover", 0.3), ("besides", 0.3),
    ("also,", 0.2), ("therefore", 0.2), ("thus", 0.2), ("hence", 0.2), ("consequently", 0.25),
    ("as a result", 0.25), ("for example", 0.1), ("for instance", 0.1), ("then", 0.1),
    // Russian: topic shifts.
    ("перейдем к", 0.85), ("теперь перейдем", 0.9), ("обратимся к", 0.85),
    ("теперь обратимся", 0.9), ("что касается", 0.65), ("относительно", 0.5),
    ("говоря о", 0.55), ("в следующем разделе", 0.8), ("в этом разделе", 0.75),
    ("далее,", 0.5), ("далее", 0.45), ("между тем", 0.4), ("тем временем", 0.45),
    // Russian: enumerations.
    ("во-первых", 0.7), ("во-вторых", 0.7), ("в-третьих", 0.7), ("в-четвертых", 0.7),
    ("в-пятых", 0.7), ("прежде всего", 0.55), ("для начала", 0.65), ("наконец", 0.65),
    ("в последнюю очередь", 0.6),
    // Russian: conclusions and summaries.
    ("в заключение", 0.9), ("подводя итог", 0.85), ("подводя итоги", 0.85),
    ("подытоживая", 0.85), ("итак", 0.6), ("таким образом", 0.5), ("в итоге", 0.55),
    ("в целом", 0.5), ("короче говоря", 0.5), ("словом", 0.45),
    // Russian: connectives (weighted lower).
    ("однако", 0.3), ("тем не менее", 0.25), ("с другой стороны", 0.35), ("напротив", 0.3),
    ("кроме того", 0.35), ("помимо этого", 0.4), ("помимо того", 0.4), ("более того", 0.3),
    ("к тому же", 0.25), ("также", 0.15), ("следовательно", 0.2), ("поэтому", 0.2),
    ("в результате", 0.25), ("например", 0.1), ("в то же время", 0.3), ("затем", 0.1),
];

/// Settings; [`Default`] gives the values documented per field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiscourseParams {
    /// Least confidence of a cue that makes a boundary; default 0.5.
    pub threshold: f64,
}

impl Default for DiscourseParams {
    fn default() -> Self {
        Self { threshold: 0.5 }
    }
}

/// Characters this many bytes into a sentence are enough for every cue.
const OPENING_CHARS: usize = 48;

/// The cue `sentence` opens with, if any (steps 1-2 of the module docs).
pub fn cue(sentence: &str) -> Option<Cue> {
    let trimmed = sentence.trim_start_matches(|c: char| !c.is_alphanumeric());
    let mut opening = String::with_capacity(OPENING_CHARS * 2);
    for c in trimmed.chars().take(OPENING_CHARS) {
        for l in c.to_lowercase() {
            opening.push(if l == 'ё' { 'е' } else { l });
        }
    }
    let mut best: Option<Cue> = None;
    for &(phrase, confidence) in CUES {
        let Some(rest) = opening.strip_prefix(phrase) else {
            continue;
        };
        // A phrase ending in a letter must end a word.
        let ends_word =
            !phrase.ends_with(char::is_alphanumeric) || !rest.starts_with(char::is_alphanumeric);
        if ends_word && best.is_none_or(|b| phrase.len() > b.phrase.len()) {
            best = Some(Cue { phrase, confidence });
        }
    }
    best
}

/// Boundaries before the sentences whose cue reaches the threshold (see the
/// module docs). A boundary `i` falls between sentence `i - 1` and `i`;
/// ascending, without duplicates.
pub fn discourse(sentences: &[&str], p: &DiscourseParams) -> Vec<usize> {
    (1..sentences.len())
        .filter(|&i| cue(sentences[i]).is_some_and(|c| c.confidence >= p.threshold))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::segment::fixtures::assert_valid;

    #[test]
    fn cues_are_found_at_sentence_starts_in_both_languages() {
        assert_eq!(
            cue("In conclusion, it works.").unwrap().phrase,
            "in conclusion"
        );
        assert_eq!(cue("**However,** it fails.").unwrap().confidence, 0.3);
        assert_eq!(cue("First of all, stop.").unwrap().phrase, "first of all");
        assert_eq!(cue("Во-первых, тесто.").unwrap().phrase, "во-первых");
        assert_eq!(cue("ИТАК, мы закончили.").unwrap().phrase, "итак");
        assert_eq!(cue("Перейдём к звёздам.").unwrap().phrase, "перейдем к");
        // Word boundaries: "Thusly" and "Thenceforth" are not cues.
        assert!(cue("Thusly it ends.").is_none());
        assert!(cue("Thenceforth it ends.").is_none());
        assert!(cue("The sauce simmers.").is_none());
        assert!(cue("").is_none());
        // Every lexicon phrase is lowercase and folded.
        for (phrase, c) in CUES {
            assert_eq!(phrase.to_lowercase().replace('ё', "е"), *phrase);
            assert!((0.0..=1.0).contains(c));
        }
    }

    #[test]
    fn two_topics_opened_by_cues_are_cut_between_them() {
        let s = [
            "The sauce starts with butter and onions.",
            "However, the onions must not burn.",
            "The tomatoes go in after ten minutes.",
            "Turning to astronomy, the telescope shows a galaxy.",
            "Moreover, the galaxy is very far away.",
            "In conclusion, both hobbies need patience.",
        ];
        let found = discourse(&s, &DiscourseParams::default());
        assert_eq!(found, [3, 5]);
        assert_eq!(found, discourse(&s, &DiscourseParams::default()));
        let ru = [
            "Тесто замешивают на молоке.",
            "Во-первых, муку просеивают.",
            "Во-вторых, тесто накрывают.",
            "Однако пироги пекут недолго.",
            "Итак, пироги готовы.",
        ];
        assert_eq!(discourse(&ru, &DiscourseParams::default()), [1, 2, 4]);
        let low = DiscourseParams { threshold: 0.25 };
        assert_eq!(discourse(&ru, &low), [1, 2, 3, 4]);
    }

    #[test]
    fn tiny_and_empty_inputs_do_not_panic() {
        let p = DiscourseParams::default();
        assert!(discourse(&[], &p).is_empty());
        assert!(discourse(&["In conclusion, one."], &p).is_empty());
        let found = discourse(&["", "Finally", "...", "İ̇ stop"], &p);
        assert_valid(&found, 4);
        assert_eq!(found, [1]);
    }
}
