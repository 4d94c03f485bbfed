//! The units the clinical role tagger labels: every sentence of a
//! paragraph, every list item (nested items too, their markers left out;
//! an item of several sentences is split into them), every table whole,
//! and the headings, which carry the section path.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use crate::chunk::trail::{trim_range, HeadingTrail};
use crate::markdown::parse::front_matter_len;
use crate::markdown::{Block, BlockKind};
use crate::sentence::sentence_spans;

/// What kind of text a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A heading line (not tagged; a hard stop for chunks).
    Heading,
    /// A sentence of a paragraph, quote or HTML block.
    Sentence,
    /// A list item, or a sentence of one.
    ListItem,
    /// A whole table.
    Table,
    /// A code block or anything else kept whole.
    Other,
}

/// One unit: a trimmed byte range of the document and the headings in
/// effect there (outermost first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleUnit {
    /// Its text in the document.
    pub range: Range<usize>,
    /// What it is.
    pub shape: Shape,
    /// The heading texts in effect (for a heading: the path it opens).
    pub path: Vec<String>,
}

fn item_marker() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+").ok())
        .as_ref()
}

/// The units of a document, in order (front matter and thematic breaks
/// are not units).
pub fn role_units(text: &str, blocks: &[Block]) -> Vec<RoleUnit> {
    let trail = HeadingTrail::new(blocks);
    let body = front_matter_len(text);
    let mut out = Vec::new();
    let push = |out: &mut Vec<RoleUnit>, r: Range<usize>, shape: Shape| {
        let r = trim_range(text, r);
        if !r.is_empty() {
            let path = trail.path_at(if shape == Shape::Heading {
                r.end
            } else {
                r.start
            });
            out.push(RoleUnit {
                range: r,
                shape,
                path,
            });
        }
    };
    for b in blocks.iter().filter(|b| b.range.start >= body) {
        match b.kind {
            BlockKind::Heading { .. } => push(&mut out, b.range.clone(), Shape::Heading),
            BlockKind::Paragraph | BlockKind::Quote | BlockKind::Html | BlockKind::Other => {
                for s in sentence_spans(&text[b.range.clone()]) {
                    push(
                        &mut out,
                        b.range.start + s.start..b.range.start + s.end,
                        Shape::Sentence,
                    );
                }
            }
            BlockKind::Table => push(&mut out, b.range.clone(), Shape::Table),
            BlockKind::Code { .. } => push(&mut out, b.range.clone(), Shape::Other),
            BlockKind::List { .. } => {
                for item in list_items(text, b) {
                    for s in sentence_spans(&text[item.clone()]) {
                        push(
                            &mut out,
                            item.start + s.start..item.start + s.end,
                            Shape::ListItem,
                        );
                    }
                }
            }
            BlockKind::ThematicBreak | BlockKind::FrontMatter => {}
        }
    }
    out
}

/// The items of a list block, nested ones split out, markers left out.
fn list_items(text: &str, b: &Block) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut at = b.range.start;
    for line in text[b.range.clone()].split_inclusive('\n') {
        let start = at;
        at += line.len();
        match item_marker().and_then(|re| re.find(line)) {
            Some(m) => out.push(start + m.end()..start + line.len()),
            None => match out.last_mut() {
                Some(last) => last.end = start + line.len(),
                None => out.push(start..start + line.len()),
            },
        }
    }
    out.retain(|r| !text[r.clone()].trim().is_empty());
    out
}
