//! The drop-in `langchain.markdown` strategy, profile `langchain.markdown`:
//! LangChain's `MarkdownHeaderTextSplitter` (langchain-text-splitters 1.1.3,
//! `scripts/peers/ADAPTERS.md` section 3), ported line for line, on the text
//! exactly as sent (`normalization = "none"`).
//!
//! Every line is stripped of whitespace and invisible characters; a line
//! starting with a configured separator and a space is a header (not inside
//! a ```` ``` ```` or `~~~` fence); blank lines end blocks; consecutive
//! blocks under the same headers are joined with `"  \n"`. Each chunk's
//! text is LangChain's `page_content`, and its metadata (header name ->
//! heading text) is added to the record's `metadata`. There is no size
//! limit and no overlap, as in LangChain.
//!
//! The chunk text is LangChain's rendering, not a slice of the document:
//! the record's offsets give the lines it was made from (from the end of
//! the chunk before, so that the header lines it strips are in the span of
//! the section they open), and its non-whitespace characters are the
//! span's, in order (`Rules::verbatim_text` is false).
//!
//! Intended differences: lines inside code fences keep their indentation
//! (`keep_code_indentation = true`, the default; LangChain strips it, which
//! breaks Python, YAML and every indented listing; `false` gives LangChain's
//! text exactly). A document of stripped header lines alone, for which
//! LangChain returns nothing and loses them, gives one record of its text
//! as it is.

use std::sync::Arc;

use crate::chunk::exact::chunks_from_exact_spans;
use crate::chunk::record::Chunk;
use crate::error::ChunkError;
use crate::normalize::Normalization;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::chunker::Framework;
use crate::strategy::limits::{Limits, Rules, NO_TOKEN_LIMIT};
use crate::strategy::params::{ParamError, Params};
use crate::tokens::TokenCounter;

mod split;

pub use split::{split, Header, Options, Section};

/// LangChain's `MarkdownHeaderTextSplitter`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LangchainMarkdown;

const KEYS: [&str; 5] = [
    "headers_to_split_on",
    "return_each_line",
    "strip_headers",
    "custom_header_patterns",
    "keep_code_indentation",
];

impl Strategy for LangchainMarkdown {
    fn name(&self) -> &'static str {
        "langchain.markdown"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's MarkdownHeaderTextSplitter (langchain-text-splitters 1.1.3): sections under the configured headers, its text and header metadata"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &KEYS
    }

    fn normalization(&self) -> Normalization {
        Normalization::None
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/langchain.markdown.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let custom = custom_patterns(p)?;
        let mut headers = headers_to_split_on(p, &custom)?;
        // LangChain sorts by separator length, longest first (stable).
        headers.sort_by_key(|h| std::cmp::Reverse(h.sep.len()));
        let opts = Options {
            strip_headers: p.bool_or("strip_headers", true)?,
            return_each_line: p.bool_or("return_each_line", false)?,
            keep_code_indentation: p.bool_or("keep_code_indentation", true)?,
        };
        Ok(Arc::new(LangchainMarkdownChunker {
            headers,
            custom,
            opts,
        }))
    }
}

/// `custom_header_patterns = { "**" = 1 }`: separator -> level.
fn custom_patterns(p: &Params<'_>) -> Result<Vec<(String, usize)>, ParamError> {
    let Some(v) = p.value("custom_header_patterns") else {
        return Ok(Vec::new());
    };
    let bad = || {
        p.error(
            "custom_header_patterns",
            format!("= {v} is not a table of separator = level (1..=100), e.g. {{ \"**\" = 1 }}"),
        )
    };
    let table = v.as_table().ok_or_else(bad)?;
    table
        .iter()
        .map(|(sep, level)| match level.as_integer() {
            Some(l @ 1..=100) if !sep.is_empty() => Ok((sep.clone(), l as usize)),
            _ => Err(bad()),
        })
        .collect()
}

/// `headers_to_split_on = [["#", "Header 1"], ...]`.
fn headers_to_split_on(
    p: &Params<'_>,
    custom: &[(String, usize)],
) -> Result<Vec<Header>, ParamError> {
    let default = || {
        (1..=3)
            .map(|n| Header {
                sep: "#".repeat(n),
                name: format!("Header {n}"),
                custom_level: None,
            })
            .collect()
    };
    let Some(v) = p.value("headers_to_split_on") else {
        return Ok(default());
    };
    let bad = || {
        p.error(
            "headers_to_split_on",
            format!("= {v} is not a list of [separator, name] pairs, e.g. [[\"#\", \"Header 1\"], [\"##\", \"Header 2\"]]"),
        )
    };
    let list = v.as_array().ok_or_else(bad)?;
    let mut out = Vec::with_capacity(list.len());
    for pair in list {
        let (sep, name) = match pair.as_array().map(Vec::as_slice) {
            Some([toml::Value::String(s), toml::Value::String(n)]) if !s.is_empty() => (s, n),
            _ => return Err(bad()),
        };
        out.push(Header {
            sep: sep.clone(),
            name: name.clone(),
            custom_level: custom.iter().find(|(c, _)| c == sep).map(|(_, l)| *l),
        });
    }
    Ok(out)
}

/// The langchain.markdown strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct LangchainMarkdownChunker {
    /// The headers split on, longest separator first.
    pub headers: Vec<Header>,
    custom: Vec<(String, usize)>,
    /// How lines become text.
    pub opts: Options,
}

