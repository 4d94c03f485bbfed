//! The `recursive` strategy: LangChain's `RecursiveCharacterTextSplitter`
//! (`from_tiktoken_encoder`), ported to byte ranges (seed 004, profile
//! `recursive-v1`).
//!
//! The text after front matter is split at the first separator (of
//! `separators`, in order) that occurs in it; pieces under `chunk_size`
//! tokens are merged greedily with LangChain's merge (overlap of up to
//! `chunk_overlap` tokens carried from the end of the previous chunk), and a
//! piece at or over `chunk_size` is split again with the remaining
//! separators. `split.rs` is a line-for-line port of `_split_text`,
//! `_merge_splits` and `_split_text_with_regex`; the parity test
//! (`shared/tests/langchain_parity.rs`) compares our chunk texts with
//! LangChain's own on corpus documents.
//!
//! Deliberate differences, each an improvement:
//! - every chunk has exact offsets (LangChain's `start_index` searches for the
//!   chunk text and is wrong when text repeats), an id, a type, a headings
//!   path, and passes the universal invariants;
//! - LangChain measures pieces apart and joins them, so a chunk can exceed
//!   `chunk_size`, and a piece with no separator left is emitted whole however
//!   long: ours re-measures every chunk and cuts one over `chunk_size` into
//!   token windows, so no chunk is ever over;
//! - a chunk wholly inside the previous one (nothing new) is dropped;
//! - with `stub_tokens = N` (off by default), a chunk under N tokens or of
//!   headings only (`## Design Details` before a subsection too big to join)
//!   joins the next chunk, else the previous one, when the size allows, else
//!   takes the next chunk's first tokens with it (issue 17's "no stub");
//! - with `keep_separator = false`, a chunk is the document slice from its
//!   first to its last piece (LangChain rejoins the pieces with the separator
//!   string, which differs from the text where an empty piece was dropped
//!   or the separator is a regex).

mod split;

use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::error::ChunkError;
use crate::normalize::front_matter_len;
use crate::strategy::params::{ParamError, Params, TARGET_TOKENS};
use crate::strategy::chunker::ChunkInput;
use crate::strategy::chunker::Chunker;
use crate::strategy::limits::Limits;
use crate::strategy::limits::Rules;
use crate::strategy::chunker::Strategy;

pub(crate) use split::{Separators, Splitter};

/// The separator entry that splits at sentence boundaries (the engine's
/// sentence segmenter, [`crate::sentence::sentence_spans`]) instead of at a
/// string: a sentence keeps its end punctuation, where `". "` with
/// `keep_separator = "start"` would start the next chunk with it. Not in
/// LangChain.
pub const SENTENCE_SEPARATOR: &str = "<sentence>";

/// LangChain's default separators.
pub const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];

/// LangChain's `Language.MARKDOWN` separators (regular expressions).
pub const MARKDOWN_SEPARATORS: [&str; 9] = [
    "\n#{1,6} ",
    "```\n",
    "\n\\*\\*\\*+\n",
    "\n---+\n",
    "\n___+\n",
    "\n\n",
    "\n",
    " ",
    "",
];

/// Where a separator goes once the text is split at it (LangChain
/// `keep_separator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSeparator {
    /// Dropped from the pieces (merging re-inserts it).
    No,
    /// At the start of the piece after it (LangChain's `True`, the default).
    Start,
    /// At the end of the piece before it.
    End,
}

/// The recursive strategy's parameters, named as LangChain names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecursiveParams {
    /// Chunks aim at this many tokens; none is larger.
    pub chunk_size: usize,
    /// Tokens of the previous chunk's end repeated at a chunk's start, at most.
    pub chunk_overlap: usize,
    /// Separators tried in order.
    pub separators: Vec<String>,
    /// The separators are regular expressions (LangChain `is_separator_regex`).
    pub separators_regex: bool,
    /// Where a separator goes.
    pub keep_separator: KeepSeparator,
    /// Chunks are trimmed of surrounding whitespace (always true for offsets:
    /// own spans never start or end with whitespace; kept for LangChain's
    /// merge, which measures untrimmed chunks).
    pub strip_whitespace: bool,
    /// A chunk under this many tokens, or of headings only, joins a
    /// neighbour (0: off, as LangChain). See [`split::Splitter::split`].
    pub stub_tokens: usize,
}

