//! NLTK's Punkt sentence tokenizer at inference (NLTK 3.10.4,
//! `nltk/tokenize/punkt.py`, `PunktSentenceTokenizer.span_tokenize`),
//! ported literally (`scripts/peers/ADAPTERS.md` section 4.1): candidate
//! sentence ends from the period-context pattern, each judged on its
//! context (the word before, the end character, what follows) by the word
//! tokenizer and both annotation passes, then closing punctuation moved
//! back onto the sentence it ends (`_realign_boundaries`).
//!
//! Offsets are byte offsets of the text (NLTK's are code points; the
//! positions are the same characters). With [`PunktParameters::default`]
//! this is the untrained tokenizer LlamaIndex's `SentenceSplitter` builds;
//! trained parameters ([`Model`], shipped in `data/`) plug in through
//! [`Punkt::with_params`], and [`Punkt::keep_white_spaces`] swaps in
//! Haystack's `CustomPunktLanguageVars` period context (section 7.3), as
//! Haystack's `SentenceSplitter(keep_white_spaces=True)` does.

mod model;
mod params;
mod words;

use std::ops::Range;
use std::sync::Arc;

pub use model::Model;

pub use params::{
    PunktParameters, ORTHO_BEG_LC, ORTHO_BEG_UC, ORTHO_LC, ORTHO_MID_LC, ORTHO_MID_UC, ORTHO_UC,
    ORTHO_UNK_LC, ORTHO_UNK_UC,
};

use crate::strategy::pystr::py_isspace;
use words::{is_non_word, is_re_space, text_contains_sentbreak};

/// A Punkt sentence tokenizer with its parameters.
#[derive(Debug, Clone, Default)]
pub struct Punkt {
    params: Arc<PunktParameters>,
    /// Haystack's `CustomPunktLanguageVars` period context.
    keep_white_spaces: bool,
}

/// One match of `period_context_re`: a sentence-end character (at `at`;
/// the match ends at `end`) and what follows it (`after_tok`: one non-word
/// character, or the next token, `next_tok`, with the whitespace before
/// it in NLTK's pattern).
#[derive(Debug, Clone)]
struct EndCandidate {
    at: usize,
    end: usize,
    after_tok: Range<usize>,
    next_tok: Option<Range<usize>>,
}

/// `period_context_re().finditer(text)`:
/// `[.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+)))`.
fn end_candidates(text: &str) -> Vec<EndCandidate> {
    let mut out = Vec::new();
    for (at, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') {
            continue;
        }
        let after = at + 1;
        let Some(n) = text[after..].chars().next() else {
            continue;
        };
        if is_non_word(n) {
            out.push(EndCandidate {
                at,
                end: after,
                after_tok: after..after + n.len_utf8(),
                next_tok: None,
            });
        } else if is_re_space(n) {
            let tok_start = after + run_len(&text[after..], is_re_space);
            let tok_end = tok_start + run_len(&text[tok_start..], |c| !is_re_space(c));
            if tok_end > tok_start {
                out.push(EndCandidate {
                    at,
                    end: after,
                    after_tok: after..tok_end,
                    next_tok: Some(tok_start..tok_end),
                });
            }
        }
    }
    out
}

/// Haystack's `SENTENCE_CLOSING_CHARS_RE` (`[\)\]}\"'’”»]`).
fn is_sentence_closer(c: char) -> bool {
    matches!(
        c,
        ')' | ']' | '}' | '"' | '\'' | '\u{2019}' | '\u{201d}' | '\u{bb}'
    )
}

