//! A top-level block of a normalized document: its kind and byte range.

use std::ops::Range;

/// The kind of a top-level block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// ATX or setext heading of this level (1-6).
    Heading {
        /// 1 for `#`, 6 for `######`.
        level: u8,
    },
    /// A paragraph.
    Paragraph,
    /// A list with all its items (nested items stay inside).
    List {
        /// Numbered rather than bulleted.
        ordered: bool,
    },
    /// A GFM table, or a list whose items are all one-line pipe rows (a
    /// table an export flattened: [`pipe_rows`]).
    Table,
    /// A code block.
    Code {
        /// Fenced (``` or ~~~) rather than indented.
        fenced: bool,
    },
    /// A block quote.
    Quote,
    /// A thematic break: a boundary, never content.
    ThematicBreak,
    /// An HTML block (treated as paragraph text).
    Html,
    /// YAML/TOML front matter: not content.
    FrontMatter,
    /// Anything else with text (link reference definitions, footnotes).
    Other,
}

impl BlockKind {
    /// Whether the block is content that must land in a chunk.
    pub fn is_content(self) -> bool {
        !matches!(
            self,
            Self::ThematicBreak | Self::FrontMatter | Self::Heading { .. }
        )
    }
}

/// One top-level block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What it is.
    pub kind: BlockKind,
    /// Byte range in the normalized document, trailing whitespace trimmed.
    pub range: Range<usize>,
    /// Plain heading text (markup removed, entities decoded, whitespace
    /// collapsed); empty for other kinds.
    pub heading_text: String,
    /// Top-level item ranges of a list; empty for other kinds.
    pub items: Vec<Range<usize>>,
    /// Code blocks nested inside this block (in list items, quotes), which a
    /// split must not cut through.
    pub nested_code: Vec<Range<usize>>,
}
