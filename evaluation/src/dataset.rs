//! A dataset directory: `documents/*.md`, and optionally `questions.jsonl`
//! (retrieval gold) and `boundaries.jsonl` (boundary gold). Offsets in the
//! gold files are code points of the document file as given; they are
//! checked here and mapped to the normalized text (see [`crate::align`]).
//! Every problem is an error naming the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::align::OffsetMap;
use crate::error::EvalError;

/// One document of a dataset.
#[derive(Debug, Clone)]
pub struct Document {
    /// File name inside `documents/`.
    pub name: String,
    /// The file as given.
    pub raw: String,
    /// Our normalized text of it (the coordinate system of all metrics).
    pub normalized: String,
    /// Raw code point offsets → normalized ones.
    pub map: OffsetMap,
}

/// A question with its reference excerpts, in normalized code points.
#[derive(Debug, Clone)]
pub struct Question {
    /// Its id.
    pub id: String,
    /// The question text.
    pub question: String,
    /// Index of its document.
    pub doc: usize,
    /// Language (`en`, `ru`).
    pub lang: String,
    /// The corpus the document belongs to (`speech-sotu`; the dataset's
    /// name when the question names none): the per-corpus breakdown and
    /// the tuning halves are by corpus.
    pub corpus: String,
    /// Reference spans `[start, end)` in normalized code points.
    pub references: Vec<(u32, u32)>,
}

/// Gold topic boundaries of one document, in normalized code points.
#[derive(Debug, Clone)]
pub struct BoundaryGold {
    /// Index of its document.
    pub doc: usize,
    /// `choi` or `annotated`.
    pub kind: String,
    /// Boundary offsets.
    pub boundaries: Vec<u32>,
}

/// A loaded dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Its name in reports: the directory name (`retrieval`), with the half
    /// when restricted to one (`retrieval (half B)`).
    pub name: String,
    /// The directory name alone (`retrieval`): what question keys start with.
    pub dir: String,
    /// Documents, sorted by file name.
    pub documents: Vec<Document>,
    /// Retrieval gold (empty when there is no `questions.jsonl`).
    pub questions: Vec<Question>,
    /// Boundary gold (empty when there is no `boundaries.jsonl`).
    pub boundaries: Vec<BoundaryGold>,
    /// Halves of the corpora (`splits.json`: `{"A": [corpus...], "B": [...]}`):
    /// tune on one, report on the other.
    pub splits: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    id: String,
    question: String,
    document: String,
    #[serde(default)]
    lang: String,
    #[serde(default)]
    corpus: String,
    references: Vec<RawReference>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReference {
    text: String,
    start: usize,
    end: usize,
}

#[derive(Deserialize)]
struct RawBoundaries {
    document: String,
    #[serde(default)]
    kind: String,
    boundaries: Vec<usize>,
}

fn bad(path: &Path, line: usize, what: impl std::fmt::Display) -> EvalError {
    EvalError::Data(format!("{}:{line}: {what}", path.display()))
}

impl Dataset {
    /// Loads `dir`.
    pub fn load(dir: &Path) -> Result<Self, EvalError> {
        let docs_dir = dir.join("documents");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&docs_dir)
            .map_err(|e| EvalError::Data(format!("{}: {e}", docs_dir.display())))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        names.sort();
        let mut documents = Vec::with_capacity(names.len());
        for path in &names {
            let bytes = std::fs::read(path)
                .map_err(|e| EvalError::Data(format!("{}: {e}", path.display())))?;
            let raw = String::from_utf8(bytes)
                .map_err(|e| EvalError::Data(format!("{}: not UTF-8: {e}", path.display())))?;
            let normalized = shared::normalize::normalize(raw.as_bytes())
                .map_err(|e| EvalError::Data(format!("{}: {e}", path.display())))?
                .text;
            let map = OffsetMap::new(&raw, &normalized).ok_or_else(|| {
                EvalError::Data(format!(
                    "{}: the normalized text does not align with the file (a bug)",
                    path.display()
                ))
            })?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            documents.push(Document {
                name,
                raw,
                normalized,
                map,
            });
        }
        if documents.is_empty() {
            return Err(EvalError::Data(format!(
                "{}: no *.md documents",
                docs_dir.display()
            )));
        }
        let index: BTreeMap<String, usize> = documents
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect();
        let questions = match read_lines(&dir.join("questions.jsonl"))? {
            None => Vec::new(),
            Some((path, lines)) => parse_questions(&path, &lines, &index, &documents)?,
        };
        let boundaries = match read_lines(&dir.join("boundaries.jsonl"))? {
            None => Vec::new(),
            Some((path, lines)) => parse_boundaries(&path, &lines, &index, &documents)?,
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        let splits_path = dir.join("splits.json");
        let splits: BTreeMap<String, Vec<String>> = if splits_path.exists() {
            let text = std::fs::read_to_string(&splits_path)
                .map_err(|e| EvalError::Data(format!("{}: {e}", splits_path.display())))?;
            serde_json::from_str(&text)
                .map_err(|e| EvalError::Data(format!("{}: {e}", splits_path.display())))?
        } else {
            BTreeMap::new()
        };
        let mut questions = questions;
        for q in &mut questions {
            if q.corpus.is_empty() {
                q.corpus.clone_from(&name);
            }
        }
        Ok(Self {
            dir: name.clone(),
            name,
            documents,
            questions,
            boundaries,
            splits,
        })
    }

