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

use super::links::{attr, bracket_pairs, html_tag_end, paren_link, prev_char, ref_id};
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
    /// An element's text that no later pattern reads (code, autolinks).
    Atomic(String),
    /// Text that no later pattern reads and that is no element (escaped
    /// characters, entities).
    Plain(String),
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
    /// The text's `[` -> `]` pairs (links), for the pattern running.
    pairs: HashMap<usize, usize>,
    /// Where the text's last `-->` is (comments), for the pattern running.
    last_comment_close: Option<usize>,
}

fn ph(i: usize) -> String {
    format!("\u{2}{i}\u{3}")
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
                    ESCAPED.contains(c).then(|| Node::Plain(c.to_string())),
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
                    let found = self.pairs.get(&i).map(|&c| (s[i + 1..c].to_owned(), c + 1));
                    let Some((text, after)) = found else {
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
                    let comment_closed = self.last_comment_close.is_some_and(|c| c >= i + 4);
                    let end = if s[i..].starts_with("<!--") && !comment_closed {
                        None
                    } else {
                        html_tag_end(s, i)
                    };
                    if let Some(e) = end {
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
                        return Some((i, i + n + 2, Some(Node::Plain(entity(ent)))));
                    }
                    i += 1;
                }
            }
            _ => None,
        }
    }

    /// `__handleInline`: each pattern from `p` on, in order, over the
    /// whole text; a match becomes a placeholder (its text handled by the
    /// later patterns), and the search goes on after it.
    fn handle(&mut self, data: &str, p: usize) -> String {
        let mut s = data.to_owned();
        for p in p..PATTERNS {
            if p == 13 {
                return super::emphasis::emphasis(&s, || self.stash(Node::Tag));
            }
            if (2..=7).contains(&p) {
                self.pairs = bracket_pairs(&s);
            }
            self.last_comment_close = s.rfind("-->");
            let (mut out, mut last, mut from) = (String::new(), 0, 0);
            while let Some((a, b, node)) = self.find(p, &s, from) {
                from = b.max(a + 1).min(s.len());
                if let Some(node) = node {
                    let node = match node {
                        Node::El(t) => {
                            let saved = (std::mem::take(&mut self.pairs), self.last_comment_close);
                            let inner = self.handle(&t, p + 1);
                            (self.pairs, self.last_comment_close) = saved;
                            Node::El(inner)
                        }
                        n => n,
                    };
                    out.push_str(&s[last..a]);
                    out.push_str(&self.stash(node));
                    last = b;
                }
                if from >= s.len() {
                    break;
                }
            }
            if last > 0 {
                out.push_str(&s[last..]);
                s = out;
            }
        }
        s
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
                    Node::Plain(t) => push_text(out, t),
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

/// An entity as lxml reads it: its character (the document's reference
/// stands for it, see [`crate::chunk::rendered`]), or itself when lxml
/// does not know it.
fn entity(e: &str) -> String {
    crate::chunk::rendered::char_ref(e).map_or_else(|| e.to_owned(), |(c, _)| c.to_string())
}

/// `s` with its character references decoded as lxml decodes them.
pub(super) fn decode_refs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        match crate::chunk::rendered::char_ref(&rest[i..]) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[i + len..];
            }
            None => {
                out.push('&');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The inline markup of `text` (a block's text) as tokens.
pub fn inline(text: &str, refs: &HashMap<String, String>) -> Vec<Tok> {
    let mut p = Inline {
        refs,
        stash: Vec::new(),
        pairs: HashMap::new(),
        last_comment_close: None,
    };
    let s = p.handle(text, 0);
    let mut out = Vec::new();
    p.expand(&s, &mut out);
    out
}
