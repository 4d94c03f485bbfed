//! `chunk_worker._native`: chunk-worker's engine for Python (PyO3).
//!
//! The same [`shared::Engine`] the CLI, the worker and the API run: the same
//! records, ids and bytes. Python sees an `Engine`, an immutable `Chunk` per
//! record, `ChunkingError` carrying the contract's error code, and the
//! profile list; the LangChain, LlamaIndex and protocol layers are plain
//! Python on top (`python/chunk_worker/`). Chunking runs with the GIL
//! released; `Engine.chunk_many` spreads documents over the cores.

mod batch;
mod chunk;
mod convert;
mod document;
mod engine;
mod errors;
mod info;

use pyo3::prelude::*;

/// The native module; `chunk_worker` re-exports what users need.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<engine::Engine>()?;
    m.add_class::<chunk::Chunk>()?;
    m.add_class::<info::ProfileInfo>()?;
    m.add_class::<info::Explanation>()?;
    m.add("ChunkingError", m.py().get_type::<errors::ChunkingError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The document metadata keys the engine carries onto chunk records.
    m.add(
        "METADATA_KEYS",
        pyo3::types::PyTuple::new(m.py(), shared::chunk::record::METADATA_KEYS)?,
    )?;
    m.add_function(wrap_pyfunction!(engine::normalize, m)?)?;
    Ok(())
}
