//! A fast path for the cl100k_base pretokenizer on ASCII text.
//!
//! bpe-openai splits text into pieces with a regex (tiktoken's pattern):
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3}
//! | ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//! ```
//!
//! matched anchored at each piece start, the first alternative that matches
//! winning. On ASCII these classes are trivial (letters `A-Za-z`, digits
//! `0-9`, whitespace ` \t\n\x0b\x0c\r`, everything else "other"), so
//! [`ascii_piece_end`] decides the piece with a few byte comparisons,
//! alternative by alternative in the same order. Whenever the decision would
//! depend on a non-ASCII character (a possible letter, digit or whitespace
//! beyond ASCII), it gives up and the regex decides that one piece: since
//! each piece is matched anchored at its start, `split(&text[pos..])`'s first
//! piece is exactly the piece at `pos`. A test compares both splitters piece
//! for piece.
//!
//! The letters of the basic Russian alphabet (U+0410-U+044F, U+0401 and
//! U+0451, all `\p{L}`) count as letters too, so a Russian word (alone or
//! after one ASCII prefix character, as in ` слово` or `(слово`) is decided
//! here as well; any other non-ASCII character still gives up.

/// Pieces of `text` exactly as `tokenizer` (cl100k_base) splits them.
pub(crate) fn cl100k_pieces<'a>(
    text: &'a str,
    tokenizer: &'a bpe_openai::Tokenizer,
) -> impl Iterator<Item = &'a str> + 'a {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let end = ascii_piece_end(text.as_bytes(), pos).unwrap_or_else(|| {
            let rest = &text[pos..];
            pos + tokenizer.split(rest).next().map_or(rest.len(), str::len)
        });
        // A piece is never empty; guard against a zero-length regex answer.
        let end = if end > pos {
            end
        } else {
            pos + text[pos..].chars().next().map_or(1, char::len_utf8)
        };
        let piece = &text[pos..end];
        pos = end;
        Some(piece)
    })
}

fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn is_newline(b: u8) -> bool {
    b == b'\r' || b == b'\n'
}

/// Whether a letter of the basic Russian alphabet (two bytes) starts at `k`:
/// U+0401, U+0410-U+043F (`D0 81`, `D0 90`-`D0 BF`), U+0440-U+044F and
/// U+0451 (`D1 80`-`D1 8F`, `D1 91`).
fn is_cyrillic_at(b: &[u8], k: usize) -> bool {
    matches!(
        (b.get(k), b.get(k + 1)),
        (Some(0xD0), Some(0x81 | 0x90..=0xBF)) | (Some(0xD1), Some(0x80..=0x8F | 0x91))
    )
}

/// The end of the run of letters (ASCII or basic Russian) from `k`, or None
/// if it runs into another non-ASCII character (which may be a letter).
fn letters_from(b: &[u8], mut k: usize) -> Option<usize> {
    while k < b.len() {
        let x = b[k];
        if x >= 0x80 {
            if is_cyrillic_at(b, k) {
                k += 2;
                continue;
            }
            return None;
        }
        if !is_letter(x) {
            break;
        }
        k += 1;
    }
    Some(k)
}

