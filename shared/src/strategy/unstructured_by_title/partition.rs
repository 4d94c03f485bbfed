//! `partition_md`: Python-Markdown's tree ([`super::markdown`],
//! [`super::inline`]) walked as Unstructured's HTML partitioner walks the
//! HTML lxml makes of it (`partition/html/parser.py`): headings are
//! `Title`s, list items `ListItem`s (a loose item's sole paragraph
//! adopted), paragraphs and text after a nested block `Text` (or
//! `ListItem` when they start with a bullet glyph, which is removed; none
//! under 2 characters), code `CodeSnippet`s (one leading and one trailing
//! newline removed, the rest kept), tables `Table`s (cell text nodes
//! stripped and joined with spaces), images `Image`s (alt text), rules
//! nothing. Text is whitespace-collapsed (`" ".join(text.split())`).
//!
//! Each character of an element's text is then traced to the document byte
//! it came from (in order, from where the element before ended), so that
//! chunks know their source span.

use super::blocks::{Node, Tag};
use crate::chunk::rendered::char_ref;
use super::chunking::{Element, Kind};
use super::inline::{inline, Tok};
use super::markdown::{parse, Parsed};
use super::stext::{py_isspace, SChar, SText};
use super::element::{Row, Table};
use super::table::html_escape;

/// An element before its characters are traced.
struct Raw {
    kind: Kind,
    text: String,
    depth: usize,
    /// Header flag and raw cell texts per row (tables).
    rows: Vec<(bool, Vec<String>)>,
}

struct Walk<'a> {
    parsed: &'a Parsed,
    out: Vec<Raw>,
}

const BULLETS: &[char] = &[
    '\u{95}', '\u{2022}', '\u{2023}', '\u{2043}', '\u{3164}', '\u{204c}', '\u{204d}', '\u{2219}',
    '\u{25cb}', '\u{25cf}', '\u{25d8}', '\u{25e6}', '\u{2619}', '\u{2765}', '\u{2767}', '\u{29be}',
    '\u{29bf}', '\u{f0b7}', '*', '\u{b7}',
];

