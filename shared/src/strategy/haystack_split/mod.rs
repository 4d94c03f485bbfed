//! The drop-in `haystack.split` strategy, profile `haystack.split`:
//! Haystack's `DocumentSplitter` (haystack-ai 3.4.1,
//! `_split_by_character` and `_concatenate_units`;
//! `scripts/peers/ADAPTERS.md` section 7) on the text exactly as sent.
//!
//! The text is cut into units at a separator (`split_by`: `word` = `" "`,
//! `passage` = `"\n\n"`, `line` = `"\n"`, `period` = `"."`, `page` =
//! `"\f"`), each unit keeping the separator after it, so units concatenate
//! back to the text, or into sentences (`split_by = "sentence"`: Haystack's
//! `SentenceSplitter`, [`sentences`]: NLTK's trained Punkt with Haystack's
//! period context, abbreviations and split rules; each sentence keeps the
//! whitespace after it, the document's trailing whitespace is in none);
//! windows of `split_length` units start every
//! `split_length - split_overlap` units (more-itertools' `windowed`); a
//! window with nothing new is dropped, and a last window shorter than
//! `split_threshold` units is glued to the chunk before. With
//! `respect_sentence_boundary = true` (words only) sentences are grouped
//! up to `split_length` words (Python's `split()`), the next group
//! starting with the last sentences of up to `split_overlap` words. A
//! chunk is the exact concatenation of its units: nothing is stripped.
//!
//! Languages: `"en"` (NLTK's English model, plus Haystack's `en.txt`
//! abbreviations with `extend_abbreviations`) and `"ru"` (NLTK's Russian
//! model); a code Haystack does not know falls back to English, as in
//! Haystack; Haystack's other languages (`"de"`, `"fr"`, ...) are refused
//! when sentences are needed (their models are not shipped, see
//! `shared/src/sentence/punkt/data/README.md`).
//!
//! Not built: `split_by = "token"` / `"function"`; such a profile is
//! refused with a message saying so. Intended differences: a chunk of
//! whitespace alone (Haystack keeps one for a whitespace-only document) is
//! not a record; where Punkt moves a closing quote or bracket that follows
//! whitespace onto the sentence before (`_realign_boundaries`; in Markdown
//! mostly code: `decided.\n}\n\nstruct`), Haystack loses the whitespace
//! after it and a chunk over both sentences is not a slice of the
//! document: ours keeps that whitespace (the chunk is the document's text
//! from its first sentence's start to its last one's end).

mod sentences;

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::strategy::params::{ParamError, Params};

pub use sentences::{group_by_words, word_count, HaystackSentences};

/// Haystack's `DocumentSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HaystackSplit;

const KEYS: [&str; 9] = [
    "split_by",
    "split_length",
    "split_overlap",
    "split_threshold",
    "respect_sentence_boundary",
    "language",
    "use_split_rules",
    "extend_abbreviations",
    "skip_empty_documents",
];

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitBy {
    /// Runs between single spaces (`" "`).
    Word,
    /// Runs between blank lines (`"\n\n"`).
    Passage,
    /// Lines (`"\n"`).
    Line,
    /// Runs ending in a period (`"."`).
    Period,
    /// Pages (form feeds, `"\f"`).
    Page,
    /// Sentences (Haystack's `SentenceSplitter`).
    Sentence,
}

impl SplitBy {
    const ALL: [(&'static str, SplitBy); 6] = [
        ("word", SplitBy::Word),
        ("passage", SplitBy::Passage),
        ("line", SplitBy::Line),
        ("period", SplitBy::Period),
        ("page", SplitBy::Page),
        ("sentence", SplitBy::Sentence),
    ];

    /// The separator Haystack splits at (none for sentences).
    pub fn separator(self) -> Option<&'static str> {
        match self {
            SplitBy::Word => Some(" "),
            SplitBy::Passage => Some("\n\n"),
            SplitBy::Line => Some("\n"),
            SplitBy::Period => Some("."),
            SplitBy::Page => Some("\u{c}"),
            SplitBy::Sentence => None,
        }
    }

    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("word", |(n, _)| n)
    }

    fn unit(self) -> &'static str {
        match self {
            SplitBy::Word => "words",
            SplitBy::Passage => "passages",
            SplitBy::Line => "lines",
            SplitBy::Period => "periods",
            SplitBy::Page => "pages",
            SplitBy::Sentence => "sentences",
        }
    }
}

