//! `chunk --format files`: the per-chunk JSON files, written safely.
//!
//! A document's files are first written to a temporary directory inside
//! `--out` (same file system), then renamed into `chunks/` one by one, then
//! the document's stale higher-numbered files from an earlier run are
//! removed, in `chunks/` and in every granularity's folder (a profile with
//! several granularities writes the others under `chunks/{granularity}/`,
//! `shared::export`). A document that fails to chunk never reaches this
//! module, so its previous files stay as they were.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use shared::export::{
    document_parts, file_name, granularity_folder, per_chunk_files, DocumentParts, FileOptions,
};
use shared::Granularity;
use shared::{ChunkError, ChunkedDocument, DocumentMeta, Profile};

use super::inputs::Input;
use super::outcome::OfflineError;
use super::setup::file_stem;
use crate::cli::DocNameArg;

/// Where and how a run writes its files. The chunking thread builds each
/// document's JSON; a writer thread does the file system work, so the two
/// overlap.
#[derive(Debug)]
pub(super) struct FilesOut {
    content_type: String,
    timestamps: bool,
    jobs: Option<SyncSender<Job>>,
    writer: Option<JoinHandle<Result<(), OfflineError>>>,
}

/// One document for the writer: the chunks and the parts its files share;
/// the writer builds and serializes the objects.
#[derive(Debug)]
struct Job {
    name: String,
    doc: ChunkedDocument,
    parts: DocumentParts,
    source_file: String,
    file_path: String,
    timestamps: Option<(String, u64)>,
}

/// Documents queued for the writer at most (bounds the memory held).
const QUEUED_DOCUMENTS: usize = 16;

/// Where the writer thread writes.
#[derive(Debug)]
struct Target {
    /// The run's temporary directory, inside `--out` (same file system).
    tmp: PathBuf,
    chunks: PathBuf,
    content_type: String,
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
        return file_stem(file);
    };
    let mut parts: Vec<String> = rel
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.push(file_stem(file));
    parts.join(".")
}

/// The per-chunk file format `docName` of every input. Two inputs with one name would
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
            DocNameArg::Stem => file_stem(&i.path),
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
    pub doc: ChunkedDocument,
    pub profile: &'a Profile,
    /// When chunking started (UTC) and how long it took, for `--timestamps`.
    pub timing: (time::OffsetDateTime, std::time::Duration),
}

impl FilesOut {
    /// Creates `DIR/chunks` and starts the writer.
    pub fn new(out: &Path, content_type: &str, timestamps: bool) -> Result<Self, OfflineError> {
        let chunks = out.join("chunks");
        fs::create_dir_all(&chunks).map_err(|e| OfflineError::Files(chunks.clone(), e))?;
        let tmp = out.join(format!(".tmp-chunks-{}", std::process::id()));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| OfflineError::Files(tmp.clone(), e))?;
        }
        fs::create_dir(&tmp).map_err(|e| OfflineError::Files(tmp.clone(), e))?;
        let target = Target {
            tmp,
            chunks,
            content_type: content_type.to_owned(),
        };
        let (jobs, queue) = sync_channel::<Job>(QUEUED_DOCUMENTS);
        let writer = std::thread::Builder::new()
            .name("files-writer".into())
            .spawn(move || {
                let mut result = Ok(());
                for job in queue {
                    result = target.write(&job);
                    if result.is_err() {
                        break;
                    }
                }
                // A failed document's written files go with the directory.
                let removed = fs::remove_dir_all(&target.tmp)
                    .map_err(|e| OfflineError::Files(target.tmp.clone(), e));
                result.and(removed)
            })
            .map_err(|e| OfflineError::Files(out.to_owned(), e))?;
        Ok(Self {
            content_type: content_type.to_owned(),
            timestamps,
            jobs: Some(jobs),
            writer: Some(writer),
        })
    }

    /// Waits until every queued document is written; the writer's first
    /// failure, if any.
    pub fn finish(mut self) -> Result<(), OfflineError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), OfflineError> {
        self.jobs = None;
        match self.writer.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(OfflineError::Files(
                PathBuf::from("chunks"),
                io::Error::other("the file writer thread panicked"),
            )),
        }
    }

    /// Builds and writes one document's files. A document whose positions
    /// cannot be mapped is that document's failure (`Ok(Err(..))`, nothing
    /// written); a write failure stops the run.
    pub fn document(
        &mut self,
        run: DocumentRun<'_>,
    ) -> Result<Result<(), ChunkError>, OfflineError> {
        // The engine decoded these bytes already.
        let original = match std::str::from_utf8(run.markdown) {
            Ok(text) => text,
            Err(e) => {
                return Ok(Err(ChunkError::InvalidUtf8 {
                    byte_offset: e.valid_up_to(),
                }))
            }
        };
        let source_file = run
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| run.doc_name.to_owned());
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
            doc_name: run.doc_name,
            source_file: &source_file,
            file_path: &file_path,
            timestamps,
        };
        let parts = match document_parts(original, &run.doc, run.meta, run.profile, &opts) {
            Ok(parts) => parts,
            Err(e) => return Ok(Err(e)),
        };
        let timestamps = opts.timestamps;
        let job = Job {
            name: run.doc_name.to_owned(),
            doc: run.doc,
            parts,
            source_file,
            file_path,
            timestamps,
        };
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            // The writer stopped: its failure is the run's.
            self.stop()?;
            return Err(OfflineError::Files(
                PathBuf::from(run.doc_name),
                io::Error::other("the file writer has stopped"),
            ));
        }
        Ok(Ok(()))
    }
}

