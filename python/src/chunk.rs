//! `Chunk`: one record, immutable, with every field of the chunk record
//! (docs/contract.md#chunk-record) as a typed attribute.

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::IntoPyObjectExt;

use crate::convert::to_py;

/// One chunk record. Attributes are the record's fields; `to_dict()` gives
/// the JSON object and `to_json()` the exact JSONL line the CLI prints.
#[pyclass(frozen, module = "chunk_worker", name = "Chunk")]
#[derive(Debug, Clone)]
pub struct Chunk {
    pub(crate) inner: shared::Chunk,
}

impl Chunk {
    /// Wraps a record.
    pub fn new(inner: shared::Chunk) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl Chunk {
    /// Stable id: lowercase hex sha256 (docs/contract.md#ids).
    #[getter]
    fn chunk_id(&self) -> &str {
        &self.inner.chunk_id
    }

    /// Owning tenant.
    #[getter]
    fn tenant_id(&self) -> &str {
        &self.inner.tenant_id
    }

    /// Document id.
    #[getter]
    fn document_id(&self) -> &str {
        &self.inner.document_id
    }

    /// Source version id (default: `sha256:` + 16 hex digits of the input's bytes).
    #[getter]
    fn source_version_id(&self) -> &str {
        &self.inner.source_version_id
    }

    /// Position in the document, 0..n-1.
    #[getter]
    fn ordinal(&self) -> u32 {
        self.inner.ordinal
    }

    /// `section`, `paragraph`, `window`, `table` or `document`.
    #[getter]
    fn granularity(&self) -> &str {
        self.inner.granularity.as_str()
    }

    /// `paragraph`, `list`, `table`, `code`, `quote` or `mixed`.
    #[getter]
    fn chunk_type(&self) -> &str {
        self.inner.chunk_type.as_str()
    }

    /// Plain texts of the headings in effect, outermost first.
    #[getter]
    fn headings_path(&self) -> Vec<String> {
        self.inner.headings_path.clone()
    }

    /// Heading/list/table path, e.g. `Intro > Setup / table[2] rows 41-80`.
    #[getter]
    fn chunk_path(&self) -> &str {
        &self.inner.chunk_path
    }

    /// The Markdown to display (overlap included).
    #[getter]
    fn chunk_text(&self) -> &str {
        &self.inner.chunk_text
    }

    /// The text to embed: `chunk_text` with the profile's breadcrumb.
    #[getter]
    fn embed_text(&self) -> &str {
        &self.inner.embed_text
    }

    /// Tokens of `embed_text` in the profile's embedder tokenizer, when it names one.
    #[getter]
    fn embed_token_count(&self) -> Option<u32> {
        self.inner.embed_token_count
    }

    /// Exact token count of `chunk_text` in `tokenizer`.
    #[getter]
    fn token_count(&self) -> u32 {
        self.inner.token_count
    }

    /// Start of the chunk's own span, in code points of the normalized document (Python string indices).
    #[getter]
    fn char_start(&self) -> u64 {
        self.inner.char_start
    }

    /// End (exclusive) of the own span, in code points.
    #[getter]
    fn char_end(&self) -> u64 {
        self.inner.char_end
    }

    /// Start of the own span, in UTF-8 bytes of the normalized document.
    #[getter]
    fn byte_start(&self) -> u64 {
        self.inner.byte_start
    }

    /// End (exclusive) of the own span, in bytes.
    #[getter]
    fn byte_end(&self) -> u64 {
        self.inner.byte_end
    }

    /// Index of the first Markdown block the chunk draws from.
    #[getter]
    fn block_start_idx(&self) -> u32 {
        self.inner.block_start_idx
    }

    /// Index of the last block (inclusive).
    #[getter]
    fn block_end_idx(&self) -> u32 {
        self.inner.block_end_idx
    }

    /// Leading characters of `chunk_text` repeated from before the own span.
    #[getter]
    fn overlap_prefix_chars(&self) -> u32 {
        self.inner.overlap_prefix_chars
    }

    /// Trailing characters added to close a split code fence.
    #[getter]
    fn closing_suffix_chars(&self) -> u32 {
        self.inner.closing_suffix_chars
    }

    /// sha256 of the canonical text and headings: whether content changed between versions.
    #[getter]
    fn content_hash(&self) -> &str {
        &self.inner.content_hash
    }

    /// The profile that made the chunk.
    #[getter]
    fn profile(&self) -> &str {
        &self.inner.profile
    }

    /// `strategy:version`.
    #[getter]
    fn chunker_version(&self) -> &str {
        &self.inner.chunker_version
    }

    /// Tokenizer of `token_count` (`cl100k_base`, `o200k_base`).
    #[getter]
    fn tokenizer(&self) -> &str {
        &self.inner.tokenizer
    }

    /// The document's source URL, if given.
    #[getter]
    fn source_url(&self) -> Option<&str> {
        self.inner.source_url.as_deref()
    }

    /// The document's file path, if given.
    #[getter]
    fn file_path(&self) -> Option<&str> {
        self.inner.file_path.as_deref()
    }

    /// Readable key `{document_id}:{strategy}:{granularity}:{ordinal}`.
    #[getter]
    fn chunk_key(&self) -> Option<&str> {
        self.inner.chunk_key.as_deref()
    }

    /// The containing chunk of the next coarser granularity (multi-granularity profiles).
    #[getter]
    fn parent_chunk_id(&self) -> Option<&str> {
        self.inner.parent_chunk_id.as_deref()
    }

    /// Whether the chunk holds (a piece of) a table.
    #[getter]
    fn is_table(&self) -> Option<bool> {
        self.inner.is_table
    }

    /// First page of the chunk's content, when the document marks pages.
    #[getter]
    fn page_start(&self) -> Option<u32> {
        self.inner.page_start
    }

    /// Last page (inclusive), present exactly when `page_start` is.
    #[getter]
    fn page_end(&self) -> Option<u32> {
        self.inner.page_end
    }

    /// The message's document metadata carried onto the chunk (a dict), if any.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .metadata
            .as_deref()
            .map(|m| to_py(py, m))
            .transpose()
    }

