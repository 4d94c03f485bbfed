//! What the engine reports besides chunks: `ProfileInfo` (a profile as
//! `chunk-worker profiles` lists it) and `Explanation` (why a chunk ends).

use pyo3::prelude::*;

use crate::chunk::Chunk;
use crate::convert::to_py;
use crate::errors::invalid;

/// A profile as `chunk-worker profiles` lists it.
#[pyclass(frozen, module = "chunk_worker", name = "ProfileInfo")]
#[derive(Debug, Clone)]
pub struct ProfileInfo {
    /// The name to pass as `profile=`.
    #[pyo3(get)]
    name: String,
    /// The strategy it configures.
    #[pyo3(get)]
    strategy: String,
    /// `strategy:version` written on its chunks.
    #[pyo3(get)]
    chunker_version: String,
    /// `cl100k_base` or `o200k_base`.
    #[pyo3(get)]
    tokenizer: String,
    /// The granularities its chunks have, coarse to fine.
    #[pyo3(get)]
    granularities: Vec<String>,
    /// One line on what it does.
    #[pyo3(get)]
    description: String,
    /// `built-in` or the file it came from.
    #[pyo3(get)]
    origin: String,
    /// Its strategy is experimental.
    #[pyo3(get)]
    experimental: bool,
    /// Usable by this engine (experimental ones need `experimental=True`).
    #[pyo3(get)]
    available: bool,
    /// It needs the sentence-embedding model.
    #[pyo3(get)]
    needs_model: bool,
    /// The framework call a drop-in reproduces, with the package version
    /// (`LangChain RecursiveCharacterTextSplitter (langchain-text-splitters
    /// 1.1.3)`); `None` for our own strategies.
    #[pyo3(get)]
    framework: Option<String>,
    /// Deprecated: still usable, `replacement` is what to use instead.
    #[pyo3(get)]
    deprecated: bool,
    /// The profile to use instead of a deprecated one.
    #[pyo3(get)]
    replacement: Option<String>,
    /// The profile as TOML, every parameter spelled out.
    #[pyo3(get)]
    toml: String,
}

impl ProfileInfo {
    pub fn new(p: &shared::Profile, experimental_on: bool) -> Self {
        Self {
            name: p.name.clone(),
            strategy: p.strategy.clone(),
            chunker_version: p.chunker_version.clone(),
            tokenizer: p.tokenizer.name().to_owned(),
            granularities: p
                .granularities()
                .iter()
                .map(|g| g.as_str().to_owned())
                .collect(),
            description: p.description.clone(),
            origin: p.origin.describe(),
            experimental: p.experimental,
            available: !p.experimental || experimental_on,
            needs_model: p.needs_embedder(),
            framework: p
                .chunker()
                .framework()
                .map(|f| format!("{} ({})", f.call, f.package)),
            deprecated: p.deprecation.is_some(),
            replacement: p.deprecation.as_ref().and_then(|d| d.replacement.clone()),
            toml: p.to_toml(),
        }
    }
}

#[pymethods]
impl ProfileInfo {
    fn __repr__(&self) -> String {
        format!(
            "ProfileInfo(name={:?}, strategy={:?}, experimental={})",
            self.name,
            self.strategy,
            if self.experimental { "True" } else { "False" }
        )
    }
}

/// Why a chunk ends where it does.
#[pyclass(frozen, module = "chunk_worker", name = "Explanation")]
#[derive(Debug)]
pub struct Explanation {
    /// The chunk.
    #[pyo3(get)]
    chunk: Py<Chunk>,
    /// The rule's tag (`heading`, `size_budget`, `sentence`, ...).
    #[pyo3(get)]
    rule: String,
    /// The reason as a sentence.
    #[pyo3(get)]
    reason: String,
    /// The rule and its figures as a dict (`{"rule": "heading", "level": 2, ...}`).
    details: serde_json::Value,
}

impl Explanation {
    pub fn new(py: Python<'_>, chunk: shared::Chunk, reason: &shared::EndReason) -> PyResult<Self> {
        Ok(Self {
            chunk: Py::new(py, Chunk::new(chunk))?,
            rule: reason.rule().to_owned(),
            reason: reason.to_string(),
            details: serde_json::to_value(reason)
                .map_err(|e| invalid(format!("end reason: {e}")))?,
        })
    }
}

#[pymethods]
impl Explanation {
    /// The rule and its figures as a dict.
    #[getter]
    fn details<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.details)
    }

    fn __repr__(&self) -> String {
        format!(
            "Explanation(rule={:?}, reason={:?})",
            self.rule, self.reason
        )
    }
}
