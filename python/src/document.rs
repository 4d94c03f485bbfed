//! One input document as the CLI reads it: the text (Markdown, or HTML /
//! GROBID TEI converted to Markdown), and its metadata with the CLI's
//! defaults and precedence (arguments, then the metadata object, then the
//! converted page's title).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use shared::{ChunkError, DocumentMeta};

use crate::errors::invalid;

/// What the text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Markdown (the default).
    Markdown,
    /// An HTML page, converted to Markdown first.
    Html,
    /// GROBID's TEI XML, converted to Markdown first.
    Tei,
}

impl Format {
    /// `markdown`, `html` or `tei`.
    pub fn parse(s: &str) -> PyResult<Self> {
        match s {
            "markdown" | "md" => Ok(Self::Markdown),
            "html" => Ok(Self::Html),
            "tei" => Ok(Self::Tei),
            other => Err(invalid(format!(
                "format={other:?} is not known; valid: \"markdown\", \"html\", \"tei\""
            ))),
        }
    }
}

/// The text argument: `str` or `bytes` (bytes must be UTF-8; the error
/// names the offset of the first bad byte).
pub fn text_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if obj.is_instance_of::<PyString>() {
        let s: String = obj.extract()?;
        return Ok(s.into_bytes());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "the document must be str or bytes, not {}",
        obj.get_type().name()?
    )))
}

/// The per-document arguments, checked as the message contract checks
/// them (docs/contract.md#input-message).
#[derive(Debug, Clone, Default)]
pub struct MetaArgs {
    /// Owning tenant, `^[a-z0-9-]{3,64}$`.
    pub tenant_id: String,
    /// 1..256 characters, no control characters.
    pub document_id: String,
    /// 1..128 characters; default from the bytes.
    pub source_version: Option<String>,
    /// Title for breadcrumbs; default: metadata's, the page's, the first H1.
    pub title: Option<String>,
    /// Where the document lives.
    pub source_url: Option<String>,
    /// The file it came from.
    pub file_path: Option<String>,
    /// The document metadata (known keys carried onto every chunk).
    pub metadata: Option<serde_json::Value>,
}

impl MetaArgs {
    /// Checks the ids; a `ValueError` names the argument.
    pub fn check(&self) -> PyResult<()> {
        if !shared::contract::is_tenant_id(&self.tenant_id) {
            return Err(invalid(format!(
                "tenant_id={:?}: a tenant id is 3-64 characters of a-z, 0-9 and '-'",
                self.tenant_id
            )));
        }
        shared::contract::check_opaque_id("document_id", &self.document_id, 256)
            .map_err(|e| invalid(e.to_string()))?;
        if let Some(v) = &self.source_version {
            shared::contract::check_opaque_id("source_version", v, 128)
                .map_err(|e| invalid(e.to_string()))?;
        }
        if let Some(m) = &self.metadata {
            if !m.is_object() {
                return Err(invalid("metadata must be a dict"));
            }
        }
        Ok(())
    }
}

/// A document ready for the engine: its Markdown and metadata.
#[derive(Debug)]
pub struct Prepared {
    /// The Markdown (for HTML and TEI, the converted text).
    pub markdown: Vec<u8>,
    /// The metadata, defaults applied.
    pub meta: DocumentMeta,
}

/// Converts the text if it is HTML or TEI and fills the metadata exactly
/// as `chunk-worker chunk` does for a file.
pub fn prepare(bytes: Vec<u8>, format: Format, args: &MetaArgs) -> Result<Prepared, ChunkError> {
    let (markdown, page_title) = match format {
        Format::Markdown => (bytes, None),
        Format::Html => {
            let page = shared::html::to_markdown(&bytes)?;
            (page.markdown.into_bytes(), page.title)
        }
        Format::Tei => {
            let paper = shared::tei::to_markdown(&bytes)?;
            (paper.markdown.into_bytes(), paper.title)
        }
    };
    let mut meta = DocumentMeta {
        tenant_id: args.tenant_id.clone(),
        document_id: args.document_id.clone(),
        source_version_id: args
            .source_version
            .clone()
            .unwrap_or_else(|| DocumentMeta::default_source_version(&markdown)),
        title: args.title.clone(),
        source_url: args.source_url.clone(),
        file_path: args.file_path.clone(),
        metadata: None,
    };
    if let Some(m) = &args.metadata {
        meta.apply_metadata(m);
    }
    if meta.title.is_none() {
        meta.title = page_title;
    }
    Ok(Prepared { markdown, meta })
}
