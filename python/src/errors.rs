//! Errors as Python exceptions: `ChunkingError` with the contract's error
//! code (`code`, e.g. `UNKNOWN_PROFILE`) and the message; bad arguments
//! and unreadable profile files are `ValueError`.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use shared::ChunkError;

pyo3::create_exception!(
    chunk_worker,
    ChunkingError,
    PyException,
    "A document could not be chunked; `code` is the error code of the contract (INVALID_MESSAGE, UNKNOWN_PROFILE, DOCUMENT_TOO_LARGE, VALIDATION_FAILED, ...)."
);

/// A [`ChunkError`] as a `ChunkingError` with its code.
pub fn chunk_error(e: &ChunkError) -> PyErr {
    coded(e.code().as_str(), e.to_string())
}

/// A `ChunkingError` with `code` and `message` set.
pub fn coded(code: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let err = ChunkingError::new_err(message.clone());
        let value = err.value(py);
        // Setting attributes on a fresh exception object cannot fail short
        // of memory exhaustion; the exception still carries the message.
        let _ = value.setattr("code", code);
        let _ = value.setattr("message", message);
        err
    })
}

/// A bad argument or setting, as `ValueError`.
pub fn invalid(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}
