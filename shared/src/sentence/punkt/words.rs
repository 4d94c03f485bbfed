//! Punkt's word tokenizer and token annotations (NLTK 3.10.4
//! `nltk/tokenize/punkt.py`: `PunktLanguageVars.word_tokenize` with
//! `_word_tokenize_fmt`, `PunktToken`, `_tokenize_words`,
//! `_first_pass_annotation`, `_second_pass_annotation`,
//! `_ortho_heuristic`). NLTK compiles these patterns with the `regex`
//! module, whose `\s` and `\w` are the Rust `regex` crate's (Unicode
//! `White_Space`; alphabetic, marks, digits, connectors); the look-aheads
//! the crate lacks are written out by hand.

use std::sync::OnceLock;

use regex::Regex;

use super::params::{PunktParameters, ORTHO_BEG_LC, ORTHO_LC, ORTHO_MID_UC, ORTHO_UC};
use crate::strategy::pystr::py_isspace;

/// `_re_non_word_chars`: characters that cannot appear within words.
pub(super) fn is_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"'
            | ';'
            | '}'
            | ']'
            | '*'
            | ':'
            | '@'
            | '\''
            | '('
            | '{'
            | '['
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{ab}'
            | '\u{bb}'
            | '?'
            | '!'
    )
}

/// The complement of `_re_word_start` (`[^\(\"\`{\[:;&\#\*@\)}\]\-,]`):
/// characters that cannot start a word token.
fn is_not_word_start(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}

/// The `regex` module's `\s`: Unicode `White_Space` (not U+001C..U+001F).
pub(super) fn is_re_space(c: char) -> bool {
    c.is_whitespace()
}

fn char_at(s: &str, at: usize) -> Option<char> {
    s.get(at..).and_then(|t| t.chars().next())
}

/// `_re_multi_char_punct` (`\-{2,}|\.{2,}|(?:\.\s){2,}\.`) matched at
/// `at`, greedily: where the match ends.
fn multi_char_at(s: &str, at: usize) -> Option<usize> {
    let rest = s.get(at..)?;
    for c in ['-', '.'] {
        let run = rest.chars().take_while(|&x| x == c).count();
        if run >= 2 {
            return Some(at + run);
        }
    }
    // `(?:\.\s){2,}\.`: as many ". " pairs as there are, then a period; one
    // pair given back if the period after the last is missing.
    let mut pair_starts = Vec::new();
    let mut p = at;
    while char_at(s, p) == Some('.') {
        match char_at(s, p + 1) {
            Some(w) if is_re_space(w) => {
                pair_starts.push(p);
                p += 1 + w.len_utf8();
            }
            _ => break,
        }
    }
    if pair_starts.len() >= 2 && char_at(s, p) == Some('.') {
        Some(p + 1)
    } else if pair_starts.len() >= 3 {
        pair_starts.last().map(|&q| q + 1)
    } else {
        None
    }
}

/// The look-ahead that ends a word token at `q`:
/// `\s|$|NonWord|MultiChar|,(?=$|\s|NonWord|MultiChar)`.
fn word_ends_at(s: &str, q: usize) -> bool {
    let Some(c) = char_at(s, q) else {
        return true;
    };
    if is_re_space(c) || is_non_word(c) || multi_char_at(s, q).is_some() {
        return true;
    }
    c == ',' && {
        let r = q + 1;
        match char_at(s, r) {
            None => true,
            Some(n) => is_re_space(n) || is_non_word(n) || multi_char_at(s, r).is_some(),
        }
    }
}

/// `word_tokenize(line)`: `findall` of the word pattern (a multi-character
/// punctuation run, a word up to its end, or any other non-space
/// character), in order.
pub(super) fn word_tokenize(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut p = 0;
    while let Some(c) = char_at(line, p) {
        if let Some(end) = multi_char_at(line, p) {
            out.push(&line[p..end]);
            p = end;
        } else if is_re_space(c) {
            p += c.len_utf8();
        } else if !is_not_word_start(c) {
            // `\S+?` up to the first place a word may end.
            let mut q = p + c.len_utf8();
            while !word_ends_at(line, q) {
                q += char_at(line, q).map_or(1, char::len_utf8);
            }
            out.push(&line[p..q]);
            p = q;
        } else {
            out.push(&line[p..p + c.len_utf8()]);
            p += c.len_utf8();
        }
    }
    out
}

fn numeric() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^-?[\.,]?\d[\d,\.-]*\.?$").ok())
        .as_ref()
}

fn initial() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[^\W\d]\.$").ok()).as_ref()
}

/// A `PunktToken`: a word token with its annotations.
#[derive(Debug, Clone)]
pub(super) struct Token<'a> {
    /// The token's text.
    pub tok: &'a str,
    /// `type`: lowercased, or `##number##` for a number.
    typ: String,
    /// Ends with a period.
    period_final: bool,
    /// Marked as a sentence break.
    pub sentbreak: bool,
    /// Marked as an abbreviation.
    abbr: bool,
    /// Marked as an ellipsis.
    ellipsis: bool,
}

const NUMBER: &str = "##number##";

