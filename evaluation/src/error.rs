//! Why an evaluation could not run.

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// Bad or missing input data: the message names the file and line.
    #[error("{0}")]
    Data(String),
    /// A profile could not chunk a document.
    #[error("{0}")]
    Chunking(String),
}
