//! What the token before a `.` says about a sentence boundary there: an
//! abbreviation, an initial, a number's point, or an ordinary word.

/// How far back (bytes) a token is examined for abbreviations; longer tokens
/// are never abbreviations. Keeps every candidate O(1).
const MAX_TOKEN_BYTES: usize = 64;

/// What the token before a single `.` says about a boundary there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Abbr {
    /// An ordinary word, number, URL...: a boundary if the next start allows.
    None,
    /// An abbreviation or initial: never a boundary.
    Never,
    /// `etc.`, `т.д.`: a boundary only before an uppercase start.
    Final,
    /// `No.`, `Jan.`: not a boundary before a digit.
    BeforeNumber,
}

/// A short token lowercased into a stack buffer (no allocation).
struct Lowered {
    buf: [u8; 48],
    len: usize,
    chars: usize,
}

impl Lowered {
    fn new(s: &str) -> Option<Self> {
        let mut out = Lowered {
            buf: [0; 48],
            len: 0,
            chars: 0,
        };
        for c in s.chars().flat_map(char::to_lowercase) {
            let w = c.len_utf8();
            let slot = out.buf.get_mut(out.len..out.len + w)?;
            c.encode_utf8(slot);
            out.len += w;
            out.chars += 1;
        }
        Some(out)
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// Start of the whitespace-free token ending at `end`, if it is short.
fn token_start(text: &str, end: usize) -> Option<usize> {
    let mut start = end;
    for c in text[..end].chars().rev() {
        if c.is_whitespace() {
            return Some(start);
        }
        start -= c.len_utf8();
        if end - start > MAX_TOKEN_BYTES {
            return None;
        }
    }
    Some(start)
}

/// The token before the whitespace that precedes `pos`, lowercased.
fn previous_token(text: &str, pos: usize) -> Option<Lowered> {
    let before = text[..pos].trim_end();
    let start = token_start(before, before.len())?;
    Lowered::new(&before[start..])
}

pub(super) fn period_class(text: &str, dot: usize) -> Abbr {
    let Some(tok_start) = token_start(text, dot) else {
        return Abbr::None;
    };
    let raw = &text[tok_start..dot];
    let core = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
    if core.is_empty() {
        return Abbr::None;
    }
    let Some(low) = Lowered::new(core) else {
        return Abbr::None;
    };
    let word = low.as_str();

    if core.chars().all(char::is_alphabetic) {
        if low.chars == 1 {
            return single_letter(text, core, word, tok_start);
        }
        return known_word(word);
    }

    // Letter-dot abbreviations: `e.g`, `U.S`, `т.е` (every segment one letter).
    let mut segments = 0;
    let letter_dot = core.split('.').all(|seg| {
        segments += 1;
        let mut cs = seg.chars();
        matches!((cs.next(), cs.next()), (Some(c), None) if c.is_alphabetic())
    });
    if letter_dot && segments >= 2 {
        return match word {
            "т.д" | "т.п" => Abbr::Final,
            _ => Abbr::Never,
        };
    }

    // Numbers: `1`, `3.4`, `10.0.0.1`.
    let numeric = core.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && core.bytes().next_back().is_some_and(|b| b.is_ascii_digit())
        && !core.contains("..");
    if numeric {
        let line_start = text[..tok_start]
            .trim_end_matches([' ', '\t'])
            .as_bytes()
            .last()
            .is_none_or(|&b| b == b'\n');
        if line_start {
            return Abbr::Never;
        }
        if core.contains('.') {
            if raw.starts_with('§') {
                return Abbr::Never;
            }
            if let Some(prev) = previous_token(text, tok_start) {
                let p = prev.as_str();
                let p = p.trim_end_matches('.');
                if p == "§" || is_section_word(p) {
                    return Abbr::Never;
                }
            }
        }
    }
    Abbr::None
}

fn single_letter(text: &str, core: &str, word: &str, tok_start: usize) -> Abbr {
    let upper = core.chars().all(char::is_uppercase);
    let lower = core.chars().all(char::is_lowercase);
    if upper {
        // An initial, unless it is the English pronoun.
        return if core == "I" { Abbr::None } else { Abbr::Never };
    }
    if !lower {
        return Abbr::None;
    }
    match word {
        // The Russian pronoun ends sentences: `Это был я.`
        "я" => Abbr::None,
        "д" | "п" => {
            // `и т. д.`, `и т. п.` behave like `etc.`
            let after_t = previous_token(text, tok_start).is_some_and(|p| p.as_str() == "т.");
            if after_t {
                Abbr::Final
            } else {
                Abbr::Never
            }
        }
        _ => Abbr::Never,
    }
}

fn known_word(word: &str) -> Abbr {
    match word {
        "etc" | "др" | "проч" => Abbr::Final,
        "no" | "nos" | "art" | "sec" | "jan" | "feb" | "mar" | "apr" | "jun" | "jul" | "aug"
        | "sep" | "sept" | "oct" | "nov" | "dec" => Abbr::BeforeNumber,
        // English.
        "vs" | "cf" | "dr" | "mr" | "mrs" | "ms" | "messrs" | "prof" | "st" | "jr" | "sr"
        | "fig" | "figs" | "eq" | "eqs" | "approx" | "incl" | "inc" | "ltd" | "co" | "corp"
        | "al" | "viz" | "ca" | "resp" | "dept" | "univ" | "gen" | "gov" | "sen" | "rep"
        | "rev" | "capt" | "col" | "lt" | "sgt" | "mt" | "ave" | "blvd" | "vol" | "vols"
        | "ch" | "pp" | "esp" | "op" | "ref" | "refs"
        // Russian.
        | "гг" | "вв" | "см" | "ср" | "стр" | "рис" | "табл" | "им" | "ул" | "проф"
        | "акад" | "доц" | "тыс" | "млн" | "млрд" | "руб" | "коп" | "пр" | "напр" | "пер"
        | "просп" | "пл" | "обл" | "гл" | "пп" | "ст" | "кв" | "корп" | "изд" | "ред"
        | "сост" | "англ" | "лат" | "нем" | "франц" | "фр" | "греч" | "букв" | "ок" | "зам"
        | "зав" | "тов" | "гр" | "кн" | "св" | "прим" | "сокр" | "мн" | "ед" | "долл"
        | "экз" | "илл" | "вып" | "мин" | "сек" | "чел" | "янв" | "февр" | "апр" | "авг"
        | "сент" | "окт" | "нояб" | "дек" | "тт" | "чл" | "корр" | "ген" | "оз" | "пос"
        | "дер" | "тел" | "эт" | "каб" | "искл" | "вкл" => Abbr::Never,
        _ => Abbr::None,
    }
}

fn is_section_word(word: &str) -> bool {
    matches!(
        word,
        "section"
            | "sections"
            | "sec"
            | "chapter"
            | "chapters"
            | "ch"
            | "part"
            | "item"
            | "clause"
            | "step"
            | "appendix"
            | "paragraph"
            | "para"
            | "раздел"
            | "раздела"
            | "разделе"
            | "разделы"
            | "подраздел"
            | "подразделе"
            | "пункт"
            | "пункта"
            | "пункте"
            | "п"
            | "пп"
            | "глава"
            | "главе"
            | "главы"
            | "гл"
            | "часть"
            | "части"
            | "ст"
            | "статья"
            | "статьи"
            | "статье"
            | "шаг"
            | "параграф"
            | "параграфе"
    )
}