fn normalized(s: &str) -> String {
    s.split(py_isspace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `clean_bullets` when `is_bulleted_text`: the text without its bullet.
fn bullet_removed(t: &str) -> Option<String> {
    let mut it = t.chars();
    let c = it.next()?;
    let next = it.next();
    let is_bullet =
        |x: Option<char>| x.is_some_and(|x| BULLETS.contains(&x) || x == '-' || x == '\u{2013}');
    let ok = if BULLETS.contains(&c) {
        !is_bullet(next)
    } else if c == '-' || c == '\u{2013}' {
        next.is_none_or(py_isspace) && !is_bullet(next)
    } else {
        false
    };
    ok.then(|| t[c.len_utf8()..].trim_matches(py_isspace).to_owned())
}

impl Walk<'_> {
    fn flush(&mut self, acc: &mut String, class: Option<Kind>, depth: usize) {
        let text = normalized(acc);
        acc.clear();
        if text.is_empty() {
            return;
        }
        let (kind, text) = match class {
            Some(k) => (k, text),
            None => match bullet_removed(&text) {
                Some(t) if t.is_empty() => return,
                Some(t) => (Kind::ListItem, t),
                None if text.chars().count() < 2 => return,
                None => (Kind::Text, text),
            },
        };
        let depth = if kind == Kind::ListItem && class.is_none() {
            0
        } else {
            depth
        };
        self.out.push(Raw {
            kind,
            text,
            depth,
            rows: Vec::new(),
        });
    }

    fn code(&mut self, code: &str) {
        let t = code.strip_prefix('\n').unwrap_or(code);
        let t = t.strip_suffix('\n').unwrap_or(t);
        if !t.is_empty() {
            self.out.push(Raw {
                kind: Kind::CodeSnippet,
                text: t.to_owned(),
                depth: 0,
                rows: Vec::new(),
            });
        }
    }

    /// A Flow's text (or a tail) and its phrasing: `class` for the text
    /// before the first block inside, derived types after it.
    fn text(&mut self, text: &str, mut class: Option<Kind>, depth: usize) {
        if text.is_empty() {
            return;
        }
        let mut acc = String::new();
        for t in inline(text, &self.parsed.references) {
            match t {
                Tok::Text(s) => acc.push_str(&s),
                Tok::Boundary => {}
                Tok::Br => acc.push('\n'),
                Tok::Img(alt, src) => {
                    self.flush(&mut acc, class, depth);
                    class = None;
                    if !src.trim_matches(py_isspace).is_empty() {
                        let alt = alt.trim_matches(py_isspace).to_owned();
                        self.out.push(Raw {
                            kind: Kind::Image,
                            text: alt,
                            depth: 0,
                            rows: Vec::new(),
                        });
                    }
                }
                Tok::Block(n) => {
                    self.flush(&mut acc, class, depth);
                    class = None;
                    if let Some(html) = self.parsed.raw.get(&n) {
                        for (kind, text) in super::rawhtml::elements(html) {
                            let mut text = text;
                            match kind {
                                Some(Kind::CodeSnippet) => self.code(&text),
                                Some(Kind::Image) => self.out.push(Raw { kind: Kind::Image, text, depth: 0, rows: Vec::new() }),
                                k => {
                                    // A fenced block inside the raw HTML.
                                    let depth = usize::from(k == Some(Kind::ListItem));
                                    while let Some(i) = text.find("\u{2}wzxhzdk:") {
                                        let j = text[i..].find('\u{3}').map_or(text.len(), |e| i + e);
                                        let n: Option<usize> = text[i + 9..j].parse().ok();
                                        let mut before = text[..i].to_owned();
                                        self.flush(&mut before, k, depth);
                                        if let Some(c) = n.and_then(|n| self.parsed.code.get(n)) {
                                            self.code(c);
                                        }
                                        text = text[(j + 1).min(text.len())..].to_owned();
                                    }
                                    self.flush(&mut text, k, depth);
                                }
                            }
                        }
                    } else if let Some(c) = self.parsed.code.get(n) {
                        self.code(c);
                    }
                }
            }
        }
        self.flush(&mut acc, class, depth);
    }

    fn cell(&self, md: &str) -> String {
        let mut nodes = vec![String::new()];
        for t in inline(md, &self.parsed.references) {
            match t {
                Tok::Text(s) => nodes.last_mut().map_or((), |n| n.push_str(&s)),
                _ => nodes.push(String::new()),
            }
        }
        nodes
            .iter()
            .map(|n| n.trim_matches(py_isspace))
            .filter(|n| !n.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn node(&mut self, n: &Node, lists: usize) {
        match &n.tag {
            Tag::Root | Tag::Blockquote | Tag::Ul | Tag::Ol => {
                let inner = lists + usize::from(matches!(n.tag, Tag::Ul | Tag::Ol));
                self.text(&n.text, None, 0);
                for c in &n.children {
                    self.node(c, inner);
                    self.text(&c.tail, None, 0);
                }
            }
            Tag::P => self.text(&n.text, None, 0),
            Tag::H(l) => self.text(&n.text, Some(Kind::Title), usize::from(*l) - 1),
            Tag::Pre => self.code(&format!("{}\n", n.text.trim_end_matches(py_isspace))),
            Tag::Hr => {}
            Tag::Li => {
                let sole = match n.children.as_slice() {
                    [c] if c.tag == Tag::P
                        && n.text.trim_matches(py_isspace).is_empty()
                        && c.tail.trim_matches(py_isspace).is_empty() =>
                    {
                        let toks = inline(&c.text, &self.parsed.references);
                        toks.iter()
                            .all(|t| !matches!(t, Tok::Img(..) | Tok::Block(_)))
                            .then_some(c)
                    }
                    _ => None,
                };
                if let Some(c) = sole {
                    self.text(&c.text, Some(Kind::ListItem), lists);
                    return;
                }
                self.text(&n.text, Some(Kind::ListItem), lists);
                for c in &n.children {
                    self.node(c, lists);
                    self.text(&c.tail, None, 0);
                }
            }
            Tag::Table(header, body) => {
                let rows: Vec<(bool, Vec<String>)> =
                    std::iter::once((true, header.iter().map(|c| self.cell(c)).collect()))
                        .chain(
                            body.iter()
                                .map(|r| (false, r.iter().map(|c| self.cell(c)).collect())),
                        )
                        .collect();
                let row_texts: Vec<String> = rows
                    .iter()
                    .map(|(_, cells)| {
                        cells
                            .iter()
                            .filter(|c| !c.is_empty())
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                let joined = row_texts.join(" ");
                if joined.trim_matches(py_isspace).is_empty() {
                    return;
                }
                let text = joined.trim_matches(py_isspace).to_owned();
                self.out.push(Raw {
                    kind: Kind::Table,
                    text,
                    depth: 0,
                    rows,
                });
            }
        }
    }
}

/// Traces each non-whitespace character of `s` to the next byte of `doc`
/// holding it, from `*cursor`; a character not found is left out (it was
/// not in the document: see the module documentation of the strategy).
fn trace(doc: &str, cursor: &mut usize, s: &str) -> SText {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if py_isspace(c) {
            out.push(SChar { c, src: *cursor });
            continue;
        }
        // The character itself, or a character reference standing for it.
        let mut from = *cursor;
        while let Some(k) = doc[from..].find([c, '&']) {
            let at = from + k;
            let len = if doc[at..].starts_with(c) {
                Some(c.len_utf8())
            } else {
                char_ref(&doc[at..]).filter(|&(r, _)| r == c).map(|(_, n)| n)
            };
            match len {
                Some(n) => {
                    out.push(SChar { c, src: at });
                    *cursor = at + n;
                    break;
                }
                None => from = at + 1,
            }
        }
    }
    SText(out)
}

fn html_of(rows: &[(bool, Vec<String>)]) -> String {
    let mut h = String::from("<table><thead>");
    for (i, (header, cells)) in rows.iter().enumerate() {
        if i == 1 {
            h.push_str("</thead><tbody>");
        }
        let tag = if *header { "th" } else { "td" };
        h.push_str("<tr>");
        for c in cells {
            let body = normalized(&html_escape(c));
            if body.is_empty() {
                h.push_str(&format!("<{tag}/>"));
            } else {
                h.push_str(&format!("<{tag}>{body}</{tag}>"));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str(if rows.len() > 1 {
        "</tbody></table>"
    } else {
        "</thead></table>"
    });
    h
}

/// `partition_md(text=doc)`, each character traced to its source byte.
pub fn partition_md(doc: &str) -> Vec<Element> {
    let Some(parsed) = parse(doc) else {
        return Vec::new();
    };
    let mut w = Walk {
        parsed: &parsed,
        out: Vec::new(),
    };
    w.node(&parsed.root, 0);
    let mut cursor = 0;
    let mut els = Vec::with_capacity(w.out.len());
    for r in w.out {
        if r.kind != Kind::Table {
            let text = trace(doc, &mut cursor, &r.text);
            els.push(Element {
                kind: r.kind,
                text,
                depth: r.depth,
                table: None,
            });
            continue;
        }
        let mut rows = Vec::new();
        let mut row_texts = Vec::new();
        for (header, cells) in &r.rows {
            let traced: Vec<SText> = cells.iter().map(|c| trace(doc, &mut cursor, c)).collect();
            let nonempty: Vec<SText> = traced.iter().filter(|c| !c.is_empty()).cloned().collect();
            row_texts.push(SText::join(&nonempty, " "));
            rows.push(Row {
                header: *header,
                cells: traced.iter().map(SText::normalized).collect(),
            });
        }
        let text = SText::join(&row_texts, " ").strip();
        let source_html = html_of(&r.rows);
        els.push(Element {
            kind: Kind::Table,
            text,
            depth: 0,
            table: Some(Table { rows, source_html }),
        });
    }
    els
}

/// The element list as Unstructured records it (type, text), untraced: for
/// comparisons.
pub fn element_texts(doc: &str) -> Vec<(&'static str, String)> {
    partition_md(doc)
        .iter()
        .map(|e| (e.kind.name(), e.text.text()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn els(doc: &str) -> Vec<(&'static str, String)> {
        element_texts(doc)
    }

    #[test]
    fn python_markdown_block_rules() {
        // Front matter: a rule, then a setext heading of its last line.
        assert_eq!(els("---\ntitle: X\n---\n\nBody text."), [("Title", "title: X".into()), ("Text", "Body text.".into())]);
        // Nested lists need 4 spaces; 2 are siblings.
        let e = els("- a\n  - b\n- c\n    - d\n");
        assert_eq!(e.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        // A list right after a paragraph line is not a list.
        assert_eq!(els("Intro:\n- x\n- y"), [("Text", "Intro: - x - y".into())]);
        // A fence inside a list item is a paragraph (its backticks a code
        // span); at the top, code.
        assert_eq!(els("- item\n\n    ```bash\n    ls -l\n    ```\n")[1], ("Text", "bash ls -l".into()));
        assert_eq!(els("```py\nx = 1\n\ny = 2\n```\n"), [("CodeSnippet", "x = 1\n\ny = 2".into())]);
        // One character alone is no element; a bullet glyph makes a list item.
        assert_eq!(els("x\n\n\u{2022} point"), [("ListItem", "point".into())]);
    }

    #[test]
    fn inline_markup_is_removed_and_tables_join_cells() {
        let e = els("**Bold** and *em*, [link](http://a.b) `code` \\* &amp; <!-- c --> ![alt](i.png) tail");
        assert_eq!(e, [("Text", "Bold and em, link code * &".into()), ("Image", "alt".into()), ("Text", "tail".into())]);
        let t = partition_md("| a | b |\n|---|---|\n| `x`y | |\n");
        assert_eq!(t[0].text.text(), "a b x y");
        assert_eq!(t[0].table.as_ref().unwrap().compact_html(), "<table><tr><td>a</td><td>b</td></tr><tr><td>x y</td><td></td></tr></table>");
    }

    #[test]
    fn raw_html_blocks_are_html() {
        let doc = "<div class=\"x\">\n\n![logo](a.png)\n*not em*\n\n</div>\n\n<details>\nhidden\n</details>\n\n<script>var x;</script>\n\nAfter *this*.";
        assert_eq!(els(doc), [("Text", "![logo](a.png) *not em*".into()), ("Text", "After this.".into())]);
    }

    #[test]
    fn every_character_is_traced_to_its_source_in_order() {
        let doc = "# Title\n\nSome *text* here.\n";
        for e in partition_md(doc) {
            for c in e.text.0.iter().filter(|c| !py_isspace(c.c)) {
                assert_eq!(doc[c.src..].chars().next(), Some(c.c));
            }
        }
    }
}
