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
    fn new(tag: Tag) -> Self {
        Node {
            tag,
            text: String::new(),
            tail: String::new(),
            children: Vec::new(),
        }
    }
    fn is_list(&self) -> bool {
        matches!(self.tag, Tag::Ul | Tag::Ol)
    }
}

const TAB: usize = 4;

fn py_strip(s: &str) -> &str {
    s.trim_matches(super::stext::py_isspace)
}

/// The parser: its state stack and the reference definitions.
#[derive(Debug)]
pub struct Parser {
    state: Vec<&'static str>,
    /// `md.references`: id -> url.
    pub references: HashMap<String, String>,
    depth: usize,
}

/// `^[ ]{0,n}`: the count of leading spaces when at most `n`.
fn lead(s: &str, n: usize) -> Option<usize> {
    let k = s.bytes().take_while(|&b| b == b' ').count();
    (k <= n).then_some(k)
}

/// `[ ]{0,3}(\d+\.|[*+-])[ ]+(.*)` at the start of `line` (`lo..=hi`
/// leading spaces): (is ordered, content).
fn list_marker(line: &str, lo: usize, hi: usize, ol: bool, ul: bool) -> Option<(bool, &str)> {
    let k = line.bytes().take_while(|&b| b == b' ').count();
    if k < lo || k > hi {
        return None;
    }
    let rest = &line[k..];
    let (ordered, after) = if ul && matches!(rest.as_bytes().first(), Some(b'*' | b'+' | b'-')) {
        (false, &rest[1..])
    } else {
        let d = rest.bytes().take_while(u8::is_ascii_digit).count();
        if !ol || d == 0 || rest.as_bytes().get(d) != Some(&b'.') {
            return None;
        }
        (true, &rest[d + 1..])
    };
    let sp = after.bytes().take_while(|&b| b == b' ').count();
    (sp > 0).then(|| (ordered, &after[sp..]))
}

fn hr_line(line: &str) -> bool {
    let Some(k) = lead(line, 3) else { return false };
    let rest = &line[k..];
    let Some(c) = rest.chars().next().filter(|c| matches!(c, '-' | '_' | '*')) else {
        return false;
    };
    let b = rest.as_bytes();
    let (mut i, mut count) = (0, 0);
    while i < b.len() && b[i] == c as u8 {
        while i < b.len() && b[i] == c as u8 {
            i += 1;
            count += 1;
        }
        let sp = b[i..].iter().take(2).take_while(|&&x| x == b' ').count();
        if b.get(i + sp) == Some(&(c as u8)) {
            i += sp;
        } else {
            break;
        }
    }
    count >= 3 && rest[i..].bytes().all(|x| x == b' ')
}

/// `HashHeaderProcessor.RE.search`: (start, end, level, header).
fn hash_header(block: &str) -> Option<(usize, usize, u8, String)> {
    let mut start = 0;
    loop {
        let line_end = block[start..].find('\n').map_or(block.len(), |i| start + i);
        let line = &block[start..line_end];
        let level = line.bytes().take_while(|&b| b == b'#').count().min(6);
        if level > 0 {
            let mut h = &line[level..];
            if !h.trim_end_matches('#').ends_with('\\') {
                h = h.trim_end_matches('#');
            }
            let end = if line_end < block.len() {
                line_end + 1
            } else {
                line_end
            };
            return Some((start, end, level as u8, py_strip(h).to_owned()));
        }
        if line_end >= block.len() {
            return None;
        }
        start = line_end + 1;
    }
}

