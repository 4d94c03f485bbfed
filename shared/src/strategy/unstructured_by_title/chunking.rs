//! Unstructured's `chunk_by_title` over a list of elements (unstructured
//! 0.27.35, `chunking/title.py` and `chunking/base.py`;
//! `scripts/peers/ADAPTERS.md` section 8.2), character mode: the
//! `PreChunker` (a `Title` starts a section, an element that does not fit
//! starts a pre-chunk, a table is alone), the `PreChunkCombiner` (small
//! neighbours merged), and the chunks (`"\n\n"`-joined element texts,
//! whitespace collapsed except in code, oversized text split by
//! `_TextSplitter`, a lone table by [`super::table`]).

use std::ops::Range;

use super::stext::SText;
use super::table::{chunk_table, Table};

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

    fn inter_chunk_overlap(&self) -> usize {
        if self.overlap_all {
            self.overlap
        } else {
            0
        }
    }

    /// `_TextSplitter.__call__` with this window.
    pub fn split(&self, s: &SText) -> (SText, SText) {
        split_text(
            s,
            self.max_characters,
            self.overlap,
            &self.text_splitting_separators,
        )
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

/// A pre-chunk: consecutive elements and the overlap in front of them.
#[derive(Debug, Clone)]
struct PreChunk {
    elements: Range<usize>,
    prefix: SText,
}

impl PreChunk {
    /// `PreChunk._text`.
    fn text(&self, els: &[Element]) -> SText {
        let mut segs = Vec::new();
        if !self.prefix.is_empty() {
            segs.push(self.prefix.clone());
        }
        for e in &els[self.elements.clone()] {
            if e.text.is_empty() {
                continue;
            }
            if e.kind == Kind::CodeSnippet {
                segs.push(e.text.clone());
            } else {
                let t = e.text.normalized();
                if !t.is_empty() {
                    segs.push(t);
                }
            }
        }
        SText::join(&segs, "\n\n")
    }

    fn has_table(&self, els: &[Element]) -> bool {
        els[self.elements.clone()]
            .iter()
            .any(|e| e.kind == Kind::Table)
    }

    /// `overlap_tail`.
    fn overlap_tail(&self, els: &[Element], o: &Options) -> SText {
        match o.inter_chunk_overlap() {
            0 => SText::default(),
            n => self.text(els).tail(n).strip(),
        }
    }
}

/// `PreChunker` + `PreChunkBuilder`.
fn pre_chunks(els: &[Element], o: &Options) -> Vec<PreChunk> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut prefix = SText::default();
    // Raw segment lengths (overlap prefix first) and their count.
    let (mut text_len, mut n_segs) = (0usize, 0usize);
    let flush = |i: usize,
                 start: &mut usize,
                 prefix: &mut SText,
                 tl: &mut usize,
                 ns: &mut usize,
                 out: &mut Vec<PreChunk>| {
        if i == *start {
            return;
        }
        let pc = PreChunk {
            elements: *start..i,
            prefix: std::mem::take(prefix),
        };
        let lone_table = o.isolate_table && i - *start == 1 && els[*start].kind == Kind::Table;
        let next = if lone_table {
            SText::default()
        } else {
            pc.overlap_tail(els, o)
        };
        *tl = next.len();
        *ns = usize::from(!next.is_empty());
        *prefix = next;
        *start = i;
        out.push(pc);
    };
    for (i, e) in els.iter().enumerate() {
        let count = i - start;
        let fits = if o.isolate_table && e.kind == Kind::Table {
            count == 0
        } else if o.isolate_table && els[start..i].iter().any(|x| x.kind == Kind::Table) {
            false
        } else if count == 0 {
            true
        } else if text_len + n_segs.saturating_sub(1) * 2 > o.soft_max() {
            false
        } else {
            let remaining = o.hard_max() as isize - text_len as isize - 2 * n_segs as isize;
            remaining >= e.text.len() as isize
        };
        if e.kind == Kind::Title || !fits {
            flush(
                i,
                &mut start,
                &mut prefix,
                &mut text_len,
                &mut n_segs,
                &mut out,
            );
        }
        // add_element: a table starting a pre-chunk drops the overlap.
        if o.isolate_table && i == start && e.kind == Kind::Table {
            prefix = SText::default();
            text_len = 0;
            n_segs = 0;
        }
        if !e.text.is_empty() {
            text_len += e.text.len();
            n_segs += 1;
        }
    }
    flush(
        els.len(),
        &mut start,
        &mut prefix,
        &mut text_len,
        &mut n_segs,
        &mut out,
    );
    out
}

