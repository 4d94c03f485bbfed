//! The bracket, parenthesis, tag and attribute scanners of Python-Markdown's
//! link, reference, image and raw-HTML inline patterns.

use super::stext::py_isspace;

pub(super) fn prev_char(s: &str, i: usize) -> Option<char> {
    s[..i].chars().next_back()
}

/// The matching `]` of every `[` of `s` (by byte offset): what
/// Python-Markdown's `getText` finds counting brackets from each.
pub(super) fn bracket_pairs(s: &str) -> std::collections::HashMap<usize, usize> {
    let mut open = Vec::new();
    let mut pairs = std::collections::HashMap::new();
    for (k, b) in s.bytes().enumerate() {
        match b {
            b'[' => open.push(k),
            b']' => {
                if let Some(o) = open.pop() {
                    pairs.insert(o, k);
                }
            }
            _ => {}
        }
    }
    pairs
}

/// How far a link's `(...)` is looked for (Python-Markdown looks to the end
/// of the paragraph; a longer link target is not a link here).
const PAREN_WINDOW: usize = 16_384;

/// `(url "title")` from `i`: the url and the index after `)`.
pub(super) fn paren_link(s: &str, i: usize) -> Option<(String, usize)> {
    let rest = s.get(i..)?.strip_prefix('(')?;
    let cap = (0..=PAREN_WINDOW.min(rest.len()))
        .rev()
        .find(|&k| rest.is_char_boundary(k))
        .unwrap_or(0);
    let rest = &rest[..cap];
    let mut depth = 1;
    let mut quote: Option<char> = None;
    for (k, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if k > 0 => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            let url = rest[..k]
                .trim()
                .split(py_isspace)
                .next()
                .unwrap_or("")
                .to_owned();
            return Some((url, i + 1 + k + 1));
        }
    }
    // An unclosed quote: Python-Markdown's backtracking ends at the last ')'.
    rest.rfind(')')
        .map(|k| (rest[..k].trim().to_owned(), i + 1 + k + 1))
}

/// `\s?\[([^\]]*)\]` at `i`.
pub(super) fn ref_id(s: &str, i: usize) -> Option<(String, usize)> {
    let mut j = i;
    if let Some(c) = s[j..].chars().next().filter(|&c| py_isspace(c)) {
        j += c.len_utf8();
    }
    let rest = s[j..].strip_prefix('[')?;
    let close = rest.find(']')?;
    Some((rest[..close].to_lowercase(), j + 1 + close + 1))
}

pub(super) fn html_tag_end(s: &str, i: usize) -> Option<usize> {
    let rest = &s[i..];
    if let Some(r) = rest.strip_prefix("<!--") {
        return r.find("-->").map(|k| i + 4 + k + 3);
    }
    let r = rest.strip_prefix('<')?;
    let r2 = r.strip_prefix('/').unwrap_or(r);
    if !r2.chars().next()?.is_ascii_alphabetic() {
        return None;
    }
    let mut quote: Option<char> = None;
    for (k, c) in r.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '<' | '@') => return None,
            (None, '>') => return Some(i + 1 + k + 1),
            _ => {}
        }
    }
    None
}

pub(super) fn attr(tag: &str, name: &str) -> String {
    let lower = tag.to_ascii_lowercase();
    let Some(p) = lower.find(&format!("{name}=")) else {
        return String::new();
    };
    let v = &tag[p + name.len() + 1..];
    match v.chars().next() {
        Some(q @ ('"' | '\'')) => v[1..].split(q).next().unwrap_or("").to_owned(),
        _ => v
            .split(|c: char| c.is_whitespace() || c == '>')
            .next()
            .unwrap_or("")
            .to_owned(),
    }
}

