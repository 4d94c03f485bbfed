//! The drop-in `unstructured.by_title` strategy, profile
//! `unstructured.by_title`: Unstructured's `chunk_by_title` over
//! `partition_md` (unstructured 0.27.35, Python-Markdown 3.11.3;
//! `scripts/peers/ADAPTERS.md` section 8), on the text exactly as sent
//! (`normalization = "none"`), parameters under Unstructured's keyword
//! names, sizes in characters (Python code points).
//!
//! Two stages, as in Unstructured: the Markdown becomes elements
//! ([`partition`]: Python-Markdown's block and inline rules, then
//! Unstructured's HTML walk), and the elements become chunks
//! ([`chunking`], [`table`]): sections start at titles, elements are
//! packed up to `new_after_n_chars` / `max_characters`, small sections are
//! combined under `combine_text_under_n_chars`, an oversized element is
//! split at the last newline or space in the window with `overlap`, and a
//! table is a chunk of its own (`Table`, or `TableChunk`s of whole rows
//! with the header rows repeated).
//!
//! Unstructured's text is lossy, and reproduced as it is (the drop-in):
//! whitespace inside every element but code is collapsed to single spaces,
//! list bullets and numbers, emphasis, link targets, table pipes and all
//! other Markdown syntax are removed, rules and images without a source
//! are dropped, a fenced block inside a list item is a paragraph, elements
//! are joined with a blank line. The chunk text is therefore not a slice
//! of the document: each record's span runs from the end of the record
//! before to the last source byte its text was made from (the last record:
//! to the end of the document's content), so that everything is in some
//! span; the text's non-whitespace characters are drawn from that span in
//! order (`Rules::verbatim_text` false), except an overlap or a repeated
//! table header in front, which is the record's overlap prefix, drawn from
//! the text before its span.
//!
//! HTML character references are decoded as lxml decodes them (HTML 4
//! names, numeric references); the contract lets a reference in the span
//! stand for its character ([`crate::chunk::rendered`]).
//!
//! Intended differences: a character of an element that cannot be traced
//! to the document in order is left out; a chunk that holds nothing but
//! overlap is not a record; a document with content but no element (a lone
//! character, a rule, an HTML comment), for which Unstructured returns
//! nothing, gives one record of its text as it is; records name their
//! source span instead of carrying `orig_elements`; the chunk's type
//! (`CompositeElement`, `Table`, `TableChunk`) and a table's
//! `text_as_html` are in the record's metadata (`element_type`,
//! `text_as_html`). Token mode (`max_tokens`, `tokenizer`) is not built.
//!
//! Not reproduced yet: Python-Markdown 3.11.3's `DelimiterProcessor`
//! quirks (in a paragraph with emphasis, words with inner underscores such
//! as `snake_case` can come out cut, `snke_case`; here `*`/`_` pair as
//! CommonMark's rules say); a link target longer than 16 KiB; and of raw
//! HTML blocks (a line opening with a block-level tag: not Markdown, read
//! as lxml and Unstructured read HTML) only a subset ([`rawhtml`]).

pub mod blockre;
pub mod blocks;
pub mod chunking;
pub mod element;
pub mod emphasis;
pub mod inline;
pub mod links;
pub mod lists;
pub mod markdown;
pub mod mdtable;
pub mod partition;
pub mod rawhtml;
pub mod split;
pub mod stext;
pub mod table;

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Framework, Strategy};
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::TokenCounter;

use chunking::{chunk_by_title, Options};
use stext::{py_isspace, SText};

/// Unstructured's `chunk_by_title(partition_md(text))`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnstructuredByTitle;

const KEYS: [&str; 11] = [
    "max_characters",
    "new_after_n_chars",
    "combine_text_under_n_chars",
    "overlap",
    "overlap_all",
    "multipage_sections",
    "include_orig_elements",
    "isolate_table",
    "repeat_table_headers",
    "skip_table_chunking",
    "text_splitting_separators",
];

const MAX: usize = 100_000_000;

