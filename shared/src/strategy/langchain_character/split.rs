//! `_split_text_with_regex` and `_merge_splits` of
//! langchain-text-splitters 1.1.3 (`character.py`, `base.py`), on byte
//! ranges of the document, lengths in code points.

use std::collections::VecDeque;
use std::ops::Range;

use regex::Regex;

use crate::strategy::params::{ParamError, Params};
use crate::strategy::pystr::py_strip;

/// Where a separator goes when the text is split (`keep_separator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSeparator {
    /// Dropped (`False`).
    No,
    /// Starts the next piece (`True`, `"start"`).
    Start,
    /// Ends the piece before (`"end"`).
    End,
}

impl KeepSeparator {
    /// `keep_separator` of a profile's `[params]` (LangChain's values:
    /// `true` = `"start"`, `false`, `"start"`, `"end"`); `default` when absent.
    pub fn read(p: &Params<'_>, default: KeepSeparator) -> Result<Self, ParamError> {
        match p.value("keep_separator") {
            None => Ok(default),
            Some(toml::Value::Boolean(true)) => Ok(KeepSeparator::Start),
            Some(toml::Value::Boolean(false)) => Ok(KeepSeparator::No),
            Some(toml::Value::String(s)) if s == "start" => Ok(KeepSeparator::Start),
            Some(toml::Value::String(s)) if s == "end" => Ok(KeepSeparator::End),
            Some(v) => Err(p.error(
                "keep_separator",
                format!("= {v} is not valid; valid: false, true, \"start\", \"end\""),
            )),
        }
    }

    /// The value `read` takes back, for `params()`.
    pub fn to_toml(self) -> toml::Value {
        match self {
            KeepSeparator::No => toml::Value::Boolean(false),
            KeepSeparator::Start => toml::Value::String("start".into()),
            KeepSeparator::End => toml::Value::String("end".into()),
        }
    }
}

/// A configured splitter: the separator and what happens to it.
#[derive(Debug, Clone)]
pub struct Pieces {
    pattern: Option<Regex>,
    keep: KeepSeparator,
    /// What LangChain joins pieces with, for lengths: the separator as
    /// written, or nothing when it is kept.
    merge_separator: String,
}

impl Pieces {
    /// Compiles `separator` (escaped unless `is_regex`); an empty one splits
    /// into characters. A pattern the `regex` crate refuses (look-around)
    /// is an error naming why.
    pub fn new(separator: &str, is_regex: bool, keep: KeepSeparator) -> Result<Self, String> {
        let pattern = if separator.is_empty() {
            None
        } else {
            let source = if is_regex {
                separator.to_owned()
            } else {
                regex::escape(separator)
            };
            Some(Regex::new(&source).map_err(|e| {
                format!("= {separator:?} is not a pattern this port reads (no look-around): {e}")
            })?)
        };
        let merge_separator = if keep == KeepSeparator::No {
            separator.to_owned()
        } else {
            String::new()
        };
        Ok(Self {
            pattern,
            keep,
            merge_separator,
        })
    }

    /// Whether the separator occurs in `text` (`re.search`); the empty
    /// separator always does.
    pub fn occurs_in(&self, text: &str) -> bool {
        self.pattern.as_ref().is_none_or(|p| p.is_match(text))
    }

    /// The separator LangChain joins (and measures) pieces with.
    pub fn merge_separator(&self) -> &str {
        &self.merge_separator
    }

    /// The pieces of `text`, empty ones dropped.
    pub fn split(&self, text: &str) -> Vec<Range<usize>> {
        let Some(pattern) = &self.pattern else {
            return text
                .char_indices()
                .map(|(i, c)| i..i + c.len_utf8())
                .collect();
        };
        let matches: Vec<Range<usize>> = pattern.find_iter(text).map(|m| m.range()).collect();
        let mut out = Vec::with_capacity(matches.len() + 1);
        match self.keep {
            KeepSeparator::No => {
                let mut from = 0;
                for m in &matches {
                    out.push(from..m.start);
                    from = m.end;
                }
                out.push(from..text.len());
            }
            KeepSeparator::Start => {
                let mut from = 0;
                for m in &matches {
                    out.push(from..m.start);
                    from = m.start;
                }
                out.push(from..text.len());
            }
            KeepSeparator::End => {
                let mut from = 0;
                for m in &matches {
                    out.push(from..m.end);
                    from = m.end;
                }
                out.push(from..text.len());
            }
        }
        out.retain(|r| !r.is_empty());
        out
    }
}

