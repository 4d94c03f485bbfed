//! Haystack's `SentenceSplitter(language, use_split_rules,
//! extend_abbreviations, keep_white_spaces=True).split_sentences`
//! (haystack-ai 3.4.1, `sentence_tokenizer.py`; `scripts/peers/ADAPTERS.md`
//! section 7.3): NLTK's trained Punkt with Haystack's period context,
//! then `_apply_split_rules`; and the word-count grouping of
//! `respect_sentence_boundary` (section 7.4).

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use crate::sentence::punkt::{Model, Punkt};
use crate::strategy::pystr::py_isspace;

/// Haystack's `ISO639_TO_NLTK` codes whose NLTK model is not shipped.
const NOT_SHIPPED: [&str; 17] = [
    "sl", "es", "sv", "tr", "cs", "da", "nl", "et", "fi", "fr", "de", "el", "it", "no", "pl", "pt",
    "ml",
];

/// Haystack's sentence splitter.
#[derive(Debug, Clone)]
pub struct HaystackSentences {
    punkt: Punkt,
    use_split_rules: bool,
}

impl HaystackSentences {
    /// The splitter for `language` (`"en"`, `"ru"`; any code Haystack does
    /// not know falls back to English without Haystack's abbreviations, as
    /// Haystack does). Haystack's other languages are refused: their NLTK
    /// models are not shipped.
    pub fn new(
        language: &str,
        use_split_rules: bool,
        extend_abbreviations: bool,
    ) -> Result<Self, String> {
        let params = match language {
            "en" if extend_abbreviations => Model::english_with_haystack_abbreviations(),
            "en" => Model::English.params(),
            // No `ru.txt` in Haystack: nothing to extend with.
            "ru" => Model::Russian.params(),
            l if NOT_SHIPPED.contains(&l) => {
                return Err(format!(
                    "= {l:?}: NLTK's Punkt model for it is not shipped with the drop-in; supported: \"en\", \"ru\" (any code Haystack does not know falls back to English)"
                ))
            }
            _ => Model::English.params(),
        };
        Ok(Self {
            punkt: Punkt::with_params(params).keep_white_spaces(),
            use_split_rules,
        })
    }

    /// `split_sentences(text)`: the sentences' byte ranges.
    pub fn split(&self, text: &str) -> Vec<Range<usize>> {
        let spans = self.punkt.span_tokenize(text);
        if self.use_split_rules {
            apply_split_rules(text, spans)
        } else {
            spans
        }
    }
}

/// `QUOTE_SPANS_RE.finditer(text)` (`"[^"]*"|'[^']*'`): sorted, disjoint.
fn quote_spans(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(rel) = text.get(pos..).and_then(|t| t.find(['"', '\''])) {
        let at = pos + rel;
        let q = if text[at..].starts_with('"') { '"' } else { '\'' };
        match text[at + 1..].find(q) {
            Some(close) => {
                let end = at + 1 + close + 1;
                out.push(at..end);
                pos = end;
            }
            None => pos = at + 1,
        }
    }
    out
}

/// The quote span `s` with `s.start < end <= s.end`, if any.
fn quote_around(quotes: &[Range<usize>], end: usize) -> Option<&Range<usize>> {
    let i = quotes.partition_point(|q| q.end < end);
    quotes.get(i).filter(|q| q.start < end)
}

/// Python `re`'s `\d` on `str`: Unicode `Nd`.
fn is_decimal(c: char) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    c.is_ascii_digit()
        || (!c.is_ascii()
            && RE
                .get_or_init(|| Regex::new(r"^\d$").ok())
                .as_ref()
                .is_some_and(|re| re.is_match(c.encode_utf8(&mut [0; 4]))))
}

