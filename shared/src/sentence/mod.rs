//! Sentence segmentation for English and Russian prose (Markdown text).
//!
//! [`sentence_spans`] makes one linear pass over the bytes and never
//! allocates per character. A boundary always sits right after a run of
//! whitespace, so every sentence keeps its trailing whitespace. The rules:
//!
//! 1. A blank line (a whitespace run holding two or more `\n`) always ends a
//!    sentence, whatever precedes it (unless nothing but whitespace does).
//! 2. Otherwise a candidate is a run of terminators (`.`, `!`, `?`, `…`, in any
//!    combination: `...`, `?!`, `!!`, `?..`), then optional closers
//!    (`"` `'` `»` `”` `’` `)` `]` `}` `*` `_` `` ` `` `~`), then whitespace with
//!    at least one breaking character (a run of only no-break spaces never
//!    splits). Terminators glued to the next character (`3.5`, `a.b?c=d`,
//!    `std::io.Read`, `www.foo.org`) are never candidates.
//! 3. The next sentence must start plausibly: an uppercase or uncased letter
//!    (any script), a digit, a `` ` `` or `[` marker, openers (`«“„"'‘({*_¿¡`)
//!    followed by anything but a lowercase letter, or a dash (`—`, `–`, `-`)
//!    whose following word is not lowercase (a dash before a lowercase word is
//!    the author's words in Russian dialogue: `— Привет! — сказал он.`).
//! 4. When the whitespace holds exactly one newline (the line ends with the
//!    terminator), a lowercase or other start is accepted too, except after an
//!    ellipsis (lowercase), before a dash + lowercase word, and after the
//!    abbreviations of rule 6. A newline without a terminator (soft wrap) is not
//!    a boundary.
//! 5. An ellipsis (`…`, two or more dots) splits only by rules 3 and 4, so
//!    `и вот... потом` stays whole.
//! 6. A single `.` does not split after:
//!    - a known abbreviation (`Dr.`, `vs.`, `Fig.`, `approx.`, `Inc.`, `см.`,
//!      `рис.`, `млн.`, `напр.`, ...; case-insensitive);
//!    - letter-dot abbreviations (`e.g.`, `i.e.`, `U.S.`, `a.m.`, `т.е.`, `т.к.`);
//!    - a single letter (initials `А. С. Пушкин`, `J. R. R. Tolkien`, and
//!      `г.`, `в.`, `д.`, `т. е.`), except the words `I` and `я`;
//!    - a number (`1.`, `3.4.`) that starts the text or a line (list numbering);
//!    - a dotted number after a section word (`section 3.4.`, `§3.4.`,
//!      `раздел 3.4.`);
//!    - `No.`, `Art.`, `Sec.` and month abbreviations before a digit only.
//!
//!    `etc.`, `т.д.`, `т. д.`, `т.п.`, `и др.`, `и проч.` end a sentence only
//!    before an uppercase start (rule 3 without digits or markers).
//!    Anything else ending in `.` (words, numbers, versions, URLs, e-mails, file
//!    names) splits by rules 3 and 4: `Visit https://x.org. Then go.` is two.
//!
//! The ranges partition the input: contiguous, in order, on char boundaries,
//! none empty. Text without a boundary is one sentence; empty text gives none.
//!
//! [`punkt`] is a port of NLTK's Punkt (untrained for LlamaIndex, trained
//! for Haystack), shared by the drop-in strategies.

use std::ops::Range;

mod abbrev;
pub mod punkt;

use abbrev::{period_class, Abbr};

