//! The recursive strategy's parameters, named as LangChain names them, and
//! their compiled separators.

use regex::Regex;

use crate::markdown::{Block, BlockKind};
use crate::strategy::params::{ParamError, Params, TARGET_TOKENS};

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
    /// neighbour (0: off, as LangChain). See [`super::Splitter::split`].
    pub stub_tokens: usize,
    /// `(chunk_size, chunk_overlap)` for a document with sections (at least
    /// [`SECTIONED_HEADINGS`] headings): `sectioned_chunk_size` and
    /// `sectioned_chunk_overlap`. Not in LangChain; `None`: every document
    /// gets `chunk_size`.
    pub sectioned: Option<(usize, usize)>,
    /// `wrap_aware`: in a document that is not hard-wrapped
    /// ([`super::wrap::hard_wrapped`]), a `"\n"` listed after
    /// [`SENTENCE_SEPARATOR`] is tried before it (a line there is a
    /// paragraph). Not in LangChain; off by default.
    pub wrap_aware: bool,
}

/// Headings that make a document "sectioned" for `sectioned_chunk_size`.
pub const SECTIONED_HEADINGS: usize = 2;

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
        let sectioned = match p.value("sectioned_chunk_size") {
            None => {
                if p.value("sectioned_chunk_overlap").is_some() {
                    return Err(p.error(
                        "sectioned_chunk_overlap",
                        "needs sectioned_chunk_size (the size it goes with)",
                    ));
                }
                None
            }
            Some(_) => {
                let size = p.usize_in("sectioned_chunk_size", None, TARGET_TOKENS)?;
                let overlap = p.usize_in(
                    "sectioned_chunk_overlap",
                    Some(chunk_overlap.min(size / 2)),
                    0..=size / 2,
                )?;
                if stub_tokens > size / 2 {
                    return Err(p.error(
                        "stub_tokens",
                        format!("= {stub_tokens} is over half of sectioned_chunk_size ({size})"),
                    ));
                }
                Some((size, overlap))
            }
        };
        let wrap_aware = p.bool_or("wrap_aware", false)?;
        let params = Self {
            chunk_size,
            chunk_overlap,
            separators,
            separators_regex,
            keep_separator,
            strip_whitespace,
            stub_tokens,
            sectioned,
            wrap_aware,
        };
        if wrap_aware && params.unwrapped_separators().is_none() {
            return Err(p.error(
                "wrap_aware",
                format!(
                    "= true needs \"{SENTENCE_SEPARATOR}\" before \"\\n\" in separators (it moves the line break before sentences in text that is not hard-wrapped)"
                ),
            ));
        }
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
        if let Some((size, overlap)) = self.sectioned {
            t.insert("sectioned_chunk_size".into(), (size as i64).into());
            t.insert("sectioned_chunk_overlap".into(), (overlap as i64).into());
        }
        if self.wrap_aware {
            t.insert("wrap_aware".into(), true.into());
        }
        t
    }

    /// With `wrap_aware`, the separators for text that is not hard-wrapped:
    /// the first `"\n"` after [`SENTENCE_SEPARATOR`] moved just before it.
    /// `None` when there is no such pair.
    pub fn unwrapped_separators(&self) -> Option<Vec<String>> {
        let sentence = self
            .separators
            .iter()
            .position(|s| s == SENTENCE_SEPARATOR)?;
        let line = sentence
            + 1
            + self.separators[sentence + 1..]
                .iter()
                .position(|s| s == "\n")?;
        let mut list = self.separators.clone();
        let moved = list.remove(line);
        list.insert(sentence, moved);
        Some(list)
    }

    /// The parameters for one document (its Markdown blocks): with
    /// `sectioned` set and at least [`SECTIONED_HEADINGS`] headings, its
    /// size and overlap. Headings are counted only when `sectioned` is set.
    pub(crate) fn for_document(&self, blocks: &[Block]) -> std::borrow::Cow<'_, Self> {
        let sectioned = || {
            blocks
                .iter()
                .filter(|b| matches!(b.kind, BlockKind::Heading { .. }))
                .nth(SECTIONED_HEADINGS - 1)
                .is_some()
        };
        match self.sectioned {
            Some((chunk_size, chunk_overlap)) if sectioned() => {
                std::borrow::Cow::Owned(Self {
                    chunk_size,
                    chunk_overlap,
                    ..self.clone()
                })
            }
            _ => std::borrow::Cow::Borrowed(self),
        }
    }
}

/// The keys of [`RecursiveParams`].
pub(crate) const RECURSIVE_KEYS: [&str; 10] = [
    "chunk_size",
    "chunk_overlap",
    "separators",
    "separators_regex",
    "keep_separator",
    "strip_whitespace",
    "stub_tokens",
    "sectioned_chunk_size",
    "sectioned_chunk_overlap",
    "wrap_aware",
];

/// One compiled separator.
#[derive(Debug, Clone)]
pub(super) enum Separator {
    /// `""`: split into characters.
    Chars,
    /// [`SENTENCE_SEPARATOR`]: split into sentences (the engine's sentence
    /// segmenter; each keeps its end punctuation and trailing whitespace).
    Sentences,
    /// A literal string.
    Literal(String),
    /// A regular expression.
    Pattern(Regex),
}

/// The compiled separators of a profile, with their token lengths (used
/// when `keep_separator = false`, as LangChain measures the joiner).
#[derive(Debug, Clone)]
pub(crate) struct Separators {
    pub(super) list: Vec<Separator>,
    /// The separator strings as given (the joiner's length is measured on
    /// the string, as LangChain does).
    pub(super) raw: Vec<String>,
}

impl Separators {
    /// Compiles the profile's separators; a bad pattern names itself.
    pub fn compile(params: &RecursiveParams) -> Result<Self, String> {
        Self::compile_list(params, &params.separators)
    }

    /// Compiles `separators` with `params`' settings.
    pub fn compile_list(params: &RecursiveParams, separators: &[String]) -> Result<Self, String> {
        let list = separators
            .iter()
            .map(|s| {
                if s.is_empty() {
                    Ok(Separator::Chars)
                } else if s == SENTENCE_SEPARATOR {
                    Ok(Separator::Sentences)
                } else if params.separators_regex {
                    Regex::new(s).map(Separator::Pattern).map_err(|e| {
                        format!("holds {s:?}, which is not a valid regular expression: {e}")
                    })
                } else {
                    Ok(Separator::Literal(s.clone()))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            list,
            raw: separators.to_vec(),
        })
    }
}
