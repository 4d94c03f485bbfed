//! The `markdown_headers` strategy: LangChain's `MarkdownHeaderTextSplitter`
//! followed by the recursive splitter (the LangChain-style factory specification "markdown"), profile
//! `markdown-v1`.
//!
//! The document is cut into sections at every heading whose level is in
//! `headings` (deeper headings stay inside their section, as in LangChain);
//! each section is then sized by the recursive splitter
//! ([`crate::strategy::recursive`]) with its own overlap, so no chunk mixes
//! two sections and no overlap crosses a section boundary. The headings in
//! effect travel as the chunk's `headings_path`. With `strip_headers = true`
//! the section's heading line is left out of the chunk text (LangChain's
//! default); the default here is `false`, so nothing is lost.
//!
//! Unlike LangChain, the section text is the document's own (LangChain
//! rebuilds it from stripped lines joined with `"  \n"`, so its offsets do
//! not exist), and headings inside code blocks are not headings (our blocks
//! come from a Markdown parser).

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::error::ChunkError;
use crate::markdown::{Block, BlockKind};
use crate::markdown::parse::front_matter_len;
use crate::strategy::params::{ParamError, Params};
use crate::strategy::recursive::{RecursiveParams, Separators, Splitter, RECURSIVE_KEYS};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Sections at chosen heading levels, each split recursively.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownHeaders;

const KEYS: [&str; 8] = [
    "headings",
    "strip_headers",
    RECURSIVE_KEYS[0],
    RECURSIVE_KEYS[1],
    RECURSIVE_KEYS[2],
    RECURSIVE_KEYS[3],
    RECURSIVE_KEYS[4],
    RECURSIVE_KEYS[5],
];

impl Strategy for MarkdownHeaders {
    fn name(&self) -> &'static str {
        "markdown_headers"
    }

    /// 1.1.0: the breadcrumb title is an H1 before substantial content only.
    /// 1.2.0: `conditional` breadcrumbs follow the per-chunk file format exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap, 64 + overlap
    /// for strategies without a minimum).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    fn version(&self) -> &'static str {
        "1.2.0"
    }

    fn summary(&self) -> &'static str {
        "sections at chosen heading levels (LangChain MarkdownHeaderTextSplitter), each split recursively"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/markdown-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let levels: Vec<u8> = match p.value("headings") {
            None => vec![1, 2, 3],
            Some(toml::Value::Array(list)) => list
                .iter()
                .map(|v| {
                    v.as_integer()
                        .and_then(|n| u8::try_from(n).ok())
                        .filter(|n| (1..=6).contains(n))
                        .ok_or_else(|| {
                            p.error(
                                "headings",
                                format!("holds {v}; valid: heading levels 1..=6"),
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(p.error(
                    "headings",
                    format!("= {v} must be a list of heading levels 1..=6"),
                ))
            }
        };
        if levels.is_empty() {
            return Err(p.error("headings", "is empty; give at least one level (1..=6)"));
        }
        let mut levels = levels;
        levels.sort_unstable();
        levels.dedup();
        let strip_headers = p.bool_or("strip_headers", false)?;
        let recursive = RecursiveParams::parse(p, 1000, 200)?;
        let separators = Separators::compile(&recursive).map_err(ParamError)?;
        Ok(Arc::new(MarkdownHeadersChunker {
            levels,
            strip_headers,
            recursive,
            separators,
        }))
    }
}

/// The markdown_headers strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct MarkdownHeadersChunker {
    levels: Vec<u8>,
    strip_headers: bool,
    recursive: RecursiveParams,
    separators: Separators,
}

impl MarkdownHeadersChunker {
    /// Section ranges of the body: from each splitting heading (or its end,
    /// when headings are stripped) to the next splitting heading.
    fn sections(&self, blocks: &[Block], body: Range<usize>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut start = body.start;
        for b in blocks {
            let BlockKind::Heading { level } = b.kind else {
                continue;
            };
            if !self.levels.contains(&level) || b.range.start < body.start {
                continue;
            }
            if b.range.start > start {
                out.push(start..b.range.start);
            }
            start = if self.strip_headers {
                b.range.end
            } else {
                b.range.start
            };
        }
        if start < body.end {
            out.push(start..body.end);
        }
        out
    }
}

impl Chunker for MarkdownHeadersChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.recursive.chunk_size,
            hard_max_tokens: self.recursive.chunk_size,
            min_tokens: 0,
            overlap_tokens: self.recursive.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            headings_as_metadata: self.strip_headers,
            ..Rules::UNIVERSAL
        }
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert(
            "headings".into(),
            toml::Value::Array(self.levels.iter().map(|l| i64::from(*l).into()).collect()),
        );
        t.insert("strip_headers".into(), self.strip_headers.into());
        t.extend(self.recursive.to_table());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let splitter = Splitter::new(input.tokens, &self.recursive, &self.separators);
        let spans: Vec<Range<usize>> = self
            .sections(input.blocks, body..text.len())
            .into_iter()
            .flat_map(|section| splitter.split(section))
            .collect();
        Ok(chunks_from_spans(input, &spans, !self.strip_headers))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
