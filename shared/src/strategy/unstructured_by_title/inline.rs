//! Python-Markdown's inline patterns, as far as the text lxml and
//! Unstructured read from them goes: code spans, backslash escapes,
//! inline/reference links and images, autolinks, `"  \n"` line breaks,
//! raw HTML tags and comments, entities, `*`/`_` emphasis. Patterns run in
//! Python-Markdown's priority order over a string in which what an earlier
//! pattern matched is a placeholder (`\x02n\x03`), as Python-Markdown does,
//! so that a later pattern cannot see inside it; the result is a list of
//! [`Tok`]s: text, element boundaries (where lxml starts a new text node),
//! line breaks, images.

use std::collections::HashMap;

use super::stext::py_isspace;

/// What the inline markup of a block becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// Text.
    Text(String),
    /// An inline element opens or closes here.
    Boundary,
    /// `<br>`: a newline.
    Br,
    /// `<img>`: alt text and source.
    Img(String, String),
    /// A block placeholder (`\x02wzxhzdk:n\x03`) left in the text.
    Block(usize),
}

#[derive(Debug, Clone)]
enum Node {
    /// Text that no later pattern reads (code, escapes, autolinks).
    Atomic(String),
    /// An element whose text may hold placeholders.
    El(String),
    Br,
    Img(String, String),
    /// A removed tag: a boundary only.
    Tag,
    /// Removed with nothing left (comments).
    Nothing,
}

const PATTERNS: usize = 14;
const ESCAPED: &str = "\\`*_{}[]()>#+-.!";

struct Inline<'a> {
    refs: &'a HashMap<String, String>,
    stash: Vec<Node>,
}

fn ph(i: usize) -> String {
    format!("\u{2}{i}\u{3}")
}

fn prev_char(s: &str, i: usize) -> Option<char> {
    s[..i].chars().next_back()
}

/// `[...]` from `i` (just after the `[`): the text and the index after `]`.
fn bracket_text(s: &str, i: usize) -> Option<(String, usize)> {
    let mut depth = 1;
    for (k, c) in s[i..].char_indices() {
        match c {
            ']' => depth -= 1,
            '[' => depth += 1,
            _ => {}
        }
        if depth == 0 {
            return Some((s[i..i + k].to_owned(), i + k + 1));
        }
    }
    None
}