impl<'a> Token<'a> {
    fn new(tok: &'a str) -> Self {
        let typ = if numeric().is_some_and(|re| re.is_match(tok)) {
            NUMBER.to_owned()
        } else {
            tok.to_lowercase()
        };
        Self {
            tok,
            typ,
            period_final: tok.ends_with('.'),
            sentbreak: false,
            abbr: false,
            ellipsis: false,
        }
    }

    /// `type_no_period`.
    fn type_no_period(&self) -> &str {
        match self.typ.strip_suffix('.') {
            Some(t) if self.typ.chars().count() > 1 => t,
            _ => &self.typ,
        }
    }

    /// `type_no_sentperiod`.
    fn type_no_sentperiod(&self) -> &str {
        if self.sentbreak {
            self.type_no_period()
        } else {
            &self.typ
        }
    }

    fn first_upper(&self) -> bool {
        self.tok.chars().next().is_some_and(char::is_uppercase)
    }

    fn first_lower(&self) -> bool {
        self.tok.chars().next().is_some_and(char::is_lowercase)
    }

    /// `\.\.+$` matched at the start.
    fn is_ellipsis(&self) -> bool {
        self.tok.len() >= 2 && self.tok.bytes().all(|b| b == b'.')
    }

    fn is_initial(&self) -> bool {
        initial().is_some_and(|re| re.is_match(self.tok))
    }
}

/// `_tokenize_words`: the tokens of each non-blank line of `text`. (The
/// `parastart`/`linestart` marks it also sets only feed training, which is
/// not ported.)
pub(super) fn tokenize_words(text: &str) -> Vec<Token<'_>> {
    text.split('\n')
        .filter(|line| !line.chars().all(py_isspace))
        .flat_map(word_tokenize)
        .map(Token::new)
        .collect()
}

/// `_first_pass_annotation`.
fn first_pass(tok: &mut Token<'_>, params: &PunktParameters) {
    let t = tok.tok;
    if matches!(t, "." | "?" | "!") {
        tok.sentbreak = true;
    } else if tok.is_ellipsis() {
        tok.ellipsis = true;
    } else if tok.period_final && !t.ends_with("..") {
        let stem = t[..t.len() - 1].to_lowercase();
        let last = stem.rsplit('-').next().unwrap_or(&stem);
        if params.is_abbreviation(&stem) || params.is_abbreviation(last) {
            tok.abbr = true;
        } else {
            tok.sentbreak = true;
        }
    }
}

/// What `_ortho_heuristic` says of a token starting a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Starts {
    Yes,
    No,
    Unknown,
}

/// `_ortho_heuristic`.
fn ortho_heuristic(tok: &Token<'_>, params: &PunktParameters) -> Starts {
    if matches!(tok.tok, ";" | ":" | "," | "." | "!" | "?") {
        return Starts::No;
    }
    let ctx = params.ortho(tok.type_no_sentperiod());
    if tok.first_upper() && ctx & ORTHO_LC != 0 && ctx & ORTHO_MID_UC == 0 {
        return Starts::Yes;
    }
    if tok.first_lower() && (ctx & ORTHO_UC != 0 || ctx & ORTHO_BEG_LC == 0) {
        return Starts::No;
    }
    Starts::Unknown
}

/// `_second_pass_annotation` of `tok1` followed by `tok2`.
fn second_pass(tok1: &mut Token<'_>, tok2: &Token<'_>, params: &PunktParameters) {
    if !tok1.period_final {
        return;
    }
    let typ = tok1.type_no_period().to_owned();
    let next_typ = tok2.type_no_sentperiod();
    let is_initial = tok1.is_initial();
    if params.is_collocation(&typ, next_typ) {
        tok1.sentbreak = false;
        tok1.abbr = true;
        return;
    }
    if (tok1.abbr || tok1.ellipsis) && !is_initial {
        if ortho_heuristic(tok2, params) == Starts::Yes {
            tok1.sentbreak = true;
            return;
        }
        if tok2.first_upper() && params.is_sent_starter(next_typ) {
            tok1.sentbreak = true;
            return;
        }
    }
    if is_initial || typ == NUMBER {
        let starts = ortho_heuristic(tok2, params);
        if starts == Starts::No {
            tok1.sentbreak = false;
            tok1.abbr = true;
            return;
        }
        if starts == Starts::Unknown
            && is_initial
            && tok2.first_upper()
            && params.ortho(next_typ) & ORTHO_LC == 0
        {
            tok1.sentbreak = false;
            tok1.abbr = true;
        }
    }
}

/// `text_contains_sentbreak`: whether a token of `text` other than the
/// last is a sentence break once both annotation passes ran.
pub(super) fn text_contains_sentbreak(text: &str, params: &PunktParameters) -> bool {
    let mut toks = tokenize_words(text);
    for t in toks.iter_mut() {
        first_pass(t, params);
    }
    for i in 0..toks.len().saturating_sub(1) {
        let (head, tail) = toks.split_at_mut(i + 1);
        if let (Some(a), Some(b)) = (head.last_mut(), tail.first()) {
            second_pass(a, b, params);
            // A break followed by any token: the last token alone never
            // counts.
            if a.sentbreak {
                return true;
            }
        }
    }
    false
}
