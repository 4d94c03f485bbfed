//! Python-Markdown 3.11.3's block parser (`markdown/blockparser.py`,
//! `blockprocessors.py`, the `tables` extension's `TableProcessor`), ported
//! processor for processor on the preprocessed text: blocks are the text
//! split at `"\n\n"`, each tried against empty, list-indent, indented code,
//! table, `#` header, setext header, hr, ordered and unordered list, block
//! quote, reference definition and paragraph, in that order; the tree is
//! built as Python-Markdown builds its `etree` (text, tail, children).
//! Fenced code and raw HTML blocks arrive as placeholders (see
//! [`super::markdown`]).

use std::collections::{HashMap, VecDeque};

use super::blockre::{
    py_strip_nl,
    detab, hash_header, hr_line, list_marker, loose_detab, py_strip, quote_line, reference, TAB,
};

/// A node's tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tag {
    /// The document.
    Root,
    /// `<p>`.
    P,
    /// `<h1>`..`<h6>`.
    H(u8),
    /// `<ul>`.
    Ul,
    /// `<ol>`.
    Ol,
    /// `<li>`.
    Li,
    /// `<pre><code>`: the code is the text.
    Pre,
    /// `<blockquote>`.
    Blockquote,
    /// `<hr>`.
    Hr,
    /// `<table>`: header cells, body rows (raw cell Markdown).
    Table(Vec<String>, Vec<Vec<String>>),
}

/// An `etree` element.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its tag.
    pub tag: Tag,
    /// `.text` (`""` for None).
    pub text: String,
    /// `.tail`.
    pub tail: String,
    /// Children.
    pub children: Vec<Node>,
}

impl Node {
    pub(super) fn new(tag: Tag) -> Self {
        Node {
            tag,
            text: String::new(),
            tail: String::new(),
            children: Vec::new(),
        }
    }
    pub(super) fn is_list(&self) -> bool {
        matches!(self.tag, Tag::Ul | Tag::Ol)
    }
}

/// The parser: its state stack and the reference definitions.
#[derive(Debug)]
pub struct Parser {
    pub(super) state: Vec<&'static str>,
    /// `md.references`: id -> url.
    pub references: HashMap<String, String>,
    depth: usize,
}

impl Parser {
    /// A parser with no references.
    pub fn new() -> Self {
        Parser {
            state: Vec::new(),
            references: HashMap::new(),
            depth: 0,
        }
    }

    pub(super) fn is(&self, s: &str) -> bool {
        self.state.last() == Some(&s)
    }

    /// `parseDocument`.
    pub fn parse_document(&mut self, text: &str) -> Node {
        let mut root = Node::new(Tag::Root);
        self.parse_chunk(&mut root, text);
        root
    }

    pub(super) fn parse_chunk(&mut self, parent: &mut Node, text: &str) {
        self.parse_blocks(parent, text.split("\n\n").map(str::to_owned).collect());
    }

    pub(super) fn parse_blocks(&mut self, parent: &mut Node, mut blocks: VecDeque<String>) {
        self.depth += 1;
        while let Some(block) = blocks.front().cloned() {
            if self.depth > 100 {
                blocks.pop_front();
                let mut p = Node::new(Tag::P);
                p.text = block;
                parent.children.push(p);
                continue;
            }
            self.run_one(parent, &mut blocks, &block);
        }
        self.depth -= 1;
    }