/// Splits `text` into sentences. The returned ranges partition `text`
/// (contiguous, covering every byte, in order); each sentence keeps its
/// trailing whitespace. Empty input gives no ranges.
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut spans = Vec::with_capacity(n / 128 + 1);
    let mut start = 0;
    let mut i = 0;
    while i < n {
        match bytes[i] {
            b'.' | b'!' | b'?' => {}
            0xE2 if is_ellipsis_at(bytes, i) => {}
            b'\n' => {
                // Rule 1: a blank line (not after a terminator; that case is
                // handled with the candidate below).
                let ws = scan_whitespace(text, i);
                if ws.newlines >= 2 && ws.end < n && !text[start..i].trim_end().is_empty() {
                    spans.push(start..ws.end);
                    start = ws.end;
                }
                i = ws.end;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        }

        // Rule 2: terminator run.
        let term_start = i;
        let mut dots = 0usize;
        let mut strong = false;
        let mut ellipsis = false;
        let mut j = i;
        while j < n {
            match bytes[j] {
                b'.' => {
                    dots += 1;
                    j += 1;
                }
                b'!' | b'?' => {
                    strong = true;
                    j += 1;
                }
                0xE2 if is_ellipsis_at(bytes, j) => {
                    ellipsis = true;
                    j += 3;
                }
                _ => break,
            }
        }
        // Closers.
        let mut close_end = j;
        for c in text[j..].chars() {
            if is_closer(c) {
                close_end += c.len_utf8();
            } else {
                break;
            }
        }
        let ws = scan_whitespace(text, close_end);
        i = ws.end.max(close_end);
        if ws.end == close_end || ws.end >= n {
            // Glued to the next character, or trailing whitespace at the end.
            continue;
        }
        let split = if ws.newlines >= 2 {
            true
        } else if !ws.breaking {
            false
        } else {
            let kind = if strong {
                Term::Strong
            } else if ellipsis || dots >= 2 {
                Term::Ellipsis
            } else {
                Term::Period
            };
            should_split(text, term_start, kind, ws.end, ws.newlines == 1)
        };
        if split {
            spans.push(start..ws.end);
            start = ws.end;
        }
    }
    if start < n {
        spans.push(start..n);
    }
    spans
}

/// `…` (U+2026) is `E2 80 A6` in UTF-8.
fn is_ellipsis_at(bytes: &[u8], i: usize) -> bool {
    bytes.get(i..i + 3) == Some(&[0xE2, 0x80, 0xA6][..])
}

fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '»' | '”' | '’' | '›' | ')' | ']' | '}' | '*' | '_' | '`' | '~'
    )
}

fn is_opener(c: char) -> bool {
    matches!(
        c,
        '«' | '“' | '„' | '"' | '\'' | '‘' | '‹' | '(' | '{' | '*' | '_' | '¿' | '¡'
    )
}

fn is_dash(c: char) -> bool {
    matches!(c, '—' | '–' | '-' | '―')
}

/// A whitespace run starting at a char boundary.
struct Whitespace {
    /// Byte offset just past the run.
    end: usize,
    /// How many `\n` it holds.
    newlines: usize,
    /// Whether it holds anything besides no-break spaces.
    breaking: bool,
}

fn scan_whitespace(text: &str, from: usize) -> Whitespace {
    let mut ws = Whitespace {
        end: from,
        newlines: 0,
        breaking: false,
    };
    for c in text[from..].chars() {
        if !c.is_whitespace() {
            break;
        }
        ws.end += c.len_utf8();
        match c {
            '\n' => {
                ws.newlines += 1;
                ws.breaking = true;
            }
            '\u{a0}' | '\u{2007}' | '\u{202f}' => {}
            _ => ws.breaking = true,
        }
    }
    ws
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Term {
    /// A single `.`.
    Period,
    /// `…` or two or more dots.
    Ellipsis,
    /// Contains `!` or `?`.
    Strong,
}

/// How the text after the whitespace begins.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Start {
    /// Uppercase or uncased letter, or an opener before a non-lowercase char.
    Upper,
    Lower,
    Digit,
    /// `` ` `` or `[`: inline code or a link.
    Marker,
    /// A dash before a non-lowercase word (dialogue continues with a sentence).
    DashUpper,
    /// A dash before a lowercase word (the author's words in dialogue).
    DashLower,
    /// Anything else (punctuation, emoji, combining marks, ...).
    Other,
}

fn classify_char(c: char) -> Start {
    if c.is_lowercase() {
        Start::Lower
    } else if c.is_numeric() {
        Start::Digit
    } else if c.is_alphabetic() {
        // Uppercase, titlecase or an uncased script (CJK, Arabic, Hebrew...).
        Start::Upper
    } else {
        Start::Other
    }
}