    /// Keeps the documents and questions of the corpora of half `split`
    /// (`splits.json`); a document belongs to the corpus of its questions.
    /// A dataset without halves, or without questions, is kept whole when
    /// `split` is not one of its halves' names, and that is an error when
    /// it has halves.
    pub fn restrict(mut self, split: &str) -> Result<Self, EvalError> {
        if self.splits.is_empty() || self.questions.is_empty() {
            return Ok(self);
        }
        let Some(corpora) = self.splits.get(split) else {
            return Err(EvalError::Data(format!(
                "{}: no half {split:?} in splits.json (halves: {})",
                self.name,
                self.splits.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        };
        let keep: std::collections::BTreeSet<usize> = self
            .questions
            .iter()
            .filter(|q| corpora.contains(&q.corpus))
            .map(|q| q.doc)
            .collect();
        let renumber: BTreeMap<usize, usize> = keep
            .iter()
            .enumerate()
            .map(|(new, &old)| (old, new))
            .collect();
        self.documents = self
            .documents
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, d)| d)
            .collect();
        self.questions.retain(|q| corpora.contains(&q.corpus));
        for q in &mut self.questions {
            q.doc = renumber[&q.doc];
        }
        self.boundaries.retain(|b| keep.contains(&b.doc));
        for b in &mut self.boundaries {
            b.doc = renumber[&b.doc];
        }
        self.name = format!("{} (half {split})", self.name);
        Ok(self)
    }
}

type Lines = Option<(PathBuf, Vec<(usize, String)>)>;

/// Non-empty lines with their 1-based numbers; `None` when the file is absent.
fn read_lines(path: &Path) -> Result<Lines, EvalError> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Data(format!("{}: {e}", path.display())))?;
    let lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect();
    Ok(Some((path.to_path_buf(), lines)))
}

fn doc_index(
    path: &Path,
    line: usize,
    index: &BTreeMap<String, usize>,
    name: &str,
) -> Result<usize, EvalError> {
    index.get(name).copied().ok_or_else(|| {
        bad(
            path,
            line,
            format!("document {name:?} is not in documents/"),
        )
    })
}

fn parse_questions(
    path: &Path,
    lines: &[(usize, String)],
    index: &BTreeMap<String, usize>,
    documents: &[Document],
) -> Result<Vec<Question>, EvalError> {
    let mut out = Vec::with_capacity(lines.len());
    let mut ids = std::collections::BTreeSet::new();
    for (no, line) in lines {
        let q: RawQuestion = serde_json::from_str(line).map_err(|e| bad(path, *no, e))?;
        if !ids.insert(q.id.clone()) {
            return Err(bad(path, *no, format!("duplicate id {:?}", q.id)));
        }
        let doc = doc_index(path, *no, index, &q.document)?;
        let d = &documents[doc];
        if q.references.is_empty() {
            return Err(bad(
                path,
                *no,
                format!("question {:?} has no references", q.id),
            ));
        }
        let mut references = Vec::new();
        for r in &q.references {
            let found: String = d
                .raw
                .chars()
                .skip(r.start)
                .take(r.end.saturating_sub(r.start))
                .collect();
            if r.start >= r.end || r.end > d.map.raw_len() || found != r.text {
                return Err(bad(
                    path,
                    *no,
                    format!(
                        "question {:?}: the excerpt {:?} is not at {}..{} of {}",
                        q.id,
                        r.text.chars().take(40).collect::<String>(),
                        r.start,
                        r.end,
                        q.document
                    ),
                ));
            }
            references.push((d.map.at(r.start), d.map.at(r.end)));
        }
        out.push(Question {
            id: q.id,
            question: q.question,
            doc,
            lang: q.lang,
            corpus: q.corpus,
            references,
        });
    }
    Ok(out)
}

fn parse_boundaries(
    path: &Path,
    lines: &[(usize, String)],
    index: &BTreeMap<String, usize>,
    documents: &[Document],
) -> Result<Vec<BoundaryGold>, EvalError> {
    let mut out = Vec::with_capacity(lines.len());
    for (no, line) in lines {
        let b: RawBoundaries = serde_json::from_str(line).map_err(|e| bad(path, *no, e))?;
        let doc = doc_index(path, *no, index, &b.document)?;
        let len = documents[doc].map.raw_len();
        if let Some(x) = b.boundaries.iter().find(|&&x| x == 0 || x >= len) {
            return Err(bad(
                path,
                *no,
                format!("boundary {x} is outside 1..{len} of {}", b.document),
            ));
        }
        let map = &documents[doc].map;
        out.push(BoundaryGold {
            doc,
            kind: b.kind,
            boundaries: b.boundaries.iter().map(|&x| map.at(x)).collect(),
        });
    }
    Ok(out)
}
