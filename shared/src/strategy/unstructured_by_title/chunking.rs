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
use super::table::chunk_table;

pub use super::element::{Chunk, ChunkKind, Element, Kind, Options, Row, Table};
pub use super::split::split_text;

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
        for s in o.pieces(&pc.text(els)) {
            out.push(Chunk {
                kind: ChunkKind::Composite,
                text: s,
                html: None,
                elements: r.clone(),
            });
        }
    }
    out
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