/// `CustomPunktLanguageVars.period_context_re().finditer(text)` (Python
/// `re`, so `\s` is `str.isspace`):
/// `[.?!][closers]*\s*(?=(?P<after_tok>NonWord|(?P<next_tok>\S+)))`. The
/// match holds the closing characters and the whitespace after them; at
/// the end of the text it gives the last closer back to the look-ahead.
fn keep_white_space_candidates(text: &str) -> Vec<EndCandidate> {
    let mut out = Vec::new();
    let mut pos = 0;
    // The end of the non-space run last measured: every later position
    // before it is in the same run (`a.a.a...` measures it once, not once
    // a period).
    let mut run_end = 0;
    while let Some(rel) = text.get(pos..).and_then(|t| t.find(['.', '?', '!'])) {
        let at = pos + rel;
        let closers = at + 1;
        let closers_end = closers + run_len(&text[closers..], is_sentence_closer);
        let ws_end = closers_end + run_len(&text[closers_end..], py_isspace);
        let (end, next) = match text[ws_end..].chars().next() {
            Some(c) => (ws_end, c),
            None => match text[closers..closers_end].chars().next_back() {
                Some(c) => (closers_end - c.len_utf8(), c),
                None => {
                    pos = at + 1;
                    continue;
                }
            },
        };
        if is_non_word(next) {
            out.push(EndCandidate {
                at,
                end,
                after_tok: end..end + next.len_utf8(),
                next_tok: None,
            });
        } else {
            if end >= run_end {
                run_end = end + run_len(&text[end..], |c| !py_isspace(c));
            }
            let tok_end = run_end;
            out.push(EndCandidate {
                at,
                end,
                after_tok: end..tok_end,
                next_tok: Some(end..tok_end),
            });
        }
        pos = end;
    }
    out
}

/// Bytes of the leading run of `text` whose characters satisfy `f`.
fn run_len(text: &str, f: impl Fn(char) -> bool) -> usize {
    text.char_indices()
        .find(|&(_, c)| !f(c))
        .map_or(text.len(), |(i, _)| i)
}