/// `BlockQuoteProcessor.RE`: `(^|\n)[ ]{0,3}>[ ]?(.*)` on one line.
fn quote_line(line: &str) -> Option<&str> {
    let k = lead(line, 3)?;
    let rest = line[k..].strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

fn detab(text: &str) -> (String, String) {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    for l in &lines {
        if l.starts_with("    ") {
            out.push(l[TAB..].to_owned());
        } else if py_strip(l).is_empty() {
            out.push(String::new());
        } else {
            break;
        }
    }
    let n = out.len();
    (out.join("\n"), lines[n..].join("\n"))
}

fn loose_detab(text: &str, level: usize) -> String {
    let pad = " ".repeat(TAB * level);
    text.split('\n')
        .map(|l| l.strip_prefix(pad.as_str()).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A reference definition line: `[id]: url ["title"]`.
fn reference(line: &str) -> Option<(String, String)> {
    let k = lead(line, 3)?;
    let rest = line[k..].strip_prefix('[')?;
    let close = rest.find(']')?;
    let id = &rest[..close];
    if id.contains('[') {
        return None;
    }
    let after = rest[close + 1..].strip_prefix(':')?.trim_start_matches(' ');
    let url_end = after.find(super::stext::py_isspace).unwrap_or(after.len());
    let url = &after[..url_end];
    let tail = after[url_end..].trim_matches(' ');
    let titled = tail.is_empty()
        || (tail.len() >= 2
            && ((tail.starts_with('"') && tail.ends_with('"'))
                || (tail.starts_with('\'') && tail.ends_with('\''))
                || (tail.starts_with('(') && tail.ends_with(')'))));
    (!url.is_empty() && titled).then(|| {
        (
            py_strip(id).to_lowercase(),
            url.trim_start_matches('<').trim_end_matches('>').to_owned(),
        )
    })
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

    fn is(&self, s: &str) -> bool {
        self.state.last() == Some(&s)
    }

    /// `parseDocument`.
    pub fn parse_document(&mut self, text: &str) -> Node {
        let mut root = Node::new(Tag::Root);
        self.parse_chunk(&mut root, text);
        root
    }

    fn parse_chunk(&mut self, parent: &mut Node, text: &str) {
        self.parse_blocks(parent, text.split("\n\n").map(str::to_owned).collect());
    }

    fn parse_blocks(&mut self, parent: &mut Node, mut blocks: VecDeque<String>) {
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
        if let Some(start) = lines.iter().position(|l| reference(l).is_some()) {
            let mut end = start;
            while end < lines.len() {
                match reference(lines[end]) {
                    Some((id, url)) => {
                        self.references.insert(id, url);
                        end += 1;
                    }
                    None => break,
                }
            }
            blocks.pop_front();
            let after = lines[end..].join("\n");
            if !py_strip(&after).is_empty() {
                blocks.push_front(after.trim_start_matches('\n').to_owned());
            }
            let before = lines[..start].join("\n");
            if !py_strip(&before).is_empty() {
                blocks.push_front(before.trim_end_matches('\n').to_owned());
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

    /// `OListProcessor.run` / `UListProcessor.run`.
    fn list(&mut self, parent: &mut Node, block: &str, ordered: bool) {
        let mut items: Vec<String> = Vec::new();
        for line in block.split('\n') {
            if let Some((_, content)) = list_marker(line, 0, TAB - 1, true, true) {
                items.push(content.to_owned());
            } else if list_marker(line, TAB, 2 * TAB - 1, true, true).is_some() {
                match items.last_mut() {
                    Some(last) if last.starts_with("    ") => *last = format!("{last}\n{line}"),
                    _ => items.push(line.to_owned()),
                }
            } else if let Some(last) = items.last_mut() {
                *last = format!("{last}\n{line}");
            }
        }
        let sibling_is_list = parent.children.last().is_some_and(Node::is_list);
        let lst: &mut Node = if sibling_is_list {
            let Some(lst) = parent.children.last_mut() else {
                return;
            };
            if let Some(last) = lst.children.last_mut() {
                if !last.text.is_empty() {
                    let mut p = Node::new(Tag::P);
                    p.text = std::mem::take(&mut last.text);
                    last.children.insert(0, p);
                }
                if let Some(lch) = last.children.last_mut().filter(|c| !c.tail.is_empty()) {
                    let mut p = Node::new(Tag::P);
                    p.text = lch
                        .tail
                        .trim_start_matches(super::stext::py_isspace)
                        .to_owned();
                    lch.tail.clear();
                    last.children.push(p);
                }
            }
            lst.children.push(Node::new(Tag::Li));
            self.state.push("looselist");
            if !items.is_empty() {
                let first = items.remove(0);
                if let Some(li) = lst.children.last_mut() {
                    self.parse_blocks(li, VecDeque::from([first]));
                }
            }
            self.state.pop();
            lst
        } else if parent.is_list() {
            parent
        } else {
            parent
                .children
                .push(Node::new(if ordered { Tag::Ol } else { Tag::Ul }));
            match parent.children.last_mut() {
                Some(l) => l,
                None => return,
            }
        };
        self.state.push("list");
        for item in items {
            if item.starts_with("    ") && !lst.children.is_empty() {
                if let Some(li) = lst.children.last_mut() {
                    self.parse_blocks(li, VecDeque::from([item]));
                }
            } else {
                lst.children.push(Node::new(Tag::Li));
                if let Some(li) = lst.children.last_mut() {
                    self.parse_blocks(li, VecDeque::from([item]));
                }
            }
        }
        self.state.pop();
    }

    /// `ListIndentProcessor.run`.
    fn list_indent(&mut self, parent: &mut Node, block: &str) {
        let indent = block.bytes().take_while(|&b| b == b' ').count() / TAB;
        let mut level = usize::from(self.is("list"));
        // get_level: walk down the last children.
        let mut path: Vec<usize> = Vec::new();
        {
            let mut node: &Node = parent;
            while indent > level {
                match node.children.last() {
                    Some(c) if c.is_list() || c.tag == Tag::Li => {
                        if c.is_list() {
                            level += 1;
                        }
                        path.push(node.children.len() - 1);
                        node = c;
                    }
                    _ => break,
                }
            }
        }
        let block = loose_detab(block, level);
        self.state.push("detabbed");
        if parent.tag == Tag::Li {
            if parent.children.last().is_some_and(Node::is_list) {
                if let Some(l) = parent.children.last_mut() {
                    self.parse_blocks(l, VecDeque::from([block]));
                }
            } else {
                self.parse_blocks(parent, VecDeque::from([block]));
            }
            self.state.pop();
            return;
        }
        let mut sibling: &mut Node = parent;
        for &i in &path {
            sibling = &mut sibling.children[i];
        }
        if sibling.tag == Tag::Li {
            self.parse_blocks(sibling, VecDeque::from([block]));
        } else if sibling.children.last().is_some_and(|c| c.tag == Tag::Li) {
            if let Some(li) = sibling.children.last_mut() {
                if !li.text.is_empty() {
                    let mut p = Node::new(Tag::P);
                    p.text = std::mem::take(&mut li.text);
                    li.children.insert(0, p);
                }
                self.parse_chunk(li, &block);
            }
        } else {
            sibling.children.push(Node::new(Tag::Li));
            if let Some(li) = sibling.children.last_mut() {
                self.parse_blocks(li, VecDeque::from([block]));
            }
        }
        self.state.pop();
    }
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}
