//! `chunk --format files`: seed 002's per-chunk JSON files, written safely.
//!
//! A document's files are first written to a temporary directory inside
//! `--out` (same file system), then renamed into `chunks/` one by one, then
//! the document's stale higher-numbered files from an earlier run are
//! removed. A document that fails to chunk never reaches this module, so
//! its previous files stay as they were.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use shared::export::{file_name, seed002_files, ChunkFile, FileOptions};
use shared::{ChunkError, ChunkedDocument, DocumentMeta, Profile};

use super::{Input, OfflineError};
use crate::cli::DocNameArg;

/// Where and how a run writes its files.
#[derive(Debug)]
pub(super) struct FilesOut {
    out: PathBuf,
    chunks: PathBuf,
    content_type: String,
    timestamps: bool,
}

/// The file name without its extension.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The path of `file` below the directory argument it was found under,
/// without the extension, folders joined with `.`; the stem for a file
/// named directly.
fn path_name(file: &Path, args: &[PathBuf]) -> String {
    let below = args
        .iter()
        .filter(|a| a.is_dir())
        .find_map(|a| file.strip_prefix(a).ok());
    let Some(rel) = below else {
        return stem(file);
    };
    let mut parts: Vec<String> = rel
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.push(stem(file));
    parts.join(".")
}

/// The seed 002 `docName` of every input. Two inputs with one name would
/// write the same files: a usage error naming them, before anything is
/// written.
pub(super) fn doc_names(
    inputs: &[Input],
    args: &[PathBuf],
    how: DocNameArg,
) -> Result<Vec<String>, OfflineError> {
    let names: Vec<String> = inputs
        .iter()
        .map(|i| match how {
            DocNameArg::Stem => stem(&i.path),
            DocNameArg::Path => path_name(&i.path, args),
        })
        .collect();
    let mut seen: BTreeMap<&str, &Path> = BTreeMap::new();
    for (name, input) in names.iter().zip(inputs) {
        if let Some(first) = seen.insert(name, &input.path) {
            let hint = match how {
                DocNameArg::Stem => "; name documents by their path with --doc-name path, or chunk them in separate runs",
                DocNameArg::Path => "; chunk them in separate runs with separate --out directories",
            };
            return Err(OfflineError::Usage(format!(
                "{} and {} would both write the files of document {name:?}{hint}",
                first.display(),
                input.path.display()
            )));
        }
    }
    Ok(names)
}

/// One chunked file, as `--format files` needs it.
#[derive(Debug)]
pub(super) struct DocumentRun<'a> {
    pub path: &'a Path,
    pub doc_name: &'a str,
    pub markdown: &'a [u8],
    pub meta: &'a DocumentMeta,
    pub doc: &'a ChunkedDocument,
    pub profile: &'a Profile,
    /// When chunking started (UTC) and how long it took, for `--timestamps`.
    pub timing: (time::OffsetDateTime, std::time::Duration),
}

impl FilesOut {
    /// Creates `DIR/chunks`.
    pub fn new(out: &Path, content_type: &str, timestamps: bool) -> Result<Self, OfflineError> {
        let chunks = out.join("chunks");
        fs::create_dir_all(&chunks).map_err(|e| OfflineError::Files(chunks.clone(), e))?;
        Ok(Self {
            out: out.to_owned(),
            chunks,
            content_type: content_type.to_owned(),
            timestamps,
        })
    }

    /// The objects of one document (pure; a failure is the document's).
    pub fn objects(&self, run: &DocumentRun<'_>) -> Result<Vec<ChunkFile>, ChunkError> {
        // The engine decoded these bytes already.
        let original = std::str::from_utf8(run.markdown).map_err(|e| ChunkError::InvalidUtf8 {
            byte_offset: e.valid_up_to(),
        })?;
        let name = run.doc_name.to_owned();
        let source_file = run
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        let file_path = run.path.display().to_string();
        let timestamps = self.timestamps.then(|| {
            let (at, took) = run.timing;
            let at = at
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            (at, u64::try_from(took.as_millis()).unwrap_or(u64::MAX))
        });
        let opts = FileOptions {
            content_type: &self.content_type,
            doc_name: &name,
            source_file: &source_file,
            file_path: &file_path,
            timestamps,
        };
        seed002_files(original, run.doc, run.meta, run.profile, &opts)
    }

    /// Writes one document's files: temporary directory, rename into
    /// place, stale files removed.
    pub fn write(&self, name: &str, files: &[ChunkFile]) -> Result<(), OfflineError> {
        let tmp = self.out.join(format!(
            ".tmp-{}_{name}-{}",
            self.content_type,
            std::process::id()
        ));
        let fail = |p: &Path, e: io::Error| OfflineError::Files(p.to_owned(), e);
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| fail(&tmp, e))?;
        }
        fs::create_dir(&tmp).map_err(|e| fail(&tmp, e))?;
        for f in files {
            let p = tmp.join(&f.file_name);
            write_json(&p, f).map_err(|e| fail(&p, e))?;
        }
        for f in files {
            let (from, to) = (tmp.join(&f.file_name), self.chunks.join(&f.file_name));
            fs::rename(&from, &to).map_err(|e| fail(&to, e))?;
        }
        fs::remove_dir(&tmp).map_err(|e| fail(&tmp, e))?;
        // An earlier run's higher-numbered files of this document.
        let mut n = files.len();
        loop {
            let stale = self.chunks.join(file_name(&self.content_type, name, n));
            match fs::remove_file(&stale) {
                Ok(()) => n += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(fail(&stale, e)),
            }
        }
        Ok(())
    }
}

/// Pretty JSON (two-space indent) and a final newline, as seed 002 shows.
fn write_json(path: &Path, file: &ChunkFile) -> io::Result<()> {
    let mut w = io::BufWriter::new(fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut w, file).map_err(io::Error::from)?;
    w.write_all(b"\n")?;
    w.flush()
}