fn classify_start(text: &str, pos: usize) -> Start {
    let mut chars = text[pos..].chars();
    let Some(first) = chars.next() else {
        return Start::Other;
    };
    if first == '`' || first == '[' {
        return Start::Marker;
    }
    if is_dash(first) {
        let next = chars
            .take(64)
            .find(|&c| !(is_dash(c) || (c.is_whitespace() && c != '\n')));
        return match next.map(classify_char) {
            Some(Start::Lower) => Start::DashLower,
            Some(Start::Upper | Start::Digit) => Start::DashUpper,
            _ if matches!(next, Some(c) if is_opener(c) || c == '`' || c == '[') => {
                Start::DashUpper
            }
            _ => Start::Other,
        };
    }
    if is_opener(first) {
        // Skip a few more openers (`«*`, `("`), then look at the first real char.
        let next = chars.take(8).find(|&c| !is_opener(c));
        return match next {
            Some('`' | '[') => Start::Marker,
            Some(c) => match classify_char(c) {
                Start::Digit => Start::Upper,
                other => other,
            },
            None => Start::Other,
        };
    }
    classify_char(first)
}

fn is_plausible(start: Start) -> bool {
    matches!(
        start,
        Start::Upper | Start::Digit | Start::Marker | Start::DashUpper
    )
}

