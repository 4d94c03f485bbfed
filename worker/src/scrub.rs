//! Personal data and secret scrubbing for error details: an error detail
//! goes into a header, a database row, an event and a log line, so what a
//! message or a document quoted is replaced first: e-mail addresses
//! (`<email>`), bearer tokens (`Bearer <token>`), JSON Web Tokens (`<jwt>`),
//! API keys (AWS access key ids, `sk-...` and GitHub tokens: `<api-key>`),
//! card numbers that pass the Luhn check (`<card>`), IBANs whose check digits
//! hold (`<iban>`) and phone numbers (`<phone>`). Look-alikes (order numbers
//! that fail Luhn, dates, versions, IP addresses, byte offsets, UUIDs) stay.

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// Placeholder for a scrubbed e-mail address.
pub const EMAIL_PLACEHOLDER: &str = "<email>";

fn is_local(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-')
}

fn is_domain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-')
}

/// `text` with personal data and secrets replaced by placeholders (see the
/// module docs).
pub fn scrub_pii(text: &str) -> String {
    let mut out = scrub_emails(text);
    for rule in rules() {
        if let std::borrow::Cow::Owned(changed) = rule.apply(&out) {
            out = changed;
        }
    }
    out
}

/// One kind of secret: a pattern, an optional check of a match, and what
/// replaces it.
struct Rule {
    re: Regex,
    /// Whether a match really is one (check digits); look-alikes stay.
    check: fn(&str) -> bool,
    /// The replacement of the whole match, or of capture group 1 only.
    placeholder: &'static str,
    group: usize,
}

impl Rule {
    fn apply<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.re.replace_all(text, |c: &Captures<'_>| {
            let (Some(whole), Some(target)) = (c.get(0), c.get(self.group)) else {
                return c[0].to_owned();
            };
            if !(self.check)(target.as_str()) {
                return whole.as_str().to_owned();
            }
            let at = whole.start();
            let w = whole.as_str();
            format!(
                "{}{}{}",
                &w[..target.start() - at],
                self.placeholder,
                &w[target.end() - at..]
            )
        })
    }
}

