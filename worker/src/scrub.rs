//! Personal data scrubbing for error details: an error detail goes into a
//! header, a database row, an event and a log line, so e-mail addresses that
//! a message or a document quoted are replaced by `<email>` first.

/// Placeholder for a scrubbed e-mail address.
pub const EMAIL_PLACEHOLDER: &str = "<email>";

fn is_local(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-')
}

fn is_domain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-')
}

/// `text` with every e-mail address (`local@domain.tld`) replaced by
/// [`EMAIL_PLACEHOLDER`].
pub fn scrub_pii(text: &str) -> String {
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
}