impl RecursiveParams {
    /// Reads the parameters with `chunk_size` and `chunk_overlap` defaulting
    /// to `default_size` / `default_overlap`.
    pub(crate) fn parse(
        p: &Params<'_>,
        default_size: usize,
        default_overlap: usize,
    ) -> Result<Self, ParamError> {
        let chunk_size = p.usize_in("chunk_size", Some(default_size), TARGET_TOKENS)?;
        let chunk_overlap = p.usize_in(
            "chunk_overlap",
            Some(default_overlap.min(chunk_size / 2)),
            0..=chunk_size / 2,
        )?;
        let mut separators_regex = false;
        let separators: Vec<String> = match p.value("separators") {
            None => DEFAULT_SEPARATORS.iter().map(|s| s.to_string()).collect(),
            Some(toml::Value::String(preset)) => match preset.as_str() {
                "default" => DEFAULT_SEPARATORS.iter().map(|s| s.to_string()).collect(),
                "markdown" => {
                    separators_regex = true;
                    MARKDOWN_SEPARATORS.iter().map(|s| s.to_string()).collect()
                }
                other => {
                    return Err(p.error(
                        "separators",
                        format!(
                            "= {other:?} is not a preset; valid: \"default\", \"markdown\", or a list of strings"
                        ),
                    ))
                }
            },
            Some(toml::Value::Array(list)) => list
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| {
                        p.error("separators", format!("holds {v}, which is not a string"))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(p.error(
                    "separators",
                    format!("= {v} must be a list of strings or \"default\" / \"markdown\""),
                ))
            }
        };
        if separators.is_empty() {
            return Err(p.error("separators", "is empty; give at least one separator"));
        }
        let separators_regex = p.bool_or("separators_regex", separators_regex)?;
        let keep_separator = match p.value("keep_separator") {
            None | Some(toml::Value::Boolean(true)) => KeepSeparator::Start,
            Some(toml::Value::Boolean(false)) => KeepSeparator::No,
            Some(toml::Value::String(s)) if s == "start" => KeepSeparator::Start,
            Some(toml::Value::String(s)) if s == "end" => KeepSeparator::End,
            Some(v) => {
                return Err(p.error(
                    "keep_separator",
                    format!("= {v} is not valid; valid: true, false, \"start\", \"end\""),
                ))
            }
        };
        let strip_whitespace = p.bool_or("strip_whitespace", true)?;
        let stub_tokens = p.usize_in("stub_tokens", Some(0), 0..=chunk_size / 2)?;
        let params = Self {
            chunk_size,
            chunk_overlap,
            separators,
            separators_regex,
            keep_separator,
            strip_whitespace,
            stub_tokens,
        };
        // Compile once here so a bad pattern is reported at load time.
        Separators::compile(&params).map_err(|e| p.error("separators", e))?;
        Ok(params)
    }

    /// The parameters as TOML (every key spelled out).
    pub(crate) fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("chunk_size".into(), (self.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (self.chunk_overlap as i64).into());
        t.insert(
            "separators".into(),
            toml::Value::Array(self.separators.iter().map(|s| s.as_str().into()).collect()),
        );
        t.insert("separators_regex".into(), self.separators_regex.into());
        t.insert(
            "keep_separator".into(),
            match self.keep_separator {
                KeepSeparator::No => false.into(),
                KeepSeparator::Start => "start".into(),
                KeepSeparator::End => "end".into(),
            },
        );
        t.insert("strip_whitespace".into(), self.strip_whitespace.into());
        t.insert("stub_tokens".into(), (self.stub_tokens as i64).into());
        t
    }
}

/// The keys of [`RecursiveParams`].
pub(crate) const RECURSIVE_KEYS: [&str; 7] = [
    "chunk_size",
    "chunk_overlap",
    "separators",
    "separators_regex",
    "keep_separator",
    "strip_whitespace",
    "stub_tokens",
];

/// LangChain's recursive character splitter, sized in tokens.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recursive;

impl Strategy for Recursive {
    fn name(&self) -> &'static str {
        "recursive"
    }

    /// 1.1.0: `conditional` breadcrumbs follow seed 002 exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap, 64 + overlap
    /// for strategies without a minimum).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    ///
    /// 1.2.0 (issue 17): `stub_tokens` and the `<sentence>` separator, both
    /// off unless a profile names them; `retrieval-v1` and
    /// `retrieval-minilm-v1` now do (their output changed, that of profiles
    /// without them did not).
    fn version(&self) -> &'static str {
        "1.2.0"
    }

    fn summary(&self) -> &'static str {
        "LangChain's RecursiveCharacterTextSplitter in tokens, with exact offsets and a true hard max"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &RECURSIVE_KEYS
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/recursive-v1.toml"),
            include_str!("profiles/retrieval-v1.toml"),
            include_str!("profiles/retrieval-minilm-v1.toml"),
        ]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let params = RecursiveParams::parse(params, 1000, 200)?;
        let separators = Separators::compile(&params).map_err(ParamError)?;
        Ok(Arc::new(RecursiveChunker { params, separators }))
    }
}

/// The recursive strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct RecursiveChunker {
    params: RecursiveParams,
    separators: Separators,
}

impl RecursiveChunker {
    /// The parameters.
    pub fn params(&self) -> &RecursiveParams {
        &self.params
    }
}

impl Chunker for RecursiveChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.params.chunk_size,
            hard_max_tokens: self.params.chunk_size,
            min_tokens: 0,
            overlap_tokens: self.params.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        self.params.to_table()
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let splitter = Splitter::new(input.tokens, &self.params, &self.separators);
        let spans = splitter.split(body..text.len());
        Ok(chunks_from_spans(input, &spans, true))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