fn any(_: &str) -> bool {
    true
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |pattern: &str, check: fn(&str) -> bool, placeholder, group| {
            Regex::new(pattern).ok().map(|re| Rule {
                re,
                check,
                placeholder,
                group,
            })
        };
        [
            // A JWT: a JSON header in base64url (`eyJ` is `{"`), then a
            // payload and a signature of any length (an unsigned token's is
            // empty, a cut one's short), then a JWE's two long parts.
            rule(
                r"\beyJ[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){2}(?:\.[A-Za-z0-9_-]{20,}){0,2}",
                any,
                "<jwt>",
                0,
            ),
            // `Authorization: Bearer ...`: the credential after the scheme.
            rule(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)", any, "<token>", 1),
            // AWS access key ids, OpenAI-style `sk-` keys, GitHub tokens.
            rule(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", any, "<api-key>", 0),
            rule(r"\bsk-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_]{20,}", any, "<api-key>", 0),
            rule(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b", any, "<api-key>", 0),
            // IBAN: country, check digits, up to 30 more, spaces every 4.
            rule(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b", iban_valid, "<iban>", 0),
            // Card numbers: 13-19 digits run together, or printed in groups
            // of four (4-4-4-4, 4-4-4-4-3) or as Amex and Diners (4-6-5, 4-6-4).
            rule(
                r"\b(?:\d{13,19}|\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{4}(?:[ -]\d{3})?|\d{4}[ -]\d{6}[ -]\d{4,5})\b",
                luhn_valid,
                "<card>",
                0,
            ),
            // Phone numbers: international (+ and 8-15 digits), or (555) 123-4567.
            rule(r"\+\d(?:[ .-]?\(?\d+\)?){2,6}", phone_digits, "<phone>", 0),
            rule(r"(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[ .-]\d{4}\b", any, "<phone>", 0),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}

/// The Luhn check of a card number (digits, separators ignored).
fn luhn_valid(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2, d * 2) {
            (1, x) if x > 9 => x - 9,
            (1, x) => x,
            _ => d,
        })
        .sum();
    sum % 10 == 0
}

/// ISO 13616 check digits: the number moved four characters left, letters
/// as 10-35, is 1 modulo 97.
fn iban_valid(s: &str) -> bool {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let (head, tail) = compact.split_at(4);
    let mut rem: u32 = 0;
    for c in tail.chars().chain(head.chars()) {
        let v = match c.to_digit(36) {
            Some(v) => v,
            None => return false,
        };
        rem = if v < 10 {
            (rem * 10 + v) % 97
        } else {
            (rem * 100 + v) % 97
        };
    }
    rem == 1
}

/// An international number has 8 to 15 digits (E.164).
fn phone_digits(s: &str) -> bool {
    (8..=15).contains(&s.chars().filter(char::is_ascii_digit).count())
}

/// `text` with every e-mail address (`local@domain.tld`) replaced by
/// [`EMAIL_PLACEHOLDER`].
fn scrub_emails(text: &str) -> String {
    if !text.contains('@') {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // `out` holds chars[..flushed]; an address found at `at` replaces
    // chars[start..end].
    let mut flushed = 0;
    while i < chars.len() {
        if chars[i] != '@' {
            i += 1;
            continue;
        }
        let at = i;
        let mut start = at;
        while start > flushed && is_local(chars[start - 1]) {
            start -= 1;
        }
        let mut end = at + 1;
        while end < chars.len() && is_domain(chars[end]) {
            end += 1;
        }
        // A trailing dot ends the sentence, not the domain.
        while end > at + 1 && chars[end - 1] == '.' {
            end -= 1;
        }
        let domain: String = chars[at + 1..end].iter().collect();
        let valid = start < at
            && domain.contains('.')
            && !domain.starts_with('.')
            && domain.rsplit('.').next().is_some_and(|tld| tld.len() >= 2);
        if valid {
            out.extend(&chars[flushed..start]);
            out.push_str(EMAIL_PLACEHOLDER);
            flushed = end;
            i = end;
        } else {
            i += 1;
        }
    }
    out.extend(&chars[flushed..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_replaced_and_the_rest_kept() {
        assert_eq!(
            scrub_pii("owner jane.doe+ops@example.co.uk rejected it."),
            "owner <email> rejected it."
        );
        assert_eq!(scrub_pii("a@b.io, c_d@e-f.example."), "<email>, <email>.");
        assert_eq!(scrub_pii("no address here"), "no address here");
        assert_eq!(
            scrub_pii("@handle and x@localhost"),
            "@handle and x@localhost"
        );
        assert_eq!(scrub_pii("x: ops@example.com"), "x: <email>");
    }

    /// Each row: text in, text out. Positives first, then look-alikes that
    /// must survive unchanged.
    #[test]
    fn secrets_and_numbers_are_scrubbed_and_look_alikes_survive() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let cases: &[(&str, &str)] = &[
            (
                "Authorization: Bearer abc.DEF-123_xyz~token== refused",
                "Authorization: Bearer <token> refused",
            ),
            (&format!("token {jwt} expired"), "token <jwt> expired"),
            // In a file name, with a short signature: the extension stays.
            (
                "file:///data/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig.md not found",
                "file:///data/<jwt>.md not found",
            ),
            ("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "<jwt>"),
            ("a=eyJhbGc.eyJzdWI.x;", "a=<jwt>;"),
            ("key AKIAIOSFODNN7EXAMPLE leaked", "key <api-key> leaked"),
            (
                "OPENAI sk-proj-abcdefghijklmnopqrstuvwx1234 set",
                "OPENAI <api-key> set",
            ),
            ("sk-abcdefghijklmnopqrstuvwxyz0123456789", "<api-key>"),
            (
                "gh token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
                "gh token <api-key>",
            ),
            ("card 4111 1111 1111 1111 declined", "card <card> declined"),
            ("card 4111-1111-1111-1111.", "card <card>."),
            ("amex 378282246310005", "amex <card>"),
            ("amex 3782 822463 10005", "amex <card>"),
            (
                "IBAN DE89 3704 0044 0532 0130 00 given",
                "IBAN <iban> given",
            ),
            ("GB82WEST12345698765432", "<iban>"),
            ("call +1 415 555 2671 now", "call <phone> now"),
            ("tel +44 20 7946 0958", "tel <phone>"),
            ("+7 (495) 123-45-67", "<phone>"),
            ("office (415) 555-2671", "office <phone>"),
            ("desk 415-555-2671", "desk <phone>"),
            // Look-alikes.
            (
                "order 4111 1111 1111 1112 shipped",
                "order 4111 1111 1111 1112 shipped",
            ),
            (
                "invalid byte at byte offset 1234567890123",
                "invalid byte at byte offset 1234567890123",
            ),
            (
                "released 2024-01-15 as v1.2.3",
                "released 2024-01-15 as v1.2.3",
            ),
            ("host 10.0.0.1:5432", "host 10.0.0.1:5432"),
            (
                "event 550e8400-e29b-41d4-a716-446655440000",
                "event 550e8400-e29b-41d4-a716-446655440000",
            ),
            ("GB82 WEST 1234 5698 7654 33", "GB82 WEST 1234 5698 7654 33"),
            ("bearer of bad news", "bearer of bad news"),
            ("sk-short", "sk-short"),
            ("AKIA1234", "AKIA1234"),
            ("version 1.2.3-4", "version 1.2.3-4"),
            ("heyJude.mp3.flac", "heyJude.mp3.flac"),
            ("eyJhbGciOiJIUzI1NiJ9 alone", "eyJhbGciOiJIUzI1NiJ9 alone"),
            (
                "eyJhbGciOiJIUzI1NiJ9.one-dot",
                "eyJhbGciOiJIUzI1NiJ9.one-dot",
            ),
            ("report.v1.final.md", "report.v1.final.md"),
            ("api.example.com", "api.example.com"),
            ("sum = 3 + 4", "sum = 3 + 4"),
            ("+1 more", "+1 more"),
            (
                "document_id confluence:ENG:123456",
                "document_id confluence:ENG:123456",
            ),
            (
                "expected 350 tokens, got 1,234,567",
                "expected 350 tokens, got 1,234,567",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(&scrub_pii(input), want, "{input:?}");
        }
    }

    #[test]
    fn check_digits() {
        assert!(luhn_valid("4111111111111111"));
        assert!(!luhn_valid("4111111111111112"));
        assert!(!luhn_valid("0000"));
        assert!(iban_valid("DE89370400440532013000"));
        assert!(!iban_valid("DE89370400440532013001"));
        assert!(!iban_valid("DE8937"));
    }
}