    /// The `table` strategy's digest of a table, if any.
    #[getter]
    fn facet_json<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .facet_json
            .as_ref()
            .map(|m| to_py(py, m))
            .transpose()
    }

    /// The record as a dict: the JSON object of the JSONL line (keys of
    /// absent optional fields left out, as there).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.inner)
            .map_err(|e| crate::errors::invalid(format!("chunk record: {e}")))?;
        to_py(py, &value)
    }

    /// The JSONL line `chunk-worker chunk` prints for this record (no
    /// newline), byte for byte.
    fn to_json(&self) -> PyResult<String> {
        let mut out = Vec::with_capacity(self.inner.chunk_text.len() * 2 + 512);
        shared::chunk::json::push_chunk_json(&self.inner, &mut out)
            .map_err(|e| crate::errors::invalid(format!("chunk record: {e}")))?;
        String::from_utf8(out).map_err(|e| crate::errors::invalid(format!("chunk record: {e}")))
    }

    /// A record from `to_json()`'s line (or any JSONL line of the CLI).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, line: &str) -> PyResult<Self> {
        serde_json::from_str(line)
            .map(Self::new)
            .map_err(|e| crate::errors::invalid(format!("not a chunk record: {e}")))
    }

    fn __len__(&self) -> usize {
        self.inner.chunk_text.chars().count()
    }

    fn __str__(&self) -> &str {
        &self.inner.chunk_text
    }

    fn __repr__(&self) -> String {
        let preview: String = self.inner.chunk_text.chars().take(40).collect();
        format!(
            "Chunk(ordinal={}, chunk_id='{}', tokens={}, chars={}..{}, text={:?}{})",
            self.inner.ordinal,
            &self.inner.chunk_id[..self.inner.chunk_id.len().min(12)],
            self.inner.token_count,
            self.inner.char_start,
            self.inner.char_end,
            preview,
            if preview.len() < self.inner.chunk_text.len() {
                "..."
            } else {
                ""
            }
        )
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Chunk>() else {
            return Ok(py.NotImplemented());
        };
        let equal = self.inner == other.get().inner;
        match op {
            CompareOp::Eq => equal.into_py_any(py),
            CompareOp::Ne => (!equal).into_py_any(py),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.chunk_id.hash(&mut h);
        self.inner.ordinal.hash(&mut h);
        h.finish()
    }
}