/// `_get_last_whitespace_index`: the index of the last character of
/// `string.whitespace` (ASCII only) in `text`, 0 when there is none.
fn last_whitespace_index(text: &str) -> usize {
    text.bytes()
        .rposition(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'))
        .unwrap_or(0)
}

/// `re_boundary_realignment`
/// (`["\')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)`, MULTILINE)
/// matched at the start of `text`: the end of the closing characters and
/// the end of the whole match.
fn realignment(text: &str) -> Option<(usize, usize)> {
    let closer = |c: char| {
        matches!(
            c,
            '"' | '\''
                | ')'
                | ']'
                | '}'
                | '\u{2018}'
                | '\u{2019}'
                | '\u{201c}'
                | '\u{201d}'
                | '\u{ab}'
                | '\u{bb}'
        )
    };
    let mut p = 0;
    // Lazily: one closer, then as many more as the alternatives need.
    while let Some(c) = text[p..].chars().next().filter(|&c| closer(c)) {
        p += c.len_utf8();
        let rest = &text[p..];
        match rest.chars().next() {
            Some(n) if is_re_space(n) => return Some((p, p + run_len(rest, is_re_space))),
            None => return Some((p, p)),
            _ if rest.starts_with("--") => return Some((p, p)),
            _ => {}
        }
    }
    None
}

impl Punkt {
    /// The untrained tokenizer (`PunktSentenceTokenizer()`).
    pub fn untrained() -> Self {
        Self::default()
    }

    /// A tokenizer with learned parameters.
    pub fn with_params(params: Arc<PunktParameters>) -> Self {
        Self {
            params,
            keep_white_spaces: false,
        }
    }

    /// With Haystack's `CustomPunktLanguageVars`: a sentence keeps the
    /// closing brackets or quotes and the whitespace after its end, so
    /// sentences follow each other without gaps (but for the document's
    /// trailing whitespace and a realigned closer's whitespace).
    pub fn keep_white_spaces(mut self) -> Self {
        self.keep_white_spaces = true;
        self
    }

    /// Its parameters.
    pub fn params(&self) -> &PunktParameters {
        &self.params
    }

    /// `_match_potential_end_contexts`: each candidate kept, with its
    /// context (the word before it, the end character and `after_tok`). A
    /// candidate whose word overlaps the next candidate's is dropped (of
    /// `acting!!!` only the last `!` stays).
    fn end_contexts(&self, text: &str) -> Vec<(EndCandidate, String)> {
        let context = |word: &Range<usize>, m: &EndCandidate| {
            let mut s = String::with_capacity(word.len() + 1 + m.after_tok.len());
            s.push_str(&text[word.clone()]);
            s.push_str(&text[m.at..m.end]);
            s.push_str(&text[m.after_tok.clone()]);
            s
        };
        let mut out = Vec::new();
        let mut previous_slice = 0..0;
        let mut previous: Option<EndCandidate> = None;
        let candidates = if self.keep_white_spaces {
            keep_white_space_candidates(text)
        } else {
            end_candidates(text)
        };
        for m in candidates {
            let before = &text[previous_slice.end..m.at];
            let i = last_whitespace_index(before);
            // NLTK's quirk: whitespace only at index 0 counts as none.
            let start = if i != 0 {
                i + previous_slice.end + 1
            } else {
                previous_slice.start
            };
            let word = start..m.at;
            if let Some(p) = previous.take() {
                if previous_slice.end <= word.start {
                    out.push((p.clone(), context(&previous_slice, &p)));
                }
            }
            previous = Some(m);
            previous_slice = word;
        }
        if let Some(p) = previous {
            let c = context(&previous_slice, &p);
            out.push((p, c));
        }
        out
    }

    /// `_slices_from_text`: the sentence slices before realignment; the
    /// last ends where the text's trailing (Python) whitespace starts. A
    /// slice may be empty or even reversed (`start > end`: empty).
    fn slices(&self, text: &str) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut last_break = 0;
        for (m, context) in self.end_contexts(text) {
            if text_contains_sentbreak(&context, &self.params) {
                out.push(last_break..m.end);
                last_break = m.next_tok.as_ref().map_or(m.end, |t| t.start);
            }
        }
        out.push(last_break..text.trim_end_matches(py_isspace).len());
        out
    }

    /// `span_tokenize(text)`: the sentences' byte ranges, closing
    /// punctuation after a break moved onto the sentence before
    /// (`_realign_boundaries`); empty sentences left out.
    pub fn span_tokenize(&self, text: &str) -> Vec<Range<usize>> {
        let slices = self.slices(text);
        let slice_text = |r: &Range<usize>| text.get(r.clone()).unwrap_or("");
        let mut out = Vec::new();
        let mut realign = 0;
        for (k, s1) in slices.iter().enumerate() {
            let s1 = s1.start + realign..s1.end;
            let Some(s2) = slices.get(k + 1) else {
                if !slice_text(&s1).is_empty() {
                    out.push(s1);
                }
                continue;
            };
            match realignment(slice_text(s2)) {
                Some((closers, whole)) => {
                    out.push(s1.start..s2.start + closers);
                    realign = whole;
                }
                None => {
                    realign = 0;
                    if !slice_text(&s1).is_empty() {
                        out.push(s1);
                    }
                }
            }
        }
        out
    }

    /// LlamaIndex's `split_by_sentence_tokenizer_internal`: sentence *i*
    /// runs from its start to the start of sentence *i + 1* (the last to
    /// the end of the text), so the pieces concatenate to `text`; none for
    /// a text of whitespace alone. (The first sentence starts at 0;
    /// if it did not, LlamaIndex would lose the text before it, here it
    /// belongs to the first piece.)
    pub fn sentence_pieces(&self, text: &str) -> Vec<Range<usize>> {
        let starts: Vec<usize> = self.span_tokenize(text).iter().map(|r| r.start).collect();
        let mut out = Vec::with_capacity(starts.len());
        for (k, &start) in starts.iter().enumerate() {
            let start = if k == 0 { 0 } else { start };
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            // Python's `text[start:end]` is "" when they meet (kept: it
            // counts as a piece there too).
            out.push(start..end.max(start));
        }
        out
    }
}