/// The end of the cl100k piece starting at `i`, or None if a non-ASCII
/// character could change the answer.
pub(crate) fn ascii_piece_end(b: &[u8], i: usize) -> Option<usize> {
    let n = b.len();
    let c = *b.get(i)?;
    if c >= 0x80 {
        // 2. `\p{L}+` from a Russian letter (no prefix: it is a letter).
        return if is_cyrillic_at(b, i) {
            letters_from(b, i)
        } else {
            None
        };
    }
    // Reads the byte at k: None past the end; gives up on non-ASCII.
    let at = |k: usize| -> Result<Option<u8>, ()> {
        match b.get(k) {
            Some(&x) if x >= 0x80 => Err(()),
            other => Ok(other.copied()),
        }
    };
    // 1. (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if c == b'\'' {
        if let Some(x) = at(i + 1).ok()? {
            match x.to_ascii_lowercase() {
                b's' | b't' | b'm' | b'd' => return Some(i + 2),
                first @ (b'r' | b'v' | b'l') => {
                    if let Some(y) = at(i + 2).ok()? {
                        let want = if first == b'l' { b'l' } else { b'e' };
                        if y.to_ascii_lowercase() == want {
                            return Some(i + 3);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // 2. [^\r\n\p{L}\p{N}]?\p{L}+
    if is_letter(c) {
        return letters_from(b, i);
    }
    if !is_newline(c) && !is_digit(c) {
        // `c` is the optional prefix (ASCII, not a letter or digit).
        if is_cyrillic_at(b, i + 1) {
            return letters_from(b, i + 1);
        }
        if let Some(x) = at(i + 1).ok()? {
            if is_letter(x) {
                return letters_from(b, i + 1);
            }
        }
    }
    // 3. \p{N}{1,3}
    if is_digit(c) {
        let mut k = i;
        while k < n && k - i < 3 {
            match at(k).ok()? {
                Some(x) if is_digit(x) => k += 1,
                _ => break,
            }
        }
        return Some(k);
    }
    // 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    let other = |x: u8| !is_space(x) && !is_letter(x) && !is_digit(x);
    let start = if c == b' ' { i + 1 } else { i };
    if at(start).ok()?.is_some_and(other) {
        let mut k = start;
        while k < n {
            match at(k).ok()? {
                Some(x) if other(x) => k += 1,
                _ => break,
            }
        }
        while k < n && is_newline(b[k]) {
            k += 1;
        }
        return Some(k);
    }
    // 5.-7. Whitespace: \s*[\r\n]+ | \s+$ | \s+(?!\S) | \s+
    if is_space(c) {
        let mut k = i;
        let mut last_newline = None;
        while k < n {
            let x = b[k];
            if x >= 0x80 {
                // Unicode whitespace (U+00A0, U+3000, ...) would continue the run.
                let next = std::str::from_utf8(&b[k..(k + 4).min(n)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[k..(k + 3).min(n)]).ok())
                    .or_else(|| std::str::from_utf8(&b[k..(k + 2).min(n)]).ok())
                    .and_then(|s| s.chars().next());
                match next {
                    Some(ch) if !ch.is_whitespace() => break,
                    _ => return None,
                }
            }
            if !is_space(x) {
                break;
            }
            if is_newline(x) {
                last_newline = Some(k);
            }
            k += 1;
        }
        return Some(match last_newline {
            Some(p) => p + 1,
            None if k == n => n,
            None if k - i >= 2 => k - 1,
            None => k,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regex_pieces(text: &str) -> Vec<&str> {
        bpe_openai::cl100k_base().split(text).collect()
    }

    fn fast_pieces(text: &str) -> Vec<&str> {
        cl100k_pieces(text, bpe_openai::cl100k_base()).collect()
    }

    #[test]
    fn fast_pieces_equal_the_regex_on_tricky_text() {
        let cases = [
            "Hello, world! It's 12345 o'clock. They'RE here; we'Ll see'd.",
            "  two spaces\t\ttabs \n\n  \nend  ",
            "a\r\nb\rc\n\r\n  \r\n",
            "...dots!?!... (parens) [x]{y} #hash @at $100.00 50% a-b_c",
            "\tword \x0bvt \x0cff \x01ctl\x1f",
            "naïve café — “quotes” и русский текст, ёж; ſ 'ſ 'é",
            "«Ёлка» ёж-Я 'я ЖЖ\u{301}ж (ж) слово1 Ѐѐ ѣ ЯЯЯé тест\u{a0}тест Ёё\nя",
            "\u{a0}nbsp \u{3000}ideo\u{2003}em x\u{a0}\u{a0}y  \u{a0}z",
            "emoji 😀👍🏽 and 中文字符 and ٣٤٥ digits 1٢3",
            "   ",
            "'",
            "'r",
            "x'",
            "\n",
            "code: fn main() { let x = vec![1, 2, 3]; }\n    indented\n",
        ];
        for case in cases {
            assert_eq!(fast_pieces(case), regex_pieces(case), "{case:?}");
        }
    }

    #[test]
    fn fast_pieces_equal_the_regex_on_generated_text() {
        const FRAGMENTS: &[&str] = &[
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\n\n",
            "a",
            "Word",
            "'s",
            "'T",
            "'re",
            "'LL",
            "'d",
            "'x",
            "1",
            "12",
            "1234",
            ".",
            "...",
            "!?",
            "-",
            "_",
            "(",
            ")",
            "#",
            "é",
            "ж",
            "Ж",
            "😀",
            "\u{a0}",
            "\u{3000}",
            "\u{301}",
            "٣",
            "ſ",
            "\x0b",
            "\x0c",
            "\x01",
            "’",
            "—",
            "«",
            "中",
            "ё",
            "Ё",
            "я",
            "Я",
            "а",
            "п",
            "р",
            "ѐ",
            "Ѐ",
            "ѣ",
            "слово",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
                .collect();
            assert_eq!(fast_pieces(&text), regex_pieces(&text), "{text:?}");
        }
    }
}
