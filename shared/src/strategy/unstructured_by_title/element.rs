//! The data `chunk_by_title` works on: elements (`partition_md`'s), tables'
//! rows, the options (Unstructured's keyword arguments), chunks, and
//! `_TextSplitter`, which splits an oversized text (and a table cell).

use std::ops::Range;

use super::split::{split_rest, Rest};
use super::stext::SText;

/// An element's type, as far as chunking looks at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A heading: starts a section.
    Title,
    /// `NarrativeText` or `Text`.
    Text,
    /// A list item.
    ListItem,
    /// A table (`text_as_html` in [`Element::table`]).
    Table,
    /// Code: its text is kept as it is, whitespace and all.
    CodeSnippet,
    /// An image (alt text).
    Image,
}

impl Kind {
    /// Unstructured's class name (`NarrativeText` and `Text` as `Text`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Title => "Title",
            Kind::Text => "Text",
            Kind::ListItem => "ListItem",
            Kind::Table => "Table",
            Kind::CodeSnippet => "CodeSnippet",
            Kind::Image => "Image",
        }
    }
}

/// One element of `partition_md`.
#[derive(Debug, Clone)]
pub struct Element {
    /// Its type.
    pub kind: Kind,
    /// `element.text`.
    pub text: SText,
    /// `category_depth` (heading level - 1, list nesting).
    pub depth: usize,
    /// A table's rows (from `metadata.text_as_html`).
    pub table: Option<Table>,
}

/// `chunk_by_title`'s keyword arguments (character mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Hard maximum, in characters.
    pub max_characters: usize,
    /// Soft maximum (`None`: the hard one).
    pub new_after_n_chars: Option<usize>,
    /// Small pre-chunks are combined under this (`None`: the hard max).
    pub combine_text_under_n_chars: Option<usize>,
    /// Overlap of split pieces (and of all chunks with `overlap_all`).
    pub overlap: usize,
    /// Overlap between every two chunks.
    pub overlap_all: bool,
    /// Sections may span pages (always so for Markdown: no pages).
    pub multipage_sections: bool,
    /// A table is alone in its chunk.
    pub isolate_table: bool,
    /// Continuation table chunks repeat the header rows.
    pub repeat_table_headers: bool,
    /// A table is a chunk as it is, however long.
    pub skip_table_chunking: bool,
    /// Separators tried, in order, when splitting oversized text.
    pub text_splitting_separators: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_characters: 500,
            new_after_n_chars: None,
            combine_text_under_n_chars: None,
            overlap: 0,
            overlap_all: false,
            multipage_sections: true,
            isolate_table: true,
            repeat_table_headers: true,
            skip_table_chunking: false,
            text_splitting_separators: vec!["\n".into(), " ".into()],
        }
    }
}

impl Options {
    /// Unstructured's `ValueError`s (`ChunkingOptions._validate`).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.max_characters == 0 {
            return Err(("max_characters", "must be > 0".into()));
        }
        if self.combine_text_under_n_chars.unwrap_or(0) > self.max_characters {
            return Err((
                "combine_text_under_n_chars",
                format!("must not exceed max_characters = {}", self.max_characters),
            ));
        }
        if self.overlap >= self.max_characters {
            return Err((
                "overlap",
                format!("must be less than max_characters = {}", self.max_characters),
            ));
        }
        if self.skip_table_chunking && !self.isolate_table {
            return Err((
                "skip_table_chunking",
                "= true requires isolate_table = true".into(),
            ));
        }
        Ok(())
    }

    /// `hard_max`.
    pub fn hard_max(&self) -> usize {
        self.max_characters
    }

    /// `soft_max`: `new_after_n_chars`, capped at the hard max.
    pub fn soft_max(&self) -> usize {
        self.new_after_n_chars
            .map_or(self.max_characters, |n| n.min(self.max_characters))
    }

    /// The effective `combine_text_under_n_chars` (capped at the soft max).
    pub fn combine_under(&self) -> usize {
        self.combine_text_under_n_chars
            .unwrap_or(self.max_characters)
            .min(self.soft_max())
    }

    /// The overlap between chunks of whole elements (`overlap_all`).
    pub fn inter_chunk_overlap(&self) -> usize {
        if self.overlap_all {
            self.overlap
        } else {
            0
        }
    }

    /// `_TextSplitter.__call__` with this window, over and over: the
    /// pieces of `text` (none when it is empty).
    pub fn pieces(&self, text: &SText) -> Vec<SText> {
        let mut out = Vec::new();
        let mut rest = Rest::new(&text.0);
        while !rest.is_empty() {
            let (s, more) = split_rest(&rest, self.max_characters, self.overlap, &self.text_splitting_separators);
            out.push(s);
            if more.len() >= rest.len() {
                break;
            }
            rest = more;
        }
        out
    }
}

/// What a chunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    /// `CompositeElement`.
    Composite,
    /// A whole `Table`.
    Table,
    /// A piece of a table.
    TableChunk,
}

impl ChunkKind {
    /// Unstructured's class name.
    pub fn name(self) -> &'static str {
        match self {
            ChunkKind::Composite => "CompositeElement",
            ChunkKind::Table => "Table",
            ChunkKind::TableChunk => "TableChunk",
        }
    }
}

/// One chunk.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// Its type.
    pub kind: ChunkKind,
    /// Its text.
    pub text: SText,
    /// `metadata.text_as_html` (tables).
    pub html: Option<String>,
    /// `orig_elements`: indices into the element list.
    pub elements: Range<usize>,
}
/// A `<tr>`: its normalized cell texts.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// A `<thead>` row.
    pub header: bool,
    /// Each cell's text, whitespace collapsed (may be empty).
    pub cells: Vec<SText>,
}

/// A table's structure (`metadata.text_as_html`).
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Rows in order, header rows first.
    pub rows: Vec<Row>,
    /// `text_as_html` as partitioning made it.
    pub source_html: String,
}