impl Strategy for HaystackSplit {
    fn name(&self) -> &'static str {
        "haystack.split"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Haystack's DocumentSplitter (haystack-ai 3.4.1): windows of words, passages, lines, periods, pages or sentences (NLTK's trained Punkt), optionally words within sentence boundaries, with exact offsets"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/haystack.split.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let name = p.opt_string("split_by")?.unwrap_or_else(|| "word".into());
        let split_by = match SplitBy::ALL.iter().find(|(n, _)| *n == name) {
            Some((_, s)) => *s,
            None if matches!(name.as_str(), "token" | "function") => {
                return Err(p.error(
                    "split_by",
                    format!("= {name:?} is not built in the drop-in; valid: \"word\", \"passage\", \"line\", \"period\", \"page\", \"sentence\""),
                ))
            }
            None => {
                return Err(p.error(
                    "split_by",
                    format!("= {name:?} is not one of Haystack's; valid: \"word\", \"passage\", \"line\", \"period\", \"page\", \"sentence\""),
                ))
            }
        };
        let split_length = p.usize_in("split_length", Some(200), 1..=10_000_000)?;
        let split_overlap = p.usize_in("split_overlap", Some(0), 0..=10_000_000)?;
        if split_overlap >= split_length {
            return Err(p.error(
                "split_overlap",
                format!("= {split_overlap} must be smaller than split_length = {split_length} (Haystack: split_overlap must be greater than or equal to 0 and less than split_length)"),
            ));
        }
        let split_threshold = p.usize_in("split_threshold", Some(0), 0..=10_000_000)?;
        // Haystack resets the sentence boundary to false (with a warning)
        // for anything but words.
        let respect_sentence_boundary =
            p.bool_or("respect_sentence_boundary", false)? && split_by == SplitBy::Word;
        // These matter only to sentence splitting.
        let language = p.opt_string("language")?.unwrap_or_else(|| "en".into());
        let use_split_rules = p.bool_or("use_split_rules", true)?;
        let extend_abbreviations = p.bool_or("extend_abbreviations", true)?;
        let skip_empty = p.bool_or("skip_empty_documents", true)?;
        let sentences = if split_by == SplitBy::Sentence || respect_sentence_boundary {
            Some(
                HaystackSentences::new(&language, use_split_rules, extend_abbreviations)
                    .map_err(|e| p.error("language", e))?,
            )
        } else {
            None
        };
        Ok(Arc::new(HaystackSplitChunker {
            split_by,
            split_length,
            split_overlap,
            split_threshold,
            respect_sentence_boundary,
            sentences,
            language,
            use_split_rules,
            extend_abbreviations,
            skip_empty,
        }))
    }
}

/// The haystack.split strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct HaystackSplitChunker {
    /// What a unit is.
    pub split_by: SplitBy,
    /// Units of a window.
    pub split_length: usize,
    /// Units a window shares with the one before.
    pub split_overlap: usize,
    /// A last window of fewer units is glued to the chunk before.
    pub split_threshold: usize,
    /// Words grouped within sentence boundaries (`split_by = "word"` only).
    pub respect_sentence_boundary: bool,
    /// The sentence splitter, when sentences are needed.
    sentences: Option<HaystackSentences>,
    language: String,
    use_split_rules: bool,
    extend_abbreviations: bool,
    skip_empty: bool,
}

/// The byte ranges of `text.split(sep)` with the separator kept at the end
/// of every unit but the last (`_split_by_character`): they tile the text.
pub fn units(text: &str, sep: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices(sep) {
        out.push(start..i + sep.len());
        start = i + sep.len();
    }
    out.push(start..text.len());
    out
}