impl Strategy for UnstructuredByTitle {
    fn name(&self) -> &'static str {
        "unstructured.by_title"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "Unstructured's chunk_by_title over partition_md (unstructured 0.27.35, Python-Markdown 3.11.3): sections by title, 500 characters, tables alone, Unstructured's text"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/unstructured.by_title.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let seps = match p.value("text_splitting_separators") {
            None => vec!["\n".to_owned(), " ".to_owned()],
            Some(_) => p.strings("text_splitting_separators")?,
        };
        let opts = Options {
            max_characters: p.usize_in("max_characters", Some(500), 1..=MAX)?,
            new_after_n_chars: p.opt_usize_in("new_after_n_chars", 0..=MAX)?,
            combine_text_under_n_chars: p.opt_usize_in("combine_text_under_n_chars", 0..=MAX)?,
            overlap: p.usize_in("overlap", Some(0), 0..=MAX)?,
            overlap_all: p.bool_or("overlap_all", false)?,
            multipage_sections: p.bool_or("multipage_sections", true)?,
            isolate_table: p.bool_or("isolate_table", true)?,
            repeat_table_headers: p.bool_or("repeat_table_headers", true)?,
            skip_table_chunking: p.bool_or("skip_table_chunking", false)?,
            text_splitting_separators: seps,
        };
        // Read so that Unstructured's keyword is accepted; records always
        // name their source span instead of carrying the elements.
        let include_orig = p.bool_or("include_orig_elements", true)?;
        if let Err((key, why)) = opts.validate() {
            return Err(p.error(key, format!("{why} (Unstructured raises ValueError)")));
        }
        Ok(Arc::new(UnstructuredByTitleChunker { opts, include_orig }))
    }
}

/// The unstructured.by_title strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct UnstructuredByTitleChunker {
    /// `chunk_by_title`'s options.
    pub opts: Options,
    include_orig: bool,
}

/// One record to be: its span and its text (with the overlap prefix
/// length in characters).
struct Planned {
    span: Range<usize>,
    text: String,
    prefix_chars: usize,
    /// Unstructured's chunk type and `text_as_html` (none for the record
    /// of a document without elements).
    kind: Option<&'static str>,
    html: Option<String>,
}

/// Tiles the document with the chunks' spans (see the module
/// documentation); chunks holding nothing new are left out.
fn plan(doc: &str, chunks: &[chunking::Chunk]) -> Vec<Planned> {
    let content_end = doc.trim_end().len();
    let mut from = 0usize;
    let mut out: Vec<Planned> = Vec::new();
    for c in chunks {
        let SText(chars) = &c.text;
        // The overlap prefix: up to the first character from past `from`.
        let first_new = chars.iter().position(|x| !py_isspace(x.c) && x.src >= from);
        let Some(first_new) = first_new else { continue };
        let end = chars
            .iter()
            .filter(|x| !py_isspace(x.c))
            .map(|x| x.src + source_len(doc, x))
            .max()
            .unwrap_or(from)
            .min(doc.len());
        let start = doc[from..].find(|c: char| !c.is_whitespace()).map_or(doc.len(), |o| from + o);
        if end <= start {
            continue;
        }
        // Characters whose source is not past the one before (none, by
        // construction) are left out, so that the text is drawn in order.
        let (mut text, mut last) = (String::new(), None::<usize>);
        for (i, x) in chars.iter().enumerate() {
            let new = i >= first_new;
            let ok = py_isspace(x.c)
                || (last.is_none_or(|l| x.src > l) && (new || x.src < start) && (!new || x.src >= start));
            if ok {
                text.push(x.c);
                if !py_isspace(x.c) {
                    last = Some(x.src);
                }
            }
        }
        let prefix_chars = chars[..first_new].iter().filter(|x| py_isspace(x.c) || x.src < start).count();
        out.push(Planned {
            span: start..end,
            text,
            prefix_chars,
            kind: Some(c.kind.name()),
            html: c.html.clone(),
        });
        from = end;
    }
    if let Some(last) = out.last_mut() {
        last.span.end = last.span.end.max(content_end);
    } else if !doc.trim().is_empty() {
        let start = doc.len() - doc.trim_start().len();
        out.push(Planned {
            span: start..content_end,
            text: doc.trim().to_owned(),
            prefix_chars: 0,
            kind: None,
            html: None,
        });
    }
    out
}

/// The bytes of the document `x` was made from: the character, or a
/// character reference standing for it.
fn source_len(doc: &str, x: &stext::SChar) -> usize {
    let at = &doc[x.src.min(doc.len())..];
    if at.starts_with(x.c) {
        x.c.len_utf8()
    } else {
        crate::chunk::rendered::char_ref(at).map_or(x.c.len_utf8(), |(_, n)| n)
    }
}

