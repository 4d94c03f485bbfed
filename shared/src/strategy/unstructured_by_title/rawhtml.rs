//! Python-Markdown's `HtmlBlockPreprocessor` for block-level tags, and what
//! Unstructured makes of such a block once lxml has parsed it: a line that
//! starts (after at most 3 spaces) with a block-level start tag opens a raw
//! block, which runs until its tags are balanced again (to the end of the
//! document when they never are) and is not Markdown; its text becomes
//! elements as Unstructured's HTML walk makes them (headings `Title`, `li`
//! `ListItem`, `pre` `CodeSnippet`, other blocks derived from the text,
//! `script`/`style` content dropped as lxml does,
//! `details`/`figure`/`nav`/forms and `svg`/`select`/... left out).
//!
//! A subset: tables inside raw HTML are read as text blocks, lxml's
//! repairs of broken HTML are not made.

use super::element::Kind;
use super::inline::decode_refs;
use super::stext::py_isspace;

const BLOCK_LEVEL: &[&str] = &[
    "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol",
    "p", "pre", "section", "table", "ul", "canvas", "colgroup", "dd", "body", "dt", "group", "html", "iframe",
    "li", "legend", "math", "map", "noscript", "output", "object", "option", "progress", "script", "style",
    "summary", "tbody", "td", "textarea", "tfoot", "th", "thead", "tr", "video", "center",
];
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
];
const REMOVED_BLOCK: &[&str] = &["details", "figure", "hr", "nav", "template", "form", "input", "summary"];
const REMOVED_PHRASING: &[&str] = &[
    "button", "label", "audio", "canvas", "datalist", "dialog", "head", "iframe", "noembed", "noframes", "object",
    "select", "svg", "textarea", "title", "video", "xml", "script", "style",
];
const PHRASING: &[&str] = &[
    "a", "b", "em", "i", "strong", "abbr", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "kbd", "mark",
    "meter", "q", "s", "samp", "small", "span", "strike", "sub", "sup", "time", "tt", "u", "var", "wbr",
];

/// A tag at `i` (`s[i] == '<'`): (end, lowercase name, closing, self-closing).
fn tag_at(s: &str, i: usize) -> Option<(usize, String, bool, bool)> {
    let rest = &s[i + 1..];
    let (closing, r) = match rest.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let name: String = r.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':').collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut quote: Option<char> = None;
    let base = i + 1 + usize::from(closing);
    for (k, c) in s[base..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if k > name.len() => quote = Some(c),
            (None, '>') => {
                let self_closing = s[..base + k].ends_with('/');
                return Some((base + k + 1, name.to_ascii_lowercase(), closing, self_closing));
            }
            _ => {}
        }
    }
    None
}

/// The end of the raw block opening at `i`: where its tags balance.
fn block_end(s: &str, i: usize) -> usize {
    let mut stack: Vec<String> = Vec::new();
    let mut p = i;
    while let Some(k) = s[p..].find('<').map(|k| p + k) {
        if s[k..].starts_with("<!--") {
            p = s[k + 4..].find("-->").map_or(s.len(), |e| k + 4 + e + 3);
            continue;
        }
        let Some((end, name, closing, self_closing)) = tag_at(s, k) else {
            p = k + 1;
            continue;
        };
        if closing {
            if let Some(pos) = stack.iter().rposition(|t| *t == name) {
                stack.truncate(pos);
            }
        } else if !self_closing && !VOID.contains(&name.as_str()) {
            stack.push(name);
        }
        p = end;
        if stack.is_empty() {
            return end;
        }
    }
    s.len()
}

/// The text with each raw HTML block replaced by a placeholder paragraph
/// (`\x02wzxhzdk:n\x03`, `n` counted from `first`), and the blocks.
pub fn raw_blocks(text: &str, first: usize) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut blocks = Vec::new();
    let mut ls = 0;
    while ls < text.len() {
        let le = text[ls..].find('\n').map_or(text.len(), |k| ls + k);
        let lead = text[ls..le].bytes().take_while(|&b| b == b' ').count();
        let at = ls + lead;
        let opens = lead <= 3
            && text[at..].starts_with('<')
            && tag_at(text, at).is_some_and(|(_, n, closing, _)| !closing && BLOCK_LEVEL.contains(&n.as_str()));
        if !opens {
            out.push_str(&text[ls..(le + 1).min(text.len())]);
            ls = le + 1;
            continue;
        }
        let end = block_end(text, at);
        blocks.push(text[at..end].to_owned());
        out.push_str(&text[ls..at]);
        out.push_str(&format!("\n\u{2}wzxhzdk:{}\u{3}\n\n", first + blocks.len() - 1));
        // What follows the block on its line is text again.
        let next = text[end..].find('\n').map_or(text.len(), |k| end + k);
        if text[end..next].bytes().all(|b| b == b' ') {
            ls = next + 1;
        } else {
            out.push_str(&text[end..(next + 1).min(text.len())]);
            ls = next + 1;
        }
    }
    (out, blocks)
}

