//! Chunks made by another system (`--external NAME=FILE.jsonl`): one JSON
//! object per line, `{"document": "<file name>", "text": "..."}`, optionally
//! with `"start"` / `"end"` (code points of the document file as given).
//! Without offsets, the text is found in the document, searching forward
//! from the previous chunk's start (chunks come in order and may overlap).
//! Errors name the file and the line.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::dataset::Dataset;
use crate::error::EvalError;

/// One external chunk, placed in its document (raw code points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalChunk {
    /// The chunk text as the system produced it.
    pub text: String,
    /// Start in the document file, code points.
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
}

#[derive(Deserialize)]
struct Line {
    document: String,
    text: String,
    #[serde(default)]
    start: Option<usize>,
    #[serde(default)]
    end: Option<usize>,
}

/// Code point index of byte offset `b` of `s`.
fn char_index(s: &str, b: usize) -> usize {
    s[..b].chars().count()
}

/// Parses `text` (the content of `path`) against the documents of
/// `datasets`. With `only_known`, chunks of documents in no dataset are
/// left out (the other half of a dataset restricted to one half); else
/// they are an error.
pub fn parse(
    path: &Path,
    text: &str,
    datasets: &[Dataset],
    only_known: bool,
) -> Result<BTreeMap<String, Vec<ExternalChunk>>, EvalError> {
    let docs: BTreeMap<&str, &str> = datasets
        .iter()
        .flat_map(|d| d.documents.iter())
        .map(|d| (d.name.as_str(), d.raw.as_str()))
        .collect();
    let bad =
        |line: usize, what: String| EvalError::Data(format!("{}:{line}: {what}", path.display()));
    let mut out: BTreeMap<String, Vec<ExternalChunk>> = BTreeMap::new();
    // Per document: byte offset where the next search starts.
    let mut cursor: BTreeMap<String, usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let l: Line =
            serde_json::from_str(line).map_err(|e| bad(no, format!("not a chunk object: {e}")))?;
        let Some(raw) = docs.get(l.document.as_str()) else {
            if only_known {
                continue;
            }
            return Err(bad(
                no,
                format!("document {:?} is in no dataset", l.document),
            ));
        };
        let len = raw.chars().count();
        let (start, end) = match (l.start, l.end) {
            (Some(s), Some(e)) if s < e && e <= len => (s, e),
            (Some(s), Some(e)) => {
                return Err(bad(
                    no,
                    format!(
                        "offsets {s}..{e} are not inside {} ({len} code points)",
                        l.document
                    ),
                ))
            }
            _ => {
                let from = cursor.get(&l.document).copied().unwrap_or(0);
                let found = raw
                    .get(from..)
                    .and_then(|r| r.find(&l.text))
                    .map(|b| b + from)
                    .or_else(|| raw.find(&l.text));
                let Some(b) = found.filter(|_| !l.text.is_empty()) else {
                    return Err(bad(
                        no,
                        format!(
                            "the text {:?} is not in {} (give \"start\"/\"end\" offsets)",
                            l.text.chars().take(40).collect::<String>(),
                            l.document
                        ),
                    ));
                };
                // The next chunk may overlap this one: search from just after
                // this start.
                let next = raw[b..].chars().next().map_or(b, |c| b + c.len_utf8());
                cursor.insert(l.document.clone(), next);
                let s = char_index(raw, b);
                (s, s + l.text.chars().count())
            }
        };
        out.entry(l.document).or_default().push(ExternalChunk {
            text: l.text,
            start,
            end,
        });
    }
    Ok(out)
}