/// The record's metadata: the document's, with Unstructured's chunk type
/// (`element_type`: `CompositeElement`, `Table`, `TableChunk`) and a
/// table's `text_as_html` added.
fn with_element(
    doc: Option<&serde_json::Value>,
    kind: Option<&'static str>,
    html: Option<String>,
) -> Option<Arc<serde_json::Value>> {
    let Some(kind) = kind else {
        return doc.cloned().map(Arc::new);
    };
    let mut m = match doc {
        Some(serde_json::Value::Object(m)) => m.clone(),
        _ => serde_json::Map::new(),
    };
    m.insert("element_type".into(), kind.into());
    if let Some(h) = html {
        m.insert("text_as_html".into(), h.into());
    }
    Some(Arc::new(serde_json::Value::Object(m)))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Chunker for UnstructuredByTitleChunker {
    fn limits(&self) -> Limits {
        // Unstructured's sizes are characters, not tokens: shown as
        // `target=500chars`; no token limit is kept.
        Limits {
            target_tokens: self.opts.max_characters,
            hard_max_tokens: NO_TOKEN_LIMIT,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            verbatim_text: false,
            ..Rules::UNIVERSAL
        }
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "Unstructured chunk_by_title(partition_md)",
            package: "unstructured 0.27.35",
            unit: Some("chars"),
        })
    }

    fn params(&self) -> toml::Table {
        let o = &self.opts;
        let mut t = toml::Table::new();
        let int = |n: usize| toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX));
        t.insert("max_characters".into(), int(o.max_characters));
        t.insert("new_after_n_chars".into(), int(o.soft_max()));
        t.insert(
            "combine_text_under_n_chars".into(),
            int(o.combine_text_under_n_chars.unwrap_or(o.max_characters)),
        );
        t.insert("overlap".into(), int(o.overlap));
        t.insert("overlap_all".into(), o.overlap_all.into());
        t.insert("multipage_sections".into(), o.multipage_sections.into());
        t.insert("include_orig_elements".into(), self.include_orig.into());
        t.insert("isolate_table".into(), o.isolate_table.into());
        t.insert("repeat_table_headers".into(), o.repeat_table_headers.into());
        t.insert("skip_table_chunking".into(), o.skip_table_chunking.into());
        let seps: Vec<toml::Value> = o.text_splitting_separators.iter().map(|s| s.clone().into()).collect();
        t.insert("text_splitting_separators".into(), seps.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let doc = input.doc.text.as_str();
        let elements = partition::partition_md(doc);
        let planned = plan(doc, &chunk_by_title(&elements, &self.opts));
        let spans: Vec<Range<usize>> = planned.iter().map(|p| p.span.clone()).collect();
        let mut chunks = chunks_from_exact_spans(input, &spans);
        if chunks.len() != planned.len() {
            return Err(ChunkError::InvalidProfile {
                name: input.profile.name.clone(),
                origin: "its [embedder] window".into(),
                reason: "unstructured.by_title keeps Unstructured's chunks as they are and cannot cut them to an embedder window; remove [embedder] or use another profile".into(),
            });
        }
        let counter = input.tokens.counter();
        let window = input.profile.embedder.as_ref().and_then(|w| w.counter());
        for (c, p) in chunks.iter_mut().zip(planned) {
            let crumb = c
                .embed_text
                .strip_suffix(c.chunk_text.as_str())
                .unwrap_or_default()
                .to_owned();
            c.embed_text = crumb + &p.text;
            c.embed_token_count = window.map(|w| to_u32(w.count(&c.embed_text)));
            c.token_count = to_u32(counter.count(&p.text));
            c.overlap_prefix_chars = to_u32(p.prefix_chars);
            c.closing_suffix_chars = 0;
            c.chunk_text = p.text;
            c.metadata = with_element(c.metadata.as_deref(), p.kind, p.html);
        }
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn planned(doc: &str, o: &Options) -> Vec<(String, usize, String)> {
        let chunks = chunk_by_title(&partition::partition_md(doc), o);
        plan(doc, &chunks)
            .into_iter()
            .map(|p| (doc[p.span.clone()].to_owned(), p.prefix_chars, p.text))
            .collect()
    }

    #[test]
    fn spans_tile_the_document_and_overlap_is_a_prefix() {
        let doc = "# A\n\nalpha beta gamma delta\n\n---\n";
        let o = Options { max_characters: 12, overlap: 4, ..Options::default() };
        let p = planned(doc, &o);
        assert_eq!(p[0], ("# A".into(), 0, "A".into()));
        assert_eq!(p[1].2, "alpha beta");
        // Unstructured: ['A', 'alpha beta', 'eta gamma', 'mma delta'].
        assert_eq!(p[2], ("gamma".into(), 4, "eta gamma".into()));
        assert_eq!(p[3], ("delta\n\n---".into(), 4, "mma delta".into()));
        assert_eq!(p.len(), 4);
    }

    #[test]
    fn content_without_elements_is_one_record_of_itself() {
        let p = planned("  x\n", &Options::default());
        assert_eq!(p, [("x".into(), 0, "x".into())]);
        assert!(planned(" \n\t", &Options::default()).is_empty());
    }
}