/// Unstructured's elements of a raw HTML block: (type, text).
pub fn elements(html: &str) -> Vec<(Option<Kind>, String)> {
    let mut out = Vec::new();
    let mut acc = String::new();
    let mut stack: Vec<String> = Vec::new();
    let mut skip: Option<(String, usize)> = None;
    let class_of = |stack: &[String]| -> Option<Kind> {
        match stack.iter().rev().find(|t| !PHRASING.contains(&t.as_str()) && !is_unknown(t)).map(String::as_str) {
            Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6") => Some(Kind::Title),
            Some("li" | "dd") => Some(Kind::ListItem),
            Some("pre") => Some(Kind::CodeSnippet),
            _ => None,
        }
    };
    let mut p = 0;
    while p < html.len() {
        let Some(k) = html[p..].find('<').map(|k| p + k) else {
            if skip.is_none() {
                acc.push_str(&decode_refs(&html[p..]));
            }
            break;
        };
        if skip.is_none() {
            acc.push_str(&decode_refs(&html[p..k]));
        }
        if html[k..].starts_with("<!--") {
            p = html[k + 4..].find("-->").map_or(html.len(), |e| k + 4 + e + 3);
            continue;
        }
        let Some((end, name, closing, self_closing)) = tag_at(html, k) else {
            if skip.is_none() {
                acc.push('<');
            }
            p = k + 1;
            continue;
        };
        p = end;
        if let Some((t, depth)) = skip.as_mut() {
            if *t == name {
                if closing {
                    *depth -= 1;
                } else if !self_closing {
                    *depth += 1;
                }
            }
            if *depth == 0 {
                skip = None;
            }
            continue;
        }
        let n = name.as_str();
        if !closing && (REMOVED_BLOCK.contains(&n) || REMOVED_PHRASING.contains(&n)) && !self_closing && !VOID.contains(&n) {
            if REMOVED_BLOCK.contains(&n) {
                out.push((class_of(&stack), std::mem::take(&mut acc)));
            }
            skip = Some((name, 1));
            continue;
        }
        if n == "br" {
            acc.push('\n');
            continue;
        }
        if n == "img" {
            out.push((class_of(&stack), std::mem::take(&mut acc)));
            let tag = &html[k..end];
            let attr = |a: &str| {
                let lower = tag.to_ascii_lowercase();
                lower.find(&format!(" {a}=")).map_or(String::new(), |q| {
                    let v = &tag[q + a.len() + 2..];
                    match v.chars().next() {
                        Some(c @ ('"' | '\'')) => v[1..].split(c).next().unwrap_or("").to_owned(),
                        _ => v.split([' ', '>']).next().unwrap_or("").to_owned(),
                    }
                })
            };
            if !attr("src").trim().is_empty() {
                out.push((Some(Kind::Image), attr("alt").trim_matches(py_isspace).to_owned()));
            }
            continue;
        }
        let block = !PHRASING.contains(&n) && !is_unknown(n);
        if block {
            out.push((class_of(&stack), std::mem::take(&mut acc)));
        }
        if closing {
            if let Some(pos) = stack.iter().rposition(|t| *t == name) {
                stack.truncate(pos);
            }
        } else if !self_closing && !VOID.contains(&n) {
            stack.push(name);
        }
    }
    out.push((class_of(&stack), acc));
    out
}

/// A tag Unstructured does not know: transparent phrasing.
fn is_unknown(t: &str) -> bool {
    !BLOCK_LEVEL.contains(&t) && !PHRASING.contains(&t) && !["dl", "ol", "ul", "img", "br"].contains(&t)
}