impl Drop for FilesOut {
    fn drop(&mut self) {
        // A run that ends early still lets queued documents reach the disk.
        let _ = self.stop();
    }
}

impl Target {
    /// Writes one document's files: into the run's temporary directory,
    /// then renamed into place; a file whose bytes are already in place (a
    /// re-run of an unchanged document) is left alone, so its modification
    /// time still says when it last changed; stale files removed.
    fn write(&self, job: &Job) -> Result<(), OfflineError> {
        let name = &job.name;
        let tmp = &self.tmp;
        let fail = |p: &Path, e: io::Error| OfflineError::Files(p.to_owned(), e);
        let opts = FileOptions {
            content_type: &self.content_type,
            doc_name: name,
            source_file: &job.source_file,
            file_path: &job.file_path,
            timestamps: job.timestamps.clone(),
        };
        let files = per_chunk_files(&job.doc, &job.parts, &opts);
        let primary = job.parts.primary();
        // Each granularity's folder below `chunks/` (none for the primary
        // one), and how many files it gets.
        let folder = |g: Granularity| granularity_folder(g, primary).unwrap_or("");
        let counts =
            Granularity::ALL.map(|g| job.doc.chunks.iter().filter(|c| c.granularity == g).count());
        for (g, &n) in Granularity::ALL.iter().zip(&counts) {
            if n > 0 {
                for dir in [self.chunks.join(folder(*g)), tmp.join(folder(*g))] {
                    fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
                }
            }
        }
        // Only a document that has files already is compared file by file.
        let earlier = self
            .chunks
            .join(file_name(&self.content_type, name, 0))
            .exists();
        let mut changed = Vec::with_capacity(files.len());
        let mut buf = Vec::with_capacity(16 * 1024);
        for f in &files {
            buf.clear();
            let p = tmp.join(&f.file_name);
            serde_json::to_writer(&mut buf, f).map_err(|e| fail(&p, e.into()))?;
            buf.push(b'\n');
            if earlier && fs::read(self.chunks.join(&f.file_name)).is_ok_and(|old| old == buf) {
                continue;
            }
            fs::write(&p, &buf).map_err(|e| fail(&p, e))?;
            changed.push(&f.file_name);
        }
        for file in changed {
            let (from, to) = (tmp.join(file), self.chunks.join(file));
            fs::rename(&from, &to).map_err(|e| fail(&to, e))?;
        }
        // An earlier run's higher-numbered files of this document: in the
        // primary chain (`chunks/`) and in every granularity's folder,
        // including the folder named after this run's primary granularity
        // (an earlier run whose primary was another wrote it there).
        let chains = Granularity::ALL
            .iter()
            .zip(&counts)
            .filter(|(g, _)| **g == primary)
            .map(|(_, &n)| (self.chunks.clone(), n))
            .chain(Granularity::ALL.iter().zip(&counts).map(|(g, &n)| {
                (
                    self.chunks.join(g.as_str()),
                    if *g == primary { 0 } else { n },
                )
            }));
        for (dir, written) in chains {
            let mut n = written;
            loop {
                let stale = dir.join(file_name(&self.content_type, name, n));
                match fs::remove_file(&stale) {
                    Ok(()) => n += 1,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    Err(e) => return Err(fail(&stale, e)),
                }
            }
        }
        Ok(())
    }
}