/// Where each section's record starts and ends: from the first
/// non-whitespace byte after the previous record to the end of its last
/// line (the last record: to the end of the text's content), so that the
/// header lines a section strips lie in its own span and nothing is lost.
fn tiled_spans(text: &str, sections: &[Section]) -> Vec<std::ops::Range<usize>> {
    let content_end = text.trim_end().len();
    let mut from = 0;
    let mut spans = Vec::with_capacity(sections.len());
    for (i, s) in sections.iter().enumerate() {
        let start = text[from..]
            .find(|c: char| !c.is_whitespace())
            .map_or(text.len(), |o| from + o);
        let end = if i + 1 == sections.len() {
            content_end
        } else {
            text[..s.lines.end.max(start)].trim_end().len().max(start)
        };
        spans.push(start..end.max(start));
        from = end.max(start);
    }
    spans
}

impl Chunker for LangchainMarkdownChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: NO_TOKEN_LIMIT,
            hard_max_tokens: NO_TOKEN_LIMIT,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            // Header-only sections leave their headers in no record.
            headings_as_metadata: self.opts.strip_headers,
            verbatim_text: false,
            ..Rules::UNIVERSAL
        }
    }

    fn framework(&self) -> Option<Framework> {
        Some(Framework {
            call: "LangChain MarkdownHeaderTextSplitter",
            package: "langchain-text-splitters 1.1.3",
            unit: None,
        })
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let mut headers = self.headers.clone();
        headers.sort_by_key(|h| h.sep.len());
        let pairs: Vec<toml::Value> = headers
            .iter()
            .map(|h| toml::Value::Array(vec![h.sep.clone().into(), h.name.clone().into()]))
            .collect();
        t.insert("headers_to_split_on".into(), pairs.into());
        t.insert("return_each_line".into(), self.opts.return_each_line.into());
        t.insert("strip_headers".into(), self.opts.strip_headers.into());
        if !self.custom.is_empty() {
            let mut c = toml::Table::new();
            for (sep, level) in &self.custom {
                c.insert(sep.clone(), (*level as i64).into());
            }
            t.insert("custom_header_patterns".into(), c.into());
        }
        t.insert(
            "keep_code_indentation".into(),
            self.opts.keep_code_indentation.into(),
        );
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let mut sections = split(text, &self.headers, self.opts);
        // Header lines alone (stripped): LangChain returns nothing and
        // loses them; one verbatim record keeps them.
        let content = text.trim();
        if sections.is_empty() && !content.is_empty() {
            let start = text.len() - text.trim_start().len();
            sections.push(Section {
                text: content.to_owned(),
                metadata: Vec::new(),
                lines: start..start + content.len(),
            });
        }
        let spans = tiled_spans(text, &sections);
        let mut chunks = chunks_from_exact_spans(input, &spans);
        if chunks.len() != sections.len() {
            return Err(ChunkError::InvalidProfile {
                name: input.profile.name.clone(),
                origin: "its [embedder] window".into(),
                reason: "langchain.markdown keeps LangChain's sections whole and cannot cut them to an embedder window; remove [embedder] or use another profile".into(),
            });
        }
        let counter = input.tokens.counter();
        let window = input.profile.embedder.as_ref().and_then(|w| w.counter());
        for (c, s) in chunks.iter_mut().zip(sections) {
            let crumb = c
                .embed_text
                .strip_suffix(c.chunk_text.as_str())
                .unwrap_or_default()
                .to_owned();
            c.embed_text = crumb + &s.text;
            c.embed_token_count = window.map(|w| to_u32(w.count(&c.embed_text)));
            c.token_count = to_u32(counter.count(&s.text));
            c.overlap_prefix_chars = 0;
            c.closing_suffix_chars = 0;
            c.chunk_text = s.text;
            c.metadata = with_headers(c.metadata.as_deref(), &s.metadata);
        }
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The record's metadata: the document's, with the section's header
/// metadata added (LangChain's `Document.metadata`).
fn with_headers(
    doc: Option<&serde_json::Value>,
    headers: &[(String, String)],
) -> Option<Arc<serde_json::Value>> {
    if headers.is_empty() {
        return doc.cloned().map(Arc::new);
    }
    let mut m = match doc {
        Some(serde_json::Value::Object(m)) => m.clone(),
        _ => serde_json::Map::new(),
    };
    for (k, v) in headers {
        m.insert(k.clone(), v.clone().into());
    }
    Some(Arc::new(serde_json::Value::Object(m)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn spans_tile_the_document_so_stripped_headers_stay_inside_one() {
        let text = "\n# A\n\nalpha\n\n## B\nbeta  \n\n# C\n";
        let headers: Vec<Header> = (1..=2)
            .rev()
            .map(|n| Header {
                sep: "#".repeat(n),
                name: format!("H{n}"),
                custom_level: None,
            })
            .collect();
        let opts = Options {
            strip_headers: true,
            return_each_line: false,
            keep_code_indentation: true,
        };
        let sections = split(text, &headers, opts);
        let spans = tiled_spans(text, &sections);
        let own: Vec<&str> = spans.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(own, ["# A\n\nalpha", "## B\nbeta  \n\n# C"]);
    }
}