    fn run_one(&mut self, parent: &mut Node, blocks: &mut VecDeque<String>, block: &str) {
        // Empty.
        if block.is_empty() || block.starts_with('\n') {
            blocks.pop_front();
            let filler = if block.is_empty() { "\n\n" } else { "\n" };
            if block.len() > 1 {
                blocks.push_front(block[1..].to_owned());
            }
            if let Some(pre) = parent.children.last_mut().filter(|s| s.tag == Tag::Pre) {
                pre.text.push_str(filler);
            }
            return;
        }
        let indented = block.starts_with("    ");
        // List indent.
        if indented
            && !self.is("detabbed")
            && (parent.tag == Tag::Li || parent.children.last().is_some_and(Node::is_list))
        {
            blocks.pop_front();
            self.list_indent(parent, block);
            return;
        }
        // Indented code.
        if indented {
            blocks.pop_front();
            let (code, rest) = detab(block);
            let code = code.trim_end_matches(super::stext::py_isspace);
            match parent.children.last_mut().filter(|s| s.tag == Tag::Pre) {
                Some(pre) => pre.text = format!("{}\n{}\n", pre.text, code),
                None => {
                    let mut pre = Node::new(Tag::Pre);
                    pre.text = format!("{code}\n");
                    parent.children.push(pre);
                }
            }
            if !rest.is_empty() {
                blocks.push_front(rest);
            }
            return;
        }
        if let Some(t) = super::mdtable::parse(block) {
            blocks.pop_front();
            parent.children.push(Node::new(Tag::Table(t.0, t.1)));
            return;
        }
        if let Some((s, e, level, header)) = hash_header(block) {
            blocks.pop_front();
            let (before, mut after) = (&block[..s], block[e..].to_owned());
            if !before.is_empty() {
                self.parse_blocks(parent, VecDeque::from([before.to_owned()]));
            }
            let mut h = Node::new(Tag::H(level));
            h.text = header;
            parent.children.push(h);
            if !after.is_empty() {
                if self.is("looselist") {
                    after = loose_detab(&after, 1);
                }
                blocks.push_front(after);
            }
            return;
        }
        let lines: Vec<&str> = block.split('\n').collect();
        if lines.len() > 1 {
            let u = lines[1].trim_end_matches(' ');
            if !u.is_empty() && (u.bytes().all(|b| b == b'=') || u.bytes().all(|b| b == b'-')) {
                blocks.pop_front();
                let mut h = Node::new(Tag::H(if u.starts_with('=') { 1 } else { 2 }));
                h.text = py_strip(lines[0]).to_owned();
                parent.children.push(h);
                if lines.len() > 2 {
                    blocks.push_front(lines[2..].join("\n"));
                }
                return;
            }
        }
        if let Some(i) = lines.iter().position(|l| hr_line(l)) {
            blocks.pop_front();
            let pre = lines[..i].join("\n");
            let pre = pre.trim_end_matches('\n');
            if !pre.is_empty() {
                self.parse_blocks(parent, VecDeque::from([pre.to_owned()]));
            }
            parent.children.push(Node::new(Tag::Hr));
            let post = lines[i + 1..].join("\n");
            let post = post.trim_start_matches('\n');
            if !post.is_empty() {
                blocks.push_front(post.to_owned());
            }
            return;
        }
        for ordered in [true, false] {
            if list_marker(lines[0], 0, TAB - 1, ordered, !ordered).is_some() {
                blocks.pop_front();
                self.list(parent, block, ordered);
                return;
            }
        }
        if let Some(i) = lines.iter().position(|l| quote_line(l).is_some()) {
            blocks.pop_front();
            let before = lines[..i].join("\n");
            // Python passes even an empty `before` on.
            self.parse_blocks(parent, VecDeque::from([before]));
            let body: Vec<&str> = lines[i..]
                .iter()
                .map(|l| {
                    if py_strip(l) == ">" {
                        ""
                    } else {
                        quote_line(l).unwrap_or(l)
                    }
                })
                .collect();
            if parent.children.last().map(|s| &s.tag) != Some(&Tag::Blockquote) {
                parent.children.push(Node::new(Tag::Blockquote));
            }
            self.state.push("blockquote");
            if let Some(q) = parent.children.last_mut() {
                self.parse_chunk(q, &body.join("\n"));
            }
            self.state.pop();
            return;
        }
        if let Some((start, mut end, id, url)) = reference(block, 0) {
            self.references.insert(id, url);
            let mut from = end;
            while let Some((s, e, id, url)) = reference(block, from) {
                if py_strip_nl(&block[end..s]) || block[s..e].contains('\n') {
                    break;
                }
                self.references.insert(id, url);
                end = e;
                from = e;
            }
            blocks.pop_front();
            if !py_strip(&block[end..]).is_empty() {
                blocks.push_front(block[end..].trim_start_matches('\n').to_owned());
            }
            if !py_strip(&block[..start]).is_empty() {
                blocks.push_front(block[..start].trim_end_matches('\n').to_owned());
            }
            return;
        }
        // Paragraph.
        blocks.pop_front();
        if py_strip(block).is_empty() {
            return;
        }
        if self.is("list") {
            match parent.children.last_mut() {
                Some(s) if !s.tail.is_empty() => s.tail = format!("{}\n{}", s.tail, block),
                Some(s) => s.tail = format!("\n{block}"),
                None if !parent.text.is_empty() => {
                    parent.text = format!("{}\n{}", parent.text, block)
                }
                None => {
                    parent.text = block
                        .trim_start_matches(super::stext::py_isspace)
                        .to_owned()
                }
            }
        } else {
            let mut p = Node::new(Tag::P);
            p.text = block
                .trim_start_matches(super::stext::py_isspace)
                .to_owned();
            parent.children.push(p);
        }
    }
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}
