//! The arguments of `chunk-worker chunk`: the options, the output format,
//! the per-chunk file format's naming and breadcrumb modes, and the id parsers they use.

use std::path::PathBuf;

use clap::Args;

use super::args::{ProfileSelectArgs, DEFAULT_TENANT};

pub(super) const CHUNK_HELP: &str = "\
Defaults, per file:
  document id     the file name without its extension (`docs/intro.md` -> `intro`)
  source version  `sha256:` + the first 16 hex digits of the sha256 of the file's bytes
  title           the text of the first H1, else the file name without its extension
  file_path       the path as given (or as found under a directory argument)

Directories are walked recursively for `*.md` files, in path order; symbolic
links are not followed and hidden entries (names starting with `.`) are
skipped. Files named explicitly are chunked whatever their extension.

Output is deterministic: the same bytes and options always give the same
bytes out (no timestamps). A file's chunks are written only once it chunked
completely, so a failed file leaves nothing half-written on stdout. A closed
stdout (`| head`) ends the run quietly with status 0.

Examples:
  chunk-worker chunk notes.md
  chunk-worker chunk --profile enterprise-v1 --tenant acme-prod docs/ > chunks.jsonl
  chunk-worker chunk runbook.md --document-id confluence:OPS:42 --source-version v7 --title Runbook
  chunk-worker chunk docs/ | jq -r '.chunk_path'
  chunk-worker chunk --profile recursive-v1 notes.md
  chunk-worker chunk --profile-file mine.toml --metadata page.json page.md
  chunk-worker chunk --format files --out site/ --breadcrumb-mode always docs/

--format files writes per-chunk JSON files instead of JSONL:
DIR/chunks/{content-type}_{docName}__ch{N}.json, docName the file name without
its extension (hyphens kept), N from 0. Each object has the per-chunk file format's fields
(id, parentId, chunkNumber, contentType, embedText, originalText, fileTitle,
sectionTitle, headerPath, headerBreadcrumb, headerDepths, headerSlugs
(GitHub anchors), sectionSlug, sourcePosition (the chunk's own span in the
ORIGINAL file, UTF-16 code units), tokenStats (exact tokens; estimatedTokens
= ceil(characters / 4)), prevId, nextId, nodeTypes, metadata, source) plus our
record's fields under `chunkWorker`. A document's files are written to a
temporary directory and moved into place once it chunked completely; a re-run
replaces them and removes the document's stale higher-numbered files; a
failure leaves the previous files as they were. Schemas: schemas/.";

/// Options of `chunk-worker chunk`.
#[derive(Debug, Clone, Args)]
pub struct ChunkArgs {
    /// Chunking profile (strategy, budgets, overlap, id formula); see
    /// `chunk-worker profiles` [default: spec-v1, or the last --profile-file's]
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Profile files and experimental strategies.
    #[command(flatten)]
    pub select: ProfileSelectArgs,

    /// Document metadata: a JSON object (title, source_url, space_key, page_id,
    /// labels, author, updated_at, page_no) carried onto every chunk as
    /// `metadata`, as the queue worker takes it from a message. Only with a
    /// single input file.
    #[arg(long, value_name = "FILE.json")]
    pub metadata: Option<PathBuf>,

    /// Tenant that owns the documents (3-64 characters of a-z, 0-9 and `-`).
    #[arg(long, value_name = "ID", default_value = DEFAULT_TENANT, value_parser = parse_tenant)]
    pub tenant: String,

    /// Document id, instead of the file name without extension (1-256 characters,
    /// no control characters). Only with a single input file: ids are unique per
    /// document.
    #[arg(long, value_name = "ID", value_parser = parse_document_id)]
    pub document_id: Option<String>,

    /// Source version id, instead of `sha256:` + 16 hex digits of the file's
    /// sha256 (1-128 characters). Only with a single input file.
    #[arg(long, value_name = "ID", value_parser = parse_source_version)]
    pub source_version: Option<String>,

    /// Document title used in breadcrumbs, instead of the first H1 (or the file
    /// name without extension). Only with a single input file.
    #[arg(long, value_name = "T")]
    pub title: Option<String>,

    /// What to write: JSONL records on stdout, or per-chunk JSON
    /// files under --out.
    #[arg(long, value_enum, default_value_t = ChunkFormat::Jsonl)]
    pub format: ChunkFormat,

    /// Directory for `--format files`: each chunk goes to
    /// DIR/chunks/{content-type}_{file name}__ch{N}.json.
    #[arg(long, value_name = "DIR", required_if_eq("format", "files"))]
    pub out: Option<PathBuf>,

    /// The per-chunk file format `contentType` of `--format files` (`doc`, `post`, ...):
    /// the first part of every id and file name.
    #[arg(long, value_name = "TYPE", default_value = "doc", value_parser = parse_content_type)]
    pub content_type: String,