impl HaystackSplitChunker {
    /// The chunks' byte ranges: windows of units, or sentences grouped by
    /// words (`respect_sentence_boundary`).
    pub fn windows(&self, text: &str) -> Vec<Range<usize>> {
        match (&self.sentences, self.split_by.separator()) {
            (Some(s), _) if self.respect_sentence_boundary => {
                let sentences = s.split(text);
                group_by_words(text, &sentences, self.split_length, self.split_overlap)
                    .into_iter()
                    .filter_map(|g| {
                        let first = sentences.get(g.start)?;
                        let last = sentences.get(g.end.checked_sub(1)?)?;
                        Some(first.start..last.end)
                    })
                    .filter(|r| !r.is_empty())
                    .collect()
            }
            (Some(s), None) => self.windows_of(&s.split(text)),
            (_, Some(sep)) => self.windows_of(&units(text, sep)),
            (None, None) => Vec::new(),
        }
    }

    /// `_concatenate_units` over more-itertools' `windowed`: the chunks'
    /// byte ranges from the units' (in order; a chunk runs from its first
    /// unit's start to its last one's end).
    fn windows_of(&self, units: &[Range<usize>]) -> Vec<Range<usize>> {
        let (n, step) = (self.split_length, self.split_length - self.split_overlap);
        let mut spans: Vec<Range<usize>> = Vec::new();
        let mut covered = 0usize;
        let mut k = 0usize;
        loop {
            let first = k * step;
            if first >= units.len() && k > 0 {
                break;
            }
            let window = &units[first.min(units.len())..(first + n).min(units.len())];
            let span = match (window.first(), window.last()) {
                (Some(a), Some(z)) => a.start..z.end,
                _ => break,
            };
            let new_from = covered.saturating_sub(first).min(window.len());
            let new_text_empty = window[new_from..].iter().all(|u| u.is_empty());
            if self.split_overlap > 0 && !spans.is_empty() && new_text_empty {
                // Nothing new: skipped (covered stays as it is).
            } else {
                covered = covered.max(first + window.len());
                if window.len() < self.split_threshold && !spans.is_empty() {
                    if let Some(last) = spans.last_mut() {
                        last.end = last.end.max(span.end);
                    }
                } else if !self.skip_empty || !span.is_empty() {
                    spans.push(span);
                }
            }
            // The next window exists only if this one ended before the end.
            if first + n >= units.len() {
                break;
            }
            k += 1;
        }
        spans
    }
}