/// `PreChunkCombiner`.
fn combine(els: &[Element], pcs: Vec<PreChunk>, o: &Options) -> Vec<PreChunk> {
    let mut out: Vec<PreChunk> = Vec::new();
    let mut acc: Option<PreChunk> = None;
    for pc in pcs {
        acc = Some(match acc.take() {
            None => pc,
            Some(a) => {
                let merged = PreChunk {
                    elements: a.elements.start..pc.elements.end,
                    prefix: a.prefix.clone(),
                };
                let can = !(o.isolate_table && (a.has_table(els) || pc.has_table(els)))
                    && a.text(els).len() < o.combine_under()
                    && merged.text(els).len() <= o.hard_max();
                if can {
                    merged
                } else {
                    out.push(a);
                    pc
                }
            }
        });
    }
    out.extend(acc);
    out
}

/// `chunk_by_title(elements, **options)`.
pub fn chunk_by_title(els: &[Element], o: &Options) -> Vec<Chunk> {
    let mut out = Vec::new();
    for pc in combine(els, pre_chunks(els, o), o) {
        let r = pc.elements.clone();
        if r.len() == 1 && els[r.start].kind == Kind::Table {
            let e = &els[r.start];
            if o.skip_table_chunking {
                out.push(Chunk {
                    kind: ChunkKind::Table,
                    text: e.text.clone(),
                    html: e.table.as_ref().map(|t| t.source_html.clone()),
                    elements: r,
                });
                continue;
            }
            for (kind, text, html) in chunk_table(e, &pc.prefix, o) {
                out.push(Chunk {
                    kind,
                    text,
                    html,
                    elements: r.clone(),
                });
            }
            continue;
        }
        let mut rest = pc.text(els);
        while !rest.is_empty() {
            let (s, more) = o.split(&rest);
            out.push(Chunk {
                kind: ChunkKind::Composite,
                text: s,
                html: None,
                elements: r.clone(),
            });
            if more.len() >= rest.len() {
                break;
            }
            rest = more;
        }
    }
    out
}

/// `_TextSplitter.__call__` (character mode): `s` whole when it fits, else
/// cut at the rightmost separator in `s[overlap + 1 : maxlen + len(sep)]`
/// (separators in order), the next piece starting with the last
/// `overlap - 1` characters of this one and a space; without a separator a
/// hard cut at `maxlen` with `overlap` characters repeated.
pub fn split_text(s: &SText, maxlen: usize, overlap: usize, seps: &[String]) -> (SText, SText) {
    if s.len() <= maxlen {
        return (s.clone(), SText::default());
    }
    for sep in seps {
        let sep: Vec<char> = sep.chars().collect();
        if sep.is_empty() {
            continue;
        }
        let (pos, endpos) = (overlap + 1, (maxlen + sep.len()).min(s.len()));
        if endpos < pos + sep.len() {
            continue;
        }
        let Some(i) = (pos..=endpos - sep.len())
            .rev()
            .find(|&i| s.has_at(i, &sep))
        else {
            continue;
        };
        let fragment = s.slice(0..i).rstrip();
        let raw = s.slice(i + sep.len()..s.len()).lstrip();
        let remainder = if overlap <= 1 {
            raw
        } else {
            let mut r = fragment.tail(overlap - 1).lstrip();
            r.push_str(" ", raw.0.first().map_or(0, |x| x.src));
            r.append(&raw);
            r
        };
        if fragment.is_empty() || remainder.len() >= s.len() {
            continue;
        }
        return (fragment.rstrip(), remainder.lstrip());
    }
    (
        s.slice(0..maxlen).rstrip(),
        s.slice(maxlen - overlap..s.len()).lstrip(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn t(s: &str) -> SText {
        SText::plain(s, 0)
    }

    #[test]
    fn splitter_cuts_at_the_last_separator_and_overlaps() {
        let seps = vec!["\n".to_owned(), " ".to_owned()];
        let (a, b) = split_text(&t("abc def ghi"), 8, 0, &seps);
        assert_eq!((a.text(), b.text()), ("abc def".into(), "ghi".into()));
        let (a, b) = split_text(&t("abc def ghi"), 8, 3, &seps);
        assert_eq!((a.text(), b.text()), ("abc def".into(), "ef ghi".into()));
        let (a, b) = split_text(&t("abcdefghij"), 4, 1, &seps);
        assert_eq!((a.text(), b.text()), ("abcd".into(), "defghij".into()));
    }
}
