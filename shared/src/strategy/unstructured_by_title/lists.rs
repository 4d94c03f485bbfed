//! Python-Markdown's `OListProcessor`/`UListProcessor` and
//! `ListIndentProcessor` (`markdown/blockprocessors.py`): list items, loose
//! items, and indented blocks under the last item.

use super::blockre::{list_marker, loose_detab, TAB};
use super::blocks::{Blk, Blocks, Node, Parser, Tag};

impl Parser {
    /// `OListProcessor.run` / `UListProcessor.run`.
    pub(super) fn list(&mut self, parent: &mut Node, block: &str, ordered: bool) {
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
                    self.parse_blocks(li, Blocks::from([Blk::owned(first)]));
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
                    self.parse_blocks(li, Blocks::from([Blk::owned(item)]));
                }
            } else {
                lst.children.push(Node::new(Tag::Li));
                if let Some(li) = lst.children.last_mut() {
                    self.parse_blocks(li, Blocks::from([Blk::owned(item)]));
                }
            }
        }
        self.state.pop();
    }

    /// `ListIndentProcessor.run`.
    pub(super) fn list_indent(&mut self, parent: &mut Node, block: &str) {
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
                    self.parse_blocks(l, Blocks::from([Blk::owned(block.clone())]));
                }
            } else {
                self.parse_blocks(parent, Blocks::from([Blk::owned(block.clone())]));
            }
            self.state.pop();
            return;
        }
        let mut sibling: &mut Node = parent;
        for &i in &path {
            sibling = &mut sibling.children[i];
        }
        if sibling.tag == Tag::Li {
            self.parse_blocks(sibling, Blocks::from([Blk::owned(block.clone())]));
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
                self.parse_blocks(li, Blocks::from([Blk::owned(block.clone())]));
            }
        }
        self.state.pop();
    }
}
