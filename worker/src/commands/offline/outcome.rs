//! What every offline command returns (a [`Summary`] or an
//! [`OfflineError`]), its per-file failures, and how it reads one input.

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use shared::{ChunkError, DocumentMeta, ErrorCode};

use crate::cli::exit;

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Inputs processed successfully.
    pub succeeded: usize,
    /// Inputs that failed (one `CHUNKING_FAILED` line each).
    pub failed: usize,
}

impl Summary {
    /// The documented exit status: 0 if nothing failed, 1 otherwise.
    pub fn exit_code(self) -> u8 {
        if self.failed == 0 {
            exit::SUCCESS
        } else {
            exit::FAILED
        }
    }
}

/// Why an offline command stopped early.
#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    /// A usage error found after parsing (unknown profile, no input files,
    /// a per-document flag with several files): exit status 2.
    #[error("{0}")]
    Usage(String),
    /// Writing stdout failed (other than by its reader closing it).
    #[error("cannot write to stdout")]
    Output(#[source] io::Error),
    /// The built-in chunking engine is inconsistent (a bug): exit status 1.
    #[error("cannot set up the chunking engine")]
    Engine(#[source] ChunkError),
    /// Writing an output file (`--format files`, a report) failed (a full
    /// disk, no permission): exit status 1; files already in place stay.
    #[error("cannot write {}", .0.display())]
    Files(std::path::PathBuf, #[source] io::Error),
}

impl OfflineError {
    /// The documented exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => exit::USAGE,
            Self::Output(_) | Self::Engine(_) | Self::Files(..) => exit::FAILED,
        }
    }
}

/// What became of a write to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// Written (or buffered).
    Written,
    /// The reader closed the pipe: stop writing, successfully.
    ReaderGone,
}

/// Sorts the result of a write to stdout: a closed pipe is not an error.
pub(super) fn deliver(result: io::Result<()>) -> Result<Delivery, OfflineError> {
    match result {
        Ok(()) => Ok(Delivery::Written),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Delivery::ReaderGone),
        Err(e) => Err(OfflineError::Output(e)),
    }
}

/// Whether `chunk` may draw a progress bar on the process's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Never draw one (stderr is not a terminal, or a test).
    Hidden,
    /// Draw one on stderr when there is more than one file.
    Stderr,
}

/// One input that could not be processed; displays as its `CHUNKING_FAILED` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFailure {
    /// The error code (docs/contract.md#error-codes).
    pub code: ErrorCode,
    /// The path as given or found.
    pub path: String,
    /// What went wrong and where (e.g. the byte offset of bad UTF-8).
    pub detail: String,
}

/// Reads one input as Markdown: the file's bytes, or for an `.html` /
/// `.htm` file the page converted to Markdown (the LangChain-style factory specification; that Markdown is
/// the document offsets refer to), with its `<title>` and a note of what the
/// conversion left out (scripts, styles, navigation, comments, ...).
pub(crate) fn read_markdown(path: &Path) -> Result<Source, FileFailure> {
    let bytes = fs::read(path).map_err(|e| FileFailure::source_unavailable(path, &e))?;
    if shared::tei::is_tei_name(&path.to_string_lossy()) {
        // GROBID's TEI XML: its Markdown rendering is the document.
        let paper =
            shared::tei::to_markdown(&bytes).map_err(|e| FileFailure::chunking(path, &e))?;
        return Ok(Source {
            markdown: paper.markdown.into_bytes(),
            title: paper.title,
            note: None,
        });
    }
    if !shared::html::is_html_name(&path.to_string_lossy()) {
        return Ok(Source {
            markdown: bytes,
            title: None,
            note: None,
        });
    }
    let page = shared::html::to_markdown(&bytes).map_err(|e| FileFailure::chunking(path, &e))?;
    let left_out = page.dropped_summary();
    Ok(Source {
        markdown: page.markdown.into_bytes(),
        title: page.title,
        note: (!left_out.is_empty()).then(|| {
            format!(
                "note: {}: converted from HTML; left out: {left_out}",
                path.display()
            )
        }),
    })
}

/// One input read as Markdown ([`read_markdown`]).
#[derive(Debug)]
pub(crate) struct Source {
    /// The Markdown (for HTML, the converted page).
    pub markdown: Vec<u8>,
    /// An HTML page's `<title>`.
    pub title: Option<String>,
    /// What an HTML conversion left out, for stderr.
    pub note: Option<String>,
}

impl Source {
    /// `meta.title` from the page's `<title>` when none was given.
    pub fn title_into(&self, meta: &mut DocumentMeta) {
        if meta.title.is_none() {
            meta.title.clone_from(&self.title);
        }
    }
}

impl FileFailure {
    pub(super) fn source_unavailable(path: &Path, error: &io::Error) -> Self {
        Self {
            code: ErrorCode::SourceUnavailable,
            path: path.display().to_string(),
            detail: error.to_string(),
        }
    }

    pub(super) fn chunking(path: &Path, error: &ChunkError) -> Self {
        Self {
            code: error.code(),
            path: path.display().to_string(),
            detail: error.to_string(),
        }
    }
}

impl fmt::Display for FileFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CHUNKING_FAILED {}: {}: {}",
            self.code, self.path, self.detail
        )
    }
}