/// `_merge_splits` with `len` = code points (Python's `len`): see
/// [`merge_by`].
pub(crate) fn merge(
    text: &str,
    pieces: &[Range<usize>],
    separator: &str,
    sizes: (usize, usize),
    strip: bool,
) -> Vec<Range<usize>> {
    let len = |s: &str| s.chars().count();
    merge_by(text, pieces, separator, sizes, strip, &len)
}

/// `_merge_splits`: pieces joined greedily while the joined length (by
/// `len`, LangChain's `length_function`) stays within `size` (a longer
/// piece alone), the next chunk starting with the previous one's last
/// pieces while they fit `overlap`. A chunk is the document's slice from
/// its first to its last piece, stripped with `strip`; one left empty is
/// dropped.
pub(crate) fn merge_by(
    text: &str,
    pieces: &[Range<usize>],
    separator: &str,
    (size, overlap): (usize, usize),
    strip: bool,
    len: &dyn Fn(&str) -> usize,
) -> Vec<Range<usize>> {
    let sep = len(separator);
    let lens: Vec<usize> = pieces.iter().map(|r| len(&text[r.clone()])).collect();
    let mut docs = Vec::new();
    let mut current: VecDeque<usize> = VecDeque::new();
    let mut total = 0usize;
    let join = |current: &VecDeque<usize>, docs: &mut Vec<Range<usize>>| {
        if let (Some(&first), Some(&last)) = (current.front(), current.back()) {
            let r = pieces[first].start..pieces[last].end;
            let r = if strip { py_strip(text, r) } else { r };
            if !r.is_empty() {
                docs.push(r);
            }
        }
    };
    for (i, &len) in lens.iter().enumerate() {
        let joined = |current: &VecDeque<usize>, total: usize| {
            total + len + if current.is_empty() { 0 } else { sep }
        };
        if joined(&current, total) > size && !current.is_empty() {
            join(&current, &mut docs);
            while total > overlap || (joined(&current, total) > size && total > 0) {
                let Some(first) = current.pop_front() else {
                    break;
                };
                total -= lens[first] + if current.is_empty() { 0 } else { sep };
            }
        }
        current.push_back(i);
        total += len + if current.len() > 1 { sep } else { 0 };
    }
    join(&current, &mut docs);
    docs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn texts(text: &str, sep: &str, keep: KeepSeparator, size: usize, overlap: usize) -> Vec<String> {
        let p = Pieces::new(sep, false, keep).unwrap();
        merge(text, &p.split(text), p.merge_separator(), (size, overlap), true)
            .into_iter()
            .map(|r| text[r].to_owned())
            .collect()
    }

    #[test]
    fn langchain_merges_whole_pieces_with_overlap() {
        // LangChain: CharacterTextSplitter(separator=" ", chunk_size=7,
        // chunk_overlap=3).split_text("a bb ccc dddd e") ==
        // ['a bb', 'bb ccc', 'dddd e'] (traced by hand through _merge_splits).
        assert_eq!(
            texts("a bb ccc dddd e", " ", KeepSeparator::No, 7, 3),
            ["a bb", "bb ccc", "dddd e"]
        );
        // A piece over chunk_size stays whole.
        assert_eq!(
            texts("x\n\nyyyyyyyyyy\n\nz", "\n\n", KeepSeparator::No, 4, 0),
            ["x", "yyyyyyyyyy", "z"]
        );
    }

    #[test]
    fn kept_separators_start_or_end_pieces_and_empty_pieces_go() {
        let p = Pieces::new("\n", false, KeepSeparator::End).unwrap();
        let text = "a\nb\n\nc";
        let pieces: Vec<&str> = p.split(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(pieces, ["a\n", "b\n", "\n", "c"]);
        let p = Pieces::new("\n", false, KeepSeparator::Start).unwrap();
        let pieces: Vec<&str> = p.split(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(pieces, ["a", "\nb", "\n", "\nc"]);
        let p = Pieces::new("\n", false, KeepSeparator::No).unwrap();
        let pieces: Vec<&str> = p.split(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(pieces, ["a", "b", "c"]);
        assert!(Pieces::new("(?=x)", true, KeepSeparator::No).is_err());
    }
}