impl Chunker for HaystackSplitChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: NO_TOKEN_LIMIT,
            hard_max_tokens: NO_TOKEN_LIMIT,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "Haystack DocumentSplitter",
            package: "haystack-ai 3.4.1",
            unit: Some(self.split_by.unit()),
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("split_by".into(), self.split_by.name().into());
        t.insert("split_length".into(), (self.split_length as i64).into());
        t.insert("split_overlap".into(), (self.split_overlap as i64).into());
        t.insert(
            "split_threshold".into(),
            (self.split_threshold as i64).into(),
        );
        t.insert(
            "respect_sentence_boundary".into(),
            self.respect_sentence_boundary.into(),
        );
        t.insert("language".into(), self.language.clone().into());
        t.insert("use_split_rules".into(), self.use_split_rules.into());
        t.insert(
            "extend_abbreviations".into(),
            self.extend_abbreviations.into(),
        );
        t.insert("skip_empty_documents".into(), self.skip_empty.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let spans = self.windows(input.doc.text.as_str());
        Ok(chunks_from_exact_spans(input, &spans))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn chunker(by: SplitBy, n: usize, overlap: usize, threshold: usize) -> HaystackSplitChunker {
        HaystackSplitChunker {
            split_by: by,
            split_length: n,
            split_overlap: overlap,
            split_threshold: threshold,
            respect_sentence_boundary: false,
            sentences: None,
            language: "en".into(),
            use_split_rules: true,
            extend_abbreviations: true,
            skip_empty: true,
        }
    }

    fn texts<'a>(c: &HaystackSplitChunker, text: &'a str) -> Vec<&'a str> {
        c.windows(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn units_keep_their_separator_and_tile_the_text() {
        let text = "a  b c";
        let u: Vec<&str> = units(text, " ").into_iter().map(|r| &text[r]).collect();
        assert_eq!(u, ["a ", " ", "b ", "c"]);
        assert_eq!(units("", " ").len(), 1);
        assert!(units("", " ")[0].is_empty());
    }

    #[test]
    fn windows_follow_more_itertools_windowed() {
        let text = "1 2 3 4 5 6";
        assert_eq!(texts(&chunker(SplitBy::Word, 3, 1, 0), text), ["1 2 3 ", "3 4 5 ", "5 6"]);
        assert_eq!(texts(&chunker(SplitBy::Word, 3, 0, 0), text), ["1 2 3 ", "4 5 6"]);
        // A last window under the threshold is glued to the chunk before.
        let seven = "1 2 3 4 5 6 7";
        assert_eq!(texts(&chunker(SplitBy::Word, 3, 0, 2), seven), ["1 2 3 ", "4 5 6 7"]);
        assert_eq!(texts(&chunker(SplitBy::Word, 3, 0, 0), seven), ["1 2 3 ", "4 5 6 ", "7"]);
        assert!(texts(&chunker(SplitBy::Word, 3, 0, 0), "").is_empty());
        assert_eq!(texts(&chunker(SplitBy::Passage, 1, 0, 0), "a\n\nb"), ["a\n\n", "b"]);
    }

    #[test]
    fn configure_accepts_sentences_and_refuses_unshipped_languages() {
        let configure = |src: &str| {
            let table: toml::Table = src.parse().unwrap();
            HaystackSplit
                .configure(&Params::new(&table, "params"))
                .map(|c| c.params())
                .map_err(|e| e.0)
        };
        let t = configure("split_by = \"sentence\"\nsplit_length = 5").unwrap();
        assert_eq!(t["split_by"].as_str(), Some("sentence"));
        let t = configure("respect_sentence_boundary = true\nsplit_length = 50").unwrap();
        assert_eq!(t["respect_sentence_boundary"].as_bool(), Some(true));
        // Reset for anything but words, as Haystack does (with a warning).
        let t = configure("split_by = \"line\"\nrespect_sentence_boundary = true").unwrap();
        assert_eq!(t["respect_sentence_boundary"].as_bool(), Some(false));
        assert!(configure("split_by = \"sentence\"\nlanguage = \"ru\"").is_ok());
        assert!(configure("split_by = \"sentence\"\nlanguage = \"xx\"").is_ok());
        let e = configure("split_by = \"sentence\"\nlanguage = \"de\"").unwrap_err();
        assert!(e.contains("params.language") && e.contains("\"en\", \"ru\""), "{e}");
        // The language only matters when sentences are split.
        assert!(configure("split_by = \"word\"\nlanguage = \"de\"").is_ok());
        let e = configure("split_by = \"token\"").unwrap_err();
        assert!(e.contains("params.split_by"), "{e}");
    }

    #[test]
    fn random_texts_give_ordered_slices_over_sentences_without_panic() {
        let alphabet: Vec<char> = "aZ9 .?!,;:-()[]{}\"'‘’“”«»\n\r\t\u{c}\u{1c}\u{85}\u{a0}é\u{301}😀1"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        let sentences = HaystackSentences::new("en", true, true).unwrap();
        for _ in 0..400 {
            let len = next(120);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let n = 1 + next(8);
            let mut c = chunker(SplitBy::Sentence, n, next(n), next(4));
            c.sentences = Some(sentences.clone());
            c.respect_sentence_boundary = next(2) == 0;
            if c.respect_sentence_boundary {
                c.split_by = SplitBy::Word;
            }
            let spans = c.windows(&text);
            for w in spans.windows(2) {
                assert!(w[0].start <= w[1].start, "{text:?}");
            }
            for r in &spans {
                assert!(!r.is_empty() && text.get(r.clone()).is_some(), "{text:?}");
            }
            if text.trim_matches(crate::strategy::pystr::py_isspace).is_empty() {
                assert!(spans.is_empty());
            }
        }
    }
}