fn should_split(text: &str, term_start: usize, kind: Term, next: usize, newline: bool) -> bool {
    let start = classify_start(text, next);
    let relaxed = |s: Start| newline && matches!(s, Start::Lower | Start::Other);
    match kind {
        Term::Strong => is_plausible(start) || relaxed(start),
        Term::Ellipsis => is_plausible(start) || (newline && start == Start::Other),
        Term::Period => match period_class(text, term_start) {
            Abbr::None => is_plausible(start) || relaxed(start),
            Abbr::Never => false,
            Abbr::Final => matches!(start, Start::Upper | Start::DashUpper),
            Abbr::BeforeNumber => start != Start::Digit && (is_plausible(start) || relaxed(start)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::sentence_spans;

    fn split(input: &str) -> Vec<&str> {
        sentence_spans(input)
            .into_iter()
            .map(|r| &input[r])
            .collect()
    }

    /// (input, expected sentences).
    const CASES: &[(&str, &[&str])] = &[
        // Basics and whitespace.
        ("", &[]),
        ("   ", &["   "]),
        (
            "no punctuation at all here",
            &["no punctuation at all here"],
        ),
        (
            "One. Two! Three? Four",
            &["One. ", "Two! ", "Three? ", "Four"],
        ),
        ("One.  Two.  ", &["One.  ", "Two.  "]),
        ("  Lead. Next.", &["  Lead. ", "Next."]),
        ("Hi.\tThere.", &["Hi.\t", "There."]),
        (
            "Really?! Yes. Stop!! Now.",
            &["Really?! ", "Yes. ", "Stop!! ", "Now."],
        ),
        (
            "Wait... What? Ну… Ладно.",
            &["Wait... ", "What? ", "Ну… ", "Ладно."],
        ),
        ("и вот... потом пришёл.", &["и вот... потом пришёл."]),
        ("Hello! привет", &["Hello! привет"]),
        ("Great! 😀 Next one.", &["Great! 😀 Next one."]),
        // Closers after the terminator.
        (
            "He said \"Go.\" She left.",
            &["He said \"Go.\" ", "She left."],
        ),
        (
            "Он сказал: «Я приду.» Потом ушёл.",
            &["Он сказал: «Я приду.» ", "Потом ушёл."],
        ),
        (
            "Он сказал: «Я приду». Потом ушёл.",
            &["Он сказал: «Я приду». ", "Потом ушёл."],
        ),
        ("(See above.) Then go.", &["(See above.) ", "Then go."]),
        (
            "He shouted “Stop!” Then ran.",
            &["He shouted “Stop!” ", "Then ran."],
        ),
        ("\"Hi.\" \"Bye.\"", &["\"Hi.\" ", "\"Bye.\""]),
        (
            "Он ушёл. «Зачем?» — спросил я.",
            &["Он ушёл. ", "«Зачем?» — спросил я."],
        ),
        // Russian dialogue.
        (
            "— Привет! — сказал он. — Как дела?",
            &["— Привет! — сказал он. ", "— Как дела?"],
        ),
        (
            "— Ты куда? — спросила она.",
            &["— Ты куда? — спросила она."],
        ),
        ("«Стой!» Он остановился.", &["«Стой!» ", "Он остановился."]),
        ("Done. - next item", &["Done. - next item"]),
        // English abbreviations.
        (
            "Use e.g. this one. Or i.e. that.",
            &["Use e.g. this one. ", "Or i.e. that."],
        ),
        (
            "Apples, pears, etc. and more.",
            &["Apples, pears, etc. and more."],
        ),
        (
            "Apples, pears, etc. Then more.",
            &["Apples, pears, etc. ", "Then more."],
        ),
        (
            "Python vs. Rust, cf. Smith.",
            &["Python vs. Rust, cf. Smith."],
        ),
        (
            "Dr. Smith met Mr. Jones and Mrs. Lee.",
            &["Dr. Smith met Mr. Jones and Mrs. Lee."],
        ),
        (
            "Ms. Ray and Prof. Kay visited St. Louis.",
            &["Ms. Ray and Prof. Kay visited St. Louis."],
        ),
        (
            "John Smith Jr. and Sr. Doe came.",
            &["John Smith Jr. and Sr. Doe came."],
        ),
        (
            "See No. 5 and Fig. 3 in Eq. 2.",
            &["See No. 5 and Fig. 3 in Eq. 2."],
        ),
        ("I said no. Then left.", &["I said no. ", "Then left."]),
        (
            "It is approx. 5 km, incl. VAT.",
            &["It is approx. 5 km, incl. VAT."],
        ),
        (
            "Born in the U.S. He moved.",
            &["Born in the U.S. He moved."],
        ),
        (
            "At 5 p.m. We met at 9 a.m. Sharp.",
            &["At 5 p.m. We met at 9 a.m. Sharp."],
        ),
        (
            "Acme Inc. Makes stuff. Foo Ltd. And Co. Too.",
            &["Acme Inc. Makes stuff. ", "Foo Ltd. And Co. Too."],
        ),
        ("So did I. Then we left.", &["So did I. ", "Then we left."]),
        // Initials.
        (
            "J. R. R. Tolkien wrote it.",
            &["J. R. R. Tolkien wrote it."],
        ),
        ("John F. Kennedy spoke.", &["John F. Kennedy spoke."]),
        (
            "Иванов А. С. пришёл. А. С. Пушкин тоже.",
            &["Иванов А. С. пришёл. ", "А. С. Пушкин тоже."],
        ),
        // Russian abbreviations.
        (
            "Это, т.е. вот это. Т.к. он прав.",
            &["Это, т.е. вот это. ", "Т.к. он прав."],
        ),
        (
            "Яблоки, груши и т.д. Потом бананы.",
            &["Яблоки, груши и т.д. ", "Потом бананы."],
        ),
        ("Яблоки и т.п. и прочее.", &["Яблоки и т.п. и прочее."]),
        (
            "Яблоки и т. д. Потом бананы.",
            &["Яблоки и т. д. ", "Потом бананы."],
        ),
        ("Это, т. е. вот это.", &["Это, т. е. вот это."]),
        (
            "Так называемый т.н. Эффект.",
            &["Так называемый т.н. Эффект."],
        ),
        (
            "В 1999 г. Москва росла. В XIX в. Тоже.",
            &["В 1999 г. Москва росла. ", "В XIX в. Тоже."],
        ),
        (
            "В 1990-х гг. Был рост. В XIX–XX вв. Тоже.",
            &["В 1990-х гг. Был рост. ", "В XIX–XX вв. Тоже."],
        ),
        (
            "См. рис. 5. Далее табл. 2.",
            &["См. рис. 5. ", "Далее табл. 2."],
        ),
        (
            "Ср. стр. 4, им. Пушкина, ул. Ленина, д. 5.",
            &["Ср. стр. 4, им. Пушкина, ул. Ленина, д. 5."],
        ),
        (
            "Проф. Иванов и акад. Петров, доц. Сидоров.",
            &["Проф. Иванов и акад. Петров, доц. Сидоров."],
        ),
        (
            "Это 5 тыс. руб. Или 3 млн. Или 2 млрд. Коп. Нет.",
            &["Это 5 тыс. руб. Или 3 млн. Или 2 млрд. Коп. Нет."],
        ),
        (
            "Пушкин, Гоголь и др. Они писали.",
            &["Пушкин, Гоголь и др. ", "Они писали."],
        ),
        (
            "Есть пр. Мира и напр. Арбат.",
            &["Есть пр. Мира и напр. Арбат."],
        ),
        ("Это был я. Потом ушёл.", &["Это был я. ", "Потом ушёл."]),
        // Numbers.
        ("Pi is 3.5 or so. Next.", &["Pi is 3.5 or so. ", "Next."]),
        (
            "Сумма 1 234,56 руб. была. Итого.",
            &["Сумма 1 234,56 руб. была. ", "Итого."],
        ),
        (
            "Update to v1.2.3. Then restart.",
            &["Update to v1.2.3. ", "Then restart."],
        ),
        (
            "Ping 10.0.0.1 now. It works.",
            &["Ping 10.0.0.1 now. ", "It works."],
        ),
        (
            "It happened in 1999. Then it ended.",
            &["It happened in 1999. ", "Then it ended."],
        ),
        ("1. First item. Second.", &["1. First item. ", "Second."]),
        (
            "3.4. Installation goes here.",
            &["3.4. Installation goes here."],
        ),
        (
            "See section 3.4. It explains.",
            &["See section 3.4. It explains."],
        ),
        ("См. раздел 2.1. Там всё.", &["См. раздел 2.1. Там всё."]),
        ("See §3.4. It explains.", &["See §3.4. It explains."]),
        (
            "Python 3.12. Он быстрый.",
            &["Python 3.12. ", "Он быстрый."],
        ),
        (
            "It cost 5. 3 people paid.",
            &["It cost 5. ", "3 people paid."],
        ),
        // URLs, e-mails, files, code.
        (
            "Visit https://x.org. Then go.",
            &["Visit https://x.org. ", "Then go."],
        ),
        (
            "Open https://example.com/a.b?c=d. Then close.",
            &["Open https://example.com/a.b?c=d. ", "Then close."],
        ),
        (
            "Go to www.foo.org or https://example.com/a.b?c=d. now.",
            &["Go to www.foo.org or https://example.com/a.b?c=d. now."],
        ),
        (
            "Пишите на user@mail.ru. Ответим.",
            &["Пишите на user@mail.ru. ", "Ответим."],
        ),
        (
            "Edit config.toml and std::io.Read or obj.method() now.",
            &["Edit config.toml and std::io.Read or obj.method() now."],
        ),
        (
            "Edit config.toml. Then run.",
            &["Edit config.toml. ", "Then run."],
        ),
        // Markdown inline markup.
        ("**Bold.** Next one.", &["**Bold.** ", "Next one."]),
        ("Text. *Emphasis* here.", &["Text. ", "*Emphasis* here."]),
        (
            "Call it. `foo()` returns.",
            &["Call it. ", "`foo()` returns."],
        ),
        (
            "See below. [Link](x) here.",
            &["See below. ", "[Link](x) here."],
        ),
        (
            "Call `foo()`. Then stop.",
            &["Call `foo()`. ", "Then stop."],
        ),
        (
            "See [docs](https://x.org). Then go.",
            &["See [docs](https://x.org). ", "Then go."],
        ),
        ("Text. _Italic_ there.", &["Text. ", "_Italic_ there."]),
        // Newlines.
        (
            "soft wrapped\nline continues. End.",
            &["soft wrapped\nline continues. ", "End."],
        ),
        (
            "Line ends.\nnext starts lowercase.",
            &["Line ends.\n", "next starts lowercase."],
        ),
        ("See Dr.\nSmith today.", &["See Dr.\nSmith today."]),
        ("и вот...\nпотом.", &["и вот...\nпотом."]),
        ("Para one\n\nPara two", &["Para one\n\n", "Para two"]),
        (
            "Para one.\n \nPara two.\n",
            &["Para one.\n \n", "Para two.\n"],
        ),
        ("\n\nLeading blank.", &["\n\nLeading blank."]),
        ("End.\r\nNext.", &["End.\r\n", "Next."]),
        // Mixed scripts, NBSP, odd input.
        (
            "Это Rust. It is fast. Очень!",
            &["Это Rust. ", "It is fast. ", "Очень!"],
        ),
        ("Dr.\u{a0}Smith. Done.", &["Dr.\u{a0}Smith. ", "Done."]),
        ("End.\u{a0}Next.", &["End.\u{a0}Next."]),
        ("Привет. 你好。 Ok.", &["Привет. ", "你好。 Ok."]),
        ("שלום. עולם.", &["שלום. ", "עולם."]),
        (". ! ?", &[". ! ?"]),
        ("…", &["…"]),
        ("Cafe\u{301}. Ещё.", &["Cafe\u{301}. ", "Ещё."]),
    ];

    #[test]
    fn sentence_table() {
        let mut failures = Vec::new();
        for &(input, expected) in CASES {
            let got = split(input);
            if got != expected {
                failures.push(format!(
                    "input {input:?}\n  expected {expected:?}\n  got      {got:?}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases failed:\n{}",
            failures.len(),
            CASES.len(),
            failures.join("\n")
        );
        assert!(CASES.len() >= 40);
    }

    /// Checks the partition invariants; returns a description of the first
    /// violation.
    fn partition_error(text: &str) -> Option<String> {
        let spans = sentence_spans(text);
        if text.is_empty() {
            return (!spans.is_empty()).then(|| "ranges for empty input".to_owned());
        }
        let mut pos = 0;
        for (k, r) in spans.iter().enumerate() {
            if r.start != pos {
                return Some(format!(
                    "gap or overlap at range {k}: {r:?}, expected start {pos}"
                ));
            }
            if r.is_empty() {
                return Some(format!("empty range {k}"));
            }
            if !text.is_char_boundary(r.end) {
                return Some(format!("range {k} ends inside a char: {r:?}"));
            }
            if k + 1 < spans.len() && !text[..r.end].ends_with(char::is_whitespace) {
                return Some(format!("boundary {k} not after whitespace: {r:?}"));
            }
            pos = r.end;
        }
        (pos != text.len()).then(|| format!("ranges end at {pos}, text is {} bytes", text.len()))
    }

    #[test]
    fn pseudo_random_inputs_partition_exactly() {
        const PIECES: &[&str] = &[
            "Dr.",
            " ",
            "\n",
            "т.е.",
            "3.5",
            "!",
            "…",
            "Ж",
            "a",
            "😀",
            "\u{301}",
            ".",
            "?",
            "«",
            "»",
            "\"",
            "—",
            "-",
            "\n\n",
            "\u{a0}",
            "e.g.",
            "Mr",
            "1.",
            "https://x.org",
            "A.",
            "и т.д.",
            "т. ",
            "д.",
            "*",
            "`",
            "[",
            "(",
            ")",
            "...",
            "?!",
            "Hello",
            "мир",
            "\r\n",
            "\t",
            "שלום",
            "مرحبا",
            "я",
            "I",
            "§",
            "section",
            "etc",
            "我",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut text = String::new();
        for round in 0..600 {
            text.clear();
            let len = (next() % 40) as usize;
            for _ in 0..len {
                text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            if let Some(err) = partition_error(&text) {
                panic!("round {round}: {err} for {text:?}");
            }
        }
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let long_dots = "a.".repeat(20_000);
        let long_bangs = "!".repeat(50_000);
        let long_token = format!("{} Next.", "x".repeat(10_000));
        let spaced = "Ab. ".repeat(5_000);
        let lines = "\n \n".repeat(5_000);
        for text in [
            long_dots.as_str(),
            long_bangs.as_str(),
            long_token.as_str(),
            spaced.as_str(),
            lines.as_str(),
            "\u{301}. \u{301}",
            ".\n\n.",
            "…\n",
            "— ",
            "« ",
            "A. ",
            "\u{feff}. X",
        ] {
            assert_eq!(partition_error(text), None, "input {text:?}");
        }
        assert_eq!(sentence_spans(&spaced).len(), 5_000);
    }
}
