//! GROBID's TEI XML as input (the `grobid` strategy, issue 50): the TEI a
//! GROBID server returns for a PDF (`processFulltextDocument`) is read with
//! `roxmltree` and written as Markdown, which then is the document (as for
//! HTML input: normalized, stored, what every offset refers to):
//!
//! - the title (`teiHeader//titleStmt/title`) as `# Title`, the abstract
//!   (`profileDesc/abstract`) as `## Abstract`;
//! - each `div` of `text/body` and `text/back` with a `head` as a heading,
//!   its level from the head's numbering (`n="2.1"` is one deeper than
//!   `n="2"`) or else from the nesting of `div`s; the number stays in the
//!   heading text;
//! - `p` as paragraphs (inline `ref`, `hi` and formulas as their text),
//!   `list/item` as a list, `formula` between paragraphs as a `math` code
//!   block, `figure` as its head and description, `figure[@type="table"]`
//!   with a `table` as a Markdown table (first row as header), notes as
//!   paragraphs, the bibliography (`listBibl/biblStruct`) as a list;
//! - `pb` (page break, `n` the page number) as `<!-- page N -->` on a line
//!   of its own, splitting a paragraph it falls in: the chunks get
//!   `page_start`/`page_end`.
//!
//! Everything else (coordinates, the header's other metadata) is left out.
//! Input that is not well-formed XML or has no `TEI` root is refused with
//! [`ChunkError::InvalidTei`] naming the problem and its position.

use roxmltree::{Document, Node};

use crate::error::ChunkError;

/// A converted TEI document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeiConversion {
    /// The Markdown it becomes (before normalization).
    pub markdown: String,
    /// The title, when the header has one.
    pub title: Option<String>,
}

/// Whether a file name says TEI (`*.tei.xml`, `*.tei`; ASCII case ignored).
pub fn is_tei_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".tei.xml") || lower.ends_with(".tei")
}

/// Whether `bytes` look like TEI (a `<TEI` root within the first 2 KB).
pub fn looks_like_tei(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(2048)];
    memchr::memmem::find(head, b"<TEI").is_some()
}

/// An element's name without its namespace.
fn local<'a>(n: &Node<'a, '_>) -> &'a str {
    n.tag_name().name()
}