/// `(url "title")` from `i`: the url and the index after `)`.
fn paren_link(s: &str, i: usize) -> Option<(String, usize)> {
    let rest = s.get(i..)?.strip_prefix('(')?;
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
fn ref_id(s: &str, i: usize) -> Option<(String, usize)> {
    let mut j = i;
    if let Some(c) = s[j..].chars().next().filter(|&c| py_isspace(c)) {
        j += c.len_utf8();
    }
    let rest = s[j..].strip_prefix('[')?;
    let close = rest.find(']')?;
    Some((rest[..close].to_lowercase(), j + 1 + close + 1))
}

fn html_tag_end(s: &str, i: usize) -> Option<usize> {
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

fn attr(tag: &str, name: &str) -> String {
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

impl Inline<'_> {
    fn stash(&mut self, n: Node) -> String {
        self.stash.push(n);
        ph(self.stash.len() - 1)
    }

    /// Pattern `p`'s first match at or after `from`: (start, end, node);
    /// `None` node: skip to `end`.
    fn find(&mut self, p: usize, s: &str, from: usize) -> Option<(usize, usize, Option<Node>)> {
        let at = |c: char| s[from..].find(c).map(|k| from + k);
        match p {
            0 => {
                let mut i = from;
                loop {
                    i = s[i..].find('`').map(|k| i + k)?;
                    if prev_char(s, i) == Some('\\') {
                        i += 1 + s[i + 1..].bytes().take_while(|&b| b == b'`').count();
                        continue;
                    }
                    let n = s[i..].bytes().take_while(|&b| b == b'`').count();
                    let body = i + n;
                    let mut j = body;
                    let mut longest: Option<(usize, usize)> = None;
                    while j < s.len() {
                        if s.as_bytes()[j] != b'`' {
                            j += 1;
                            continue;
                        }
                        let m = s[j..].bytes().take_while(|&b| b == b'`').count();
                        if m == n {
                            let code = s[body..j].trim_matches(py_isspace).to_owned();
                            return Some((i, j + m, Some(Node::Atomic(code))));
                        }
                        if longest.is_none_or(|(l, _)| m > l) {
                            longest = Some((m, j));
                        }
                        j += m;
                    }
                    if let Some((m, e)) = longest.filter(|&(m, _)| m < n) {
                        let start = body - m;
                        let code = s[start + m..e].trim_matches(py_isspace).to_owned();
                        return Some((i, e + m, Some(Node::Atomic(code))));
                    }
                    return Some((i, body, None));
                }
            }
            1 => {
                let i = at('\\')?;
                let c = s[i + 1..].chars().next()?;
                let end = i + 1 + c.len_utf8();
                Some((
                    i,
                    end,
                    ESCAPED.contains(c).then(|| Node::Atomic(c.to_string())),
                ))
            }
            2..=7 => {
                let image = matches!(p, 4 | 5 | 7);
                let mut i = from;
                loop {
                    i = s[i..].find('[').map(|k| i + k)?;
                    let bang = prev_char(s, i) == Some('!');
                    let start = if image { i.checked_sub(1) } else { Some(i) };
                    if bang != image || start.is_none() {
                        i += 1;
                        continue;
                    }
                    let start = start.unwrap_or(i);
                    let Some((text, after)) = bracket_text(s, i + 1) else {
                        i += 1;
                        continue;
                    };
                    let found = match p {
                        3 | 4 => paren_link(s, after).map(|(url, end)| (Some(url), end)),
                        2 | 5 => ref_id(s, after).map(|(id, end)| {
                            let id = if id.is_empty() {
                                text.to_lowercase()
                            } else {
                                id
                            };
                            (self.refs.get(&collapse(&id)).cloned(), end)
                        }),
                        _ => Some((
                            self.refs.get(&collapse(&text.to_lowercase())).cloned(),
                            after,
                        )),
                    };
                    match found {
                        None => {
                            i += 1;
                            continue;
                        }
                        Some((None, end)) if matches!(p, 2 | 5 | 6 | 7) => {
                            return Some((start, end, None))
                        }
                        Some((None, _)) => {
                            i += 1;
                            continue;
                        }
                        Some((Some(url), end)) => {
                            let node = if image {
                                Node::Img(unescape(&text), url)
                            } else {
                                Node::El(text)
                            };
                            return Some((start, end, Some(node)));
                        }
                    }
                }
            }
            8 | 9 => {
                let mut i = from;
                loop {
                    i = s[i..].find('<').map(|k| i + k)?;
                    let close = s[i + 1..].find(['<', '>']).map(|k| i + 1 + k);
                    if let Some(e) = close.filter(|&e| s.as_bytes()[e] == b'>') {
                        let body = &s[i + 1..e];
                        let ok = if p == 8 {
                            body.find("://").is_some_and(|k| {
                                let scheme = &body[..k];
                                scheme
                                    .chars()
                                    .next()
                                    .is_some_and(|c| c.is_ascii_alphabetic())
                                    && scheme
                                        .chars()
                                        .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                            })
                        } else {
                            body.split_once('@').is_some_and(|(a, b)| {
                                !a.is_empty()
                                    && !b.is_empty()
                                    && !a.contains([' ', '!'])
                                    && !b.contains(['@', ' '])
                            })
                        };
                        if ok {
                            let t = body
                                .strip_prefix("mailto:")
                                .filter(|_| p == 9)
                                .unwrap_or(body);
                            return Some((i, e + 1, Some(Node::Atomic(unescape(t)))));
                        }
                    }
                    i += 1;
                }
            }
            10 => {
                let i = s[from..].find("  \n").map(|k| from + k)?;
                Some((i, i + 3, Some(Node::Br)))
            }
            11 => {
                let mut i = from;
                loop {
                    i = s[i..].find('<').map(|k| i + k)?;
                    if let Some(e) = html_tag_end(s, i) {
                        let tag = &s[i..e];
                        let name: String = tag[1..]
                            .trim_start_matches('/')
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric())
                            .collect::<String>()
                            .to_ascii_lowercase();
                        let node = if tag.starts_with("<!--") {
                            Node::Nothing
                        } else if name == "br" {
                            Node::Br
                        } else if name == "img" {
                            Node::Img(attr(tag, "alt"), attr(tag, "src"))
                        } else {
                            Node::Tag
                        };
                        return Some((i, e, Some(node)));
                    }
                    i += 1;
                }
            }
            12 => {
                let mut i = from;
                loop {
                    i = s[i..].find('&').map(|k| i + k)?;
                    let rest = &s[i + 1..];
                    let n = if let Some(r) = rest.strip_prefix("#x") {
                        2 + r.bytes().take_while(u8::is_ascii_hexdigit).count()
                    } else if let Some(r) = rest.strip_prefix('#') {
                        1 + r.bytes().take_while(u8::is_ascii_digit).count()
                    } else {
                        rest.bytes().take_while(u8::is_ascii_alphanumeric).count()
                    };
                    let min = if rest.starts_with("#x") {
                        3
                    } else if rest.starts_with('#') {
                        2
                    } else {
                        1
                    };
                    if n >= min && rest.as_bytes().get(n) == Some(&b';') {
                        let ent = &s[i..i + n + 2];
                        return Some((i, i + n + 2, Some(Node::Atomic(entity(ent)))));
                    }
                    i += 1;
                }
            }
            _ => None,
        }
    }

    fn handle(&mut self, data: &str, mut p: usize) -> String {
        let mut s = data.to_owned();
        let mut from = 0;
        while p < PATTERNS {
            if p == 13 {
                s = self.emphasis(&s);
                break;
            }
            match self.find(p, &s, from) {
                None => {
                    p += 1;
                    from = 0;
                }
                Some((a, b, None)) => from = b.max(a + 1).min(s.len()),
                Some((a, b, Some(node))) => {
                    let node = match node {
                        Node::El(t) => Node::El(self.handle(&t, p + 1)),
                        n => n,
                    };
                    let mark = self.stash(node);
                    s = format!("{}{mark}{}", &s[..a], &s[b..]);
                    from = a + mark.len();
                }
            }
        }
        s
    }

    /// `*` and `_` runs paired as openers and closers (the flanking rules
    /// of Python-Markdown's `Delimiter` patterns, CommonMark's stack).
    fn emphasis(&mut self, s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        // (char index, length, char, can open, can close)
        let mut runs: Vec<(usize, usize, char, bool, bool)> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c != '*' && c != '_' {
                i += 1;
                continue;
            }
            let n = chars[i..].iter().take_while(|&&x| x == c).count();
            let before = i.checked_sub(1).map(|k| chars[k]);
            let after = chars.get(i + n).copied();
            let word = |x: Option<char>| x.is_some_and(|x| x.is_alphanumeric() || x == '_');
            let space = |x: Option<char>| x.is_none_or(py_isspace);
            let (open, close) = if c == '*' {
                (!space(after), before.is_some_and(|b| !py_isspace(b)))
            } else {
                (
                    !space(after) && !word(before),
                    before.is_some_and(|b| !py_isspace(b)) && !word(after),
                )
            };
            runs.push((i, n, c, open, close));
            i += n;
        }
        // Remaining delimiter counts, and where boundaries go.
        let mut left: Vec<usize> = runs.iter().map(|r| r.1).collect();
        let mut cut = vec![false; chars.len()];
        let mut bound = vec![false; chars.len() + 1];
        let mut stack: Vec<usize> = Vec::new();
        for k in 0..runs.len() {
            let (_, _, c, open, close) = runs[k];
            if close {
                while left[k] > 0 {
                    let Some(pos) = stack.iter().rposition(|&o| {
                        runs[o].2 == c
                            && left[o] > 0
                            && !((runs[o].4 || open)
                                && (runs[o].1 + runs[k].1) % 3 == 0
                                && !(runs[o].1 % 3 == 0 && runs[k].1 % 3 == 0))
                    }) else {
                        break;
                    };
                    let o = stack[pos];
                    let use_n = if left[o] >= 2 && left[k] >= 2 { 2 } else { 1 };
                    let (os, cs) = (runs[o].0 + left[o] - use_n, runs[k].0 + runs[k].1 - left[k]);
                    for x in os..os + use_n {
                        cut[x] = true;
                    }
                    for x in cs..cs + use_n {
                        cut[x] = true;
                    }
                    bound[os + use_n] = true;
                    bound[cs] = true;
                    left[o] -= use_n;
                    left[k] -= use_n;
                    stack.truncate(pos + 1);
                    if left[o] == 0 {
                        stack.pop();
                    }
                }
            }
            if open && left[k] > 0 {
                stack.push(k);
            }
        }
        let mut out = String::new();
        for (x, &c) in chars.iter().enumerate() {
            if bound[x] {
                out.push_str(&self.stash(Node::Tag));
            }
            if !cut[x] {
                out.push(c);
            }
        }
        if bound[chars.len()] {
            out.push_str(&self.stash(Node::Tag));
        }
        out
    }

    fn expand(&self, s: &str, out: &mut Vec<Tok>) {
        let mut rest = s;
        while let Some(i) = rest.find('\u{2}') {
            push_text(out, &rest[..i]);
            let Some(j) = rest[i..].find('\u{3}').map(|k| i + k) else {
                push_text(out, &rest[i..]);
                return;
            };
            let inner = &rest[i + 1..j];
            if let Some(n) = inner.strip_prefix("wzxhzdk:").and_then(|n| n.parse().ok()) {
                out.push(Tok::Block(n));
            } else if let Some(node) = inner.parse::<usize>().ok().and_then(|n| self.stash.get(n)) {
                match node {
                    Node::Atomic(t) => {
                        out.push(Tok::Boundary);
                        push_text(out, t);
                        out.push(Tok::Boundary);
                    }
                    Node::El(t) => {
                        out.push(Tok::Boundary);
                        self.expand(t, out);
                        out.push(Tok::Boundary);
                    }
                    Node::Br => out.push(Tok::Br),
                    Node::Img(a, s) => out.push(Tok::Img(a.clone(), s.clone())),
                    Node::Tag => out.push(Tok::Boundary),
                    Node::Nothing => {}
                }
            }
            rest = &rest[j + 1..];
        }
        push_text(out, rest);
    }
}

