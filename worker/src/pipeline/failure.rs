//! A permanent failure of one message: the SPEC 2.3 code and what was
//! wrong, where. Below the handler and the source reader, which both make
//! them.

use shared::ErrorCode;

/// A permanent failure: the code and what was wrong, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// SPEC 2.3 code.
    pub code: ErrorCode,
    /// Detail for `x-error-detail` and `chunking_failures.error_detail`.
    pub detail: String,
}

impl Failure {
    /// A failure with `code`.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
        }
    }
}
