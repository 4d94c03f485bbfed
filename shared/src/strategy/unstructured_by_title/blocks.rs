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
use std::rc::Rc;

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

/// A block: `rc[start..end]` (a suffix of a block shares its text).
#[derive(Debug, Clone)]
pub(super) struct Blk {
    rc: Rc<str>,
    start: usize,
    end: usize,
}

impl Blk {
    /// A block of its own text.
    pub(super) fn owned(s: String) -> Self {
        let end = s.len();
        Blk { rc: Rc::from(s), start: 0, end }
    }

    fn text(&self) -> &str {
        &self.rc[self.start..self.end]
    }

    /// `block[k..]`.
    fn suffix(&self, k: usize) -> Self {
        Blk { rc: self.rc.clone(), start: self.start + k, end: self.end }
    }
}

/// The blocks left to parse.
pub(super) type Blocks = VecDeque<Blk>;

/// The (start, end) byte offsets of each line of `s`.
fn line_spans(s: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    s.split('\n').map(move |l| {
        let span = (start, start + l.len());
        start += l.len() + 1;
        span
    })
}

/// The parser: its state stack and the reference definitions.
#[derive(Debug)]
pub struct Parser {
    pub(super) state: Vec<&'static str>,
    /// `md.references`: id -> url.
    pub references: HashMap<String, String>,
    /// (text, end), where the search started, the header line found.
    header_memo: Option<((usize, usize), usize, Option<usize>)>,
    depth: usize,
}

impl Parser {
    /// A parser with no references.
    pub fn new() -> Self {
        Parser {
            state: Vec::new(),
            references: HashMap::new(),
            header_memo: None,
            depth: 0,
        }
    }

    /// `HashHeaderProcessor.RE.search(block)`, remembering where the next
    /// header line of a shared text is, so that a long block of many lines
    /// is not searched again for each line it loses.
    fn hash_header(&mut self, b: &Blk) -> Option<(usize, usize, u8, String)> {
        let key = (Rc::as_ptr(&b.rc) as *const u8 as usize, b.end);
        let mut from = b.start;
        if let Some((k, searched, found)) = self.header_memo {
            if k == key && searched <= b.start && found.is_none_or(|f| f >= b.start) {
                match found {
                    None => return None,
                    Some(f) => from = f,
                }
            }
        }
        let skip = from - b.start;
        let found = hash_header(&b.rc[from..b.end]).map(|(s, e, l, h)| (s + skip, e + skip, l, h));
        self.header_memo = Some((key, b.start, found.as_ref().map(|f| b.start + f.0)));
        found
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
        let rc: Rc<str> = Rc::from(text);
        let mut blocks = Blocks::new();
        let mut start = 0;
        for b in text.split("\n\n") {
            blocks.push_back(Blk { rc: rc.clone(), start, end: start + b.len() });
            start += b.len() + 2;
        }
        self.parse_blocks(parent, blocks);
    }

    pub(super) fn parse_blocks(&mut self, parent: &mut Node, mut blocks: Blocks) {
        self.depth += 1;
        while let Some(b) = blocks.pop_front() {
            if self.depth > 100 {
                let mut p = Node::new(Tag::P);
                p.text = b.text().to_owned();
                parent.children.push(p);
                continue;
            }
            self.run_one(parent, &mut blocks, &b);
        }
        self.depth -= 1;
    }

    fn run_one(&mut self, parent: &mut Node, blocks: &mut Blocks, b: &Blk) {
        let block = b.text();
        // Empty.
        if block.is_empty() || block.starts_with('\n') {
            let filler = if block.is_empty() { "\n\n" } else { "\n" };
            if block.len() > 1 {
                blocks.push_front(b.suffix(1));
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
            self.list_indent(parent, block);
            return;
        }
        // Indented code.
        if indented {
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
                blocks.push_front(Blk::owned(rest));
            }
            return;
        }
        if let Some(t) = super::mdtable::parse(block) {
            parent.children.push(Node::new(Tag::Table(t.0, t.1)));
            return;
        }
        if let Some((s, e, level, header)) = self.hash_header(b) {
            let before = &block[..s];
            if !before.is_empty() {
                self.parse_blocks(parent, Blocks::from([Blk::owned(before.to_owned())]));
            }
            let mut h = Node::new(Tag::H(level));
            h.text = header;
            parent.children.push(h);
            if e < block.len() {
                if self.is("looselist") {
                    blocks.push_front(Blk::owned(loose_detab(&block[e..], 1)));
                } else {
                    blocks.push_front(b.suffix(e));
                }
            }
            return;
        }
        let mut two = block.splitn(3, '\n');
        let (l0, l1) = (two.next().unwrap_or(""), two.next());
        if let Some(l1) = l1 {
            let u = l1.trim_end_matches(' ');
            if !u.is_empty() && (u.bytes().all(|b| b == b'=') || u.bytes().all(|b| b == b'-')) {
                let mut h = Node::new(Tag::H(if u.starts_with('=') { 1 } else { 2 }));
                h.text = py_strip(l0).to_owned();
                parent.children.push(h);
                if two.next().is_some() {
                    blocks.push_front(b.suffix(l0.len() + l1.len() + 2));
                }
                return;
            }
        }
        if let Some((ls, le)) = line_spans(block).find(|&(s, e)| hr_line(&block[s..e])) {
            let pre = block[..ls].trim_end_matches('\n');
            if !pre.is_empty() {
                self.parse_blocks(parent, Blocks::from([Blk::owned(pre.to_owned())]));
            }
            parent.children.push(Node::new(Tag::Hr));
            let post = &block[le..];
            let skip = post.len() - post.trim_start_matches('\n').len();
            if le + skip < block.len() {
                blocks.push_front(b.suffix(le + skip));
            }
            return;
        }
        for ordered in [true, false] {
            if list_marker(l0, 0, TAB - 1, ordered, !ordered).is_some() {
                    self.list(parent, block, ordered);
                return;
            }
        }
        if let Some((ls, _)) = line_spans(block).find(|&(s, e)| quote_line(&block[s..e]).is_some()) {
            let before = block[..ls.saturating_sub(1)].to_owned();
            // Python passes even an empty `before` on.
            self.parse_blocks(parent, Blocks::from([Blk::owned(before)]));
            let body: Vec<&str> = block[ls..]
                .split('\n')
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
            if !py_strip(&block[end..]).is_empty() {
                let skip = block[end..].len() - block[end..].trim_start_matches('\n').len();
                blocks.push_front(b.suffix(end + skip));
            }
            if !py_strip(&block[..start]).is_empty() {
                blocks.push_front(Blk::owned(block[..start].trim_end_matches('\n').to_owned()));
            }
            return;
        }
        // Paragraph.
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