/// The text of `n`'s descendants, concatenated.
fn all_text(n: Node<'_, '_>) -> String {
    n.descendants()
        .filter(Node::is_text)
        .filter_map(|d| d.text())
        .collect()
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Markdown characters that would change what a line is, escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if matches!(c, '*' | '_' | '`' | '[' | ']' | '<' | '|' | '\\')
            || (i == 0 && matches!(c, '#' | '>' | '-' | '+' | '='))
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The text of `n` and its descendants, whitespace collapsed, `pb`
/// elements reported to `page` at the point where they fall.
fn inline_text(n: Node<'_, '_>, out: &mut Vec<Piece>) {
    for c in n.children() {
        if c.is_text() {
            if let Some(t) = c.text() {
                push_text(out, t);
            }
        } else if c.is_element() {
            match local(&c) {
                "pb" => out.push(Piece::Page(c.attribute("n").map(str::to_owned))),
                "note" | "figure" => {} // not part of the running text
                _ => inline_text(c, out),
            }
        }
    }
}

/// Inline content: text, or a page break inside it.
#[derive(Debug)]
enum Piece {
    Text(String),
    Page(Option<String>),
}

fn push_text(out: &mut Vec<Piece>, t: &str) {
    match out.last_mut() {
        Some(Piece::Text(s)) => s.push_str(t),
        _ => out.push(Piece::Text(t.to_owned())),
    }
}

/// The Markdown being written.
struct Writer {
    md: String,
    page: u32,
}

impl Writer {
    fn block(&mut self, s: &str) {
        if s.trim().is_empty() {
            return;
        }
        if !self.md.is_empty() {
            self.md.push_str("\n\n");
        }
        self.md.push_str(s);
    }

    fn page_break(&mut self, n: Option<&str>) {
        let n = n
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(self.page + 1);
        self.page = n;
        self.block(&format!("<!-- page {n} -->"));
    }

    /// A paragraph, split where page breaks fall.
    fn paragraph(&mut self, n: Node<'_, '_>, prefix: &str) {
        let mut pieces = Vec::new();
        inline_text(n, &mut pieces);
        let mut first = true;
        for p in pieces {
            match p {
                Piece::Text(t) => {
                    let t = collapse(&t);
                    if !t.is_empty() {
                        let lead = if first { prefix } else { "" };
                        self.block(&format!("{lead}{}", escape(&t)));
                        first = false;
                    }
                }
                Piece::Page(n) => self.page_break(n.as_deref()),
            }
        }
        // Footnotes inside the paragraph follow it.
        for note in n.descendants().filter(|d| local(d) == "note") {
            let t = collapse(&all_text(note));
            if !t.is_empty() {
                self.block(&format!("Note: {}", escape(&t)));
            }
        }
    }

    fn table(&mut self, t: Node<'_, '_>) {
        let rows: Vec<Vec<String>> = t
            .children()
            .filter(|r| local(r) == "row")
            .map(|r| {
                r.children()
                    .filter(|c| local(c) == "cell")
                    .map(|c| {
                        let mut pieces = Vec::new();
                        inline_text(c, &mut pieces);
                        let text: String = pieces
                            .iter()
                            .filter_map(|p| match p {
                                Piece::Text(t) => Some(t.as_str()),
                                Piece::Page(_) => None,
                            })
                            .collect();
                        escape(&collapse(&text))
                    })
                    .collect()
            })
            .filter(|r: &Vec<String>| !r.is_empty())
            .collect();
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return;
        }
        let line = |r: &Vec<String>| {
            let mut cells: Vec<&str> = r.iter().map(String::as_str).collect();
            cells.resize(width, "");
            format!("| {} |", cells.join(" | "))
        };
        let mut md = line(&rows[0]);
        md.push('\n');
        md.push_str(&format!("|{}", " --- |".repeat(width)));
        for r in &rows[1..] {
            md.push('\n');
            md.push_str(&line(r));
        }
        self.block(&md);
    }

    fn figure(&mut self, f: Node<'_, '_>) {
        let part = |name: &str| {
            f.children()
                .find(|c| local(c) == name)
                .map(|c| collapse(&all_text(c)))
                .filter(|s| !s.is_empty())
        };
        let kind = if f.attribute("type") == Some("table") {
            "Table"
        } else {
            "Figure"
        };
        let head = part("head");
        let label =
            part("label").filter(|l| !head.as_deref().is_some_and(|h| h.contains(l.as_str())));
        let caption = [head, label.map(|l| format!("({l})")), part("figDesc")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        if !caption.is_empty() {
            self.block(&format!("**{kind}:** {}", escape(&caption)));
        }
        if let Some(t) = f.children().find(|c| local(c) == "table") {
            self.table(t);
        }
    }

    /// The children of a `div` (or `abstract`, `body`, `back`).
    fn content(&mut self, n: Node<'_, '_>, depth: u8) {
        for c in n.children().filter(Node::is_element) {
            match local(&c) {
                "div" => self.div(c, depth + 1),
                "head" => {} // written by div()
                "p" => self.paragraph(c, ""),
                "pb" => self.page_break(c.attribute("n")),
                "formula" => {
                    let label = c.children().find(|l| local(l) == "label").map(all_text);
                    let body: String = c
                        .children()
                        .filter(|x| local(x) != "label")
                        .map(|x| {
                            if x.is_text() {
                                x.text().unwrap_or("").to_owned()
                            } else {
                                all_text(x)
                            }
                        })
                        .collect();
                    let text = collapse(&format!("{body} {}", label.unwrap_or_default()));
                    if !text.is_empty() {
                        self.block(&format!("```math\n{text}\n```"));
                    }
                }
                "list" => {
                    let items: Vec<String> = c
                        .children()
                        .filter(|i| local(i) == "item")
                        .map(|i| {
                            let t = all_text(i);
                            format!("- {}", escape(&collapse(&t)))
                        })
                        .collect();
                    self.block(&items.join("\n"));
                }
                "figure" => self.figure(c),
                "note" => self.paragraph(c, "Note: "),
                "listBibl" => {
                    let items: Vec<String> = c
                        .children()
                        .filter(|b| local(b) == "biblStruct")
                        .map(|b| {
                            let t: String = b
                                .descendants()
                                .filter(|d| d.is_text())
                                .filter_map(|d| d.text())
                                .collect::<Vec<_>>()
                                .join(" ");
                            format!("- {}", escape(&collapse(&t)))
                        })
                        .collect();
                    self.block(&items.join("\n"));
                }
                _ => self.content(c, depth),
            }
        }
    }

    fn div(&mut self, d: Node<'_, '_>, depth: u8) {
        let head = d.children().find(|c| local(c) == "head");
        let mut level = depth;
        if let Some(h) = head {
            let text = collapse(&all_text(h));
            let number = h.attribute("n").map(str::trim).filter(|n| !n.is_empty());
            if let Some(n) = number {
                level = u8::try_from(n.trim_end_matches('.').split('.').count()).unwrap_or(5) + 1;
            }
            let title = match number {
                Some(n) => format!("{n} {text}"),
                None => text,
            };
            if !title.trim().is_empty() {
                let hashes = "#".repeat(usize::from(level.clamp(2, 6)));
                self.block(&format!("{hashes} {}", escape(&title)));
            }
        } else if d.attribute("type") == Some("references") {
            self.block(&format!(
                "{} References",
                "#".repeat(usize::from(depth.clamp(2, 6)))
            ));
        }
        self.content(d, level);
    }
}

/// The element at `path` (child names) below `from`.
fn find<'a, 'i>(from: Node<'a, 'i>, path: &[&str]) -> Option<Node<'a, 'i>> {
    path.iter()
        .try_fold(from, |n, name| n.children().find(|c| local(c) == *name))
}

/// Converts GROBID TEI XML to Markdown.
pub fn to_markdown(bytes: &[u8]) -> Result<TeiConversion, ChunkError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ChunkError::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    let doc = Document::parse(text).map_err(|e| ChunkError::InvalidTei(e.to_string()))?;
    let root = doc.root_element();
    if local(&root) != "TEI" {
        return Err(ChunkError::InvalidTei(format!(
            "the root element is <{}>, not <TEI>",
            root.tag_name().name()
        )));
    }
    let title = find(root, &["teiHeader", "fileDesc", "titleStmt", "title"])
        .map(|t| collapse(&all_text(t)))
        .filter(|t| !t.is_empty());
    let mut w = Writer {
        md: String::new(),
        page: 1,
    };
    if let Some(t) = &title {
        w.block(&format!("# {}", escape(t)));
    }
    if let Some(a) = find(root, &["teiHeader", "profileDesc", "abstract"]) {
        w.block("## Abstract");
        w.content(a, 1);
    }
    if let Some(body) = find(root, &["text"]) {
        for part in body.children().filter(Node::is_element) {
            match local(&part) {
                "front" | "body" | "back" => w.content(part, 1),
                "pb" => w.page_break(part.attribute("n")),
                _ => {}
            }
        }
    }
    w.md.push('\n');
    Ok(TeiConversion {
        markdown: w.md,
        title,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    const PAPER: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
  <teiHeader>
    <fileDesc><titleStmt><title level="a" type="main">Chunking for Retrieval</title></titleStmt></fileDesc>
    <profileDesc><abstract><div><p>We study how chunk size affects retrieval.</p></div></abstract></profileDesc>
  </teiHeader>
  <text>
    <body>
      <div><head n="1">Introduction</head><p>Retrieval needs <ref type="bibr" target="#b0">[1]</ref> good chunks.</p></div>
      <div><head n="2">Method</head>
        <p>We split documents at headings and then at sentences, <pb n="2"/>which keeps sections whole.</p>
        <div><head n="2.1">Data</head><p>Ten thousand pages of manuals.</p>
          <formula xml:id="formula_0">f(x) = x * 2</formula>
          <figure type="table"><head>Table 1</head><figDesc>Corpus sizes.</figDesc>
            <table><row><cell>Set</cell><cell>Docs</cell></row><row><cell>A</cell><cell>10</cell></row></table></figure>
        </div>
      </div>
    </body>
    <back><div type="references"><listBibl><biblStruct xml:id="b0"><analytic><title>Dense retrieval</title></analytic><monogr><imprint><date when="2020">2020</date></imprint></monogr></biblStruct></listBibl></div></back>
  </text>
</TEI>"##;

    #[test]
    fn a_grobid_paper_becomes_markdown_with_pages() {
        let out = to_markdown(PAPER.as_bytes()).unwrap();
        assert_eq!(out.title.as_deref(), Some("Chunking for Retrieval"));
        let want = "# Chunking for Retrieval\n\n## Abstract\n\nWe study how chunk size affects retrieval.\n\n## 1 Introduction\n\nRetrieval needs \\[1\\] good chunks.\n\n## 2 Method\n\nWe split documents at headings and then at sentences,\n\n<!-- page 2 -->\n\nwhich keeps sections whole.\n\n### 2.1 Data\n\nTen thousand pages of manuals.\n\n```math\nf(x) = x * 2\n```\n\n**Table:** Table 1 Corpus sizes.\n\n| Set | Docs |\n| --- | --- |\n| A | 10 |\n\n## References\n\n- Dense retrieval 2020\n";
        assert_eq!(out.markdown, want);
    }

    #[test]
    fn bad_input_is_named() {
        let e = to_markdown(b"<TEI><text>").unwrap_err();
        assert!(matches!(e, ChunkError::InvalidTei(_)), "{e}");
        let e = to_markdown(b"<html></html>").unwrap_err();
        assert!(e.to_string().contains("not <TEI>"), "{e}");
        assert!(is_tei_name("paper.TEI.xml") && !is_tei_name("paper.xml"));
        assert!(looks_like_tei(PAPER.as_bytes()));
    }
}