fn push_text(out: &mut Vec<Tok>, t: &str) {
    if t.is_empty() {
        return;
    }
    if let Some(Tok::Text(prev)) = out.last_mut() {
        prev.push_str(t);
    } else {
        out.push(Tok::Text(t.to_owned()));
    }
}

fn collapse(id: &str) -> String {
    id.split(py_isspace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Python-Markdown's `unescape` of placeholders in alt text: escapes
/// become their character (they are still `\x` here).
fn unescape(s: &str) -> String {
    s.to_owned()
}

/// An entity as lxml reads it, where the result is a character the
/// source has (`&amp;`) or whitespace; any other is kept as written (an
/// intended difference: see the module documentation).
fn entity(e: &str) -> String {
    match e {
        "&amp;" | "&#38;" | "&#x26;" => "&".into(),
        "&nbsp;" | "&#160;" | "&#xa0;" | "&#xA0;" => "\u{a0}".into(),
        _ => e.into(),
    }
}

/// The inline markup of `text` (a block's text) as tokens.
pub fn inline(text: &str, refs: &HashMap<String, String>) -> Vec<Tok> {
    let mut p = Inline {
        refs,
        stash: Vec::new(),
    };
    let s = p.handle(text, 0);
    let mut out = Vec::new();
    p.expand(&s, &mut out);
    out
}