/// `re.search(r"(^|\n)\s*\d{1,2}\.$", s)` for an `s` without trailing
/// whitespace, read from the end (a span joined many times is not scanned
/// again each time).
fn ends_with_list_number(s: &str) -> bool {
    let Some(rest) = s.strip_suffix('.') else {
        return false;
    };
    let body = rest.trim_end_matches(is_decimal);
    if !(1..=2).contains(&rest[body.len()..].chars().count()) {
        return false;
    }
    let before = body.trim_end_matches(py_isspace);
    before.is_empty() || body[before.len()..].contains('\n')
}

/// `_needs_join(text, span, next_span, quote_spans)`.
fn needs_join(
    text: &str,
    span: &Range<usize>,
    next: &Range<usize>,
    quotes: &[Range<usize>],
) -> bool {
    let slice = text.get(span.clone()).unwrap_or("");
    let stripped = slice.trim_end_matches(py_isspace);
    let end = span.start + stripped.len();
    if let Some(q) = quote_around(quotes, end) {
        // 1. The end inside a quote.
        if end < q.end {
            return true;
        }
        // 2. A cited question (`?"`).
        let before_close = text.get(..q.end.saturating_sub(1)).unwrap_or("");
        if before_close.ends_with('?') {
            return true;
        }
        // 3. Anything but whitespace right after the quote.
        if let Some(c) = text.get(q.end..).and_then(|t| t.chars().next()) {
            if !py_isspace(c) {
                return true;
            }
        }
    }
    // 4. A list number (`1.`).
    if ends_with_list_number(stripped) {
        return true;
    }
    // 5. The next sentence starts with a bracket.
    let next_text = text.get(next.clone()).unwrap_or("");
    next_text
        .trim_start_matches(py_isspace)
        .starts_with(['(', '['])
}

/// `_apply_split_rules`: each span joined with the next while
/// [`needs_join`] says so.
fn apply_split_rules(text: &str, spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let quotes = quote_spans(text);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    let mut it = spans.into_iter().peekable();
    while let Some(mut span) = it.next() {
        while let Some(next) = it.next_if(|n| needs_join(text, &span, n, &quotes)) {
            span = span.start..next.end;
        }
        out.push(span);
    }
    out
}

/// `len(s.split())`: Python's whitespace-separated words.
pub fn word_count(s: &str) -> usize {
    s.split(py_isspace).filter(|w| !w.is_empty()).count()
}

/// `_number_of_sentences_to_keep`: how many sentences at the end of a
/// closed chunk (never its first) start the next one.
fn sentences_to_keep(words: &[usize], split_length: usize, split_overlap: usize) -> usize {
    if split_overlap == 0 {
        return 0;
    }
    let (mut keep, mut total) = (0, 0);
    for w in words.iter().skip(1).rev() {
        total += w;
        if total > split_length {
            break;
        }
        keep += 1;
        if total > split_overlap {
            break;
        }
    }
    keep
}

/// `_concatenate_sentences_based_on_word_amount`: the chunks' sentence
/// index ranges (into `sentences`), each closed when the next sentence
/// would take it over `split_length` words or at the last sentence, the
/// next one starting with the sentences [`sentences_to_keep`] gives.
pub fn group_by_words(
    text: &str,
    sentences: &[Range<usize>],
    split_length: usize,
    split_overlap: usize,
) -> Vec<Range<usize>> {
    let words: Vec<usize> = sentences
        .iter()
        .map(|r| word_count(text.get(r.clone()).unwrap_or("")))
        .collect();
    let mut out = Vec::new();
    let mut first = 0;
    let mut chunk_words = 0;
    for i in 0..sentences.len() {
        chunk_words += words[i];
        let next = words.get(i + 1).copied().unwrap_or(0);
        if chunk_words + next > split_length || i + 1 == sentences.len() {
            out.push(first..i + 1);
            let keep = sentences_to_keep(&words[first..=i], split_length, split_overlap);
            first = i + 1 - keep;
            chunk_words = words[first..=i].iter().sum();
        }
    }
    out
}

#[cfg(test)]
mod tests;