    /// How `--format files` names a document: `stem`, the file name without
    /// its extension (the per-chunk file format); `path`, its path below the directory
    /// argument without the extension, folders joined with `.`
    /// (`keps/README.md` -> `keps.README`), for trees with many README.md.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = DocNameArg::Stem)]
    pub doc_name: DocNameArg,

    /// When `embed_text` (`embedText`) starts with a breadcrumb, instead of
    /// the profile's mode (the per-chunk file format `breadcrumbMode`).
    #[arg(long, value_enum, value_name = "MODE")]
    pub breadcrumb_mode: Option<BreadcrumbArg>,

    /// Print only the chunks of these granularities (comma-separated), e.g.
    /// `--granularity section` with the multi-granularity `hierarchy-v1`
    /// [default: every granularity the profile makes]
    #[arg(long, value_enum, value_name = "G,...", value_delimiter = ',')]
    pub granularity: Vec<GranularityArg>,

    /// Record `processedAt` and `processingTimeMs` in `--format files`
    /// metadata (without it the files are the same bytes on every run).
    #[arg(long)]
    pub timestamps: bool,

    /// Markdown files, or directories to search recursively for `*.md` files.
    #[arg(value_name = "FILE", required = true)]
    pub paths: Vec<PathBuf>,
}

/// What `chunk` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChunkFormat {
    /// One JSON record per chunk on stdout.
    Jsonl,
    /// per-chunk JSON files under --out.
    Files,
}

/// How `--format files` derives a document's `docName`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DocNameArg {
    /// The file name without its extension (the per-chunk file format).
    Stem,
    /// The path below the directory argument, folders joined with `.`.
    Path,
}

/// A chunk granularity on the command line (the Chunking System specification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GranularityArg {
    /// The head of the document.
    Document,
    /// Heading-bounded sections.
    Section,
    /// Paragraphs.
    Paragraph,
    /// Token windows.
    Window,
    /// Tables.
    Table,
}

impl GranularityArg {
    /// The record's granularity.
    pub fn granularity(self) -> shared::Granularity {
        use shared::Granularity as G;
        match self {
            Self::Document => G::Document,
            Self::Section => G::Section,
            Self::Paragraph => G::Paragraph,
            Self::Window => G::Window,
            Self::Table => G::Table,
        }
    }
}

/// The per-chunk file format `breadcrumbMode` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BreadcrumbArg {
    /// Full breadcrumb for section starts, tables/code/lists and short
    /// chunks; the title alone for other prose when it is not the first
    /// heading.
    Conditional,
    /// The full breadcrumb on every chunk.
    Always,
    /// Never: embed_text is the chunk text.
    None,
}

impl BreadcrumbArg {
    /// The engine's mode.
    pub fn mode(self) -> shared::profile::BreadcrumbMode {
        use shared::profile::BreadcrumbMode as M;
        match self {
            Self::Conditional => M::Conditional,
            Self::Always => M::Always,
            Self::None => M::None,
        }
    }
}

/// A content type is 1-32 characters of a-z, 0-9, `-` and `_`: it becomes
/// part of file names and ids.
fn parse_content_type(s: &str) -> Result<String, String> {
    let ok = (1..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(s.to_owned())
    } else {
        Err("a content type is 1-32 characters of a-z, 0-9, '-' and '_' (e.g. doc, post)".into())
    }
}

/// docs/contract.md#input-message: `^[a-z0-9-]{3,64}$`.
fn parse_tenant(value: &str) -> Result<String, String> {
    let shape_ok = (3..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if shape_ok {
        Ok(value.to_owned())
    } else {
        Err("a tenant id is 3-64 characters of a-z, 0-9 and '-'".to_owned())
    }
}

/// docs/contract.md#input-message: opaque, 1..256 characters, no control characters.
fn parse_document_id(value: &str) -> Result<String, String> {
    parse_opaque_id(value, 256)
}

/// docs/contract.md#input-message: opaque, 1..128 characters.
fn parse_source_version(value: &str) -> Result<String, String> {
    parse_opaque_id(value, 128)
}

fn parse_opaque_id(value: &str, max_chars: usize) -> Result<String, String> {
    let chars = value.chars().count();
    if chars == 0 || chars > max_chars {
        return Err(format!("must be 1-{max_chars} characters, got {chars}"));
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".to_owned());
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_ids_follow_the_message_contract() {
        assert!(parse_tenant("acme-prod").is_ok());
        assert!(parse_tenant("local").is_ok());
        assert!(parse_tenant("ab").is_err());
        assert!(parse_tenant("Acme").is_err());
        assert!(parse_tenant(&"a".repeat(65)).is_err());
    }

    #[test]
    fn opaque_ids_reject_empty_long_and_control_characters() {
        assert!(parse_document_id("confluence:ENG:123456").is_ok());
        assert!(parse_document_id("").is_err());
        assert!(parse_document_id("a\nb").is_err());
        assert!(parse_source_version(&"v".repeat(128)).is_ok());
        assert!(parse_source_version(&"v".repeat(129)).is_err());
    }
}
